//! `browser_cdp`: the escape hatch for the long tail: one raw CDP command
//! on the tab's session, or on a frame's own session (cross-origin frames).
//! Turned off with `tools.cdp = false`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::args::Common;
use crate::config::{CdpAccess, Config};
use crate::tab::Tab;
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, Switch, TabCall, TabTool, Tool};
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

/// Arguments of `browser_cdp`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CdpArgs {
    /// Domain.method, e.g. Page.getLayoutMetrics.
    pub method: String,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Map<String, serde_json::Value>>,
    /// f2 or a frame_tree id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_cdp`: its declaration and checks (see `crate::tool`).
impl Tool for CdpArgs {
    const TOOL: Declaration = Declaration {
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
    };

    /// A method shaped `Domain.method` (what `[tools] cdp` lets through is
    /// judged by the session, which holds the configuration).
    fn check(&self) -> Result<(), ActionError> {
        let (domain, method) = self.method.split_once('.').unwrap_or(("", ""));
        let word = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric());
        if word(domain) && word(method) {
            Ok(())
        } else {
            Err(ActionError::invalid(
                format!("\"{}\" is not a CDP method", self.method),
                "Use Domain.method, e.g. Page.getLayoutMetrics.",
            ))
        }
    }

    /// Where a raw command sends the browser: `Page.navigate`'s and
    /// `Target.createTarget`'s `url` (a new blank target is not judged).
    /// Other raw commands that navigate (`Page.navigateToHistoryEntry`, a
    /// script setting `location`) cannot be judged here; the request stage
    /// still judges their documents.
    fn destination(&self) -> Option<&str> {
        if !matches!(self.method.as_str(), "Page.navigate" | "Target.createTarget") {
            return None;
        }
        let url = self.params.as_ref()?.get("url")?.as_str()?;
        (!url.is_empty() && url != "about:blank").then_some(url)
    }

    /// What `[tools] cdp` lets through (`crate::policy::cdp_fence`), before
    /// anything is opened.
    fn admit(&self, config: &Config) -> Result<(), ActionError> {
        crate::policy::cdp_fence::admit(&self.method, config.tools.cdp)
    }
}

impl TabTool for CdpArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        run(call.tab, self, call.budget).await
    }
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
