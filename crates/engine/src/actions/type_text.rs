//! `browser_type`: focus a field, clear it (unless told not to), insert the
//! text as trusted input, optionally press Enter, and report the value.

use serde_json::{json, Value};

use crate::action::TypeArgs;
use crate::actions::{element, input, keys};
use crate::tab::Tab;
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

/// Focuses the element and, when asked, selects its whole content so the
/// inserted text replaces it. Returns false for elements that take no text.
pub(crate) const PREPARE: &str = r#"function (clear) {
  const editable = this.isContentEditable ||
    (this instanceof HTMLInputElement && !['checkbox','radio','button','submit','reset','image','file','range','color'].includes(this.type)) ||
    this instanceof HTMLTextAreaElement;
  if (!editable) return false;
  this.focus();
  if (clear) {
    if (this.isContentEditable) {
      const range = document.createRange();
      range.selectNodeContents(this);
      const selection = this.ownerDocument.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
    } else {
      this.select();
    }
  }
  return true;
}"#;

pub(crate) const VALUE: &str =
    "function () { return this.isContentEditable ? this.textContent : this.value; }";

pub async fn run(tab: &Tab, args: &TypeArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let element = element::resolve(tab, &args.target, budget).await?;
    let clear = args.clear.unwrap_or(true);
    let editable = element
        .call(budget, "focusing the field", PREPARE, vec![Value::Bool(clear)])
        .await?;
    if editable != Value::Bool(true) {
        return Err(ActionError::new(
            ErrorCode::ElementNotInteractable,
            format!("{} does not accept text", element.label),
            "Pick a text field, text area or editable element from browser_snapshot.",
        ));
    }
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
    let value = element.call(budget, "reading the field", VALUE, vec![]).await?;
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
