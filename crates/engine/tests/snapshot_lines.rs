//! Snapshot lines that say what an element is (issue 35): a plain list
//! item keeps its role, a multi-line field says so, and a tree's items say
//! whether they are open or closed branches, from ARIA where the page
//! gives it, else from the tree's structure and class words.

mod common;

use common::{ok, open};
use serde_json::json;

/// The snapshot's lines, trimmed of their indentation.
fn trimmed(text: &str) -> Vec<&str> {
    text.lines().map(str::trim_start).collect()
}

/// The first line that contains `needle`.
fn line<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{text}"))
}

/// The line just above the first line that contains `needle`.
fn above<'a>(text: &'a str, needle: &str) -> &'a str {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{text}"));
    lines[at - 1]
}

#[tokio::test]
async fn a_plain_list_item_keeps_its_role_and_a_multi_line_field_says_so() {
    let (_site, engine) = open("/trees.html").await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let text = &snap.text;
    let lines = trimmed(text);
    assert!(lines.contains(&"listitem: Item Alpha"), "{text}");
    assert!(lines.contains(&"listitem: Item Beta"), "{text}");
    assert!(!text.contains("text: Item Alpha"), "{text}");

    assert!(line(text, "textbox \"Body\"").ends_with(" [multiline]"), "{text}");
    assert!(
        line(text, "textbox \"Editor\"").contains(" [multiline]"),
        "{text}"
    );
    assert!(!line(text, "textbox \"Subject\"").contains("multiline"), "{text}");
    engine.shutdown().await;
}

#[tokio::test]
async fn tree_items_say_whether_they_are_open_or_closed_branches() {
    let (_site, engine) = open("/trees.html").await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let text = &snap.text;

    // ARIA: named by their own text, their child items below them.
    let src = line(text, "treeitem \"src\"");
    assert!(src.ends_with(" [expanded]"), "{text}");
    let main = line(text, "treeitem \"main.rs\"");
    let indent = |l: &str| l.len() - l.trim_start().len();
    assert!(indent(main) > indent(src), "main.rs is inside src:\n{text}");
    assert!(
        line(text, "treeitem \"tests\"").ends_with(" [collapsed]"),
        "{text}"
    );
    assert!(
        !text.contains("smoke.rs"),
        "a closed branch's items are hidden:\n{text}"
    );
    for leaf in ["treeitem \"main.rs\"", "treeitem \"Cargo.toml\""] {
        let l = line(text, leaf);
        assert!(!l.contains("expanded") && !l.contains("collapsed"), "{l}");
    }

    // A nested-list tree with CSS icons and no ARIA: from its structure.
    assert!(line(text, "Archive").contains(" [collapsed]"), "{text}");
    assert!(!text.contains("Old.pdf"), "{text}");
    let documents = above(text, "text: Documents");
    assert!(documents.contains(" [expanded]"), "{text}");
    for leaf in ["Report.pdf", "notes.txt"] {
        let l = line(text, leaf);
        assert!(!l.contains("expanded") && !l.contains("collapsed"), "{l}");
    }

    // jQuery File Tree: a closed folder has no child list; its class says.
    assert_eq!(above(text, "\"Photos\"").trim(), "listitem [collapsed]", "{text}");
    assert_eq!(above(text, "\"Music\"").trim(), "listitem [expanded]", "{text}");
    let readme = above(text, "\"readme.txt\"");
    assert!(
        !readme.contains("expanded") && !readme.contains("collapsed"),
        "{text}"
    );
    engine.shutdown().await;
}

/// The ref a line holds (`[ref=e4]` → `e4`).
fn ref_of(line: &str) -> &str {
    let at = line.find("[ref=").unwrap_or_else(|| panic!("no ref on {line:?}")) + 5;
    &line[at..at + line[at..].find(']').expect("a closed ref")]
}

/// Issue 46: the listener scan reads the browser's record without the
/// handlers' functions and tells the inline handlers by count; when the
/// count cannot say (a script's lone listener), it reads them with their
/// functions. Both ways, what listens gets a ref and the inline handlers
/// stay the serializer's.
#[tokio::test]
async fn listeners_are_marked_whether_the_inline_handlers_are_told_by_count_or_by_source() {
    let (_site, engine) = open("/listeners.html").await;
    // The counts agree: 3 inline clicks and a double click, each alone in
    // its script; the pins' listeners share theirs.
    let text = ok(&engine, "browser_snapshot", json!({})).await.text;
    for needle in [
        "Pin A",
        "Pin B",
        "heading \"Double-click me\"",
        "button \"Buy one\"",
    ] {
        assert!(line(&text, needle).contains("[ref="), "{needle}: {text}");
    }
    assert!(!text.contains("Lone word"), "{text}");
    let add = ref_of(line(&text, "button \"Add the lone one\"")).to_owned();
    ok(&engine, "browser_click", json!({"ref": add})).await;

    // A lone listener from a script of its own: the counts disagree, and
    // the record is read with the functions.
    let text = ok(&engine, "browser_snapshot", json!({})).await.text;
    let lone = ref_of(line(&text, "Lone word")).to_owned();
    for needle in ["Pin A", "Pin B", "heading \"Double-click me\""] {
        assert!(line(&text, needle).contains("[ref="), "{needle}: {text}");
    }
    ok(&engine, "browser_click", json!({"ref": lone})).await;
    let down = ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "document.getElementById('lone').dataset.down"}),
    )
    .await;
    assert_eq!(down.data["value"], "yes", "{text}");
    engine.shutdown().await;
}
