//! `DOM` domain: resolving nodes, their boxes and focus.
use serde::{Deserialize, Serialize};

use super::{command, Empty};

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DescribeNode {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend_node_id: Option<i64>,
}
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Described {
    pub node: Node,
}
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Node {
    pub node_id: i64,
    pub backend_node_id: i64,
    pub node_name: String,
    pub frame_id: Option<String>,
}
command!(DescribeNode => "DOM.describeNode", Described);

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolveNode {
    pub backend_node_id: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution_context_id: Option<i64>,
    /// A group to release the object with (`Runtime.releaseObjectGroup`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_group: Option<String>,
}
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Resolved {
    pub object: super::runtime::RemoteObject,
}
command!(ResolveNode => "DOM.resolveNode", Resolved);

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScrollIntoViewIfNeeded {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub object_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend_node_id: Option<i64>,
}
command!(ScrollIntoViewIfNeeded => "DOM.scrollIntoViewIfNeeded", Empty);

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetContentQuads {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub object_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend_node_id: Option<i64>,
}
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ContentQuads {
    /// Each quad is 8 numbers: x1,y1 … x4,y4 in CSS pixels of the viewport.
    pub quads: Vec<Vec<f64>>,
}
command!(GetContentQuads => "DOM.getContentQuads", ContentQuads);

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Focus {
    pub object_id: String,
}
command!(Focus => "DOM.focus", Empty);

/// Gives a file input these local files (the browser reads them); the
/// page sees `input` and `change`.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetFileInputFiles {
    pub files: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend_node_id: Option<i64>,
}
command!(SetFileInputFiles => "DOM.setFileInputFiles", Empty);
