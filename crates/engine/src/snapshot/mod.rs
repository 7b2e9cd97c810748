//! `browser_snapshot`: the page as an indented accessibility tree with refs.
//!
//! The tree is built by an in-page serializer (`serializer.js`) run in
//! cdpilot's isolated world, not from `Accessibility.getFullAXTree`: on a
//! 5,000-control page the full AX tree took 1.2–1.6 s and 18 MB, an in-page
//! walk ~15 ms. The serializer keeps the element↔ref map in that world, so a
//! ref stays the same for the same element across snapshots of one document.

use serde::Deserialize;
use serde_json::json;

use crate::action::SnapshotArgs;
use crate::tab::Tab;
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

/// The serializer's source; evaluating it yields the world's `__cdpilot`.
pub const SERIALIZER: &str = include_str!("serializer.js");

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Serialized {
    text: String,
    elements: u64,
    refs: u64,
    truncated: bool,
    url: String,
    title: String,
    error: Option<String>,
    message: Option<String>,
}

pub async fn run(
    tab: &Tab,
    args: &SnapshotArgs,
    max_elements: u32,
    budget: &Budget,
) -> Result<ActionOutput, ActionError> {
    let options = json!({ "selector": args.selector, "maxElements": max_elements });
    let expression = format!("({SERIALIZER}).snapshot({options})");
    let document = tab.state(|s| s.document);
    let value = tab
        .evaluate_in_world(budget, "serializing the page", &expression, true)
        .await?
        .value
        .unwrap_or_default();
    let snap: Serialized = serde_json::from_value(value).map_err(|e| {
        ActionError::internal(format!(
            "the snapshot serializer returned an unexpected shape: {e}"
        ))
    })?;
    match snap.error.as_deref() {
        Some("invalid_selector") => {
            return Err(ActionError::invalid(
                format!(
                    "the selector is not valid CSS: {}",
                    snap.message.unwrap_or_default()
                ),
                "Fix the selector or leave it out to snapshot the whole page.",
            ))
        }
        Some("no_match") => {
            return Err(ActionError::new(
                ErrorCode::ElementNotFound,
                "no element matches the selector",
                "Leave selector out to snapshot the whole page.",
            ))
        }
        _ => {}
    }
    // Refs are valid for the document they were issued in; if a navigation
    // raced the snapshot, the world was replaced and the evaluate retried,
    // so record the document the tab is in now.
    tab.state(|s| s.refs_document = Some(s.document.max(document)));

    let mut text = format!("URL: {}\nTitle: {}\n\n{}", snap.url, snap.title, snap.text);
    if snap.truncated {
        text += &format!(
            "\n[truncated after {} elements: pass a selector to scope the snapshot, or a larger max_elements]",
            snap.elements
        );
    }
    let status = tab.state(|s| s.current_status());
    let obstacle = crate::obstacle::check(tab, budget, status).await?;
    if let Some(o) = &obstacle {
        text += &format!(
            "\n\nobstacle: {} ({} confidence): {}",
            o.kind, o.confidence, o.message
        );
    }
    let mut data = json!({
        "url": snap.url,
        "title": snap.title,
        "ref_count": snap.refs,
        "element_count": snap.elements,
        "truncated": snap.truncated,
    });
    if let Some(o) = obstacle {
        data["obstacle"] = json!(o);
    }
    Ok(ActionOutput::new(text, data))
}
