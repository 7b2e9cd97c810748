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
