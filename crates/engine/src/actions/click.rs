//! `browser_click`: scroll the element into view, click the centre of its
//! box with trusted mouse input, and report whether the page navigated.

use serde_json::json;

use crate::action::{ClickArgs, WaitUntil};
use crate::actions::{element, input, navigate};
use crate::tab::Tab;
use crate::{ActionError, ActionOutput, Budget};

/// Events that mean the click started a navigation of the main frame.
const NAVIGATION_STARTED: &[&str] = &[
    "Page.frameRequestedNavigation",
    "Page.frameStartedNavigating",
    "Page.frameStartedLoading",
    "Page.frameNavigated",
];

pub async fn run(tab: &Tab, args: &ClickArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let element = element::resolve(tab, &args.target, budget).await?;
    let point = element.clickable_point(tab, budget).await?;
    let (main_frame, document_before) = tab.state(|s| (s.main_frame_id.clone(), s.document));
    let mut events = tab.session.events();
    input::click(
        tab,
        budget,
        point,
        args.button.unwrap_or_default(),
        args.click_count.unwrap_or(1),
        input::modifier_mask(&args.modifiers),
    )
    .await?;

    // A link's navigation is requested while the click is handled, so its
    // first event has arrived by the time the release is acknowledged.
    let mut started = false;
    while let Ok(event) = events.try_recv() {
        if NAVIGATION_STARTED.contains(&event.method.as_str())
            && (event.params["frameId"] == main_frame.as_str()
                || event.params["frame"]["id"] == main_frame.as_str())
        {
            started = true;
            break;
        }
    }
    if started {
        navigate::wait_for_load(tab, &mut events, None, WaitUntil::Load, budget).await?;
    }
    // The event reader keeps the URL current (commits and same-document
    // changes), so no round trip to the page is needed to report it.
    let (navigated, url) = tab.state(|s| (s.document != document_before, s.url.clone()));
    let text = if navigated {
        format!(
            "Clicked {}; the page navigated to {url}. Take a browser_snapshot to see it.",
            element.label
        )
    } else {
        format!("Clicked {}.", element.label)
    };
    Ok(ActionOutput::new(
        text,
        json!({ "ok": true, "url": url, "navigated": navigated }),
    ))
}
