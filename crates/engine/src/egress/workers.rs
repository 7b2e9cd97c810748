//! A worker's request gate: every request a worker (service, shared,
//! dedicated) makes is paused (`Fetch.enable` on `*` in the worker's own
//! session: a worker's `fetch()` is no document a tab's gate would see),
//! judged by the URL rules, path rules included, and refused or let go;
//! and the rules that refuse by path as the worker's blocklist
//! ([`crate::policy::blocklist`]), which holds from its first request
//! where `Fetch` is missing (a dedicated worker) or late (a shared one).
//! Seen in Chromium 156: a shared worker's session accepts `Fetch.enable`
//! and then pauses none of its `fetch()` requests, so there the blocklist
//! (by path) and the egress gate (by host) are what hold (issue 44's
//! `routes::a_route_never_answers_a_worker_or_a_cross_origin_frame_for_a_denied_url`).
//! A refusal by either is recorded in the egress door of the worker's
//! browser context ([`report`]: [`ProxyPort::record_worker_block`]), so the
//! session owning that context reports it; the blocklist's are read from
//! the worker's session events ([`blocklist::Watch`]). The egress gate
//! holds the worker's connections by host; this holds its requests by
//! path.
//!
//! Used for every worker the browser session's auto-attach brings
//! (`browser/adopt.rs`: service and shared workers; on a browser cdpilot
//! shares with its user, only those in the agent's contexts); a tab's
//! dedicated workers get their blocklist from the tab's reader
//! (`tab/pump.rs`), which reports what it refused through [`report`] too.
//! Owns one task per gated worker (its gate, its blocklist's watch),
//! ending with the worker's session.

use std::sync::{Arc, Weak};
use std::time::Duration;

use cdp::protocol::fetch::{Enable, RequestPattern, RequestPaused};
use cdp::protocol::runtime::RunIfWaitingForDebugger;
use cdp::protocol::target::DetachedFromTarget;
use cdp::Session;
use tokio::time::Instant;

use super::ProxyPort;
use crate::policy::{blocklist, gate, Policy};

/// How long gating and resuming one worker may take (no caller waits on
/// it; the worker waits meanwhile).
const PREPARE_BUDGET: Duration = Duration::from_secs(20);

/// A worker (or any target but a page): every request it makes is judged
/// by the URL rules before it leaves, then it runs; a refused one (by its
/// request gate or its blocklist) is recorded in `door` (its browser
/// context's) for the session to report. The session stays attached for
/// as long as the target lives (the gate is its `Fetch`).
pub async fn gate_and_run(
    session: &Session,
    kind: &str,
    waiting: bool,
    policy: Arc<Policy>,
    door: Weak<ProxyPort>,
) {
    let deadline = Instant::now() + PREPARE_BUDGET;
    if policy.restricts() {
        // Subscribed before the worker runs: none of its events is missed.
        let events = session.connection().events(Some(session.id()));
        // The browser session's events say when the worker's session ends
        // (the worker stopped): the gate's task ends with it.
        let browser_events = session.connection().events(Some(""));
        let mut watch = blocklist::Watch::new(policy.clone());
        match blocklist::install(session, &policy, deadline).await {
            Ok(()) => {
                if let Some(watch) = &mut watch {
                    watch.follow(session.id(), ());
                }
            }
            Err(error) => {
                // Its connections are still held by host at the egress gate.
                tracing::debug!("giving a {kind} target its blocklist failed: {error}");
                watch = None;
            }
        }
        let every_request = Enable {
            patterns: vec![RequestPattern {
                url_pattern: "*".into(),
                resource_type: None,
                request_stage: "Request".into(),
            }],
        };
        let gated = match session.call(every_request, deadline).await {
            Ok(_) => true,
            // Workers of some kinds have no Fetch domain: they are still
            // covered at the host level by the egress gate.
            Err(error) => {
                tracing::debug!("gating a {kind} target failed: {error}");
                false
            }
        };
        if gated || watch.is_some() {
            let worker = Worker {
                session: session.clone(),
                kind: kind.to_owned(),
                policy,
                door,
            };
            tokio::spawn(worker.follow(events, browser_events, watch));
        }
    }
    if waiting {
        if let Err(error) = session.call(RunIfWaitingForDebugger {}, deadline).await {
            tracing::debug!("resuming a {kind} target failed: {error}");
        }
    }
}

/// A gated worker, as its task follows it.
struct Worker {
    session: Session,
    /// Its target type (`shared_worker`, `service_worker`, `worker`).
    kind: String,
    policy: Arc<Policy>,
    /// Its browser context's door, held weakly: the worker's gate does not
    /// keep its session's door (and port) open.
    door: Weak<ProxyPort>,
}

impl Worker {
    /// Answers the worker's paused requests and reports what its
    /// blocklist failed, until its session ends.
    async fn follow(
        self,
        mut events: cdp::EventStream,
        mut browser_events: cdp::EventStream,
        mut watch: Option<blocklist::Watch<()>>,
    ) {
        loop {
            let event = tokio::select! {
                event = events.recv() => event,
                ended = browser_events.recv() => match ended {
                    Some(e) if e.decode::<DetachedFromTarget>()
                        .is_some_and(|d| d.session_id == self.session.id()) => None,
                    Some(_) => continue,
                    None => None,
                },
            };
            let Some(event) = event else { break };
            if let Some(paused) = event.decode::<RequestPaused>() {
                let verdict = self.policy.judge(&paused.request.url);
                let fail_as = (!verdict.allowed()).then(|| {
                    let (url, rule) = (&verdict.url, &verdict.rule);
                    report(self.door.upgrade(), url, rule, &paused.resource_type, &self.kind);
                    "BlockedByClient"
                });
                gate::answer(self.session.clone(), paused.request_id, fail_as);
            } else if let Some(refused) = watch.as_mut().and_then(|w| w.event(&event)) {
                let (url, rule) = (&refused.verdict.url, &refused.verdict.rule);
                report(self.door.upgrade(), url, rule, &refused.resource, &self.kind);
            }
        }
    }
}

/// Records a request a worker of `kind` made that its request gate or its
/// blocklist refused (`resource`: its type) in `door`, its browser
/// context's, for the session owning that context to report. With no door
/// (a context no session holds: the default one of a browser cdpilot did
/// not launch) it is logged only.
pub fn report(door: Option<Arc<ProxyPort>>, url: &str, rule: &str, resource: &str, kind: &str) {
    match door {
        Some(door) => door.record_worker_block(url, rule, resource, kind),
        None => tracing::info!(url, rule, "a {kind}'s request blocked"),
    }
}
