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

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cdp::protocol::fetch::{ContinueRequest, FailRequest, RequestPattern, RequestPaused};
use cdp::Session;
use tokio::time::Instant;

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

/// The `Fetch.enable` pattern of the URL gate: every document request, or
/// with `policy.resources` every request.
pub fn pattern(policy: &Policy) -> RequestPattern {
    if policy.resources {
        return RequestPattern {
            url_pattern: "*".into(),
            resource_type: None,
            request_stage: "Request".into(),
        };
    }
    document_pattern()
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
        let verdict = self.policy.judge(&paused.request.url);
        let request_id = paused.request_id;
        let consent = self.consent.lock().unwrap().clone();
        let granted = consent.as_ref().is_some_and(|c| c.granted(&verdict));
        if verdict.allowed() || granted {
            answer(session, request_id, None);
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

/// Continues a paused request (`fail_as` `None`) or fails it with that
/// `Network.ErrorReason`, from a task of its own.
pub fn answer(session: Session, request_id: String, fail_as: Option<&'static str>) {
    tokio::spawn(async move {
        let deadline = Instant::now() + ANSWER_BUDGET;
        let answered = match fail_as {
            None => session.call(ContinueRequest { request_id }, deadline).await,
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
