//! `browser_fill_form`: set several controls in one call. Text fields get
//! trusted text input (as `browser_type`), checkboxes and radios a trusted
//! click when their state must change, selects the option named by value or
//! label, and range/date/time/color/number inputs their value with `input`
//! and `change` (a slider needs no click per step). Sliders and
//! spinbuttons that are not inputs (ARIA ones, library handles) are moved
//! with keys (`slider.rs`).
//!
//! Fields are filled in order; the first that fails stops the call, and the
//! error names it and says which fields before it were filled.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::args::{Common, ElementTarget, MouseButton};
use crate::tab::Tab;
use crate::tab_tools::element::{self, Element};
use crate::tab_tools::{field, front, input, slider};
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::validate;
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

/// Arguments of `browser_fill_form`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct FillFormArgs {
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    pub fields: Vec<FormField>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

// One field of `browser_fill_form`: which control, and its new value (a
// comment, not a doc: it would be repeated in the schema).
#[allow(missing_docs)] // schema-visible: see `crate::tool`
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FormField {
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(deserialize_with = "text_of_scalar")]
    pub value: String,
}

impl FormField {
    /// The control this field names.
    pub fn target(&self) -> ElementTarget {
        ElementTarget {
            reference: self.reference.clone(),
            selector: self.selector.clone(),
        }
    }
}

/// A form value as text: a model that writes `true` or `5` for a checkbox
/// or a number input means `"true"` or `"5"`.
fn text_of_scalar<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    match Value::deserialize(d)? {
        Value::String(s) => Ok(s),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(serde::de::Error::custom(format!(
            "a field's value is a string, not {other}"
        ))),
    }
}

/// `browser_fill_form`: its declaration and checks (see `crate::tool`).
impl Tool for FillFormArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_fill_form",
        verb: "fill",
        group: Group::Core,
        description: "Set form controls: text, checkbox/radio \"true\"/\"false\", select option value or label, range/date/time/color/number value. Stops at the first failure.",
        scope: Scope::Tab,
        runs_during_dialog: false,
        budget: DefaultBudget::Action,
        changes_page: true,
        switch: None,
        effect: Effect::Acts,
    };

    /// At least one field, each naming one element.
    fn check(&self) -> Result<(), ActionError> {
        if self.fields.is_empty() {
            return Err(ActionError::invalid(
                "fields is empty",
                "Pass the fields to fill, e.g. {\"fields\": [{\"ref\": \"e3\", \"value\": \"Ada\"}]}.",
            ));
        }
        for (i, field) in self.fields.iter().enumerate() {
            validate::element_target(Self::TOOL.name, &field.target()).map_err(|e| ActionError {
                message: format!("fields[{i}]: {}", e.message),
                ..e
            })?;
        }
        Ok(())
    }
}

impl TabTool for FillFormArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        front::ensure(call.tab, call.budget).await?;
        let mut filled = self.clone();
        for field in &mut filled.fields {
            if field.value.contains("{{secret:") {
                // A secret is typed only into a field of the origin it is bound to.
                let origin = element::origin(call.tab, &field.target(), call.budget).await?;
                field.value = call.secrets.expand(&field.value, &origin)?;
            }
        }
        run(call.tab, &filled, call.budget).await
    }
}

/// What kind of control the element is, and for a checkbox or radio its
/// state and whether a person could click it.
const KIND: &str = r#"function () {
  const el = this;
  const control = el instanceof HTMLSelectElement || el instanceof HTMLTextAreaElement || el instanceof HTMLInputElement;
  if (control && (el.disabled || el.closest('fieldset[disabled]'))) return { kind: 'refused', why: 'is disabled' };
  if (control && el.readOnly && el.type !== 'checkbox' && el.type !== 'radio') return { kind: 'refused', why: 'is read-only' };
  if (el instanceof HTMLSelectElement) return { kind: 'select' };
  if (el instanceof HTMLTextAreaElement || el.isContentEditable) return { kind: 'text' };
  if (el instanceof HTMLInputElement) {
    const t = el.type;
    if (t === 'checkbox' || t === 'radio') {
      const r = el.getBoundingClientRect();
      const visible = el.checkVisibility() && r.width > 0 && r.height > 0;
      return { kind: 'check', type: t, checked: el.checked, visible };
    }
    if (['range', 'date', 'time', 'color', 'number', 'month', 'week', 'datetime-local'].includes(t)) return { kind: 'value', type: t };
    if (t === 'file') return { kind: 'file' };
    if (['button', 'submit', 'reset', 'image', 'hidden'].includes(t)) return { kind: 'none', what: '<input type=' + t + '>' };
    return { kind: 'text' };
  }
  if ((IS_SLIDER)(el)) return { kind: 'slider' };
  return { kind: 'none', what: '<' + el.tagName.toLowerCase() + '>' };
}"#;

/// Clicks a checkbox or radio a person cannot reach (a custom control that
/// hides the real input behind its label): the page sees `input` and
/// `change` as for a click.
const CLICK_HIDDEN: &str = "function () { this.click(); }";

const CHECKED: &str = "function () { return this.checked; }";

pub async fn run(tab: &Tab, args: &FillFormArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let mut values = Vec::with_capacity(args.fields.len());
    let mut lines = Vec::with_capacity(args.fields.len());
    for (index, field) in args.fields.iter().enumerate() {
        match fill(tab, field, budget).await {
            Ok((label, value)) => {
                lines.push(format!("{label} = {value}"));
                values.push(value);
            }
            Err(e) => return Err(stopped_at(e, index, args.fields.len())),
        }
    }
    Ok(ActionOutput::new(
        format!("Filled {} fields: {}.", values.len(), lines.join("; ")),
        json!({ "ok": true, "values": values }),
    ))
}

