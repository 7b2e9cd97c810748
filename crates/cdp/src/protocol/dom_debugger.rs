//! `DOMDebugger` domain: the browser's own record of a node's event
//! listeners (what the page added with `addEventListener`, inline `on…`
//! attributes, a library's dispatcher), in the world of the object asked.
use serde::{Deserialize, Serialize};

use super::command;

/// The listeners on `object_id` and, to `depth` (-1: all), on the nodes
/// below it; `pierce` goes into shadow roots and frames' documents. Only
/// When the object is in an object group, each listener's `handler`
/// function comes back too, in that group.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetEventListeners {
    pub object_id: String,
    pub depth: i64,
    pub pierce: bool,
}
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct EventListeners {
    pub listeners: Vec<EventListener>,
}
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EventListener {
    /// The event's name: `click`, `mousedown`…
    #[serde(rename = "type")]
    pub kind: String,
    /// The node it is on (absent for a window).
    pub backend_node_id: Option<i64>,
    /// Where the listening function was compiled: each inline `on…`
    /// attribute's handler is a script of its own, the listeners one
    /// script adds share its id.
    pub script_id: String,
    pub line_number: i64,
    pub column_number: i64,
    /// The listening function (when the object asked about is in an
    /// object group): its `description` is its source.
    pub handler: Option<super::runtime::RemoteObject>,
}
command!(GetEventListeners => "DOMDebugger.getEventListeners", EventListeners);
