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
