//! `browser_select_option` on a combobox or autocomplete that is not a
//! `<select>`: type the wanted option's text into it (or open it, when it
//! takes no text), wait for the options the page renders (anywhere: many
//! libraries put them in a portal at the end of `<body>`), and click the
//! one whose text or value is the wanted one, with trusted input. An
//! option that is not offered is an error listing what was, and the field
//! gets its text back and is closed again (nothing left open).

use serde_json::{json, Value};

use crate::args::MouseButton;
use crate::tab::Tab;
use crate::tab_tools::element::Element;
use crate::tab_tools::{field, input, keys};
use crate::{ActionError, Budget, ErrorCode};

/// Whether the element is a combobox this module handles: `{text: true}`
/// for one that takes text (focused, its content selected so typing
/// replaces it), `{text: false}` for one that opens on a click, `null` for
/// anything else; with whether the page marks it as one and its text
/// before (put back when nothing is picked). Before anything changes, the elements visible now are
/// remembered, so options that appear after typing can be told apart.
const PREPARE: &str = r#"function () {
  const el = this;
  const role = el.getAttribute('role');
  const textual = (el instanceof HTMLInputElement && ['text', 'search', 'email', 'url', 'tel', ''].includes(el.getAttribute('type') || '')) ||
    el instanceof HTMLTextAreaElement || el.isContentEditable;
  if (!textual && role !== 'combobox') return null;
  // Whether the page marks it as a chooser (an autocomplete sets some of
  // these): one that is not and offers nothing is just a text field.
  const marked = role === 'combobox' || ['aria-autocomplete', 'aria-haspopup', 'aria-controls', 'aria-owns', 'aria-expanded', 'list']
    .some((a) => el.hasAttribute(a)) || el.getAttribute('autocomplete') === 'off' ||
    /autocomplete|typeahead|combo|select|search/i.test(el.getAttribute('class') || '');
  const old = el.isContentEditable ? el.textContent : ('value' in el ? el.value : '');
  const doc = el.ownerDocument;
  const seen = new WeakSet();
  for (const e of doc.body.querySelectorAll('*')) if (e.checkVisibility()) seen.add(e);
  doc.defaultView.__cdpilotSeen = seen;
  if (textual) {
    el.focus();
    if (el.isContentEditable) {
      const range = doc.createRange();
      range.selectNodeContents(el);
      doc.getSelection().removeAllRanges();
      doc.getSelection().addRange(range);
    } else el.select();
  }
  return { text: textual, marked, old };
}"#;

/// Waits (up to `ms`, a frame at a time) for the offered options:
/// visible `role=option` elements outside a `<select>`, and list items or
/// items of option-like classes that were not visible before; the
/// innermost of nested ones. It ends as soon as one whose text (or
/// `data-value`) is `wanted`, case-insensitively, is shown (marked for
/// [`PICKED`]), else when the options have not changed for a while (libraries
/// throttle their filtering: Tom Select redraws 300 ms after the typing).
/// Returns `{offered: [texts], found}`.
const OFFERED: &str = r#"function (wanted, ms) {
  const el = this;
  const doc = el.ownerDocument;
  const win = doc.defaultView;
  const seen = win.__cdpilotSeen || new WeakSet();
  const text = (e) => (e.innerText || e.textContent || '').replace(/\s+/g, ' ').trim();
  const optionish = /(^|[-_ ])(option|item|suggestion|result|choice)s?($|[-_ ])/i;
  const collect = () => {
    const found = [];
    for (const e of doc.body.querySelectorAll('*')) {
      if (e === el || e.contains(el) || !e.checkVisibility()) continue;
      const option = e.getAttribute('role') === 'option' && !e.closest('select');
      const fresh = !seen.has(e) && (e.tagName === 'LI' || optionish.test(e.getAttribute('class') || ''));
      if ((option || fresh) && text(e)) found.push(e);
    }
    return found.filter((e) => !found.some((o) => o !== e && e.contains(o) && text(o) === text(e)));
  };
  const w = wanted.trim().toLowerCase();
  const start = performance.now();
  return new Promise((resolve) => {
    let last = null;
    let since = start;
    const tick = () => {
      const options = collect();
      const key = options.map(text).join('\n');
      const now = performance.now();
      if (key !== last) { last = key; since = now; }
      const pick = options.find((o) => text(o).toLowerCase() === w) ||
        options.find((o) => (o.getAttribute('data-value') || '').toLowerCase() === w);
      const quiet = now - since > (options.length ? 500 : 1000);
      if (pick || quiet || now - start > ms) {
        win.__cdpilotPick = pick || null;
        resolve({ offered: options.map(text).slice(0, 30), found: !!pick });
        return;
      }
      win.requestAnimationFrame(tick);
    };
    win.requestAnimationFrame(tick);
  });
}"#;

const PICKED: &str = "function () { const w = this.ownerDocument.defaultView; const p = w.__cdpilotPick; delete w.__cdpilotPick; delete w.__cdpilotSeen; return p; }";

