//! The request stage: every document request of a tab (main frame,
//! iframes at any depth, each redirect hop, navigations the page starts
//! itself) is paused by `Fetch` before it leaves the browser, judged, and
//! continued or failed there, so a denied server receives nothing.
//!
//! Owns the tab's record of what it blocked (so an action can say what it
//! caused to be blocked, and a navigate can fail naming the hop and the
//! rule). The tab's event reader hands each paused request to
//! [`Gate::paused`], which decides at once and spawns the answer: the
//! reader never awaits a reply. A request an `ask` rule covers passes if
//! the session's user allowed its origin; otherwise, when the session can
//! ask, it is held paused while a task of its own asks (within
//! [`ASK_BUDGET`]), and continued or failed by the answer.
//!
//! With the session's routes set ([`super::routes`]), every request of the
//! tab pauses here: one the rules let through is then answered as its
//! route says; one they refuse is refused whatever the route says, so a
//! route never answers for a denied URL nor widens an `ask`. Owns the
//! record of how the routes answered: `browser_network list` and the
//! trace read it by request, each call's audit record takes what was
//! answered since the tab's previous call ([`Gate::take_routed`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use cdp::protocol::fetch::{
    ContinueRequest, FailRequest, FulfillRequest, HeaderEntry, RequestPattern, RequestPaused,
};
use cdp::Session;
use tokio::time::Instant;

use super::routes::{Answer, Route, Routes};
use super::{Consent, Decision, Policy, Verdict};

/// How long continuing or failing one paused request may take (no caller
/// waits on it; the request waits in the browser meanwhile).
const ANSWER_BUDGET: Duration = Duration::from_secs(10);
/// How long a paused document request waits for the user's answer.
pub const ASK_BUDGET: Duration = Duration::from_secs(60);
/// Why an ask was not put to the user while no call ran.
pub const NO_CALL: &str = "no call of the agent was running, so the user was not asked";
/// Blocked requests kept per tab.
const KEPT: usize = 50;

/// The `Fetch.enable` pattern that pauses every document request.
pub fn document_pattern() -> RequestPattern {
    RequestPattern {
        url_pattern: "*".into(),
        resource_type: Some("Document".into()),
        request_stage: "Request".into(),
    }
}

/// The `Fetch.enable` pattern that pauses every request.
pub fn every_request() -> RequestPattern {
    RequestPattern {
        url_pattern: "*".into(),
        resource_type: None,
        request_stage: "Request".into(),
    }
}

/// The `Fetch.enable` pattern of the URL gate: every document request, or
/// with `policy.resources` (or a route set: `routed`) every request.
pub fn pattern(policy: &Policy, routed: bool) -> RequestPattern {
    if policy.resources || routed {
        return every_request();
    }
    document_pattern()
}

/// How many routed requests' answers a tab remembers.
const ANSWERS_KEPT: usize = 500;

/// How a route answered one request (the rules having let it through).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutedRequest {
    /// The request's id in the network domain (the request log's
    /// `cdp_id`); `None` when Chrome gave none.
    pub network_id: Option<String>,
    /// The request's URL.
    pub url: String,
    /// The route's id (`route2`).
    pub route: String,
    /// What it did: `abort`, `fulfill`, `continue`, `delay` or `har`.
    pub answer: &'static str,
    /// The route's URL pattern as written.
    pub pattern: String,
}

impl RoutedRequest {
    /// `route2 fulfill`, as `browser_network list` shows it.
    pub fn how(&self) -> String {
        format!("{} {}", self.route, self.answer)
    }
}

/// How many URLs of one route's requests a call's audit record names.
pub const URLS_SUMMED: usize = 5;

/// A call's audit summary of `routed`: one entry per route, in the order
/// the routes first answered, `{route, answer, pattern, requests, urls}`
/// (the first [`URLS_SUMMED`] URLs): bounded by the routes, not the page.
pub fn summarize(routed: &[RoutedRequest]) -> Vec<serde_json::Value> {
    let mut by_route: Vec<(&RoutedRequest, u64, Vec<&str>)> = Vec::new();
    for r in routed {
        match by_route.iter_mut().find(|(first, ..)| first.route == r.route) {
            Some((_, n, urls)) => {
                *n += 1;
                if urls.len() < URLS_SUMMED {
                    urls.push(&r.url);
                }
            }
            None => by_route.push((r, 1, vec![&r.url])),
        }
    }
    by_route
        .into_iter()
        .map(|(r, n, urls)| {
            serde_json::json!({
                "route": r.route, "answer": r.answer, "pattern": r.pattern,
                "requests": n, "urls": urls,
            })
        })
        .collect()
}

