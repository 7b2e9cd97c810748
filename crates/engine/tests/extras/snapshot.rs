//! Snapshot `find` and `diff`, screenshot `annotate` and `path` (issue 12).

use base64::Engine as _;
use engine::ErrorCode;
use serde_json::json;

use crate::common::{self, call, ok};
use crate::{engine_in, output_dir};

#[tokio::test]
async fn find_returns_a_match_inside_an_iframe_with_its_ancestors() {
    let site = testkit::TestSite::start().await;
    let engine = engine_in(&output_dir("find"));
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("frames.html")}),
    )
    .await;
    let out = ok(&engine, "browser_snapshot", json!({"find": "child FIELD"})).await;
    let lines: Vec<&str> = out.text.lines().collect();
    let hit = lines
        .iter()
        .position(|l| l.contains("Child field"))
        .unwrap_or_else(|| panic!("{}", out.text));
    // The iframe's line comes before it, less indented.
    let iframe = lines[..hit]
        .iter()
        .rev()
        .find(|l| l.trim_start().starts_with("iframe"))
        .unwrap_or_else(|| panic!("{}", out.text));
    assert!(iframe.len() - iframe.trim_start().len() < lines[hit].len() - lines[hit].trim_start().len());
    assert!(lines[hit].contains("[ref=f"), "{}", out.text);
    assert_eq!(out.data["matches"], 2, "one field per frame: {}", out.text);
    assert!(!out.text.contains("Parent button"), "{}", out.text);
    let out = ok(&engine, "browser_snapshot", json!({"find": "/^button \"Parent/"})).await;
    assert_eq!(out.data["matches"], 1, "{}", out.text);
    let e = call(&engine, "browser_snapshot", json!({"find": "/(/"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
}

#[tokio::test]
async fn diff_after_one_click_shows_just_the_changed_line() {
    let site = testkit::TestSite::start().await;
    let engine = engine_in(&output_dir("diff"));
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("counter.html")}),
    )
    .await;
    let first = ok(&engine, "browser_snapshot", json!({"diff": true})).await;
    assert_eq!(first.data["diff"]["full"], true);
    assert!(
        first.text.contains("Full snapshot") && first.text.contains("Add one"),
        "{}",
        first.text
    );
    let add = common::ref_of(&first.text, "Add one");
    ok(&engine, "browser_click", json!({"ref": add})).await;
    let diff = ok(&engine, "browser_snapshot", json!({"diff": true})).await;
    let changed: Vec<&str> = diff
        .text
        .lines()
        .filter(|l| l.starts_with(['+', '-', '~']))
        .collect();
    assert_eq!(changed.len(), 1, "{}", diff.text);
    assert!(
        changed[0].starts_with("~ ") && changed[0].contains("Clicked 1 times"),
        "{}",
        diff.text
    );
    assert_eq!(
        diff.data["diff"],
        json!({"full": false, "added": 0, "removed": 0, "changed": 1})
    );
    let same = ok(&engine, "browser_snapshot", json!({"diff": true})).await;
    assert!(same.text.contains("No changes"), "{}", same.text);
    // A new document: a full snapshot again, said so.
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("counter.html?again")}),
    )
    .await;
    let fresh = ok(&engine, "browser_snapshot", json!({"diff": true})).await;
    assert_eq!(fresh.data["diff"]["full"], true, "{}", fresh.text);
}

fn decoded(out: &engine::ActionOutput) -> Vec<u8> {
    let image = out.image.as_ref().expect("an image");
    base64::engine::general_purpose::STANDARD
        .decode(&image.base64)
        .unwrap()
}

