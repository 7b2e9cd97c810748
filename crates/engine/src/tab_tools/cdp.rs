//! `browser_cdp`: the escape hatch for the long tail: one raw CDP command
//! on the tab's session, or on a frame's own session (cross-origin frames).
//! Turned off with `tools.cdp = false`.

use serde_json::{json, Value};

use crate::calls::{Action, CdpArgs};
use crate::config::{CdpAccess, Config};
use crate::tab::Tab;
use crate::tool::{Before, Declaration, DefaultBudget, Effect, Group, Scope, Switch, TabCall};
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

/// `browser_cdp`'s declaration (see `crate::tool`).
pub(crate) const TOOL: Declaration = Declaration {
    name: "browser_cdp",
    verb: "cdp",
    group: Group::Core,
    description: "Send a raw CDP command to the tab (or a frame's session); only methods that stay in the tab unless the server allows all.",
    scope: Scope::Tab,
    runs_during_dialog: true,
    budget: DefaultBudget::Action,
    changes_page: false,
    switch: Some(Switch {
        setting: "cdp",
        on: |tools| tools.cdp != CdpAccess::Off,
    }),
    effect: Effect::Acts,
    before: Before {
        destination: Some(destination),
        admit: Some(admit),
    },
};

/// Where a raw command sends the browser: `Page.navigate`'s and
/// `Target.createTarget`'s `url` (a new blank target is not judged).
/// Other raw commands that navigate (`Page.navigateToHistoryEntry`, a
/// script setting `location`) cannot be judged here; the request stage
/// still judges their documents.
fn destination(action: &Action) -> Option<&str> {
    let Action::Cdp(args) = action else { return None };
    if !matches!(args.method.as_str(), "Page.navigate" | "Target.createTarget") {
        return None;
    }
    let url = args.params.as_ref()?.get("url")?.as_str()?;
    (!url.is_empty() && url != "about:blank").then_some(url)
}

/// What `[tools] cdp` lets through (`crate::policy::cdp_fence`), before
/// anything is opened.
fn admit(action: &Action, config: &Config) -> Result<(), ActionError> {
    match action {
        Action::Cdp(args) => crate::policy::cdp_fence::admit(&args.method, config.tools.cdp),
        _ => Ok(()),
    }
}

/// A method shaped `Domain.method` (what `[tools] cdp` lets through is
/// judged by the session, which holds the configuration).
pub(crate) fn check(a: &CdpArgs) -> Result<(), ActionError> {
    let (domain, method) = a.method.split_once('.').unwrap_or(("", ""));
    let word = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric());
    if word(domain) && word(method) {
        Ok(())
    } else {
        Err(ActionError::invalid(
            format!("\"{}\" is not a CDP method", a.method),
            "Use Domain.method, e.g. Page.getLayoutMetrics.",
        ))
    }
}

/// Runs the tool in the call's tab.
pub(crate) async fn perform(call: &TabCall<'_>, args: &CdpArgs) -> Result<ActionOutput, ActionError> {
    run(call.tab, args, call.budget).await
}

/// Longest result text shown to the model; the full result is in the data.
const MAX_TEXT: usize = 20_000;

pub async fn run(tab: &Tab, args: &CdpArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let session = match &args.frame {
        Some(name) => tab.frame_named(name)?.session,
        None => tab.session.clone(),
    };
    let params = args
        .params
        .clone()
        .map(Value::Object)
        .unwrap_or_else(|| json!({}));
    let step = format!("running {}", args.method);
    let result = budget
        .run(&step, async {
            session
                .send(&args.method, params, budget.deadline())
                .await
                .map_err(|e| match e {
                    cdp::CdpError::Protocol { message, .. } => ActionError::new(
                        ErrorCode::InvalidArgument,
                        format!("Chrome refused {}: {message}", args.method),
                        "Check the method name and its parameters in the DevTools protocol.",
                    ),
                    other => budget.map_cdp(&step, other),
                })
        })
        .await?;
    let mut text = serde_json::to_string(&result).unwrap_or_default();
    if text.len() > MAX_TEXT {
        let mut end = MAX_TEXT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text += "… (truncated; the whole result is in structuredContent)";
    }
    Ok(ActionOutput::new(text, json!({ "result": result })))
}
