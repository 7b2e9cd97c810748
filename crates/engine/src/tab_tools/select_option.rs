//! `browser_select_option`: choose options of a `<select>` by value or
//! label, firing `input` and `change` as a person's choice would; on a
//! combobox or text field, type and pick the option it offers
//! (`combobox.rs`); with `text`, select that text (`selection.rs`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::args::{Common, ElementTarget};
use crate::tab::Tab;
use crate::tab_tools::{combobox, element, field, front, selection};
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::validate;
use crate::{ActionError, ActionOutput, Budget};

/// Arguments of `browser_select_option`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct SelectOptionArgs {
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub target: ElementTarget,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// Instead of values: select this text in ref (default: the page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_select_option`: its declaration and checks (see `crate::tool`).
impl Tool for SelectOptionArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_select_option",
        verb: "select",
        group: Group::Core,
        description: "Choose <select> options (values or labels); on a combobox, types and picks the option. With text: selects that text.",
        scope: Scope::Tab,
        runs_during_dialog: false,
        budget: DefaultBudget::Action,
        changes_page: true,
        switch: None,
        effect: Effect::Acts,
    };

    /// Values for one element, or a text (in an element, or the page).
    fn check(&self) -> Result<(), ActionError> {
        if let Some(text) = &self.text {
            if !self.values.is_empty() {
                return Err(ActionError::invalid(
                    "browser_select_option takes values or text, not both",
                    "Pass values to choose options, or text to select that text.",
                ));
            }
            if self.target.reference.is_some() || self.target.selector.is_some() {
                validate::element_target(Self::TOOL.name, &self.target)?;
            }
            return validate::non_empty("text", text);
        }
        validate::element_target(Self::TOOL.name, &self.target)?;
        if self.values.is_empty() {
            return Err(ActionError::invalid(
                "values is empty",
                "Pass at least one option value or label.",
            ));
        }
        Ok(())
    }
}

impl TabTool for SelectOptionArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        front::ensure(call.tab, call.budget).await?;
        run(call.tab, self, call.budget).await
    }
}

pub async fn run(tab: &Tab, args: &SelectOptionArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    if let Some(text) = &args.text {
        return selection::run(tab, &args.target, text, budget).await;
    }
    let element = element::resolve(tab, &args.target, budget).await?;
    let result = element
        .call(
            budget,
            "choosing the option",
            field::SELECT,
            vec![json!(args.values)],
        )
        .await?;
    if let Some(tag) = result["not_select"].as_str() {
        let [wanted] = args.values.as_slice() else {
            return Err(ActionError::invalid(
                format!(
                    "{} is not a <select>: one option can be picked at a time",
                    element.label
                ),
                "Pass one value.",
            ));
        };
        return match combobox::pick(tab, &element, wanted, budget).await? {
            Some(value) => Ok(ActionOutput::new(
                format!("Picked {wanted:?} in {}; it shows {value}.", element.label),
                json!({ "ok": true, "selected": [wanted], "value": value }),
            )),
            None => Err(combobox::not_a_choice(&element, tag)),
        };
    }
    if let Some(missing) = result["missing"].as_str() {
        return Err(ActionError::invalid(
            format!(
                "{} has no option \"{missing}\"; it has {}",
                element.label, result["available"]
            ),
            "Pass an option's value or its visible label.",
        ));
    }
    if result["too_many"] == Value::Bool(true) {
        return Err(ActionError::invalid(
            format!(
                "{} allows one choice, but {} were given",
                element.label,
                args.values.len()
            ),
            "Pass one value.",
        ));
    }
    // The contract (v2): `selected` holds the options' values, the value a
    // form submits and a later call can pass back; `labels` what a person sees.
    let selected = result["selected"].clone();
    let labels = result["labels"].clone();
    Ok(ActionOutput::new(
        format!("Selected {labels} (values {selected}) in {}.", element.label),
        json!({ "ok": true, "selected": selected, "labels": labels }),
    ))
}
