//! `browser_press_key`: a key or combo sent to whatever has focus.

use serde_json::json;

use crate::calls::PressKeyArgs;
use crate::tab::Tab;
use crate::tab_tools::{front, input, keys};
use crate::tool::{Before, Declaration, DefaultBudget, Effect, Group, Scope, TabCall};
use crate::{ActionError, ActionOutput, Budget};

/// `browser_press_key`'s declaration (see `crate::tool`).
pub(crate) const TOOL: Declaration = Declaration {
    name: "browser_press_key",
    verb: "press",
    group: Group::Core,
    description: "Press a key or combo in the focused element.",
    scope: Scope::Tab,
    runs_during_dialog: false,
    budget: DefaultBudget::Action,
    changes_page: true,
    switch: None,
    effect: Effect::Acts,
    before: Before::NOTHING,
};

/// A key (or combo) the keyboard table knows.
pub(crate) fn check(a: &PressKeyArgs) -> Result<(), ActionError> {
    keys::parse(&a.key).map(|_| ())
}

/// Runs the tool in the call's tab.
pub(crate) async fn perform(call: &TabCall<'_>, args: &PressKeyArgs) -> Result<ActionOutput, ActionError> {
    front::ensure(call.tab, call.budget).await?;
    run(call.tab, args, call.budget).await
}

pub async fn run(tab: &Tab, args: &PressKeyArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let combo = keys::parse(&args.key)?;
    input::press(tab, budget, &combo).await?;
    Ok(ActionOutput::new(
        format!("Pressed {}.", args.key),
        json!({ "ok": true }),
    ))
}
