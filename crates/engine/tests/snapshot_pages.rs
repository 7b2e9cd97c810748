//! A big page read in pages (the snapshot cursor), and the words of long
//! text kept.

mod common;

use common::{engine, ok, open};
use serde_json::json;

/// The tree of a snapshot's text: the lines after its header, without the
/// page marks (which elements it lists, where it was cut).
fn tree_lines(text: &str) -> Vec<String> {
    let tree = text.split("\n\n").nth(1).unwrap_or_default();
    tree.lines()
        .filter(|l| !l.starts_with('[') && !l.starts_with('('))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn pages_of_a_capped_snapshot_concatenate_to_the_full_one_with_the_same_refs() {
    let site = testkit::TestSite::start().await;
    let engine = engine();
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/controls/300")}),
    )
    .await;

    // Pages first: every ref is given out by them.
    let mut pages = Vec::new();
    let mut start = 0;
    loop {
        let page = ok(
            &engine,
            "browser_snapshot",
            json!({"max_elements": 70, "start": start}),
        )
        .await;
        assert_eq!(page.data["start"], start, "{}", page.text);
        pages.extend(tree_lines(&page.text));
        match page.data["next_start"].as_u64() {
            Some(next) => {
                assert_eq!(next, start + 70, "{}", page.text);
                assert_eq!(page.data["truncated"], true);
                for hint in [format!("start: {next}"), "find".into(), "selector".into()] {
                    assert!(page.text.contains(&hint), "no {hint:?} in:\n{}", page.text);
                }
                start = next;
            }
            None => {
                assert_eq!(page.data["truncated"], false, "{}", page.text);
                break;
            }
        }
        assert!(start < 10_000, "the pages never end");
    }
    assert!(
        start >= 280,
        "300 controls and a heading took only {start} elements"
    );

    let full = ok(&engine, "browser_snapshot", json!({"max_elements": 100_000})).await;
    assert_eq!(full.data["truncated"], false);
    let whole = tree_lines(&full.text);
    assert!(whole.len() > 300, "{}", full.text);
    assert_eq!(pages, whole, "the pages differ from the full snapshot");

    // A page asked for again gives the same lines and refs.
    let again = ok(
        &engine,
        "browser_snapshot",
        json!({"max_elements": 70, "start": 140}),
    )
    .await;
    let lines = tree_lines(&again.text);
    let at = whole
        .iter()
        .position(|l| l == &lines[0])
        .expect("the page's first line is in the full snapshot");
    assert_eq!(lines[..], whole[at..at + lines.len()]);

    // A ref from a later page acts on its element.
    let reference = common::ref_of(&again.text, "button \"Buy");
    ok(&engine, "browser_click", json!({"ref": reference})).await;

    // Past the end: nothing listed, and it says so.
    let past = ok(&engine, "browser_snapshot", json!({"start": 100_000})).await;
    assert_eq!(past.data["element_count"], 0);
    assert!(
        past.text.contains("No elements from start: 100000"),
        "{}",
        past.text
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn long_text_keeps_its_words_on_few_lines_without_repeating_names() {
    let (_site, engine) = open("/long-text.html").await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let text = &snap.text;

    // Every word of the long paragraph (inline markup included) is there.
    let paragraph = ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "document.getElementById('long').textContent"}),
    )
    .await;
    let paragraph = paragraph.data["value"].as_str().expect("text").to_owned();
    let words: Vec<&str> = paragraph.split_whitespace().collect();
    assert!(words.len() > 200, "{paragraph}");
    let collapsed = words.join(" ");
    assert!(
        text.contains(&format!("text: {collapsed}")),
        "the paragraph is not one whole line in:\n{text}"
    );

    // Inline elements flow on their paragraph's line.
    assert!(text.contains("text: Alpha beta gamma delta."), "{text}");
    // Text that repeats its container's name is not printed again.
    assert!(text.contains("navigation \"Chapters\""), "{text}");
    assert!(!text.contains("text: Chapters"), "{text}");

    // A passage longer than the cap says where and how much was cut.
    let huge = text
        .lines()
        .find(|l| l.contains("text cut:"))
        .unwrap_or_else(|| panic!("the huge paragraph was not cut:\n{text}"));
    assert!(huge.len() < 4_200, "{} chars", huge.len());
    assert!(text.contains("browser_extract"), "{text}");
    assert!(text.contains("text: After the huge paragraph."), "{text}");
    engine.shutdown().await;
}
