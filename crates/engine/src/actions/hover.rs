//! `browser_hover`: move the mouse over an element (menus, tooltips).

use serde_json::json;

use crate::action::HoverArgs;
use crate::actions::{element, input};
use crate::tab::Tab;
use crate::{ActionError, ActionOutput, Budget};

pub async fn run(tab: &Tab, args: &HoverArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let element = element::resolve(tab, &args.target, budget).await?;
    let point = element.actionable_point(tab, budget).await?;
    input::move_to(tab, budget, point).await?;
    Ok(ActionOutput::new(
        format!("Hovering over {}.", element.label),
        json!({ "ok": true }),
    ))
}
