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

/// Whether the page may prerender (speculation rules' `prerender`): off,
/// a page cannot have the browser load a document no request stage of
/// the page's sees first.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetPrerenderingAllowed {
    pub is_allowed: bool,
}
command!(SetPrerenderingAllowed => "Page.setPrerenderingAllowed", Empty);

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
    /// Chrome's faster encoding (a lighter PNG compression): more bytes,
    /// less time in the browser.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub optimize_for_speed: bool,
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

/// Reloads the tab's document (as the browser's reload button).
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reload {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignore_cache: Option<bool>,
}
command!(Reload => "Page.reload", Empty);

#[derive(Debug, Default, Serialize)]
pub struct GetNavigationHistory {}
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NavigationHistory {
    /// Index of the current entry in `entries`.
    pub current_index: i64,
    pub entries: Vec<NavigationEntry>,
}
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NavigationEntry {
    pub id: i64,
    pub url: String,
    pub title: String,
}
command!(GetNavigationHistory => "Page.getNavigationHistory", NavigationHistory);

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NavigateToHistoryEntry {
    pub entry_id: i64,
}
command!(NavigateToHistoryEntry => "Page.navigateToHistoryEntry", Empty);

/// Accepts or dismisses the native dialog blocking the session's page.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HandleJavaScriptDialog {
    pub accept: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_text: Option<String>,
}
command!(HandleJavaScriptDialog => "Page.handleJavaScriptDialog", Empty);

// Events.

/// A subframe appeared under `parent_frame_id`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FrameAttached {
    pub frame_id: String,
    pub parent_frame_id: Option<String>,
}
crate::event!(FrameAttached => "Page.frameAttached");

/// A frame committed a new document (`frame.parent_id` is `None` for the
/// main frame).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FrameNavigated {
    pub frame: Frame,
    /// "Navigation" or "BackForwardCacheRestore" (kept as text).
    #[serde(rename = "type")]
    pub kind: String,
}
crate::event!(FrameNavigated => "Page.frameNavigated");

/// A frame went away; `reason` "swap" means it moved to another process.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FrameDetached {
    pub frame_id: String,
    /// "remove" or "swap" (kept as text).
    pub reason: String,
}
crate::event!(FrameDetached => "Page.frameDetached");

/// A frame stopped loading: it loaded, or its navigation was cancelled,
/// became a download, or was answered with no content.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FrameStoppedLoading {
    pub frame_id: String,
}
crate::event!(FrameStoppedLoading => "Page.frameStoppedLoading");

/// A same-document navigation: a fragment, `history.pushState`, …
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NavigatedWithinDocument {
    pub frame_id: String,
    pub url: String,
}
crate::event!(NavigatedWithinDocument => "Page.navigatedWithinDocument");

/// A lifecycle point of one document (`loader_id`) of a frame (sent once
/// `Page.setLifecycleEventsEnabled` is on).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LifecycleEvent {
    pub frame_id: String,
    pub loader_id: String,
    /// "init", "DOMContentLoaded", "load", "networkAlmostIdle",
    /// "networkIdle", … (kept as text).
    pub name: String,
    pub timestamp: f64,
}
crate::event!(LifecycleEvent => "Page.lifecycleEvent");

/// The main frame's `load` event fired.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LoadEventFired {
    pub timestamp: f64,
}
crate::event!(LoadEventFired => "Page.loadEventFired");

/// The main frame's `DOMContentLoaded` event fired.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DomContentEventFired {
    pub timestamp: f64,
}
crate::event!(DomContentEventFired => "Page.domContentEventFired");

/// A native dialog opened and blocks the session's page until answered.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JavascriptDialogOpening {
    pub url: String,
    /// Absent on older Chromes.
    pub frame_id: Option<String>,
    pub message: String,
    /// "alert", "confirm", "prompt" or "beforeunload" (kept as text).
    #[serde(rename = "type")]
    pub kind: String,
    pub has_browser_handler: bool,
    pub default_prompt: Option<String>,
}
crate::event!(JavascriptDialogOpening => "Page.javascriptDialogOpening");

/// A native dialog closed (it does not say which: the oldest pending one).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JavascriptDialogClosed {
    pub result: bool,
    pub user_input: String,
}
crate::event!(JavascriptDialogClosed => "Page.javascriptDialogClosed");

/// A navigation of `frame_id` turned into a download.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DownloadWillBegin {
    pub frame_id: String,
    pub guid: String,
    pub url: String,
    pub suggested_filename: String,
}
crate::event!(DownloadWillBegin => "Page.downloadWillBegin");

/// Prints the page as a PDF.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PrintToPdf {
    pub landscape: bool,
    pub print_background: bool,
}
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Pdf {
    /// Base64 of the PDF.
    pub data: String,
}
command!(PrintToPdf => "Page.printToPDF", Pdf);
/// Starts sending `Page.screencastFrame` events (the dashboard's live view).
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StartScreencast {
    pub format: String,
    pub quality: u8,
    pub max_width: u32,
    pub max_height: u32,
    pub every_nth_frame: u32,
}
command!(StartScreencast => "Page.startScreencast", Empty);

#[derive(Debug, Default, Serialize)]
pub struct StopScreencast {}
command!(StopScreencast => "Page.stopScreencast", Empty);

/// Acknowledges a frame; Chrome sends the next one only after this.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScreencastFrameAck {
    pub session_id: i64,
}
command!(ScreencastFrameAck => "Page.screencastFrameAck", Empty);

/// One frame of a screencast: base64 image data.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ScreencastFrame {
    pub data: String,
    pub session_id: i64,
    pub metadata: ScreencastFrameMetadata,
}

/// What a screencast frame shows: the viewport's size in CSS pixels (the
/// frame is that box, scaled to fit the cast's maximum size).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ScreencastFrameMetadata {
    pub device_width: f64,
    pub device_height: f64,
    pub offset_top: f64,
    pub page_scale_factor: f64,
}
crate::event!(ScreencastFrame => "Page.screencastFrame");
/// Whether a file chooser the page opens is reported
/// (`Page.fileChooserOpened`) instead of shown.
#[derive(Debug, Default, Serialize)]
pub struct SetInterceptFileChooserDialog {
    pub enabled: bool,
}
command!(SetInterceptFileChooserDialog => "Page.setInterceptFileChooserDialog", Empty);

/// The page opened a file chooser (while choosers are intercepted) for the
/// file input `backend_node_id`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FileChooserOpened {
    pub frame_id: String,
    /// "selectSingle" or "selectMultiple".
    pub mode: String,
    pub backend_node_id: i64,
}
crate::event!(FileChooserOpened => "Page.fileChooserOpened");

/// Makes the tab the one its window shows (its document becomes visible:
/// animation frames run, input is handled).
#[derive(Debug, Default, Serialize)]
pub struct BringToFront {}
command!(BringToFront => "Page.bringToFront", Empty);
