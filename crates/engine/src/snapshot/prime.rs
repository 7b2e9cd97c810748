//! The listener scan a navigate starts ahead of the first snapshot (issue
//! 46): a new document's first snapshot paid for Chrome's listing of its
//! event listeners (`listeners.rs`), 31–48 ms of its 118 ms on a page of
//! 5,000 controls, most of it Chrome compiling the page's inline handlers.
//! The navigate's answer goes to the model first; the scan runs while the
//! model reads it, and the snapshot that follows waits for it if it is
//! still running (the tab's `listener_scan` lock) and finds its marks in
//! place. The main frame's document only: frames inside are scanned by
//! their snapshot as before.
//!
//! What it costs: the scan runs after every navigate, snapshot or not (on
//! an ordinary page 1–3 ms of the renderer's time; a call sent at once
//! after the navigate waits behind it in the page). It is the snapshot's
//! own scan moved earlier, so a snapshot of the page pays nothing more.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::serialize_marked;
use crate::tab::Tab;
use crate::timing;
use crate::{ActionError, Budget};

/// The scan's own budget: past it, the snapshot scans for itself.
const PRIME_BUDGET: Duration = Duration::from_secs(5);

/// Starts the listener scan of `tab`'s new document in the background.
/// Failures are dropped: the snapshot scans for itself as before.
pub fn prime(tab: Arc<Tab>) {
    tokio::spawn(async move {
        let budget = Budget::with_timeout(PRIME_BUDGET);
        if let Err(e) = timing::timed("snapshot.prime", scan(&tab, &budget)).await {
            tracing::debug!("the listener scan ahead of the first snapshot: {e}");
        }
    });
}

/// The main frame's listener phase of a snapshot, without the tree: the
/// serializer, asked with `prime`, answers the marks it holds when the
/// document changed since its last scan (a fresh one always did), else
/// nothing.
async fn scan(tab: &Tab, budget: &Budget) -> Result<(), ActionError> {
    let options = json!({ "listeners": true, "prime": true });
    serialize_marked(tab, &tab.main_frame(), budget, options).await?;
    Ok(())
}
