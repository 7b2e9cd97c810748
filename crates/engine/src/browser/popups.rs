//! New pages no tab session is attached to yet (a `window.open` popup, a
//! tab another client opened) make their first document request before
//! any session of ours could pause it. The browser session's own `Fetch`
//! pauses every document request of every target; this task judges those
//! of page targets we have not attached, and lets every other one through
//! at once: tabs and their iframes are judged by their own sessions
//! (`crate::policy::gate`), which keep the record an action reports.
//!
//! Owns the browser session's `Fetch`, for one connection (a reconnect
//! starts it again). Ends when the connection or its link is gone.

use std::sync::{Arc, Weak};

use cdp::protocol::fetch::{Enable, RequestPaused};

use super::Link;
use crate::policy::{gate, Policy};
use crate::{ActionError, Budget};

/// Starts judging unattached pages' documents on `link`'s connection, when
/// the policy can refuse anything.
pub async fn watch(link: &Arc<Link>, policy: Arc<Policy>, budget: &Budget) -> Result<(), ActionError> {
    if !policy.restricts() {
        return Ok(());
    }
    let conn = link.targets.connection().clone();
    // Subscribed before enabling, so no paused request slips past.
    let mut events = conn.events(Some(""));
    let enable = Enable {
        patterns: vec![gate::document_pattern()],
    };
    budget
        .cdp("pausing new pages' documents", &conn.browser(), enable)
        .await?;
    let link: Weak<Link> = Arc::downgrade(link);
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            let Some(paused) = event.decode::<RequestPaused>() else {
                continue;
            };
            let Some(link) = link.upgrade() else { break };
            let ours = !link.targets.is_unattached_page(&paused.frame_id);
            let verdict = (!ours).then(|| policy.judge(&paused.request.url));
            let fail_as = match verdict {
                Some(v) if !v.allowed() => {
                    tracing::info!(url = %v.url, rule = %v.rule, "a new page's document blocked");
                    // `Aborted`: the new page stays blank rather than showing an error.
                    Some("Aborted")
                }
                _ => None,
            };
            gate::answer(conn.browser(), paused.request_id, fail_as);
        }
    });
    Ok(())
}
