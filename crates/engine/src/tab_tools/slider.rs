//! Sliders and spinbuttons that are not `<input>`s, moved to a value with
//! keys, as a person using the keyboard would: ARIA ones (role `slider` /
//! `spinbutton`, `aria-valuenow`) and library handles with no role (a
//! focusable handle inside a track, such as jQuery UI's), whose value is
//! read as a percentage of their track. `browser_fill_form` calls it.

use serde_json::{json, Value};

use crate::tab::Tab;
use crate::tab_tools::element::Element;
use crate::tab_tools::{input, keys};
use crate::{ActionError, Budget, ErrorCode};

/// Whether the element is such a control (`fill_form`'s KIND asks it).
pub(crate) const IS_SLIDER: &str = r#"(el) => {
  const role = el.getAttribute('role');
  if (role === 'slider' || role === 'spinbutton' || el.hasAttribute('aria-valuenow')) return true;
  return el.tabIndex >= 0 && /handle|thumb|knob/i.test((el.getAttribute('class') || '') + ' ' + el.id);
}"#;

/// Where the control is, a frame after the last key (pages that redraw on
/// the next frame): `{now, min, max}` from its ARIA attributes, or for a
/// handle without them `{now, min: 0, max: 100, percent: true}`, its
/// centre's position along the nearest ancestor at least twice its width.
const READ: &str = r#"function () {
  const el = this;
  const win = el.ownerDocument.defaultView;
  return new Promise((resolve) => win.requestAnimationFrame(() => {
    const number = (name) => { const v = el.getAttribute(name); return v === null || v === '' || isNaN(Number(v)) ? null : Number(v); };
    if (el.hasAttribute('aria-valuenow')) {
      resolve({ now: number('aria-valuenow'), min: number('aria-valuemin'), max: number('aria-valuemax') });
      return;
    }
    const r = el.getBoundingClientRect();
    let track = el.parentElement;
    while (track && track.getBoundingClientRect().width < 2 * r.width) track = track.parentElement;
    if (!track) { resolve({ none: true }); return; }
    // The track's inner box: the handle moves between its borders.
    const b = track.getBoundingClientRect();
    const t = { left: b.left + track.clientLeft, top: b.top + track.clientTop, width: track.clientWidth, height: track.clientHeight };
    const vertical = t.height > t.width;
    const now = vertical ? (t.top + t.height - (r.top + r.height / 2)) / t.height : (r.left + r.width / 2 - t.left) / t.width;
    resolve({ now: Math.round(now * 1000) / 10, min: 0, max: 100, percent: true });
  }));
}"#;

const FOCUS: &str = "function () { this.focus(); }";

/// At most this many key presses in one call: a slider needing more is
/// moved by PageUp/PageDown first.
const MOST_PRESSES: u32 = 400;