/// Says which field failed and what the fields before it hold now.
fn stopped_at(e: ActionError, index: usize, total: usize) -> ActionError {
    let filled = match index {
        0 => "no field was filled".to_owned(),
        1 => "field 1 was filled".to_owned(),
        n => format!("fields 1-{n} were filled"),
    };
    let rest = match total - index - 1 {
        0 => String::new(),
        1 => format!(", field {total} was not touched"),
        _ => format!(", fields {}-{total} were not touched", index + 2),
    };
    ActionError {
        message: format!(
            "field {} of {total} (fields[{index}]): {}; {filled}{rest}",
            index + 1,
            e.message
        ),
        next_step: format!(
            "{} Then call browser_fill_form again with fields[{index}] onwards.",
            e.next_step
        ),
        ..e
    }
}

/// Fills one field; returns how it was named and its value afterwards.
async fn fill(tab: &Tab, field: &FormField, budget: &Budget) -> Result<(String, Value), ActionError> {
    let element = element::resolve(tab, &field.target(), budget).await?;
    let probe = KIND.replace("IS_SLIDER", slider::IS_SLIDER);
    let kind = element
        .call(budget, "inspecting the field", &probe, vec![])
        .await?;
    let value = match kind["kind"].as_str().unwrap_or_default() {
        "text" => text(tab, &element, &field.value, budget).await?,
        "check" => check_box(tab, &element, &kind, &field.value, budget).await?,
        "select" => select(&element, &field.value, budget).await?,
        "slider" => slider::set(tab, &element, &field.value, budget).await?,
        "value" => field::set_value(&element, kind["type"].as_str().unwrap_or_default(), &field.value, budget).await?,
        "refused" => {
            return Err(ActionError::new(
                ErrorCode::ElementNotInteractable,
                format!("{} {}", element.label, kind["why"].as_str().unwrap_or_default()),
                "Fill in what the form needs first, or leave this field out.",
            ))
        }
        "file" => {
            return Err(ActionError::invalid(
                format!("{} is a file input", element.label),
                "Use browser_upload for file inputs.",
            ))
        }
        _ => {
            return Err(ActionError::invalid(
                format!(
                    "{} is a {}, not a form control",
                    element.label,
                    kind["what"].as_str().unwrap_or("element")
                ),
                "Pass text fields, checkboxes, radios, selects or value inputs only (click buttons with browser_click).",
            ))
        }
    };
    Ok((element.label, value))
}

async fn text(tab: &Tab, element: &Element, value: &str, budget: &Budget) -> Result<Value, ActionError> {
    let editable = field::focus(tab, element, true, budget).await?;
    if editable != Value::Bool(true) {
        return Err(ActionError::new(
            ErrorCode::ElementNotInteractable,
            format!("{} does not accept text", element.label),
            "Pick a text field from browser_snapshot.",
        ));
    }
    element.drawn(tab, budget).await?;
    if value.is_empty() {
        input::press_delete(tab, budget).await?;
    } else {
        input::insert_text(tab, budget, value).await?;
    }
    if element.frame.session.id() != tab.session.id() {
        element.settle(budget).await?;
    }
    field::read_value(tab, element, budget).await
}

async fn check_box(
    tab: &Tab,
    element: &Element,
    kind: &Value,
    value: &str,
    budget: &Budget,
) -> Result<Value, ActionError> {
    let wanted = match value.trim().to_ascii_lowercase().as_str() {
        "true" => true,
        "false" => false,
        _ => {
            return Err(ActionError::invalid(
                format!(
                    "{} is a {}; its value must be \"true\" or \"false\", not \"{value}\"",
                    element.label,
                    kind["type"].as_str().unwrap_or("checkbox")
                ),
                "Pass \"true\" to check it or \"false\" to clear it.",
            ))
        }
    };
    if kind["checked"].as_bool() == Some(wanted) {
        return Ok(Value::Bool(wanted));
    }
    if !wanted && kind["type"] == "radio" {
        return Err(ActionError::invalid(
            format!(
                "{} is a checked radio button; a radio cannot be cleared",
                element.label
            ),
            "Set another radio button of its group to \"true\" instead.",
        ));
    }
    if kind["visible"] == Value::Bool(true) {
        let point = element.actionable_point(tab, budget).await?;
        input::press_at(tab, budget, point, MouseButton::Left, 1, 0).await?;
        if element.frame.session.id() != tab.session.id() {
            element.settle(budget).await?;
        }
    } else {
        element
            .call(budget, "clicking the hidden input", CLICK_HIDDEN, vec![])
            .await?;
    }
    let checked = element.call(budget, "reading the field", CHECKED, vec![]).await?;
    if checked != Value::Bool(wanted) {
        return Err(ActionError::new(
            ErrorCode::ElementNotInteractable,
            format!(
                "clicking {} did not change it (the page kept it {})",
                element.label, !wanted
            ),
            "The page may need something else first; take a browser_snapshot to see why.",
        ));
    }
    Ok(checked)
}

async fn select(element: &Element, value: &str, budget: &Budget) -> Result<Value, ActionError> {
    let result = element
        .call(budget, "choosing the option", field::SELECT, vec![json!([value])])
        .await?;
    if result["missing"].is_string() {
        return Err(ActionError::invalid(
            format!(
                "{} has no option \"{value}\"; it has {}",
                element.label, result["available"]
            ),
            "Pass an option's value or its visible label.",
        ));
    }
    Ok(result["selected"][0].clone())
}
