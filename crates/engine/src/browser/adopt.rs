//! Every new target starts paused and runs only once it is gated.
//!
//! The browser session auto-attaches every top-level target with
//! `waitForDebuggerOnStart` (flattened): popups, `window.open`, tabs other
//! clients open, prerenders, service and shared workers. Chrome holds each
//! one before its first request until we say `Runtime.runIfWaitingForDebugger`:
//!
//! - a new page is adopted as a tab (`TargetManager::tab` takes its paused
//!   session): its request-stage gate, world and disguise are in place, and
//!   its frames auto-attach paused in turn, before it runs;
//! - a worker (service, shared, dedicated) gets a request gate of its own
//!   on every request (`Fetch.enable` on `*`: a worker's `fetch()` is not a
//!   document the tabs' gates would see), judged by the URL rules here,
//!   and the rules that refuse by path as its blocklist, then runs
//!   (`egress/workers.rs`); a request either refuses is recorded in the
//!   egress door of the worker's browser context (`ContextPorts`), so the
//!   session owning that context lists it in its next result's `blocked`,
//!   naming the worker;
//!   any other kind (browser UI, worklets) just runs.
//!
//! On a browser shared with its user (auto-connect) the auto-attach is
//! limited to pages and shared and service workers: a popup of an agent's
//! tab is no related target of it (`Target.autoAttachRelated` leaves it
//! out, and its iframes fetched unjudged), nor is a shared worker. What
//! is not in a browser context of the agent's (the user's tabs, new and
//! old, and their workers) is let run and detached at once, nothing
//! enabled in it: attached only to learn whose it is.
//!
//! Pages that existed before (the first blank tab, a browser we attached
//! to) are announced attached but not paused, and so is every explicit
//! `Target.attachToTarget` of ours (a tab, an evaluate lane): those are
//! left alone, and existing pages are attached on first use, as before.
//!
//! Owns the browser session's auto-attach for one connection (a reconnect
//! starts it again), and the gate tasks of the workers it resumed (each
//! ends when its worker's session does). Ends when the connection or its
//! link is gone.

use std::sync::{Arc, Weak};

use std::time::Duration;

use cdp::protocol::runtime::RunIfWaitingForDebugger;
use cdp::protocol::target::{
    AttachedToTarget, DetachFromTarget, SetAutoAttach, SetAutoAttachFiltered, TargetFilter,
};
use cdp::Session;
use tokio::time::Instant;

use super::Link;
use crate::egress::{workers, ContextPorts};
use crate::{ActionError, Budget};

/// How long preparing one paused target may take (no caller waits on it;
/// the target waits meanwhile).
const PREPARE_BUDGET: Duration = Duration::from_secs(20);

/// Switches on paused auto-attach for `link`'s connection and follows what
/// it attaches. On a browser `shared` with its user it is limited to pages
/// and shared and service workers, and what is not in a context of the
/// agent's is let go at once (a tab's frames and dedicated workers come
/// with the tab's own auto-attach). Not `Target.autoAttachRelated`: it
/// leaves popups out, and once called it turns the browser session's
/// auto-attach into its own (the tab's paused session was detached).
pub async fn watch(
    link: &Arc<Link>,
    doors: Arc<ContextPorts>,
    shared: bool,
    budget: &Budget,
) -> Result<(), ActionError> {
    let conn = link.targets.connection().clone();
    // Subscribed before switching on, so no attached target is missed.
    let mut events = conn.events(Some(""));
    let auto_attach = SetAutoAttach {
        auto_attach: true,
        wait_for_debugger_on_start: true,
        flatten: true,
    };
    if shared {
        let only = |kind: &str| TargetFilter {
            kind: Some(kind.into()),
            exclude: false,
        };
        let auto_attach = SetAutoAttachFiltered {
            auto_attach: true,
            wait_for_debugger_on_start: true,
            flatten: true,
            filter: vec![
                only("page"),
                only("shared_worker"),
                only("service_worker"),
                TargetFilter {
                    kind: None,
                    exclude: true,
                },
            ],
        };
        budget
            .cdp(
                "pausing the agent's popups and shared workers until they are gated",
                &conn.browser(),
                auto_attach,
            )
            .await?;
    } else {
        budget
            .cdp(
                "pausing new targets until they are gated",
                &conn.browser(),
                auto_attach,
            )
            .await?;
    }
    let link: Weak<Link> = Arc::downgrade(link);
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            let Some(attached) = event.decode::<AttachedToTarget>() else {
                continue;
            };
            let Some(link) = link.upgrade() else { break };
            let session = conn.session(attached.session_id.clone());
            let info = attached.target_info;
            // The user's: let go, untouched.
            let theirs = shared
                && !info
                    .browser_context_id
                    .as_deref()
                    .is_some_and(|context| doors.created(context));
            if theirs {
                tokio::spawn(release(session, attached.waiting_for_debugger));
                continue;
            }
            match (info.kind.as_str(), attached.waiting_for_debugger) {
                ("page", true) => {
                    tokio::spawn(adopt_page(link, info.target_id));
                }
                // One of ours, or a page that existed before.
                ("page", false) => {}
                ("service_worker" | "shared_worker" | "worker", waiting) => {
                    let policy = link.targets.setup().policy.clone();
                    let kind = info.kind.clone();
                    // Held weakly: the worker's gate does not keep its
                    // session's door (and port) open.
                    let door = doors
                        .of(info.browser_context_id.as_deref())
                        .map(|d| Arc::downgrade(&d))
                        .unwrap_or_default();
                    let setup = link.targets.setup().clone();
                    tokio::spawn(async move {
                        // Its requests and its own `navigator.userAgent`
                        // carry the session's user agent and hints, before
                        // it runs (docs/src/identity.md).
                        if let Err(error) = setup
                            .worker_agent(&session, Instant::now() + PREPARE_BUDGET)
                            .await
                        {
                            tracing::debug!("giving a {kind} target the user agent failed: {error}");
                        }
                        workers::gate_and_run(&session, &kind, waiting, policy, door).await
                    });
                }
                (kind, true) => {
                    let kind = kind.to_owned();
                    tokio::spawn(async move {
                        let resumed = session
                            .call(RunIfWaitingForDebugger {}, Instant::now() + PREPARE_BUDGET)
                            .await;
                        if let Err(error) = resumed {
                            tracing::debug!("resuming a {kind} target failed: {error}");
                        }
                    });
                }
                (_, false) => {}
            }
        }
    });
    Ok(())
}

/// Makes a tab of a paused page (which lets it run). If the page was
/// attached another way first, its paused session is let go here.
async fn adopt_page(link: Arc<Link>, target_id: String) {
    let budget = Budget::with_timeout(PREPARE_BUDGET);
    if let Err(error) = link.targets.tab(&target_id, None, &budget).await {
        tracing::debug!("adopting a new page failed: {error}");
    }
    if let Some(left) = link.targets.take_waiting(&target_id) {
        let session = link.targets.connection().session(left);
        let _ = session
            .call(RunIfWaitingForDebugger {}, Instant::now() + PREPARE_BUDGET)
            .await;
        detach(session).await;
    }
}

/// Lets a target that is not the agent's run, and detaches from it.
async fn release(session: Session, waiting: bool) {
    if waiting {
        let _ = session
            .call(RunIfWaitingForDebugger {}, Instant::now() + PREPARE_BUDGET)
            .await;
    }
    detach(session).await;
}

async fn detach(session: Session) {
    let detach = DetachFromTarget {
        session_id: session.id().to_owned(),
    };
    let _ = session
        .connection()
        .browser()
        .call(detach, Instant::now() + PREPARE_BUDGET)
        .await;
}
