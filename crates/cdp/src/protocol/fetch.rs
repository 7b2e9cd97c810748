//! `Fetch` domain: requests paused before they leave the browser (the URL
//! policy's request stage, the dialog bridge's requests).
use serde::{Deserialize, Serialize};

use super::{command, Empty};

/// One pattern of `Fetch.enable`: what to pause, and at which stage.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RequestPattern {
    pub url_pattern: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_type: Option<String>,
    /// `Request` (before it is sent) or `Response`.
    pub request_stage: String,
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Enable {
    pub patterns: Vec<RequestPattern>,
}
command!(Enable => "Fetch.enable", Empty);

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContinueRequest {
    pub request_id: String,
}
command!(ContinueRequest => "Fetch.continueRequest", Empty);

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailRequest {
    pub request_id: String,
    /// A `Network.ErrorReason`: `BlockedByClient`, `Aborted`, …
    pub error_reason: String,
}
command!(FailRequest => "Fetch.failRequest", Empty);

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Request {
    pub url: String,
    pub method: String,
    pub post_data: Option<String>,
}

/// A request paused by a pattern of `Fetch.enable`; it waits until it is
/// continued, failed or fulfilled.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RequestPaused {
    pub request_id: String,
    pub request: Request,
    pub frame_id: String,
    pub resource_type: String,
    /// Set when this request follows a redirect answer of that request.
    pub redirected_request_id: Option<String>,
}
crate::event!(RequestPaused => "Fetch.requestPaused");
