//! `browser_console`: the tab's recent console messages and uncaught
//! exceptions (its frames included).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::args::Common;
use crate::tab::Tab;
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::{ActionError, ActionOutput};

// Which console messages to read.
#[allow(missing_docs)] // schema-visible: see `crate::tool`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ConsoleLevel {
    Error,
    Warning,
    All,
}

/// Arguments of `browser_console`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ConsoleArgs {
    /// Default all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<ConsoleLevel>,
    /// Empty it after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clear: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_console`: its declaration and checks (see `crate::tool`).
impl Tool for ConsoleArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_console",
        verb: "console",
        group: Group::Core,
        description: "Recent console messages and uncaught errors (last 200).",
        scope: Scope::Tab,
        runs_during_dialog: true,
        budget: DefaultBudget::Action,
        changes_page: false,
        switch: None,
        effect: Effect::Acts,
    };
}

impl TabTool for ConsoleArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        run(call.tab, self)
    }
}

pub fn run(tab: &Tab, args: &ConsoleArgs) -> Result<ActionOutput, ActionError> {
    let level = args.level.unwrap_or(ConsoleLevel::All);
    let messages: Vec<_> = tab.state(|s| {
        let picked = s
            .console()
            .messages()
            .iter()
            .filter(|m| match level {
                ConsoleLevel::Error => m.level == "error",
                ConsoleLevel::Warning => m.level == "error" || m.level == "warning",
                ConsoleLevel::All => true,
            })
            .cloned()
            .collect();
        if args.clear == Some(true) {
            s.clear_console();
        }
        picked
    });
    let mut text = if messages.is_empty() {
        "No console messages.".to_owned()
    } else {
        format!("{} console message(s), oldest first:", messages.len())
    };
    // The messages are the page's words: enclosed in the session's markers.
    let mut lines = String::new();
    for m in &messages {
        lines += &format!("\n[{}] {}", m.level, m.text);
        if !m.url.is_empty() {
            lines += &format!(" ({})", m.url);
        }
    }
    if !lines.is_empty() {
        text += "\n";
        text += &crate::content::page(&lines[1..]);
    }
    Ok(ActionOutput::new(text, json!({ "messages": messages })))
}
