//! `browser_click`: scroll the element into view, click the centre of its
//! box with trusted mouse input, and report whether the page navigated.

use cdp::protocol::runtime;
use serde_json::json;

use crate::action::{ClickArgs, WaitUntil};
use crate::actions::{element, input};
use crate::error::Failure;
use crate::tab::Tab;
use crate::timing;
use crate::{ActionError, ActionOutput, Budget};

/// Arms a one-shot flag in cdpilot's world that the page's `navigate` event
/// (Navigation API) sets when a cross-document navigation starts. It fires
/// synchronously during the click's default action or handlers, so the flag
/// is set by the time the mouse release is acknowledged: unlike CDP's
/// navigation events, which travel another pipe and may arrive later.
const ARM_NAVIGATION_FLAG: &str = "(() => { const w = globalThis; w.__cdpilotNav = null; \
if (!w.__cdpilotNavArmed && w.navigation) { w.__cdpilotNavArmed = true; \
navigation.addEventListener('navigate', (e) => { if (!e.destination.sameDocument && !e.downloadRequest) w.__cdpilotNav = e.destination.url; }); } })()";

pub async fn run(tab: &Tab, args: &ClickArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let element = timing::timed("click.resolve", element::resolve(tab, &args.target, budget)).await?;
    let world = timing::timed("click.world", tab.world(budget)).await?;
    let flag = |expression: &str| runtime::Evaluate {
        expression: expression.to_owned(),
        context_id: Some(world),
        return_by_value: true,
        await_promise: false,
        user_gesture: false,
    };
    let (point, _) = tokio::try_join!(
        element.actionable_point(tab, budget),
        timing::timed(
            "click.arm",
            budget.cdp("preparing the click", &tab.session, flag(ARM_NAVIGATION_FLAG))
        ),
    )?;
    let document_before = tab.state(|s| s.document);
    // Watch before clicking so no navigation event can slip past.
    let mut navigations = tab.navigations();
    timing::timed(
        "click.input",
        input::click(
            tab,
            budget,
            point,
            args.button.unwrap_or_default(),
            args.click_count.unwrap_or(1),
            input::modifier_mask(&args.modifiers),
        ),
    )
    .await?;
    if element.frame.session.id() != tab.session.id() {
        element.settle(budget).await?;
    }

    // The world is gone if the new document already replaced the old one.
    let probe = budget.cdp(
        "checking for a navigation",
        &tab.session,
        flag("globalThis.__cdpilotNav"),
    );
    let started = match timing::timed("click.probe", probe).await {
        Ok(checked) => checked.result.value.is_some_and(|v| v.is_string()),
        Err(e) if e.failure == Failure::ContextGone => true,
        Err(e) => return Err(e),
    };
    if started {
        timing::timed("click.load", navigations.loaded(None, WaitUntil::Load, budget)).await?;
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
