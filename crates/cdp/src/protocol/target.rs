//! `Target` domain: tabs, iframes and the flattened sessions attached to them.
use serde::{Deserialize, Serialize};

use super::{command, Empty};

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TargetInfo {
    pub target_id: String,
    /// "page", "iframe", "worker", "browser", … (kept as text: Chrome adds kinds).
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub url: String,
    pub attached: bool,
    pub opener_id: Option<String>,
    pub browser_context_id: Option<String>,
    /// For an iframe target: the parent of the frame it renders.
    pub parent_frame_id: Option<String>,
}

#[derive(Debug, Default, Serialize)]
pub struct GetTargets {}
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Targets {
    pub target_infos: Vec<TargetInfo>,
}
command!(GetTargets => "Target.getTargets", Targets);

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTarget {
    pub url: String,
    /// `None`: the browser's default context.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser_context_id: Option<String>,
}
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Created {
    pub target_id: String,
}
command!(CreateTarget => "Target.createTarget", Created);

/// A page in no tab strip and no window (observable only through CDP).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateHiddenTarget {
    pub url: String,
    /// Always true (Chrome refuses a hidden target in the foreground).
    pub background: bool,
    pub hidden: bool,
}
command!(CreateHiddenTarget => "Target.createTarget", Created);

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CloseTarget {
    pub target_id: String,
}
command!(CloseTarget => "Target.closeTarget", Empty);

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachToTarget {
    pub target_id: String,
    pub flatten: bool,
}
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Attached {
    pub session_id: String,
}
command!(AttachToTarget => "Target.attachToTarget", Attached);

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetAutoAttach {
    pub auto_attach: bool,
    pub wait_for_debugger_on_start: bool,
    pub flatten: bool,
}
command!(SetAutoAttach => "Target.setAutoAttach", Empty);

/// One entry of a [`SetAutoAttachFiltered`] filter: targets of `kind` (any
/// kind when `None`) are attached, or left alone when `exclude`. The first
/// matching entry decides.
#[derive(Debug, Clone, Serialize)]
pub struct TargetFilter {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub exclude: bool,
}

/// `Target.setAutoAttach` limited to the kinds `filter` lets through.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetAutoAttachFiltered {
    pub auto_attach: bool,
    pub wait_for_debugger_on_start: bool,
    pub flatten: bool,
    pub filter: Vec<TargetFilter>,
}
command!(SetAutoAttachFiltered => "Target.setAutoAttach", Empty);

/// Browser session only: attaches (flattened) the targets related to
/// `target_id` as they are created (its frames, its workers, new versions
/// of its service worker, its prerendered pages), held before they run
/// when `wait_for_debugger_on_start`, without auto-attaching anything else
/// of the browser's.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AutoAttachRelated {
    pub target_id: String,
    pub wait_for_debugger_on_start: bool,
}
command!(AutoAttachRelated => "Target.autoAttachRelated", Empty);

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetDiscoverTargets {
    pub discover: bool,
}
command!(SetDiscoverTargets => "Target.setDiscoverTargets", Empty);

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivateTarget {
    pub target_id: String,
}
command!(ActivateTarget => "Target.activateTarget", Empty);

/// A new browser context: its own cookies, storage and cache.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateBrowserContext {
    pub dispose_on_detach: bool,
    /// The context's proxy (`http://127.0.0.1:PORT`: cdpilot's egress gate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy_server: Option<String>,
    /// Hosts that bypass `proxy_server` (`<-loopback>`: none, not even loopback).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy_bypass_list: Option<String>,
}
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BrowserContextCreated {
    pub browser_context_id: String,
}
command!(CreateBrowserContext => "Target.createBrowserContext", BrowserContextCreated);

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DisposeBrowserContext {
    pub browser_context_id: String,
}
command!(DisposeBrowserContext => "Target.disposeBrowserContext", Empty);

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DetachFromTarget {
    pub session_id: String,
}
command!(DetachFromTarget => "Target.detachFromTarget", Empty);

// Events.

/// `Target.targetCreated` (with discovery on).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TargetCreated {
    pub target_info: TargetInfo,
}
crate::event!(TargetCreated => "Target.targetCreated");

/// `Target.targetInfoChanged`: a new URL or title.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TargetInfoChanged {
    pub target_info: TargetInfo,
}
crate::event!(TargetInfoChanged => "Target.targetInfoChanged");

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TargetDestroyed {
    pub target_id: String,
}
crate::event!(TargetDestroyed => "Target.targetDestroyed");

/// A target's renderer died (crashed, or killed past its memory ceiling).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TargetCrashed {
    pub target_id: String,
}
crate::event!(TargetCrashed => "Target.targetCrashed");

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AttachedToTarget {
    pub session_id: String,
    pub target_info: TargetInfo,
    pub waiting_for_debugger: bool,
}
crate::event!(AttachedToTarget => "Target.attachedToTarget");

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DetachedFromTarget {
    pub session_id: String,
    pub target_id: String,
}
crate::event!(DetachedFromTarget => "Target.detachedFromTarget");

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTargetInfo {
    pub target_id: String,
}
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TargetInfoResult {
    pub target_info: TargetInfo,
}
command!(GetTargetInfo => "Target.getTargetInfo", TargetInfoResult);
