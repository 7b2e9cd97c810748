//! Native controls and plain pages: value inputs, an ARIA spinbutton, a
//! ref in an inner scroll box, the clipboard, an inline handler.

use serde_json::json;

use crate::support::ref_on_line;
use crate::{fails, fill, fill_refused, has_line, ok, open_and_read, snapshot};

/// Finding 5 (issue 21): typing into a date field left it empty and
/// answered `value is now ""`. Every native value input now takes typed
/// text by value, fires `input` and `change`, and refuses what it cannot
/// hold with the format (and a date's range).
#[tokio::test]
async fn native_value_inputs_take_typed_text_and_refuse_bad_values() {
    let (mut c, s, _held) = open_and_read("widget-native.html").await;
    let cases = [
        ("Start date", "2024-03-20", "start"),
        ("Alarm", "07:30", "alarm"),
        ("Meeting", "2024-03-20T09:15", "meeting"),
        ("Billing month", "2024-05", "month"),
        ("Sprint week", "2024-W12", "week"),
        ("Theme colour", "#ff8800", "colour"),
        ("Brightness", "8", "brightness"),
        ("Guests", "4", "guests"),
    ];
    for (label, value, _) in cases {
        let r = ref_on_line(&s, &format!("\"{label}\""));
        let typed = ok(&mut c, "browser_type", json!({"ref": r, "text": value})).await;
        assert_eq!(typed["structuredContent"]["value"], json!(value), "{typed}");
    }
    let after = snapshot(&mut c).await;
    for (label, value, id) in cases {
        assert!(
            has_line(&after, &format!("\"{label}\""))
                && after
                    .lines()
                    .any(|l| l.contains(label) && l.contains(&format!("value=\"{value}\""))),
            "{label} should show {value}:\n{after}"
        );
        assert!(
            after.contains(&format!("{id}:input")) && after.contains(&format!("{id}:change")),
            "{id} events:\n{after}"
        );
    }
    let date = ref_on_line(&s, "\"Start date\"");
    let bad = fails(
        &mut c,
        "browser_type",
        json!({"ref": date, "text": "tomorrow"}),
        "invalid_argument",
    )
    .await;
    assert!(bad.contains("YYYY-MM-DD"), "{bad}");
    let outside = fails(
        &mut c,
        "browser_type",
        json!({"ref": date, "text": "2025-01-01"}),
        "invalid_argument",
    )
    .await;
    assert!(outside.contains("from 2024-01-01 to 2024-12-31"), "{outside}");
    let colour = ref_on_line(&s, "\"Theme colour\"");
    let bad = fails(
        &mut c,
        "browser_type",
        json!({"ref": colour, "text": "orange"}),
        "invalid_argument",
    )
    .await;
    assert!(bad.contains("#rrggbb"), "{bad}");
    // A refused value leaves the field as it was.
    let after = snapshot(&mut c).await;
    assert!(
        after
            .lines()
            .any(|l| l.contains("Start date") && l.contains("value=\"2024-03-20\"")),
        "{after}"
    );
    assert!(
        after
            .lines()
            .any(|l| l.contains("Theme colour") && l.contains("value=\"#ff8800\"")),
        "{after}"
    );
}

/// A spinbutton written to the WAI-ARIA pattern (role, aria-valuenow,
/// keys) is set with browser_fill_form by keys; a value past its
/// aria-valuemax is refused with the range.
#[tokio::test]
async fn aria_spinbutton_is_set_with_keys_by_fill_form() {
    let (mut c, s, _held) = open_and_read("widget-native.html").await;
    let copies = ref_on_line(&s, "\"Copies\"");
    let filled = fill(&mut c, &copies, "7").await;
    assert_eq!(filled["structuredContent"]["values"], json!([7]), "{filled}");
    let after = snapshot(&mut c).await;
    assert!(after.contains("Copies: 7"), "{after}");
    let to_max = fill(&mut c, &copies, "20").await;
    assert_eq!(to_max["structuredContent"]["values"], json!([20]), "{to_max}");
    let bad = fill_refused(&mut c, &copies, "25").await;
    assert!(bad.contains("from 1 to 20"), "{bad}");
}

/// A button inside a list that scrolls in its own box: clicking its ref
/// scrolls the box first; browser_scroll on it brings it into view too.
#[tokio::test]
async fn a_ref_inside_an_inner_scroll_container_is_reached() {
    let (mut c, s, _held) = open_and_read("widget-native.html").await;
    let archive = ref_on_line(&s, "\"Archive all\"");
    ok(&mut c, "browser_scroll", json!({"ref": archive})).await;
    ok(&mut c, "browser_click", json!({"ref": archive})).await;
    let after = snapshot(&mut c).await;
    assert!(after.contains("Archived: yes"), "{after}");
}

/// Copy and paste between two fields with key combos.
#[tokio::test]
async fn clipboard_copy_and_paste_with_key_combos() {
    let (mut c, s, _held) = open_and_read("widget-native.html").await;
    ok(
        &mut c,
        "browser_click",
        json!({"ref": ref_on_line(&s, "\"From\"")}),
    )
    .await;
    ok(&mut c, "browser_press_key", json!({"key": "Control+a"})).await;
    ok(&mut c, "browser_press_key", json!({"key": "Control+c"})).await;
    ok(&mut c, "browser_click", json!({"ref": ref_on_line(&s, "\"To\"")})).await;
    ok(&mut c, "browser_press_key", json!({"key": "Control+v"})).await;
    let after = snapshot(&mut c).await;
    assert!(
        after
            .lines()
            .any(|l| l.contains("\"To\"") && l.contains("value=\"copy me\"")),
        "{after}"
    );
}

/// Issue 35, finding 1: a heading with an inline `ondblclick` (from
/// Playwright MCP's own tests) had no ref, so it could not be
/// double-clicked. Its listener gives it one.
#[tokio::test]
async fn a_heading_with_an_inline_dblclick_handler_has_a_ref() {
    let (mut c, s, _held) = open_and_read("widget-native.html").await;
    let heading = ref_on_line(&s, "heading \"Double-click this heading\"");
    ok(&mut c, "browser_click", json!({"ref": heading, "click_count": 2})).await;
    let after = snapshot(&mut c).await;
    assert!(after.contains("Heading double-clicked: yes"), "{after}");
}
