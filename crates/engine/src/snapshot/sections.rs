//! The supervisor's sections of a snapshot: pending and recent dialogs, the
//! frame tree, recent console errors. Each appears only when non-empty, as
//! compact text for the model and as JSON in `structuredContent`. Recent
//! dialogs and console errors are the current document's (and the dialogs
//! that leaving the last page closed); entries from pages visited before
//! are only counted (`browser_console` still has the errors).

use serde_json::{json, Value};

use crate::tab::Tab;

/// Seconds before a document's commit in which a dialog's close still
/// counts as the new document's news (the navigation closed it).
const LEAVING_S: f64 = 2.0;

/// How many console errors a snapshot shows.
pub const CONSOLE_ERRORS: usize = 50;

pub fn render(tab: &Tab) -> (String, Vec<(&'static str, Value)>) {
    let (pending, recent, tree, children, errors, older_errors, since) = tab.state(|s| {
        let since = s.document_since();
        let (errors, older): (Vec<_>, Vec<_>) = s
            .console()
            .messages()
            .iter()
            .filter(|m| m.level == "error")
            .cloned()
            .partition(|m| m.at >= since);
        let skip = errors.len().saturating_sub(CONSOLE_ERRORS);
        (
            s.dialogs().pending(),
            s.dialogs().recent(),
            s.frames().view(),
            s.frames().child_count(),
            errors.into_iter().skip(skip).collect::<Vec<_>>(),
            older.len(),
            since,
        )
    });
    // A dialog that leaving the last page closed is still news here (Chrome
    // may report its close just before the new document commits).
    let (recent, older_dialogs): (Vec<_>, Vec<_>) = recent
        .into_iter()
        .partition(|d| d.opened_at >= since || d.closed_at.is_some_and(|c| c >= since - LEAVING_S));
    let older_dialogs = older_dialogs.len();
    let mut text = String::new();
    let mut data = Vec::new();
    if !pending.is_empty() {
        text += "\n\npending_dialogs:";
        for d in &pending {
            text += &format!("\n  {} {} \"{}\"", d.id, d.kind, d.message);
        }
        data.push(("pending_dialogs", json!(pending)));
    }
    if !recent.is_empty() {
        text += "\n\nrecent_dialogs:";
        for d in &recent {
            text += &format!(
                "\n  {} {} \"{}\" closed_by {}",
                d.id,
                d.kind,
                d.message,
                d.closed_by.map_or("?", |c| c.as_str())
            );
        }
        data.push(("recent_dialogs", json!(recent)));
    }
    if older_dialogs > 0 {
        text += &format!("\n\nolder_dialogs: {older_dialogs} on earlier pages");
        data.push(("older_dialogs", json!(older_dialogs)));
    }
    if children > 0 {
        text += "\n\nframe_tree:";
        for f in tree["children"].as_array().into_iter().flatten() {
            let oopif = if f["is_oopif"] == true {
                " (cross-origin, own process)"
            } else {
                ""
            };
            text += &format!(
                "\n  {} {}{oopif}",
                f["frame_id"].as_str().unwrap_or_default(),
                f["url"].as_str().unwrap_or_default()
            );
        }
        if tree["truncated"] == true {
            text += "\n  (more frames not shown)";
        }
        data.push(("frame_tree", tree));
    }
    if !errors.is_empty() {
        text += "\n\nconsole_errors:";
        for e in &errors {
            text += &format!("\n  {}", e.text.lines().next().unwrap_or_default());
        }
        data.push(("console_errors", json!(errors)));
    }
    if older_errors > 0 {
        text += &format!(
            "\n\nolder_console_errors: {older_errors} on earlier pages (browser_console lists them)"
        );
        data.push(("older_console_errors", json!(older_errors)));
    }
    (text, data)
}