/// What a tab's routes answered, numbered, newest last.
#[derive(Debug, Default)]
struct Answered {
    /// The number the next answer gets.
    next: u64,
    /// Answers below this number were taken for an audit record.
    reported: u64,
    recent: VecDeque<(u64, RoutedRequest)>,
}

/// A request failed at the request stage (a document, or with
/// `policy.resources` a sub-resource).
#[derive(Debug, Clone)]
pub struct Blocked {
    /// Why it was blocked.
    pub verdict: Verdict,
    /// The frame whose document it was.
    pub frame_id: String,
    /// The tab's own document (not an iframe's).
    pub main_frame: bool,
    /// It followed a redirect (a hop of a chain, not the first request).
    pub redirect: bool,
    /// The user was asked (an `ask` rule) and this is what came back (a
    /// refusal, or why no answer came).
    pub asked: Option<super::Answer>,
    /// A sub-resource's type (`Script`, `Image`…); `None` for a document.
    pub resource: Option<String>,
}

/// One tab's request-stage judge.
pub struct Gate {
    policy: Arc<Policy>,
    /// The tab's target id, which is also its main frame's id.
    target_id: String,
    /// What was blocked, numbered, newest last (the last [`KEPT`]). Locked
    /// for microseconds.
    blocked: Arc<Mutex<Log>>,
    /// The grants and asker of the session the tab serves (set by each call).
    consent: Mutex<Option<Arc<Consent>>>,
    /// The routes of the session the tab serves (set by each call).
    routes: Mutex<Option<Arc<Routes>>>,
    /// The routes' generation this tab's `Fetch.enable` was last armed for
    /// (0: as the tab was set up, with no routes).
    armed: AtomicU64,
    /// How routed requests were answered, newest last (the last
    /// [`ANSWERS_KEPT`]). Locked for microseconds.
    answered: Mutex<Answered>,
}

#[derive(Default)]
struct Log {
    /// The number the next blocked request gets.
    next: u64,
    /// Blocked requests below this number were reported in a result.
    reported: u64,
    recent: VecDeque<(u64, Blocked)>,
    /// `next`, told to whoever shows refusals as they happen (a hand-off
    /// page: a refused navigation commits nothing and repaints nothing, so
    /// no screencast frame would carry it).
    changed: tokio::sync::watch::Sender<u64>,
}

impl Gate {
    /// A gate judging the requests of the tab `target_id` by `policy`.
    pub fn new(policy: Arc<Policy>, target_id: &str) -> Gate {
        Gate {
            policy,
            target_id: target_id.to_owned(),
            blocked: Arc::default(),
            consent: Mutex::default(),
            routes: Mutex::default(),
            armed: AtomicU64::new(0),
            answered: Mutex::default(),
        }
    }

    /// The session whose routes answer this tab's requests.
    pub fn route_by(&self, routes: &Arc<Routes>) {
        let mut held = self.routes.lock().unwrap();
        if !held.as_ref().is_some_and(|r| Arc::ptr_eq(r, routes)) {
            *held = Some(routes.clone());
        }
    }

    /// The routes of the session the tab serves now.
    pub fn routes(&self) -> Option<Arc<Routes>> {
        self.routes.lock().unwrap().clone()
    }

    /// Whether any route is set: every request of the tab's sessions must
    /// then pause here.
    pub fn routed(&self) -> bool {
        self.routes().is_some_and(|r| r.any())
    }

    /// The routes' generation the interception must be armed for, when it
    /// is not armed for it yet.
    pub fn unarmed(&self) -> Option<u64> {
        let generation = self.routes()?.generation();
        (generation != self.armed.load(Ordering::Relaxed)).then_some(generation)
    }

    /// The interception is armed for `generation`.
    pub fn armed_for(&self, generation: u64) {
        self.armed.store(generation, Ordering::Relaxed);
    }

