//! A worker's request gate: every request a worker (service, shared,
//! dedicated) makes is paused (`Fetch.enable` on `*` in the worker's own
//! session: a worker's `fetch()` is no document a tab's gate would see),
//! judged by the URL rules, path rules included, and refused or let go;
//! and the rules that refuse by path as the worker's blocklist
//! ([`crate::policy::blocklist`]), which holds from its first request
//! where `Fetch` is missing (a dedicated worker) or late (a shared one);
//! a refusal is recorded in the egress door of the worker's browser context
//! ([`ProxyPort::record_worker_block`]), so the session owning that context
//! reports it. The egress gate holds the worker's connections by host; this
//! holds its requests by path.
//!
//! Used for every worker the browser session's auto-attach brings
//! (`browser/adopt.rs`: service and shared workers; on a browser cdpilot
//! shares with its user, only those in the agent's contexts); a tab's
//! dedicated workers get their blocklist from the tab's reader
//! (`tab/pump.rs`). Owns one task per gated worker, ending with the
//! worker's session.

use std::sync::Weak;
use std::time::Duration;

use cdp::protocol::fetch::{Enable, RequestPattern, RequestPaused};
use cdp::protocol::runtime::RunIfWaitingForDebugger;
use cdp::protocol::target::DetachedFromTarget;
use cdp::Session;
use std::sync::Arc;
use tokio::time::Instant;

use super::ProxyPort;
use crate::policy::{blocklist, gate, Policy};

/// How long gating and resuming one worker may take (no caller waits on
/// it; the worker waits meanwhile).
const PREPARE_BUDGET: Duration = Duration::from_secs(20);

/// A worker (or any target but a page): every request it makes is judged
/// by the URL rules before it leaves, then it runs; a refused one is
/// recorded in `door` (its browser context's) for the session to report.
/// The session stays attached for as long as the target lives (the gate
/// is its `Fetch`).
pub async fn gate_and_run(
    session: &Session,
    kind: &str,
    waiting: bool,
    policy: Arc<Policy>,
    door: Weak<ProxyPort>,
) {
    let deadline = Instant::now() + PREPARE_BUDGET;
    if policy.restricts() {
        if let Err(error) = blocklist::install(session, &policy, deadline).await {
            // Its connections are still held by host at the egress gate.
            tracing::debug!("giving a {kind} target its blocklist failed: {error}");
        }
    }
    if policy.restricts() {
        let mut events = session.connection().events(Some(session.id()));
        // The browser session's events say when the worker's session ends
        // (the worker stopped): the gate's task ends with it.
        let mut browser_events = session.connection().events(Some(""));
        let every_request = Enable {
            patterns: vec![RequestPattern {
                url_pattern: "*".into(),
                resource_type: None,
                request_stage: "Request".into(),
            }],
        };
        match session.call(every_request, deadline).await {
            Ok(_) => {
                let session = session.clone();
                let kind = kind.to_owned();
                tokio::spawn(async move {
                    loop {
                        let event = tokio::select! {
                            event = events.recv() => event,
                            ended = browser_events.recv() => match ended {
                                Some(e) if e.decode::<DetachedFromTarget>()
                                    .is_some_and(|d| d.session_id == session.id()) => None,
                                Some(_) => continue,
                                None => None,
                            },
                        };
                        let Some(event) = event else { break };
                        let Some(paused) = event.decode::<RequestPaused>() else {
                            continue;
                        };
                        let verdict = policy.judge(&paused.request.url);
                        let fail_as = (!verdict.allowed()).then(|| {
                            match door.upgrade() {
                                Some(door) => door.record_worker_block(
                                    &verdict.url,
                                    &verdict.rule,
                                    &paused.resource_type,
                                    &kind,
                                ),
                                // A context no session holds (the
                                // default one of a browser cdpilot did
                                // not launch): logged only.
                                None => tracing::info!(url = %verdict.url, rule = %verdict.rule, "a {kind}'s request blocked"),
                            }
                            "BlockedByClient"
                        });
                        gate::answer(session.clone(), paused.request_id, fail_as);
                    }
                });
            }
            // Workers of some kinds have no Fetch domain: they are still
            // covered at the host level by the egress gate.
            Err(error) => tracing::debug!("gating a {kind} target failed: {error}"),
        }
    }
    if waiting {
        if let Err(error) = session.call(RunIfWaitingForDebugger {}, deadline).await {
            tracing::debug!("resuming a {kind} target failed: {error}");
        }
    }
}
