//! `Page` domain: navigation, lifecycle, isolated worlds, screenshots.
use serde::{Deserialize, Serialize};

use super::{command, Empty};

#[derive(Debug, Default, Serialize)]
pub struct Enable {}
command!(Enable => "Page.enable", Empty);

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetLifecycleEventsEnabled {
    pub enabled: bool,
}
command!(SetLifecycleEventsEnabled => "Page.setLifecycleEventsEnabled", Empty);

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Navigate {
    pub url: String,
}
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Navigated {
    pub frame_id: String,
    /// Absent for a same-document navigation (fragment, pushState).
    pub loader_id: Option<String>,
    /// Set when the navigation failed outright (`net::ERR_CONNECTION_REFUSED`).
    pub error_text: Option<String>,
}
command!(Navigate => "Page.navigate", Navigated);

/// Stops the tab's loading: a navigation still waiting for its response is
/// cancelled, a committed document stops fetching.
#[derive(Debug, Default, Serialize)]
pub struct StopLoading {}
command!(StopLoading => "Page.stopLoading", Empty);

#[derive(Debug, Default, Serialize)]
pub struct GetFrameTree {}
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FrameTreeResult {
    pub frame_tree: FrameTree,
}
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FrameTree {
    pub frame: Frame,
    pub child_frames: Vec<FrameTree>,
}
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Frame {
    pub id: String,
    pub parent_id: Option<String>,
    pub loader_id: String,
    pub url: String,
    pub security_origin: String,
}
command!(GetFrameTree => "Page.getFrameTree", FrameTreeResult);

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateIsolatedWorld {
    pub frame_id: String,
    pub world_name: String,
    pub grant_univeral_access: bool,
}
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct IsolatedWorld {
    pub execution_context_id: i64,
}
command!(CreateIsolatedWorld => "Page.createIsolatedWorld", IsolatedWorld);

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AddScriptToEvaluateOnNewDocument {
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub world_name: Option<String>,
    pub run_immediately: bool,
}
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ScriptAdded {
    pub identifier: String,
}
command!(AddScriptToEvaluateOnNewDocument => "Page.addScriptToEvaluateOnNewDocument", ScriptAdded);

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaptureScreenshot {
    pub format: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quality: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clip: Option<Viewport>,
    pub capture_beyond_viewport: bool,
}
#[derive(Debug, Clone, Serialize)]
pub struct Viewport {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    pub scale: f64,
}
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Screenshot {
    /// Base64 image bytes.
    pub data: String,
}
command!(CaptureScreenshot => "Page.captureScreenshot", Screenshot);

#[derive(Debug, Default, Serialize)]
pub struct GetLayoutMetrics {}
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LayoutMetrics {
    pub css_content_size: Rect,
    pub css_visual_viewport: VisualViewport,
}
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VisualViewport {
    pub page_x: f64,
    pub page_y: f64,
    pub client_width: f64,
    pub client_height: f64,
}
command!(GetLayoutMetrics => "Page.getLayoutMetrics", LayoutMetrics);
