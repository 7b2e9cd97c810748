//! `WebMCP` domain (Chromium behind `--enable-features=WebMCP`): the tools
//! a page registers (`document.modelContext.registerTool`, or a form's
//! `toolname` attributes), their invocation and its answer. A browser
//! without the feature answers `WebMCP.enable` with "method not found".
//! Schemas and outputs stay JSON values: they are the page's, untrusted.
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{command, Empty};

/// Starts the domain's events; Chrome answers with `toolsAdded` for the
/// tools already registered.
#[derive(Debug, Default, Serialize)]
pub struct Enable {}
command!(Enable => "WebMCP.enable", Empty);

/// Calls a registered tool; its answer comes as `toolResponded`.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InvokeTool {
    pub frame_id: String,
    pub tool_name: String,
    /// An object (the tool's arguments).
    pub input: Value,
}
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Invoked {
    pub invocation_id: String,
}
command!(InvokeTool => "WebMCP.invokeTool", Invoked);

/// Cancels a pending invocation (the page's `execute` sees it aborted;
/// `toolResponded` says `Canceled`).
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelInvocation {
    pub invocation_id: String,
}
command!(CancelInvocation => "WebMCP.cancelInvocation", Empty);

/// A tool's hints, as the page declared them.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Annotations {
    pub read_only: bool,
    pub consequential: bool,
    pub untrusted_content: bool,
    pub autosubmit: bool,
}

/// One registered tool.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Tool {
    pub name: String,
    pub description: String,
    pub input_schema: Option<Value>,
    pub annotations: Option<Annotations>,
    pub frame_id: String,
    /// Set for a declarative (form) tool.
    pub backend_node_id: Option<i64>,
}

/// Tools a frame registered.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ToolsAdded {
    pub tools: Vec<Tool>,
}
crate::event!(ToolsAdded => "WebMCP.toolsAdded");

/// A tool a frame unregistered.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RemovedTool {
    pub name: String,
    pub frame_id: String,
}

/// Tools a frame unregistered.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ToolsRemoved {
    pub tools: Vec<RemovedTool>,
}
crate::event!(ToolsRemoved => "WebMCP.toolsRemoved");

/// An invocation's end: `Completed` (with `output`), `Canceled` or `Error`
/// (`errorText`, and the thrown value's `exception.description`).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ToolResponded {
    pub invocation_id: String,
    pub status: String,
    pub output: Option<Value>,
    pub error_text: String,
    pub exception: Option<Value>,
}
crate::event!(ToolResponded => "WebMCP.toolResponded");
