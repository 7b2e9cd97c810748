//! Tom Select, noUiSlider, Quill, text selection, jstree, flatpickr.

use serde_json::json;
use testkit::snapshot::ref_of;

use crate::support::ref_on_line;
use crate::{fails, fill_refused, has_line, ok, open, open_and_read, snapshot};

/// Tom Select (a `<select>` replaced by a combobox whose dropdown lives
/// at the end of body): type then click the option in two calls, pick in
/// one call, and a city it does not have is an error that closes it.
#[tokio::test]
async fn tom_select_combobox_in_two_calls_and_in_one() {
    let (mut c, s, _held) = open_and_read("widget-tomselect.html").await;
    let city = ref_on_line(&s, "combobox \"City\"");
    ok(&mut c, "browser_type", json!({"ref": city, "text": "Par"})).await;
    let open = snapshot(&mut c).await;
    // The listbox lives in a portal at the end of <body>; it is printed
    // under the combobox that controls it (`aria-controls`).
    let lines: Vec<&str> = open.lines().collect();
    let at_city = lines
        .iter()
        .position(|l| l.contains("combobox \"City\""))
        .expect("the combobox line");
    let at_paris = lines
        .iter()
        .position(|l| l.contains("option \"Paris\" [ref="))
        .expect("the option line");
    let depth = |l: &str| l.len() - l.trim_start().len();
    assert!(
        at_paris > at_city
            && lines[at_city + 1..=at_paris]
                .iter()
                .all(|l| depth(l) > depth(lines[at_city])),
        "the options sit under their combobox:\n{open}"
    );
    let paris = ref_of(&open, "option \"Paris\"");
    ok(&mut c, "browser_click", json!({"ref": paris})).await;
    let after = snapshot(&mut c).await;
    assert!(after.contains("City chosen: Paris"), "{after}");

    ok(
        &mut c,
        "browser_select_option",
        json!({"ref": city, "values": ["Lisbon"]}),
    )
    .await;
    let after = snapshot(&mut c).await;
    assert!(after.contains("City chosen: Lisbon"), "{after}");

    let bad = fails(
        &mut c,
        "browser_select_option",
        json!({"ref": city, "values": ["Oslo"]}),
        "invalid_argument",
    )
    .await;
    assert!(bad.contains("Oslo"), "{bad}");
    let after = snapshot(&mut c).await;
    assert!(
        has_line(&after, "combobox \"City\"")
            && after
                .lines()
                .any(|l| l.contains("combobox \"City\"") && l.contains("[collapsed]")),
        "left closed:\n{after}"
    );
    assert!(!has_line(&after, "listbox"), "no dropdown left open:\n{after}");
    assert!(
        after.contains("City chosen: Lisbon"),
        "the choice stays:\n{after}"
    );
}

/// noUiSlider: its handles are ARIA sliders; browser_fill_form moves one
/// to a number with keys, and refuses a number past the other handle
/// (its aria-valuemax) with the range.
#[tokio::test]
async fn nouislider_handles_move_to_a_value_by_fill_form() {
    let (mut c, s, _held) = open_and_read("widget-nouislider.html").await;
    let low = ref_on_line(&s, "\"Lowest price\"");
    let high = ref_on_line(&s, "\"Highest price\"");
    let filled = ok(
        &mut c,
        "browser_fill_form",
        json!({"fields": [{"ref": low, "value": "35"}, {"ref": high, "value": "62"}]}),
    )
    .await;
    assert_eq!(filled["structuredContent"]["values"], json!([35, 62]), "{filled}");
    let after = snapshot(&mut c).await;
    assert!(after.contains("Price from 35 to 62"), "{after}");
    let bad = fill_refused(&mut c, &low, "90").await;
    assert!(bad.contains("from 0 to 62"), "{bad}");
    let after = snapshot(&mut c).await;
    assert!(after.contains("Price from 35 to 62"), "unchanged: {after}");
}

