//! `browser_click`: scroll the element into view, click the centre of its
//! box with trusted mouse input, and report whether the page navigated.

use cdp::protocol::runtime;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::args::{Common, ElementTarget, Modifier, MouseButton, WaitUntil};
use crate::error::Failure;
use crate::tab::Tab;
use crate::tab_tools::{download, element, front, input};
use crate::timing;
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::validate;
use crate::{ActionError, ActionOutput, Budget};

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
    let (point, _) = tokio::try_join!(
        element.actionable_point(tab, budget),
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
        flag("[globalThis.__cdpilotNav, globalThis.__cdpilotDownload]"),
    );
    let (started, download_asked) = match timing::timed("click.probe", probe).await {
        Ok(checked) => {
            let flags = checked.result.value.unwrap_or_default();
            (flags[0].is_string(), flags[1] == true)
        }
        Err(e) if e.failure == Failure::ContextGone => (true, false),
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