    /// Follows what `opener`'s gate follows (the session's routes and
    /// consent): a popup's gate, before its first request.
    pub fn inherit(&self, opener: &Gate) {
        if let Some(routes) = opener.routes() {
            self.route_by(&routes);
        }
        if let Some(consent) = opener.consent() {
            self.serve(&consent);
        }
    }

    /// How a route answered the request the network knows as `network_id`.
    pub fn answered(&self, network_id: &str) -> Option<RoutedRequest> {
        let answered = self.answered.lock().unwrap();
        answered
            .recent
            .iter()
            .rev()
            .find(|(_, r)| r.network_id.as_deref() == Some(network_id))
            .map(|(_, r)| r.clone())
    }

    /// What the routes answered since the previous take (of the last
    /// [`ANSWERS_KEPT`]), oldest first.
    pub fn take_routed(&self) -> Vec<RoutedRequest> {
        let mut answered = self.answered.lock().unwrap();
        let from = answered.reported;
        answered.reported = answered.next;
        answered
            .recent
            .iter()
            .filter(|(n, _)| *n >= from)
            .map(|(_, r)| r.clone())
            .collect()
    }

    fn record_answer(&self, paused: &RequestPaused, route: &Route) {
        route.hit();
        let mut answered = self.answered.lock().unwrap();
        let n = answered.next;
        answered.next += 1;
        answered.recent.push_back((
            n,
            RoutedRequest {
                network_id: paused.network_id.clone(),
                url: paused.request.url.clone(),
                route: route.id.clone(),
                answer: route.answer.word(),
                pattern: route.pattern().to_owned(),
            },
        ));
        if answered.recent.len() > ANSWERS_KEPT {
            answered.recent.pop_front();
        }
    }

    /// The session whose grants and asker `ask` verdicts here follow.
    pub fn serve(&self, consent: &Arc<Consent>) {
        *self.consent.lock().unwrap() = Some(consent.clone());
    }

    /// The grants and asker of the session the tab serves now (a page
    /// tool's call asks through it).
    pub fn consent(&self) -> Option<Arc<Consent>> {
        self.consent.lock().unwrap().clone()
    }

    /// The rules it judges by.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// A mark to ask [`Gate::since`] what was blocked after it.
    pub fn mark(&self) -> u64 {
        self.blocked.lock().unwrap().next
    }

    /// Hears the mark move each time a request is refused.
    pub fn refusals(&self) -> tokio::sync::watch::Receiver<u64> {
        self.blocked.lock().unwrap().changed.subscribe()
    }

    /// What was blocked since `mark`, oldest first.
    pub fn since(&self, mark: u64) -> Vec<Blocked> {
        let log = self.blocked.lock().unwrap();
        log.recent
            .iter()
            .filter(|(n, _)| *n >= mark)
            .map(|(_, b)| b.clone())
            .collect()
    }

    /// What was blocked and not yet reported in a result (a navigation
    /// the page started after the previous call returned is named by the
    /// next one), oldest first; marks it reported.
    pub fn take_unreported(&self) -> Vec<Blocked> {
        let mut log = self.blocked.lock().unwrap();
        let from = log.reported;
        log.reported = log.next;
        log.recent
            .iter()
            .filter(|(n, _)| *n >= from)
            .map(|(_, b)| b.clone())
            .collect()
    }