/// Quill: typing inserts at the caret, key combos select and bold, and
/// text selection of a sentence's words (outside the editor, in a
/// paragraph with no ref) reaches the page's selectionchange handler.
#[tokio::test]
async fn quill_editor_types_at_the_caret_and_takes_key_combos() {
    let (mut c, s, _held) = open_and_read("widget-quill.html").await;
    let editor = ref_on_line(&s, "textbox");
    ok(&mut c, "browser_click", json!({"ref": editor})).await;
    ok(&mut c, "browser_press_key", json!({"key": "End"})).await;
    ok(
        &mut c,
        "browser_type",
        json!({"ref": editor, "text": " again", "clear": false}),
    )
    .await;
    let after = snapshot(&mut c).await;
    assert!(after.contains("<p>Hello world again</p>"), "{after}");
    // Shift+ArrowLeft ×5 selects "again"; Control+b bolds just that.
    for _ in 0..5 {
        ok(&mut c, "browser_press_key", json!({"key": "Shift+ArrowLeft"})).await;
    }
    ok(&mut c, "browser_press_key", json!({"key": "Control+b"})).await;
    let after = snapshot(&mut c).await;
    assert!(
        after.contains("<p>Hello world <strong>again</strong></p>"),
        "{after}"
    );
    ok(&mut c, "browser_press_key", json!({"key": "Control+a"})).await;
    ok(&mut c, "browser_press_key", json!({"key": "Control+b"})).await;
    let after = snapshot(&mut c).await;
    assert!(
        after.contains("<p><strong>Hello world again</strong></p>"),
        "{after}"
    );
}

/// Text selection: a string inside a paragraph (no ref needed: the page
/// is searched), selected with a trusted mouse drag that the page's
/// selectionchange handler sees; text that is not there is an error.
#[tokio::test]
async fn text_in_a_paragraph_is_selected_and_the_page_sees_it() {
    let (mut c, _tmp, _site) = open("widget-quill.html").await;
    let selected = ok(
        &mut c,
        "browser_select_option",
        json!({"text": "brown fox jumps"}),
    )
    .await;
    assert_eq!(
        selected["structuredContent"]["selected"],
        json!("brown fox jumps"),
        "{selected}"
    );
    assert_eq!(selected["structuredContent"]["by"], json!("mouse"), "{selected}");
    let after = snapshot(&mut c).await;
    assert!(after.contains("Selected text: brown fox jumps"), "{after}");
    let missing = fails(
        &mut c,
        "browser_select_option",
        json!({"text": "purple cow"}),
        "element_not_found",
    )
    .await;
    assert!(missing.contains("purple cow"), "{missing}");
    let both = fails(
        &mut c,
        "browser_select_option",
        json!({"text": "fox", "values": ["a"]}),
        "invalid_argument",
    )
    .await;
    assert!(both.contains("not both"), "{both}");
}

/// jstree: a folder expands with a click and ArrowRight (its children
/// appear in the next snapshot, aria-expanded shows as [expanded]); a
/// file is then chosen by its ref.
#[tokio::test]
async fn jstree_folders_expand_by_click_and_keys() {
    let (mut c, s, _held) = open_and_read("widget-jstree.html").await;
    assert!(
        s.lines()
            .any(|l| l.contains("treeitem \"Documents\"") && l.contains("[collapsed]")),
        "{s}"
    );
    assert!(!s.contains("Invoices"), "{s}");
    ok(
        &mut c,
        "browser_click",
        json!({"ref": ref_on_line(&s, "treeitem \"Documents\"")}),
    )
    .await;
    ok(&mut c, "browser_press_key", json!({"key": "ArrowRight"})).await;
    let open = snapshot(&mut c).await;
    assert!(
        open.lines()
            .any(|l| l.contains("treeitem \"Documents\"") && l.contains("[expanded]")),
        "{open}"
    );
    ok(
        &mut c,
        "browser_click",
        json!({"ref": ref_on_line(&open, "treeitem \"Invoices\"")}),
    )
    .await;
    ok(&mut c, "browser_press_key", json!({"key": "ArrowRight"})).await;
    let deeper = snapshot(&mut c).await;
    ok(
        &mut c,
        "browser_click",
        json!({"ref": ref_on_line(&deeper, "invoice-2024-04.pdf")}),
    )
    .await;
    let after = snapshot(&mut c).await;
    assert!(after.contains("Opened file: invoice-2024-04.pdf"), "{after}");
}

/// flatpickr: day cells are named with their full date by the library
/// (aria-label); the next-month arrow, an unnamed SVG span, has a hint.
#[tokio::test]
async fn flatpickr_picks_a_day_in_the_next_month() {
    let (mut c, s, _held) = open_and_read("widget-flatpickr.html").await;
    ok(
        &mut c,
        "browser_click",
        json!({"ref": ref_on_line(&s, "\"Check-in\"")}),
    )
    .await;
    let calendar = snapshot(&mut c).await;
    assert!(calendar.contains("\"March 20, 2024\""), "{calendar}");
    ok(
        &mut c,
        "browser_click",
        json!({"ref": ref_of(&calendar, "next-month")}),
    )
    .await;
    let april = snapshot(&mut c).await;
    ok(
        &mut c,
        "browser_click",
        json!({"ref": ref_of(&april, "\"April 2, 2024\"")}),
    )
    .await;
    let after = snapshot(&mut c).await;
    assert!(after.contains("Check-in on: 2024-04-02"), "{after}");
}