#[tokio::test]
async fn annotated_screenshots_differ_where_a_ref_sits_and_path_saves_without_an_image() {
    let site = testkit::TestSite::start().await;
    let dir = output_dir("shot");
    let engine = engine_in(&dir);
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("counter.html")}),
    )
    .await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let add = common::ref_of(&snap.text, "Add one");
    let plain = decoded(&ok(&engine, "browser_screenshot", json!({"ref": add})).await);
    let again = decoded(&ok(&engine, "browser_screenshot", json!({"ref": add})).await);
    assert_eq!(
        plain, again,
        "plain captures of the same element are the same bytes"
    );
    let annotated = ok(
        &engine,
        "browser_screenshot",
        json!({"ref": add, "annotate": true}),
    )
    .await;
    assert!(annotated.text.contains("ref label"), "{}", annotated.text);
    assert_ne!(
        decoded(&annotated),
        plain,
        "the annotation shows where the element is"
    );
    // The overlay is gone afterwards.
    let after = decoded(&ok(&engine, "browser_screenshot", json!({"ref": add})).await);
    assert_eq!(after, plain);
    let viewport = ok(&engine, "browser_screenshot", json!({"annotate": true})).await;
    assert!(viewport.image.is_some());

    // Frames too: cross-origin and same-origin iframes get their refs drawn.
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("frames.html")}),
    )
    .await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let main_refs = snap.text.matches("[ref=e").count();
    let frame_refs = snap.text.matches("[ref=f").count();
    assert!(frame_refs >= 2, "{}", snap.text);
    let framed = ok(&engine, "browser_screenshot", json!({"annotate": true})).await;
    let drawn: usize = framed
        .text
        .split(" with ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}", framed.text));
    assert!(
        drawn > main_refs,
        "{drawn} labels for {main_refs} main-frame refs and {frame_refs} in frames"
    );

    let saved = ok(&engine, "browser_screenshot", json!({"path": "shots/page.png"})).await;
    assert!(saved.image.is_none());
    let path = dir.join("shots/page.png");
    let bytes = std::fs::read(&path).unwrap();
    assert!(bytes.starts_with(b"\x89PNG"));
    assert_eq!(saved.data["bytes"], bytes.len());
    assert_eq!(saved.data["path"], path.display().to_string());
    assert!(saved.data["width"].as_u64().unwrap() > 0);
    let e = call(&engine, "browser_screenshot", json!({"path": "../../x.png"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::PermissionDenied);
}

/// The note's figures: a `diff` snapshot against the full one after each
/// step of a ten-step task on a shop page (25 products, filters, tabs, a
/// form). Run with `--nocapture` to see the table.
#[tokio::test]
async fn diff_snapshots_are_a_fraction_of_full_ones_over_a_ten_step_task() {
    let site = testkit::TestSite::start().await;
    let engine = engine_in(&output_dir("diff-task"));
    ok(&engine, "browser_navigate", json!({"url": site.url("shop.html")})).await;
    let base = ok(&engine, "browser_snapshot", json!({})).await;
    let r = |needle: &str| common::ref_of(&base.text, needle);
    let steps: Vec<(&str, &str, serde_json::Value)> = vec![
        (
            "add bread to the cart",
            "browser_click",
            json!({"ref": r("Add Bread to cart")}),
        ),
        (
            "add cheese to the cart",
            "browser_click",
            json!({"ref": r("Add Cheese to cart")}),
        ),
        (
            "favourite dates",
            "browser_click",
            json!({"ref": r("Favourite Dates")}),
        ),
        (
            "search \"an\"",
            "browser_type",
            json!({"ref": r("textbox \"Search\""), "text": "an"}),
        ),
        (
            "clear the search",
            "browser_type",
            json!({"ref": r("textbox \"Search\""), "text": ""}),
        ),
        (
            "in stock only",
            "browser_click",
            json!({"ref": r("In stock only")}),
        ),
        (
            "sort by price",
            "browser_select_option",
            json!({"ref": r("combobox \"Sort\""), "values": ["price"]}),
        ),
        (
            "open the shipping questions",
            "browser_click",
            json!({"ref": r("Shipping questions")}),
        ),
        (
            "type an email",
            "browser_type",
            json!({"ref": r("textbox \"Email\""), "text": "ada@example.com"}),
        ),
        (
            "subscribe",
            "browser_click",
            json!({"ref": r("button \"Subscribe\"")}),
        ),
    ];
    println!("| step | full snapshot (chars) | diff (chars) | diff lines |");
    println!("| --- | --- | --- | --- |");
    let (mut full_total, mut diff_total) = (0, 0);
    for (what, tool, args) in steps {
        ok(&engine, tool, args).await;
        let diff = ok(&engine, "browser_snapshot", json!({"diff": true})).await;
        let full = ok(&engine, "browser_snapshot", json!({})).await;
        let changed = &diff.data["diff"];
        let lines: u64 = ["added", "removed", "changed"]
            .iter()
            .map(|k| changed[k].as_u64().unwrap())
            .sum();
        assert!(lines > 0, "{what} changed nothing: {}", diff.text);
        // Never longer than the page (then it is the page, and says so).
        assert!(diff.text.len() <= full.text.len() + 100, "{what}: {}", diff.text);
        let shown = if changed["full"] == true { " (full)" } else { "" };
        println!(
            "| {what} | {} | {}{shown} | {lines} |",
            full.text.len(),
            diff.text.len()
        );
        full_total += full.text.len();
        diff_total += diff.text.len();
    }
    println!("| ten steps | {full_total} | {diff_total} | |");
    assert!(
        diff_total * 2 < full_total,
        "diffs {diff_total} vs full {full_total}"
    );
}