    /// Judges a paused document request of `session` (the tab's or a
    /// child's) and answers it from a task of its own. A denied request is
    /// recorded before its answer is sent, so whoever learns of the failure
    /// from the browser finds the record.
    pub fn paused(&self, session: Session, paused: RequestPaused) {
        let request = &paused.request;
        let route = self.routes().and_then(|routes| {
            routes.find(
                &request.url,
                &request.method,
                request.post_data.as_deref(),
                &paused.resource_type,
            )
        });
        if route.is_none() && paused.resource_type != "Document" && !self.policy.resources {
            // Paused only because some route is set (none is for it): a
            // sub-resource is not the request stage's to judge by path
            // (the egress gate holds its host).
            answer(session, paused.request_id, None);
            return;
        }
        let verdict = self.policy.judge(&paused.request.url);
        let request_id = paused.request_id.clone();
        let consent = self.consent.lock().unwrap().clone();
        let granted = consent.as_ref().is_some_and(|c| c.granted(&verdict));
        if verdict.allowed() || granted {
            match route {
                Some(route) => {
                    self.record_answer(&paused, &route);
                    answer_routed(session, request_id, &paused, &route);
                }
                None => answer(session, request_id, None),
            }
            return;
        }
        let resource = (paused.resource_type != "Document").then_some(paused.resource_type);
        let main_frame = paused.frame_id == self.target_id && resource.is_none();
        let blocked = Blocked {
            verdict,
            frame_id: paused.frame_id,
            main_frame,
            redirect: paused.redirected_request_id.is_some(),
            asked: None,
            resource,
        };
        let asker = consent.as_ref().and_then(|c| c.asker());
        match (blocked.verdict.decision, consent, asker) {
            // Sub-resources are not asked about (a page loads dozens): an
            // ask not yet granted refuses them.
            // An ask while no call of the session runs (the page moved by
            // itself between calls) is refused and reported with the next
            // call (its result's `blocked`, its audit record): the user is
            // never asked about something no agent did.
            (Decision::Ask, Some(consent), Some(_)) if !consent.in_call() && blocked.resource.is_none() => {
                tracing::info!(url = %blocked.verdict.url, "an ask while no call was running: refused, not asked");
                let blocked = Blocked {
                    asked: Some(super::Answer::Failed(NO_CALL.into())),
                    ..blocked
                };
                refuse(&self.blocked, session, request_id, blocked);
            }
            (Decision::Ask, Some(consent), Some(asker)) if blocked.resource.is_none() => {
                let log = self.blocked.clone();
                tokio::spawn(async move {
                    let answer = tokio::time::timeout(ASK_BUDGET, asker.ask(&blocked.verdict))
                        .await
                        .unwrap_or_else(|_| super::Answer::Failed("no answer in time".into()));
                    // A "once" here lets this request through, and its
                    // connection through the egress gate while the
                    // session's calls run.
                    if let Ok(grant) = consent.record(&blocked.verdict, answer.clone(), "") {
                        consent.hold(grant);
                        self::answer(session, request_id, None);
                    } else {
                        let blocked = Blocked {
                            asked: Some(answer),
                            ..blocked
                        };
                        refuse(&log, session, request_id, blocked);
                    }
                });
            }
            _ => refuse(&self.blocked, session, request_id, blocked),
        }
    }
}

/// Records a refused document request, then fails it. Recorded before the
/// answer is sent, so whoever learns of the failure from the browser finds
/// the record.
fn refuse(log: &Mutex<Log>, session: Session, request_id: String, blocked: Blocked) {
    let main_frame = blocked.main_frame;
    tracing::info!(url = %blocked.verdict.url, rule = %blocked.verdict.rule, main_frame, "document request blocked");
    {
        let mut log = log.lock().unwrap();
        let n = log.next;
        log.next += 1;
        log.recent.push_back((n, blocked));
        if log.recent.len() > KEPT {
            log.recent.pop_front();
        }
        log.changed.send_replace(log.next);
    }
    // A main frame failed as `BlockedByClient` commits Chrome's error
    // page in place of the page the tab was on; `Aborted` commits
    // nothing, so the tab stays where it was. A frame shows the error
    // page ("blocked"), and its parent goes on working.
    answer(
        session,
        request_id,
        Some(if main_frame { "Aborted" } else { "BlockedByClient" }),
    );
}

