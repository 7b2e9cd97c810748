//! jQuery UI: autocomplete, datepicker, slider.

use serde_json::json;
use testkit::snapshot::ref_of;

use crate::support::ref_on_line;
use crate::{fails, fill, fill_refused, ok, open_and_read, snapshot};

/// jQuery UI autocomplete: options appear after typing (in a menu at the
/// end of body); picking works in two calls (type, then click the option)
/// and in one (browser_select_option on the text field); an option it
/// does not offer is an error that lists what it offered and leaves the
/// menu closed and the field empty.
#[tokio::test]
async fn jquery_ui_autocomplete_types_and_picks() {
    let (mut c, s, _held) = open_and_read("widget-jqueryui.html").await;
    let language = ref_on_line(&s, "\"Language\"");
    let picked = ok(
        &mut c,
        "browser_select_option",
        json!({"ref": language, "values": ["JavaScript"]}),
    )
    .await;
    assert_eq!(
        picked["structuredContent"]["value"],
        json!("JavaScript"),
        "{picked}"
    );
    let after = snapshot(&mut c).await;
    assert!(after.contains("Language chosen: JavaScript"), "{after}");
    let bad = fails(
        &mut c,
        "browser_select_option",
        json!({"ref": language, "values": ["Rust"]}),
        "invalid_argument",
    )
    .await;
    assert!(
        bad.contains("no option \"Rust\"") && bad.contains("offered no options"),
        "{bad}"
    );
    let after = snapshot(&mut c).await;
    let menu = after.lines().filter(|l| !l.contains("Language"));
    assert!(
        !menu.into_iter().any(|l| l.contains("Java")),
        "menu closed:\n{after}"
    );
    assert!(
        after
            .lines()
            .any(|l| l.contains("\"Language\"") && l.contains("value=\"JavaScript\"")),
        "its text put back:\n{after}"
    );
}

/// The autocomplete in two calls, as an agent reading the snapshot does:
/// type a prefix, find the option's ref among the suggestions, click it.
#[tokio::test]
async fn jquery_ui_autocomplete_in_two_calls() {
    let (mut c, s, _held) = open_and_read("widget-jqueryui.html").await;
    ok(
        &mut c,
        "browser_type",
        json!({"ref": ref_on_line(&s, "\"Language\""), "text": "Ja"}),
    )
    .await;
    let open = snapshot(&mut c).await;
    ok(
        &mut c,
        "browser_click",
        json!({"ref": ref_of(&open, "JavaScript")}),
    )
    .await;
    let after = snapshot(&mut c).await;
    assert!(after.contains("Language chosen: JavaScript"), "{after}");
}

/// jQuery UI datepicker: the calendar opens on a click, its month buttons
/// are named (Prev/Next), its day cells carry their full date; picking
/// a day in the next month fills the field.
#[tokio::test]
async fn jquery_ui_datepicker_moves_a_month_and_picks_a_day() {
    let (mut c, s, _held) = open_and_read("widget-jqueryui.html").await;
    ok(
        &mut c,
        "browser_click",
        json!({"ref": ref_on_line(&s, "\"Trip date\"")}),
    )
    .await;
    let calendar = snapshot(&mut c).await;
    assert!(calendar.contains("March 2024"), "{calendar}");
    ok(
        &mut c,
        "browser_click",
        json!({"ref": ref_of(&calendar, "button \"Next\"")}),
    )
    .await;
    let april = snapshot(&mut c).await;
    assert!(april.contains("April 2024"), "{april}");
    ok(
        &mut c,
        "browser_click",
        json!({"ref": ref_of(&april, "\"2024-04-02\"")}),
    )
    .await;
    let after = snapshot(&mut c).await;
    assert!(after.contains("Trip on: 2024-04-02"), "{after}");
    assert!(
        after
            .lines()
            .any(|l| l.contains("\"Trip date\"") && l.contains("value=\"2024-04-02\"")),
        "{after}"
    );
}

/// jQuery UI slider: the handle is an unnamed `<span tabindex=0>` with no
/// role and no aria-valuenow; browser_fill_form moves it with keys to a
/// percentage of its track (here the slider's 0–100 scale).
#[tokio::test]
async fn jquery_ui_slider_handle_moves_by_fill_form() {
    let (mut c, s, _held) = open_and_read("widget-jqueryui.html").await;
    let handle = ref_of(&s, "ui-slider-handle");
    let filled = fill(&mut c, &handle, "60").await;
    assert_eq!(filled["structuredContent"]["values"], json!([60]), "{filled}");
    let after = snapshot(&mut c).await;
    assert!(after.contains("Volume: 60"), "{after}");
    fill(&mut c, &handle, "0").await;
    assert!(snapshot(&mut c).await.contains("Volume: 0"));
    let bad = fill_refused(&mut c, &handle, "150").await;
    assert!(bad.contains("from 0 to 100"), "{bad}");
}
