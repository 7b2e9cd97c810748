//! `Fetch` domain: requests paused before they leave the browser (the URL
//! policy's request stage, the dialog bridge's requests) and answered by us:
//! continued, failed or fulfilled.
use serde::{Deserialize, Serialize};

use super::network::Request;
use super::{command, Empty};

/// Pauses the requests that match `patterns` (all of them when empty).
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Enable {
    pub patterns: Vec<RequestPattern>,
}
command!(Enable => "Fetch.enable", Empty);

/// Pauses nothing any more.
#[derive(Debug, Default, Serialize)]
pub struct Disable {}
command!(Disable => "Fetch.disable", Empty);

/// One pattern of `Fetch.enable`: what to pause, and at which stage.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RequestPattern {
    /// Wildcards: `*` any run of characters, `?` one.
    pub url_pattern: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_type: Option<String>,
    /// `Request` (before it is sent) or `Response`.
    pub request_stage: String,
}

/// Answers a paused request with a response of our own.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FulfillRequest {
    pub request_id: String,
    pub response_code: u16,
    pub response_headers: Vec<HeaderEntry>,
    /// Base64 of the body.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}
command!(FulfillRequest => "Fetch.fulfillRequest", Empty);

#[derive(Debug, Clone, Default, Serialize)]
pub struct HeaderEntry {
    pub name: String,
    pub value: String,
}

/// Lets a paused request go on, unchanged or with what is set here.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContinueRequest {
    pub request_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Base64 of the body to send instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub post_data: Option<String>,
    /// Every header to send (replacing the request's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headers: Option<Vec<HeaderEntry>>,
}
command!(ContinueRequest => "Fetch.continueRequest", Empty);

/// Fails a paused request; nothing reaches the server.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailRequest {
    pub request_id: String,
    /// A `Network.ErrorReason`: `BlockedByClient`, `Aborted`, …
    pub error_reason: String,
}
command!(FailRequest => "Fetch.failRequest", Empty);

// Events.

/// A request matched a pattern and waits for our answer.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RequestPaused {
    /// The id to answer with (not the network's request id).
    pub request_id: String,
    pub request: Request,
    pub frame_id: String,
    /// "Document", "XHR", … (kept as text).
    pub resource_type: String,
    /// Set when this request follows a redirect answer of that request.
    pub redirected_request_id: Option<String>,
    /// The request's id in the `Network` domain's events.
    pub network_id: Option<String>,
}
crate::event!(RequestPaused => "Fetch.requestPaused");
