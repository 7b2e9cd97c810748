//! A form field's value, as the tools that fill fields share it
//! (`browser_type`, `browser_fill_form`, `browser_select_option` and the
//! combobox it drives): focusing and preparing a field ([`prepare`]),
//! reading its value back ([`VALUE`]), setting a value input whole
//! ([`set_value`]) and choosing a `<select>`'s options ([`SELECT`]).
//!
//! Below the tools on the folder's floors (`crates/engine/floors.txt`), so
//! that no tool reaches into another for them.

use serde_json::{json, Value};

use cdp::protocol::page;

use crate::tab::Tab;
use crate::tab_tools::element::Element;
use crate::{ActionError, Budget, ErrorCode};

/// Focuses the element and, when asked, selects its whole content so the
/// inserted text replaces it. Returns false for elements that take no text,
/// and `{value: type}` for inputs whose browser-drawn editor takes no
/// inserted text (a date field stays empty): those are set by value. When
/// the focus did not land in the element (a `focus` handler moved it, an
/// overlay's field took it), `{focus}` says where it is ([`focus_refused`]):
/// keys sent now would go there.
const PREPARE: &str = r#"function (clear) {
  if (this instanceof HTMLInputElement && VALUE_TYPES.includes(this.type)) return { value: this.type };
  const editable = this.isContentEditable ||
    (this instanceof HTMLInputElement && !['checkbox','radio','button','submit','reset','image','file','range','color'].includes(this.type)) ||
    this instanceof HTMLTextAreaElement;
  if (!editable) return false;
  const selectAll = () => {
    if (!clear) return;
    if (this.isContentEditable) {
      const range = document.createRange();
      range.selectNodeContents(this);
      const selection = this.ownerDocument.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
    } else {
      this.select();
    }
  };
  this.focus();
  // A page without the focus dispatches focus events only when it gets
  // it, with the first key: the check would come before its handlers.
  // The content is selected all the same: a page that stays unfocused is
  // typed into unchecked, and the text must replace what was there.
  if (!this.ownerDocument.hasFocus()) { selectAll(); return { unfocused: true }; }
  let active = this.ownerDocument.activeElement;
  while (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
  let within = false;
  for (let c = active; c && !within; c = c.parentNode || c.host) within = c === this;
  if (!within) {
    const api = globalThis.__cdpilot;
    const at = !active || active === this.ownerDocument.body ? 'nothing (the page took it away)'
      : api && api.describe ? api.describe(active) : '<' + active.tagName.toLowerCase() + '>';
    return { focus: at };
  }
  selectAll();
  return true;
}"#;

/// The `<input>` types set by value rather than typed into.
const VALUE_TYPES: &str = "['date','time','datetime-local','month','week','color','range','number']";

/// [`PREPARE`] on `element`, its page given the focus first when it has
/// none (`Page.bringToFront` focuses the tab), so the page's focus
/// handlers have run when where the focus is is checked
/// ([`focus_refused`]).
pub(crate) async fn focus(
    tab: &Tab,
    element: &Element,
    clear: bool,
    budget: &Budget,
) -> Result<Value, ActionError> {
    let prepare = prepare();
    let step = "focusing the field";
    let prepared = element
        .call(budget, step, &prepare, vec![Value::Bool(clear)])
        .await?;
    if prepared["unfocused"] != true {
        focus_refused(element, &prepared)?;
        return Ok(prepared);
    }
    budget
        .cdp("focusing the tab", &tab.session, page::BringToFront {})
        .await?;
    let prepared = element
        .call(budget, step, &prepare, vec![Value::Bool(clear)])
        .await?;
    if prepared["unfocused"] == true {
        // A frame that cannot take the focus now: typed as before, unchecked.
        return Ok(Value::Bool(true));
    }
    focus_refused(element, &prepared)?;
    Ok(prepared)
}

/// The refusal when [`PREPARE`] found the focus elsewhere: nothing is
/// typed, and the answer says where the focus went.
fn focus_refused(element: &Element, prepared: &Value) -> Result<(), ActionError> {
    match prepared["focus"].as_str() {
        None => Ok(()),
        Some(at) => Err(ActionError::new(
            ErrorCode::ElementNotInteractable,
            format!(
                "{} was focused, but the focus is on {at} now; nothing was typed",
                element.label
            ),
            "Take a browser_snapshot to see what took the focus (a dialog, a popup) and deal with it first.",
        )),
    }
}

/// [`PREPARE`], with its list of value types in place.
pub(crate) fn prepare() -> String {
    PREPARE.replace("VALUE_TYPES", VALUE_TYPES)
}

/// The field's value as the result reports it; a password-like field's
/// (the snapshot's `secretLike` test) reads `••••` (issue 21).
pub(crate) const VALUE: &str = r#"function () {
  if (this.isContentEditable) return this.textContent;
  const autocomplete = (this.getAttribute && this.getAttribute('autocomplete')) || '';
  const secret = this.tagName === 'INPUT' && (this.type === 'password'
    || /(?:^|\s)(?:current-password|new-password|one-time-code|cc-number|cc-csc)(?:\s|$)/i.test(autocomplete));
  return secret && this.value ? '••••' : this.value;
}"#;

