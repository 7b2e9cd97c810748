//! `browser_type`: focus a field, clear it (unless told not to), insert the
//! text as trusted input, optionally press Enter, and report the value.
//! Date, time, colour, range and number inputs are set by value instead
//! (their browser-drawn editors take no inserted text).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::args::{Common, ElementTarget};
use crate::tab::Tab;
use crate::tab_tools::field;
use crate::tab_tools::{element, front, input, keys};
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::validate;
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

/// Arguments of `browser_type`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct TypeArgs {
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub target: ElementTarget,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    pub text: String,
    /// Default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clear: Option<bool>,
    /// Press Enter afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit: Option<bool>,
    /// A key event per character.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowly: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_type`: its declaration and checks (see `crate::tool`).
impl Tool for TypeArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_type",
        verb: "type",
        group: Group::Core,
        description: "Type text into a field (cleared first; submit presses Enter). Returns its value.",
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

impl TabTool for TypeArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        front::ensure(call.tab, call.budget).await?;
        if self.text.contains("{{secret:") {
            // A secret is typed only into a field of the origin it is bound to.
            let origin = element::origin(call.tab, &self.target, call.budget).await?;
            let mut typed = self.clone();
            typed.text = call.secrets.expand(&self.text, &origin)?;
            return run(call.tab, &typed, call.budget).await;
        }
        run(call.tab, self, call.budget).await
    }
}

pub async fn run(tab: &Tab, args: &TypeArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let element = element::resolve(tab, &args.target, budget).await?;
    let clear = args.clear.unwrap_or(true);
    let editable = field::focus(tab, &element, clear, budget).await?;
    if let Some(kind) = editable["value"].as_str() {
        // A date, time, colour, range or number input: its value is set
        // whole, with `input` and `change`, as browser_fill_form does.
        let value = field::set_value(&element, kind, &args.text, budget).await?;
        let value = value.as_str().unwrap_or_default().to_owned();
        if args.submit.unwrap_or(false) {
            input::press_enter(tab, budget).await?;
        }
        return Ok(ActionOutput::new(
            format!("Set {} (an <input type={kind}>) to \"{value}\".", element.label),
            json!({ "ok": true, "value": value }),
        ));
    }
    if editable != Value::Bool(true) {
        return Err(ActionError::new(
            ErrorCode::ElementNotInteractable,
            format!("{} does not accept text", element.label),
            "Pick a text field, text area or editable element from browser_snapshot.",
        ));
    }
    element.drawn(tab, budget).await?;
    if args.text.is_empty() {
        if clear {
            input::press_delete(tab, budget).await?;
        }
    } else if args.slowly == Some(true) {
        // One trusted key event per character, for fields that react to
        // each keystroke (autocomplete, input masks).
        for c in args.text.chars() {
            let key = if c == '\n' {
                "Enter".to_owned()
            } else {
                c.to_string()
            };
            input::press(tab, budget, &keys::parse(&key)?).await?;
        }
    } else {
        input::insert_text(tab, budget, &args.text).await?;
    }
    if element.frame.session.id() != tab.session.id() {
        element.settle(budget).await?;
    }
    // Read the value before submitting: a submit may navigate away.
    let value = field::read_value(tab, &element, budget).await?;
    let submitted = args.submit.unwrap_or(false);
    if submitted {
        input::press_enter(tab, budget).await?;
    }
    let value = value.as_str().unwrap_or_default().to_owned();
    let mut text = format!("Typed into {}; its value is now \"{value}\".", element.label);
    if submitted {
        text += " Pressed Enter.";
    }
    Ok(ActionOutput::new(text, json!({ "ok": true, "value": value })))
}