/// The field's text afterwards (a combobox's value, or its shown choice).
const VALUE: &str = r#"function () {
  const el = this;
  const v = 'value' in el && typeof el.value === 'string' ? el.value : '';
  return v || (el.innerText || el.textContent || '').trim();
}"#;

const BLUR: &str = "function () { this.blur(); const w = this.ownerDocument.defaultView; delete w.__cdpilotPick; delete w.__cdpilotSeen; }";

/// How long the page gets to render its options after the typing.
const OPTIONS_MS: u64 = 3000;

/// Picks `wanted` in the combobox; `Ok(None)` when the element is not one
/// (the caller reports what it is).
pub(crate) async fn pick(
    tab: &Tab,
    element: &Element,
    wanted: &str,
    budget: &Budget,
) -> Result<Option<Value>, ActionError> {
    let prepared = element
        .call(budget, "opening the combobox", PREPARE, vec![])
        .await?;
    if prepared.is_null() {
        return Ok(None);
    }
    let types = prepared["text"] == Value::Bool(true);
    if types {
        input::insert_text(tab, budget, wanted).await?;
    } else {
        let point = element.actionable_point(tab, budget).await?;
        input::press_at(tab, budget, point, MouseButton::Left, 1, 0).await?;
    }
    let wait = (budget.remaining().as_millis() as u64 / 2).min(OPTIONS_MS);
    let offered = element
        .call_awaiting(
            budget,
            "waiting for the options",
            OFFERED,
            vec![json!(wanted), json!(wait)],
        )
        .await?;
    let option = if offered["found"] == Value::Bool(true) {
        element
            .related(
                budget,
                "finding the option",
                PICKED,
                format!("option \"{wanted}\""),
            )
            .await?
    } else {
        None
    };
    let Some(option) = option else {
        let before = prepared["old"].as_str().unwrap_or_default();
        close(tab, element, types.then_some(before), budget).await;
        let list = offered["offered"]
            .as_array()
            .map(|o| o.iter().filter_map(Value::as_str).collect::<Vec<_>>())
            .unwrap_or_default();
        if list.is_empty() && prepared["marked"] != Value::Bool(true) {
            return Err(ActionError::new(
                ErrorCode::ElementNotInteractable,
                format!(
                    "{} is not a <select> or a combobox: it is a text field that offered no options after typing \"{wanted}\" (its text was put back)",
                    element.label
                ),
                "Type into it with browser_type; for a custom dropdown, click it and then the option.",
            ));
        }
        let said = if list.is_empty() {
            "it offered no options".to_owned()
        } else {
            format!("it offered {}", serde_json::to_string(&list).unwrap_or_default())
        };
        let typed = if types {
            format!(" after typing \"{wanted}\"")
        } else {
            String::new()
        };
        return Err(ActionError::invalid(
            format!(
                "{} has no option \"{wanted}\"{typed}: {said}; its text was put back and it was closed again",
                element.label
            ),
            "Pass one of the offered options exactly as shown, or type a shorter prefix with browser_type and read the options from browser_snapshot.",
        ));
    };
    let point = option.actionable_point(tab, budget).await?;
    input::press_at(tab, budget, point, MouseButton::Left, 1, 0).await?;
    if element.frame.session.id() != tab.session.id() {
        element.settle(budget).await?;
    }
    let value = element
        .call(budget, "reading the combobox", VALUE, vec![])
        .await?;
    Ok(Some(value))
}

/// Undoes a pick that found nothing: puts the text that was there back
/// (`before`, for a combobox typed into), presses Escape and takes the
/// focus away, so no list is left open. Best effort, with a budget of its
/// own (the call's may be spent): the error is what matters.
async fn close(tab: &Tab, element: &Element, before: Option<&str>, budget: &Budget) {
    let _ = budget;
    let cleanup = Budget::with_timeout(std::time::Duration::from_secs(2));
    if let Some(before) = before {
        let focused = element
            .call(
                &cleanup,
                "clearing the combobox",
                &field::prepare(),
                vec![Value::Bool(true)],
            )
            .await;
        // Text goes back only where the focus is the combobox's.
        let ours = matches!(&focused, Ok(v) if *v == Value::Bool(true) || v["unfocused"] == true);
        let _ = if !ours {
            Ok(())
        } else if before.is_empty() {
            input::press_delete(tab, &cleanup).await
        } else {
            input::insert_text(tab, &cleanup, before).await
        };
    }
    if let Ok(escape) = keys::parse("Escape") {
        let _ = input::press(tab, &cleanup, &escape).await;
    }
    let _ = element.call(&cleanup, "closing the combobox", BLUR, vec![]).await;
}

/// The error for an element that is neither a `<select>` nor a combobox.
pub(crate) fn not_a_choice(element: &Element, tag: &str) -> ActionError {
    ActionError::new(
        ErrorCode::ElementNotInteractable,
        format!("{} is a <{tag}>, not a <select>, a combobox or a text field", element.label),
        "Pass the combobox or its text field; for a custom dropdown, click it and then the option. To select text, pass text instead of values.",
    )
}
