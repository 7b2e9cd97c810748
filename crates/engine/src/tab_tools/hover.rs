//! `browser_hover`: move the mouse over an element (menus, tooltips).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::args::{Common, ElementTarget};
use crate::tab::Tab;
use crate::tab_tools::element::Intent;
use crate::tab_tools::{element, front};
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::validate;
use crate::{ActionError, ActionOutput, Budget};

/// Arguments of `browser_hover`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct HoverArgs {
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub target: ElementTarget,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_hover`: its declaration and checks (see `crate::tool`).
impl Tool for HoverArgs {
    const TOOL: Declaration = Declaration {
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
    };

    /// One element.
    fn check(&self) -> Result<(), ActionError> {
        validate::element_target(Self::TOOL.name, &self.target)
    }
}

impl TabTool for HoverArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        front::ensure(call.tab, call.budget).await?;
        run(call.tab, self, call.budget).await
    }
}

pub async fn run(tab: &Tab, args: &HoverArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let element = element::resolve(tab, &args.target, budget).await?;
    let aimed = element.aim(tab, budget, Intent::Hover, false).await?;
    // The pointer is at the element's point; its hover handlers ran. What
    // is under the pointer now is said when it is not the element (a cover,
    // or what those handlers raised over it).
    let text = match &aimed.under {
        None => format!("Hovering over {}.", element.label),
        Some(under) => format!(
            "Moved the mouse to {}; {under} is under the pointer there now (it covers the element, \
             or the page raised it when the pointer came).",
            element.label
        ),
    };
    Ok(ActionOutput::new(
        text,
        json!({ "ok": true, "under": aimed.under }),
    ))
}
