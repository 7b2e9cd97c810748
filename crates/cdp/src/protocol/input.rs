//! `Input` domain: trusted mouse and keyboard events (`event.isTrusted`).
use serde::Serialize;

use super::{command, Empty};

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DispatchMouseEvent {
    /// "mousePressed", "mouseReleased", "mouseMoved", "mouseWheel".
    #[serde(rename = "type")]
    pub kind: String,
    pub x: f64,
    pub y: f64,
    /// "none", "left", "middle", "right".
    pub button: String,
    pub buttons: u32,
    pub click_count: u32,
    pub modifiers: u32,
}
command!(DispatchMouseEvent => "Input.dispatchMouseEvent", Empty);

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DispatchKeyEvent {
    /// "keyDown", "keyUp", "rawKeyDown", "char".
    #[serde(rename = "type")]
    pub kind: String,
    pub key: String,
    pub code: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    pub windows_virtual_key_code: u32,
    pub native_virtual_key_code: u32,
    pub modifiers: u32,
}
command!(DispatchKeyEvent => "Input.dispatchKeyEvent", Empty);

#[derive(Debug, Default, Serialize)]
pub struct InsertText {
    pub text: String,
}
command!(InsertText => "Input.insertText", Empty);

/// A wheel turn at a point: the page scrolls what is under it, as for a
/// person's wheel or trackpad (`Input.dispatchMouseEvent`, `mouseWheel`).
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DispatchMouseWheel {
    /// Always "mouseWheel".
    #[serde(rename = "type")]
    pub kind: String,
    pub x: f64,
    pub y: f64,
    /// Pixels; positive scrolls right.
    pub delta_x: f64,
    /// Pixels; positive scrolls down.
    pub delta_y: f64,
}
command!(DispatchMouseWheel => "Input.dispatchMouseEvent", Empty);

/// Whether a drag the page starts is handed to us (`Input.dragIntercepted`)
/// instead of starting a native drag, which no one could finish headless.
#[derive(Debug, Default, Serialize)]
pub struct SetInterceptDrags {
    pub enabled: bool,
}
command!(SetInterceptDrags => "Input.setInterceptDrags", Empty);

/// The data of a drag (what `Input.dragIntercepted` hands over and
/// `Input.dispatchDragEvent` carries back). Kept as JSON: it goes back as
/// it came.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DispatchDragEvent {
    /// "dragEnter", "dragOver", "drop", "dragCancel".
    #[serde(rename = "type")]
    pub kind: String,
    pub x: f64,
    pub y: f64,
    pub data: serde_json::Value,
    pub modifiers: u32,
}
command!(DispatchDragEvent => "Input.dispatchDragEvent", Empty);

/// A drag the page started while drags are intercepted.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub struct DragIntercepted {
    pub data: serde_json::Value,
}
crate::event!(DragIntercepted => "Input.dragIntercepted");