/// [`VALUE`], with the field's box: `{value, box: [left, top, width,
/// height] | null}` in CSS px of the tab's viewport, reached through
/// same-origin frames' `<iframe>` elements (`null` inside a cross-origin
/// frame, whose window cannot see its element).
const VALUE_AND_BOX: &str = r#"function () {
  const value = (VALUE_FN).call(this);
  const r = this.getBoundingClientRect();
  let x = r.left, y = r.top;
  try {
    for (let w = this.ownerDocument.defaultView; w !== w.top; w = w.parent) {
      const owner = w.frameElement;
      if (!owner) return { value, box: null };
      const o = owner.getBoundingClientRect();
      x += o.left + owner.clientLeft;
      y += o.top + owner.clientTop;
    }
  } catch (e) {
    return { value, box: null };
  }
  return { value, box: [x, y, r.width, r.height] };
}"#;

/// Reads the field's value as the result reports it ([`VALUE`]) and notes
/// its box for the call's trace step ([`crate::tab::TabState::aimed_at`]),
/// in the one round trip the value needed anyway.
pub(crate) async fn read_value(tab: &Tab, element: &Element, budget: &Budget) -> Result<Value, ActionError> {
    let script = VALUE_AND_BOX.replace("VALUE_FN", VALUE);
    let mut read = element.call(budget, "reading the field", &script, vec![]).await?;
    if let Some([x, y, width, height]) = read["box"]
        .as_array()
        .and_then(|b| b.iter().map(Value::as_f64).collect::<Option<Vec<f64>>>())
        .as_deref()
    {
        tab.state(|s| s.aimed_at((*x, *y, *width, *height)));
    }
    Ok(read["value"].take())
}

/// Sets a range/date/time/color/number input from its string form through
/// the native setter (so frameworks that track the value see the change),
/// then fires `input` and `change`. `{bad}` when the input refused the text,
/// `{outside: [min, max]}` when it is past the input's bounds; either way
/// the old value is put back and no event fires.
const SET_VALUE: &str = r#"function (value) {
  const el = this;
  if (el.disabled) return { refused: 'is disabled' };
  if (el.readOnly) return { refused: 'is read-only' };
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  const old = el.value;
  setter.call(el, value);
  const numeric = el.type === 'range' || el.type === 'number';
  const bad = numeric ? (value.trim() === '' || isNaN(Number(value)))
    : el.type === 'color' ? el.value !== value.toLowerCase()
    : value !== '' && el.value === '';
  if (bad) { setter.call(el, old); return { bad: true }; }
  // A range input clamps by itself; the others only flag it.
  if (el.validity.rangeUnderflow || el.validity.rangeOverflow) {
    setter.call(el, old);
    return { outside: [el.min || null, el.max || null] };
  }
  el.dispatchEvent(new Event('input', { bubbles: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
  return { value: el.value };
}"#;

/// The format each value input expects, for the error that refuses one.
fn format_of(kind: &str) -> &'static str {
    match kind {
        "date" => "YYYY-MM-DD",
        "time" => "HH:MM or HH:MM:SS",
        "color" => "#rrggbb",
        "month" => "YYYY-MM",
        "week" => "YYYY-Www",
        "datetime-local" => "YYYY-MM-DDTHH:MM",
        _ => "a number",
    }
}

/// Sets a value input (`kind`: date, time, colour, range, number) whole,
/// with `input` and `change`; a value it refuses or that is out of its
/// bounds is `invalid_arguments` and leaves it as it was.
pub(crate) async fn set_value(
    element: &Element,
    kind: &str,
    value: &str,
    budget: &Budget,
) -> Result<Value, ActionError> {
    let result = element
        .call(budget, "setting the value", SET_VALUE, vec![json!(value)])
        .await?;
    if let Some(why) = result["refused"].as_str() {
        return Err(ActionError::new(
            ErrorCode::ElementNotInteractable,
            format!("{} {why}", element.label),
            "Fill in what the form needs first, or leave this field out.",
        ));
    }
    if result["bad"] == Value::Bool(true) {
        return Err(ActionError::invalid(
            format!(
                "\"{value}\" is not a valid value for {} (an <input type={kind}>)",
                element.label
            ),
            format!("Pass {}.", format_of(kind)),
        ));
    }
    if let Some(bounds) = result["outside"].as_array() {
        let bound = |i: usize| bounds.get(i).and_then(Value::as_str).map(str::to_owned);
        let range = match (bound(0), bound(1)) {
            (Some(min), Some(max)) => format!("from {min} to {max}"),
            (Some(min), None) => format!("{min} or later"),
            (None, Some(max)) => format!("up to {max}"),
            (None, None) => "within its bounds".to_owned(),
        };
        return Err(ActionError::invalid(
            format!(
                "{value:?} is outside what {} accepts (an <input type={kind}> taking {range}); its value was left as it was",
                element.label
            ),
            format!("Pass {} {range}.", format_of(kind)),
        ));
    }
    Ok(result["value"].clone())
}

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
