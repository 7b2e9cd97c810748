//! `browser_click`: scroll the element into view, click the centre of its
//! box with trusted mouse input, and report whether the page navigated.

use cdp::protocol::runtime;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::args::{Common, ElementTarget, Modifier, MouseButton, WaitUntil};
use crate::error::Failure;
use crate::tab::Tab;
use crate::tab_tools::element::{Intent, Pressed};
use crate::tab_tools::{download, element, front, input};
use crate::timing;
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::validate;
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

/// Arguments of `browser_click`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ClickArgs {
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub target: ElementTarget,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub button: Option<MouseButton>,
    /// 2 for a double click.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub click_count: Option<u32>,
    /// Held keys.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modifiers: Vec<Modifier>,
    // Skips the waits, never the checks (docs/src/spec/tools.md, v5); no
    // description: the core tools' definitions must stay under 8,000 chars.
    #[allow(missing_docs)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_click`: its declaration and checks (see `crate::tool`).
impl Tool for ClickArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_click",
        verb: "click",
        group: Group::Core,
        description: "Click with real mouse input. Says if the page navigated or a file downloaded.",
        scope: Scope::Tab,
        runs_during_dialog: false,
        budget: DefaultBudget::Action,
        changes_page: true,
        switch: None,
        effect: Effect::Acts,
    };

    /// One element; a click count of 1 to 3.
    fn check(&self) -> Result<(), ActionError> {
        validate::element_target(Self::TOOL.name, &self.target)?;
        if let Some(n) = self.click_count {
            if !(1..=3).contains(&n) {
                return Err(ActionError::invalid(
                    format!("click_count must be 1, 2 or 3, not {n}"),
                    "Use 2 for a double click.",
                ));
            }
        }
        Ok(())
    }
}

impl TabTool for ClickArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        front::ensure(call.tab, call.budget).await?;
        run(call.tab, self, call.budget).await
    }
}

/// Arms a one-shot flag in cdpilot's world that the page's `navigate` event
/// (Navigation API) sets when a cross-document navigation starts. It fires
/// synchronously during the click's default action or handlers, so the flag
/// is set by the time the mouse release is acknowledged: unlike CDP's
/// navigation events, which travel another pipe and may arrive later.
/// A second flag says the click asked for a download (a `download` link,
/// or one a handler clicked: those fire no `navigate` event), which the
/// browser announces on its own session some time later. A cross-origin
/// `download` link is a plain navigation (the attribute is ignored).
const ARM_NAVIGATION_FLAG: &str = "(() => { const w = globalThis; w.__cdpilotNav = null; \
if (!w.__cdpilotNavArmed && w.navigation) { w.__cdpilotNavArmed = true; \
navigation.addEventListener('navigate', (e) => { if (e.downloadRequest !== null) w.__cdpilotDownload = true; \
else if (!e.destination.sameDocument) w.__cdpilotNav = e.destination.url; }); \
addEventListener('click', (e) => { const a = !e.defaultPrevented && e.target.closest && e.target.closest('a[download]'); \
if (a && (a.origin === location.origin || a.protocol === 'data:')) w.__cdpilotDownload = true; }); } \
w.__cdpilotDownload = false; })()";

