//! Selecting a given string of text (`browser_select_option` with `text`):
//! inside an element (a paragraph, a rich-text editor, a field) or the
//! whole page. In the main frame it is done as a person does it, a trusted
//! mouse drag from the string's first character to its last, so the
//! page's `mousedown`/`mouseup` and `selectionchange` handlers see it; the
//! selection is then checked and, if the drag missed by a character, set
//! exactly (`selectionchange` fires again).

use serde_json::{json, Value};

use crate::args::ElementTarget;
use crate::tab::Tab;
use crate::tab_tools::{element, input};
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

/// Finds `wanted` in the element's visible text (whitespace runs match
/// any whitespace; case-sensitive first, then not), clears any selection,
/// scrolls the string into view and keeps its range for [`CHECK`].
/// Returns the viewport points just inside its first and last character,
/// `{field: text}` for an input or textarea (selected directly), or
/// `{missing, sample}`.
const FIND: &str = r#"function (wanted) {
  const root = this;
  const doc = root.ownerDocument;
  const win = doc.defaultView;
  const squeeze = (s) => s.replace(/\s+/g, ' ');
  const want = squeeze(wanted).trim();
  if (root instanceof HTMLInputElement || root instanceof HTMLTextAreaElement) {
    let i = root.value.indexOf(wanted);
    if (i < 0) i = root.value.toLowerCase().indexOf(wanted.toLowerCase());
    if (i < 0) return { missing: true, sample: root.value.slice(0, 200) };
    root.focus();
    root.setSelectionRange(i, i + wanted.length);
    root.dispatchEvent(new Event('select', { bubbles: true }));
    return { field: root.value.substring(i, i + wanted.length) };
  }
  // The visible text as one string with whitespace squeezed, and for each
  // of its characters the text node and offset it came from.
  let flat = '';
  const at = [];
  const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || !parent.checkVisibility() || ['SCRIPT', 'STYLE', 'NOSCRIPT'].includes(parent.tagName)) continue;
    const s = node.data;
    for (let i = 0; i < s.length; i++) {
      const space = /\s/.test(s[i]);
      if (space && (flat.endsWith(' ') || flat === '')) continue;
      flat += space ? ' ' : s[i];
      at.push([node, i]);
    }
  }
  let i = flat.indexOf(want);
  if (i < 0) i = flat.toLowerCase().indexOf(want.toLowerCase());
  if (i < 0 || !want) return { missing: true, sample: flat.slice(0, 200) };
  const [startNode, startOffset] = at[i];
  const [endNode, endOffset] = at[i + want.length - 1];
  const range = doc.createRange();
  range.setStart(startNode, startOffset);
  range.setEnd(endNode, endOffset + 1);
  win.__cdpilotRange = range;
  doc.getSelection().removeAllRanges();
  startNode.parentElement.scrollIntoView({ block: 'center', inline: 'nearest' });
  const rectOf = (node, offset) => {
    const r = doc.createRange();
    r.setStart(node, offset);
    r.setEnd(node, offset + 1);
    return r.getClientRects()[0] || r.getBoundingClientRect();
  };
  const first = rectOf(startNode, startOffset);
  const last = rectOf(endNode, endOffset);
  const inset = (r) => Math.min(1, r.width / 4);
  return {
    from: [first.left + inset(first), first.top + first.height / 2],
    to: [last.right - inset(last), last.top + last.height / 2],
  };
}"#;

/// After the drag: the selection as the page sees it, set from the kept
/// range when the drag did not select exactly the string.
const CHECK: &str = r#"function (wanted) {
  const doc = this.ownerDocument;
  const win = doc.defaultView;
  const squeeze = (s) => s.replace(/\s+/g, ' ').trim();
  const selection = doc.getSelection();
  const range = win.__cdpilotRange;
  delete win.__cdpilotRange;
  if (squeeze(selection.toString()).toLowerCase() === squeeze(wanted).toLowerCase()) return { selected: selection.toString(), by: 'mouse' };
  if (range) { selection.removeAllRanges(); selection.addRange(range); }
  return { selected: selection.toString(), by: 'script' };
}"#;

pub async fn run(
    tab: &Tab,
    target: &ElementTarget,
    wanted: &str,
    budget: &Budget,
) -> Result<ActionOutput, ActionError> {
    let element = if target.reference.is_none() && target.selector.is_none() {
        let mut body = element::by_selector(tab, "body", budget).await?;
        body.label = "the page".to_owned();
        body
    } else {
        element::resolve(tab, target, budget).await?
    };
    let found = element
        .call(budget, "finding the text", FIND, vec![json!(wanted)])
        .await?;
    if found["missing"] == Value::Bool(true) {
        return Err(ActionError::new(
            ErrorCode::ElementNotFound,
            format!(
                "{} has no text \"{wanted}\" (its text begins \"{}\")",
                element.label,
                found["sample"].as_str().unwrap_or_default()
            ),
            "Pass text exactly as browser_snapshot shows it, and the ref of the element that holds it (or no ref for the whole page).",
        ));
    }
    if let Some(selected) = found["field"].as_str() {
        return Ok(done(&element.label, selected, "field"));
    }
    let point = |v: &Value| (v[0].as_f64().unwrap_or(0.0), v[1].as_f64().unwrap_or(0.0));
    // Trusted input lands in the tab's viewport: a drag is only possible
    // where the element's coordinates are the viewport's (the main frame).
    if element.frame.number.is_none() && element.frame.session.id() == tab.session.id() {
        let (from, to) = (point(&found["from"]), point(&found["to"]));
        input::left_mouse(tab, budget, "mouseMoved", from, false).await?;
        input::left_mouse(tab, budget, "mousePressed", from, true).await?;
        let release = input::left_mouse(tab, budget, "mouseMoved", to, true).await;
        // The button is never left down, whatever the move did.
        input::left_mouse(tab, budget, "mouseReleased", to, false).await?;
        release?;
    }
    let checked = element
        .call(budget, "checking the selection", CHECK, vec![json!(wanted)])
        .await?;
    let selected = checked["selected"].as_str().unwrap_or_default().to_owned();
    let by = checked["by"].as_str().unwrap_or("script");
    Ok(done(&element.label, &selected, by))
}

fn done(label: &str, selected: &str, by: &str) -> ActionOutput {
    let how = match by {
        "mouse" => " with a mouse drag (the page saw mousedown, mouseup and selectionchange)",
        "field" => " in the field",
        _ => " (set directly: the page saw selectionchange)",
    };
    ActionOutput::new(
        format!("Selected {selected:?} in {label}{how}."),
        json!({ "ok": true, "selected": selected, "by": by }),
    )
}
