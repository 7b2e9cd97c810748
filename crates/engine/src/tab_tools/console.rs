//! `browser_console`: the tab's recent console messages and uncaught
//! exceptions (its frames included).

use serde_json::json;

use crate::calls::{ConsoleArgs, ConsoleLevel};
use crate::tab::Tab;
use crate::tool::{Before, Declaration, DefaultBudget, Effect, Group, Scope, TabCall};
use crate::{ActionError, ActionOutput};

/// `browser_console`'s declaration (see `crate::tool`).
pub(crate) const TOOL: Declaration = Declaration {
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
    before: Before::NOTHING,
};

/// Nothing to check beyond the schema.
pub(crate) fn check(_: &ConsoleArgs) -> Result<(), ActionError> {
    Ok(())
}

/// Runs the tool in the call's tab.
pub(crate) async fn perform(call: &TabCall<'_>, args: &ConsoleArgs) -> Result<ActionOutput, ActionError> {
    run(call.tab, args)
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