pub async fn run(tab: &Tab, args: &ClickArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let element = timing::timed("click.resolve", element::resolve(tab, &args.target, budget)).await?;
    let world = timing::timed("click.world", tab.world(budget)).await?;
    let flag = |expression: &str| runtime::Evaluate {
        expression: expression.to_owned(),
        context_id: Some(world),
        return_by_value: true,
        await_promise: false,
        user_gesture: false,
        repl_mode: false,
    };
    let force = args.force.unwrap_or(false);
    let (aimed, _) = tokio::try_join!(
        element.aim(tab, budget, Intent::Click, force),
        timing::timed(
            "click.arm",
            budget.cdp("preparing the click", &tab.session, flag(ARM_NAVIGATION_FLAG))
        ),
    )?;
    element.watch_input(tab, "mouseup", budget).await?;
    let document_before = tab.state(|s| s.document());
    // Watch before clicking so no navigation event can slip past.
    let mut navigations = tab.navigations();
    let downloads = download::DownloadWatch::start(tab);
    timing::timed(
        "click.input",
        input::press_at(
            tab,
            budget,
            aimed.point,
            args.button.unwrap_or_default(),
            args.click_count.unwrap_or(1),
            input::modifier_mask(&args.modifiers),
        ),
    )
    .await?;
    // The press's record is read with the navigation flags when the
    // element is in the tab's own world; a frame's, on the element.
    let in_main = element.frame.number.is_none();
    if element.frame.session.id() != tab.session.id() {
        element.settle(budget).await?;
    }
    let pressed = if in_main {
        None
    } else {
        element.pressed(budget).await?
    };

    // The world is gone if the new document already replaced the old one.
    let probe = budget.cdp(
        "checking for a navigation",
        &tab.session,
        flag("[globalThis.__cdpilotNav, globalThis.__cdpilotDownload, globalThis.__cdpilotPressed ? globalThis.__cdpilotPressed() : null]"),
    );
    let (started, download_asked, pressed) = match timing::timed("click.probe", probe).await {
        Ok(checked) => {
            let flags = checked.result.value.unwrap_or_default();
            let pressed = match in_main {
                true => serde_json::from_value::<Pressed>(flags[2].clone()).ok(),
                false => pressed,
            };
            (flags[0].is_string(), flags[1] == true, pressed)
        }
        Err(e) if e.failure == Failure::ContextGone => (true, false, pressed),
        Err(e) => return Err(e),
    };
    if started {
        timing::timed("click.load", navigations.loaded(None, WaitUntil::Load, budget)).await?;
    }
    // The event reader keeps the URL current (commits and same-document
    // changes), so no round trip to the page is needed to report it.
    let (navigated, url) = tab.state(|s| (s.document() != document_before, s.url().to_owned()));
    // A navigation that committed nothing may have become a download.
    let download = downloads.finish(tab, download_asked, budget).await?;
    if let Some(download) = download {
        let text = match download["path"].as_str() {
            Some(path) => format!(
                "Clicked {}; it downloaded {} ({} bytes), saved as {path}.",
                element.label,
                download["filename"].as_str().unwrap_or_default(),
                download["bytes"]
            ),
            None => format!(
                "Clicked {}; the download of {} was canceled.",
                element.label,
                download["filename"].as_str().unwrap_or_default()
            ),
        };
        return Ok(ActionOutput::new(
            text,
            json!({ "ok": true, "url": url, "navigated": navigated, "download": download }),
        ));
    }
    let label = &element.label;
    if navigated || started {
        // The document the record was in is gone: the navigation is what
        // the page did with the click.
        let text =
            format!("Clicked {label}; the page navigated to {url}. Take a browser_snapshot to see it.");
        return Ok(ActionOutput::new(
            text,
            json!({ "ok": true, "url": url, "navigated": navigated }),
        ));
    }
    // What the page's record shows is all the answer claims. A press the
    // page stopped on its way, or one no listener of cdpilot's saw (a
    // handler before them stopped it), is not called a click, nor an
    // error: the page's own click may still have acted, and a retry
    // would act twice.
    let pressed = pressed.unwrap_or_default();
    let unconfirmed = |why: String| {
        Ok(ActionOutput::new(
            format!("{why}. Take a browser_snapshot to see whether the page acted before trying again."),
            json!({ "ok": true, "url": url, "navigated": false, "reached": false }),
        ))
    };
    match pressed.to.as_deref() {
        Some("") if pressed.reached => {}
        Some("") => {
            return unconfirmed(format!(
                "Pressed {label}, but the page stopped the press before it reached it (a handler on an \
                 element around it took it)"
            ))
        }
        Some(other) => {
            return Err(ActionError::new(
                ErrorCode::ElementNotInteractable,
                format!(
                    "the press meant for {label} was received by {other}, which the page put at the point \
                     after it was checked"
                ),
                "Take a browser_snapshot to see what the page did before acting again.",
            ))
        }
        None => {
            return unconfirmed(format!(
                "Sent the click to {label}, but cdpilot saw no press reach the page (a handler of the page \
                 may have stopped it first)"
            ))
        }
    }
    let text = match pressed.changed {
        true => format!("Clicked {label}."),
        false => format!(
            "Clicked {label}; nothing on the page changed right after it (it may still be working: \
             browser_wait or browser_snapshot to see)."
        ),
    };
    Ok(ActionOutput::new(
        text,
        json!({ "ok": true, "url": url, "navigated": false, "changed": pressed.changed }),
    ))
}
