//! `browser_select_option`: choose options of a `<select>` by value or
//! label, firing `input` and `change` as a person's choice would.

use serde_json::{json, Value};

use crate::action::SelectOptionArgs;
use crate::actions::element;
use crate::tab::Tab;
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

/// Returns the chosen options' values and labels, or `{missing}` /
/// `{not_select}` / `{too_many}`.
pub(crate) const SELECT: &str = r#"function (wanted) {
  if (!(this instanceof HTMLSelectElement)) return { not_select: this.tagName.toLowerCase() };
  const options = Array.from(this.options);
  const picks = [];
  for (const w of wanted) {
    const o = options.find((o) => o.value === w) || options.find((o) => o.label.trim() === w.trim() || o.textContent.trim() === w.trim());
    if (!o) return { missing: w, available: options.map((o) => o.label) };
    picks.push(o);
  }
  if (!this.multiple && picks.length > 1) return { too_many: true };
  for (const o of options) o.selected = picks.includes(o);
  this.dispatchEvent(new Event('input', { bubbles: true }));
  this.dispatchEvent(new Event('change', { bubbles: true }));
  return { selected: picks.map((o) => o.value), labels: picks.map((o) => o.label) };
}"#;

pub async fn run(tab: &Tab, args: &SelectOptionArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let element = element::resolve(tab, &args.target, budget).await?;
    let result = element
        .call(budget, "choosing the option", SELECT, vec![json!(args.values)])
        .await?;
    if let Some(tag) = result["not_select"].as_str() {
        return Err(ActionError::new(
            ErrorCode::ElementNotInteractable,
            format!("{} is a <{tag}>, not a <select>", element.label),
            "For custom dropdowns, click the control and then the option.",
        ));
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