/// Answers a paused request the rules allow as `route` says, from a task
/// of its own.
fn answer_routed(session: Session, request_id: String, paused: &RequestPaused, route: &Arc<Route>) {
    let fulfill = |status: u16, headers: &[(String, String)], body: &[u8]| FulfillRequest {
        request_id: request_id.clone(),
        response_code: status,
        response_headers: headers
            .iter()
            .map(|(name, value)| HeaderEntry {
                name: name.clone(),
                value: value.clone(),
            })
            .collect(),
        body: Some(base64::engine::general_purpose::STANDARD.encode(body)),
    };
    let answered = match &route.answer {
        Answer::Abort { reason } => return answer(session, request_id, Some(reason)),
        Answer::Delay { ms } => {
            let ms = *ms;
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                answer(session, request_id, None);
            });
            return;
        }
        Answer::Fulfill {
            status,
            headers,
            body,
        } => Reply::Fulfill(fulfill(*status, headers, body)),
        Answer::Har { har, .. } => {
            let request = &paused.request;
            match har.find(&request.method, &request.url, request.post_data.as_deref()) {
                Some(recorded) => Reply::Fulfill(fulfill(recorded.status, &recorded.headers, &recorded.body)),
                // `not_found` (a route that lets such requests go to the
                // network never matched them: `Routes::find`).
                None => return answer(session, request_id, Some("Failed")),
            }
        }
        Answer::Continue {
            headers,
            method,
            post_data,
        } => {
            let mut merged: Vec<HeaderEntry> = paused
                .request
                .headers
                .iter()
                .filter(|(name, _)| !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)))
                .map(|(name, value)| HeaderEntry {
                    name: name.clone(),
                    value: value
                        .as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| value.to_string()),
                })
                .collect();
            merged.extend(headers.iter().map(|(name, value)| HeaderEntry {
                name: name.clone(),
                value: value.clone(),
            }));
            Reply::Continue(ContinueRequest {
                request_id: request_id.clone(),
                method: method.clone(),
                post_data: post_data
                    .as_ref()
                    .map(|data| base64::engine::general_purpose::STANDARD.encode(data)),
                headers: (!headers.is_empty()).then_some(merged),
            })
        }
    };
    tokio::spawn(async move {
        let deadline = Instant::now() + ANSWER_BUDGET;
        let sent = match answered {
            Reply::Fulfill(fulfill) => session.call(fulfill, deadline).await.map(|_| ()),
            Reply::Continue(go_on) => session.call(go_on, deadline).await.map(|_| ()),
        };
        if let Err(e) = sent {
            tracing::debug!("answering a routed request: {e}");
        }
    });
}

/// A routed request's answer, sent from a task.
enum Reply {
    Fulfill(FulfillRequest),
    Continue(ContinueRequest),
}

/// Continues a paused request (`fail_as` `None`) or fails it with that
/// `Network.ErrorReason`, from a task of its own.
pub fn answer(session: Session, request_id: String, fail_as: Option<&'static str>) {
    tokio::spawn(async move {
        let deadline = Instant::now() + ANSWER_BUDGET;
        let answered = match fail_as {
            None => {
                let go_on = ContinueRequest {
                    request_id,
                    ..Default::default()
                };
                session.call(go_on, deadline).await
            }
            Some(reason) => {
                let fail = FailRequest {
                    request_id,
                    error_reason: reason.into(),
                };
                session.call(fail, deadline).await
            }
        };
        if let Err(e) = answered {
            tracing::debug!("answering a paused document request: {e}");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paused(network_id: &str, url: &str) -> RequestPaused {
        serde_json::from_value(serde_json::json!({
            "requestId": "interception-1", "frameId": "F", "resourceType": "Image",
            "networkId": network_id, "request": {"url": url, "method": "GET", "headers": {}},
        }))
        .unwrap()
    }

    #[test]
    fn each_answer_is_taken_once_counted_and_summed_per_route() {
        let gate = Gate::new(Arc::new(Policy::default()), "T");
        let routes = Routes::default();
        let abort = routes
            .add(Route::new("http://a.test/*", vec![], Answer::Abort { reason: "Failed" }).unwrap())
            .unwrap();
        let delay = routes
            .add(Route::new("http://b.test/*", vec![], Answer::Delay { ms: 1 }).unwrap())
            .unwrap();
        for i in 0..7 {
            gate.record_answer(
                &paused(&format!("n{i}"), &format!("http://a.test/{i}.png")),
                &abort,
            );
        }
        gate.record_answer(&paused("n9", "http://b.test/api"), &delay);
        assert_eq!((abort.hits(), delay.hits()), (7, 1));
        let how = gate.answered("n9").unwrap();
        assert_eq!(
            (how.how(), how.pattern.as_str()),
            ("route2 delay".into(), "http://b.test/*")
        );

        let summed = summarize(&gate.take_routed());
        assert_eq!(summed.len(), 2, "one entry per route: {summed:?}");
        assert_eq!(summed[0]["requests"], 7);
        assert_eq!(summed[0]["answer"], "abort");
        assert_eq!(summed[0]["urls"].as_array().unwrap().len(), URLS_SUMMED);
        assert_eq!(summed[1]["urls"], serde_json::json!(["http://b.test/api"]));
        assert!(
            gate.take_routed().is_empty(),
            "each answer goes to one audit record"
        );
        assert!(gate.answered("n3").is_some(), "the request log still reads it");
    }
}
