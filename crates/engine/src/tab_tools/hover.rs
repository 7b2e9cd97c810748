//! `browser_hover`: move the mouse over an element (menus, tooltips).

use serde_json::json;

use crate::calls::HoverArgs;
use crate::tab::Tab;
use crate::tab_tools::{element, front, input};
use crate::tool::{Before, Declaration, DefaultBudget, Effect, Group, Scope, TabCall};
use crate::validate;
use crate::{ActionError, ActionOutput, Budget};

/// `browser_hover`'s declaration (see `crate::tool`).
pub(crate) const TOOL: Declaration = Declaration {
    name: "browser_hover",
    verb: "hover",
    group: Group::Core,
    description: "Move the mouse over an element.",
    scope: Scope::Tab,
    runs_during_dialog: false,
    budget: DefaultBudget::Action,
    changes_page: true,
    switch: None,
    effect: Effect::Acts,
    before: Before::NOTHING,
};

/// One element.
pub(crate) fn check(a: &HoverArgs) -> Result<(), ActionError> {
    validate::element_target(TOOL.name, &a.target)
}

/// Runs the tool in the call's tab.
pub(crate) async fn perform(call: &TabCall<'_>, args: &HoverArgs) -> Result<ActionOutput, ActionError> {
    front::ensure(call.tab, call.budget).await?;
    run(call.tab, args, call.budget).await
}

pub async fn run(tab: &Tab, args: &HoverArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let element = element::resolve(tab, &args.target, budget).await?;
    let point = element.actionable_point(tab, budget).await?;
    input::move_to(tab, budget, point).await?;
    Ok(ActionOutput::new(
        format!("Hovering over {}.", element.label),
        json!({ "ok": true }),
    ))
}