/// Moves the control to `value` (a number) and returns where it landed.
pub(crate) async fn set(
    tab: &Tab,
    element: &Element,
    value: &str,
    budget: &Budget,
) -> Result<Value, ActionError> {
    let Ok(wanted) = value.trim().parse::<f64>() else {
        return Err(ActionError::invalid(
            format!("{} is a slider; \"{value}\" is not a number", element.label),
            "Pass the value as a number, e.g. \"40\".",
        ));
    };
    let first = read(element, budget).await?;
    let percent = first["percent"] == Value::Bool(true);
    let (min, max) = (first["min"].as_f64(), first["max"].as_f64());
    if min.is_some_and(|m| wanted < m) || max.is_some_and(|m| wanted > m) {
        return Err(ActionError::invalid(
            format!(
                "{} takes values from {} to {}{}; {value} is outside",
                element.label,
                show(min),
                show(max),
                if percent {
                    " (a percentage of its track: it has no aria-valuenow)"
                } else {
                    ""
                }
            ),
            "Pass a value within that range.",
        ));
    }
    element.call(budget, "focusing the slider", FOCUS, vec![]).await?;
    let mut now = first["now"].as_f64().unwrap_or(0.0);
    if Some(wanted) == min && now != wanted {
        now = press(tab, element, "Home", 1, budget).await?;
    } else if Some(wanted) == max && now != wanted {
        now = press(tab, element, "End", 1, budget).await?;
    }
    // One press measures a step; then the presses the rest needs go out in
    // one batch, and up to two rounds correct what the page rounded.
    let mut step = 0.0_f64;
    for _ in 0..4 {
        let gap = wanted - now;
        // A percentage read from pixels is good to about a percent.
        let close = if percent { 1.0 } else { 0.0 };
        if gap.abs() <= close || (step != 0.0 && gap.abs() < step.abs() / 2.0) {
            break;
        }
        let (up, down) = if percent {
            ("ArrowRight", "ArrowLeft")
        } else {
            ("ArrowUp", "ArrowDown")
        };
        let key = if gap > 0.0 { up } else { down };
        if step == 0.0 {
            let after = press(tab, element, key, 1, budget).await?;
            step = (after - now).abs();
            now = after;
            if step == 0.0 {
                return Err(ActionError::new(
                    ErrorCode::ElementNotInteractable,
                    format!("{} did not move with the arrow keys (it stayed at {})", element.label, show(Some(now))),
                    "Drag its handle with browser_drag, or click its track, then read the value from browser_snapshot.",
                ));
            }
            continue;
        }
        let mut presses = ((gap.abs() / step).round() as u32).max(1);
        if presses > MOST_PRESSES {
            let page = if gap > 0.0 { "PageUp" } else { "PageDown" };
            let after = press(tab, element, page, 1, budget).await?;
            let page_step = (after - now).abs();
            now = after;
            if page_step > step {
                let pages = ((wanted - now).abs() / page_step).floor() as u32;
                if pages > 0 {
                    now = press(tab, element, page, pages.min(MOST_PRESSES), budget).await?;
                }
            }
            presses = (((wanted - now).abs() / step).round() as u32).clamp(1, MOST_PRESSES);
        }
        now = press(tab, element, key, presses, budget).await?;
    }
    // A percentage read from pixels is good to a whole percent.
    if percent {
        now = now.round();
    }
    // 35, not 35.0: the value as the page would write it.
    Ok(if now.fract() == 0.0 && now.abs() < 1e15 {
        json!(now as i64)
    } else {
        json!(now)
    })
}

/// Presses `key` `times` times in one ordered batch; returns the value after.
async fn press(
    tab: &Tab,
    element: &Element,
    key: &str,
    times: u32,
    budget: &Budget,
) -> Result<f64, ActionError> {
    let combo = keys::parse(key)?;
    element.drawn(tab, budget).await?;
    let presses = (0..times).map(|_| input::press(tab, budget, &combo));
    futures_util::future::try_join_all(presses).await?;
    if element.frame.session.id() != tab.session.id() {
        element.settle(budget).await?;
    }
    let read = read(element, budget).await?;
    Ok(read["now"].as_f64().unwrap_or(0.0))
}

async fn read(element: &Element, budget: &Budget) -> Result<Value, ActionError> {
    let read = element
        .call_awaiting(budget, "reading the slider", READ, vec![])
        .await?;
    if read["none"] == Value::Bool(true) || read["now"].is_null() {
        return Err(ActionError::new(
            ErrorCode::ElementNotInteractable,
            format!(
                "{} has no value to read (no aria-valuenow, no track around it)",
                element.label
            ),
            "Drag it with browser_drag instead, then read the value from browser_snapshot.",
        ));
    }
    Ok(read)
}

fn show(v: Option<f64>) -> String {
    match v {
        None => "?".to_owned(),
        Some(v) if v.fract() == 0.0 => format!("{}", v as i64),
        Some(v) => format!("{v}"),
    }
}
