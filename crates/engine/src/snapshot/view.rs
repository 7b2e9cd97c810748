//! What a snapshot shows of its tree: all of it, only the lines `find`
//! matches, or only what changed (`diff`). Every snapshot's full tree is
//! remembered in the tab's state, as the base of the next `diff` and the
//! refs `browser_screenshot annotate` draws.

use serde_json::{json, Value};

use super::diff;
use super::find::{self, Pattern};
use crate::tab::refs::Key;
use crate::tab::Tab;
use crate::ActionError;

/// What a snapshot shows: a frame's tree (`None`: the page's), a subtree
/// of it, the lines matching `find`, only what changed (`diff`), from the
/// `start`th element on.
#[derive(Debug, Default, Clone, Copy)]
pub struct View<'a> {
    pub frame: Option<&'a str>,
    pub selector: Option<&'a str>,
    pub find: Option<&'a str>,
    pub diff: bool,
    pub start: u32,
}

/// Checks `find` and `diff` before anything touches the browser.
pub fn check(view: &View<'_>) -> Result<(), ActionError> {
    if let Some(text) = view.find {
        Pattern::parse(text)?;
        if view.diff {
            return Err(ActionError::invalid(
                "find and diff cannot be combined",
                "Pass find to search the page, or diff to see what changed.",
            ));
        }
    }
    Ok(())
}

/// The tree as the call asked to see it, and what to add to
/// `structuredContent`; remembers `tree` for the tab.
pub fn shape(tab: &Tab, view: &View<'_>, frame: &str, tree: &str) -> (String, Vec<(&'static str, Value)>) {
    let key = Key {
        document: tab.state(|s| s.refs_document().unwrap_or(s.document())),
        frame: frame.to_owned(),
        selector: view.selector.map(str::to_owned),
    };
    let previous = tab.state(|s| s.remember_snapshot(key, tree.to_owned()));
    if let Some(text) = view.find {
        let Ok(pattern) = Pattern::parse(text) else {
            return (tree.to_owned(), Vec::new());
        };
        let (lines, matches) = find::filter(tree, &pattern);
        let shown = match matches {
            0 => format!("No line matches \"{text}\"."),
            n => format!("{n} line(s) match \"{text}\" (shown with their ancestors):\n{lines}"),
        };
        return (shown, vec![("matches", json!(matches))]);
    }
    if !view.diff {
        return (tree.to_owned(), Vec::new());
    }
    match previous {
        None => (
            format!("(Full snapshot: no earlier snapshot of this document to diff against.)\n{tree}"),
            vec![("diff", json!({ "full": true }))],
        ),
        Some(old) => {
            let changes = diff::between(&old, tree);
            let counts = json!({
                "full": false,
                "added": changes.added,
                "removed": changes.removed,
                "changed": changes.changed,
            });
            let text = if changes.lines.is_empty() {
                "No changes since the previous snapshot.".to_owned()
            } else {
                format!(
                    "Changes since the previous snapshot (+ added, - removed, ~ changed):\n{}",
                    changes.lines.join("\n")
                )
            };
            if text.len() < tree.len() {
                return (text, vec![("diff", counts)]);
            }
            // A diff is never longer than the page: a re-rendered list
            // (new elements, new refs) or a filter that hid most of it.
            let mut counts = counts;
            counts["full"] = json!(true);
            (
                format!(
                    "(Full snapshot: the changes since the previous one were longer than the page.)\n{tree}"
                ),
                vec![("diff", counts)],
            )
        }
    }
}

/// The refs of the tab's latest snapshot, if it is of the current document.
pub fn latest_refs(tab: &Tab) -> Option<Vec<String>> {
    tab.state(|s| s.latest_tree().map(diff::refs))
}
