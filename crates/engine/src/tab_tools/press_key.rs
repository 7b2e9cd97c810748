//! `browser_press_key`: a key or combo sent to whatever has focus.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::args::Common;
use crate::tab::Tab;
use crate::tab_tools::{front, input, keys};
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::{ActionError, ActionOutput, Budget};

/// Arguments of `browser_press_key`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct PressKeyArgs {
    /// Enter, Tab, ArrowDown, a character, Control+a…
    pub key: String,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_press_key`: its declaration and checks (see `crate::tool`).
impl Tool for PressKeyArgs {
    const TOOL: Declaration = Declaration {
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
    };

    /// A key (or combo) the keyboard table knows.
    fn check(&self) -> Result<(), ActionError> {
        keys::parse(&self.key).map(|_| ())
    }
}

impl TabTool for PressKeyArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        front::ensure(call.tab, call.budget).await?;
        run(call.tab, self, call.budget).await
    }
}

pub async fn run(tab: &Tab, args: &PressKeyArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let combo = keys::parse(&args.key)?;
    input::press(tab, budget, &combo).await?;
    Ok(ActionOutput::new(
        format!("Pressed {}.", args.key),
        json!({ "ok": true }),
    ))
}
