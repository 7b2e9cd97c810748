//! Before trusted input: the tab is brought to the front of its window
//! when it is hidden, as a person switches to a tab before clicking in it.
//!
//! A hidden tab (another tab of its window in front: one the agent opened
//! with `browser_tabs new`, a popup its page opened, an extension's agent
//! window showing another tab) draws no frames: `requestAnimationFrame`
//! never fires, and Chromium (156) acknowledges no mouse move for it and
//! delivers no input to its cross-origin frames. Input sent to it would
//! wait out the call's whole budget. Only the tool's own tab is brought to
//! the front; the session's active tab (`browser_tabs`) does not change.
//! A tab that stays hidden (its window is minimized) answers
//! `element_not_interactable` at once, naming what to do. A hand-off
//! brings its tab to the front too: a hidden tab's screencast sends no
//! frame, so the person would see nothing.

use cdp::protocol::page;

use crate::tab::Tab;
use crate::{ActionError, Budget, ErrorCode};

/// Read in cdpilot's world, where the page cannot redefine it.
const VISIBILITY: &str = "document.visibilityState";

/// Brings `tab` to the front when its document is hidden; an error when it
/// stays hidden.
pub async fn ensure(tab: &Tab, budget: &Budget) -> Result<(), ActionError> {
    if bring(tab, budget).await? {
        return Ok(());
    }
    Err(ActionError::new(
        ErrorCode::ElementNotInteractable,
        "the tab is hidden and stayed hidden when brought to the front (its window is minimized), so it would not receive input",
        "Restore the browser window, or open the page in a new tab (browser_tabs with action new) and act there.",
    ))
}

/// Brings `tab` to the front when its document is hidden; whether it is
/// visible now. A hand-off uses it as it is: a tab that draws nothing
/// shows the person nothing, and a person can restore their own window.
pub async fn bring(tab: &Tab, budget: &Budget) -> Result<bool, ActionError> {
    if visible(tab, budget).await? {
        return Ok(true);
    }
    budget
        .cdp(
            "bringing the tab to the front",
            &tab.session,
            page::BringToFront {},
        )
        .await?;
    let now = visible(tab, budget).await?;
    tracing::debug!(visible = now, "the tab was hidden: brought to the front");
    Ok(now)
}

async fn visible(tab: &Tab, budget: &Budget) -> Result<bool, ActionError> {
    let state = tab
        .evaluate_in_world(budget, "reading whether the tab is visible", VISIBILITY, true)
        .await?;
    Ok(state.value.as_ref().and_then(|v| v.as_str()) != Some("hidden"))
}
