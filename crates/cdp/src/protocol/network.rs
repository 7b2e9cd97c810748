//! `Network` domain: the requests and responses of a tab's documents, and
//! the user agent it announces.
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{command, Empty};

#[derive(Debug, Default, Serialize)]
pub struct Enable {}
command!(Enable => "Network.enable", Empty);

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetUserAgentOverride {
    pub user_agent: String,
    /// The client hints that go with it (`sec-ch-ua*`,
    /// `navigator.userAgentData`); without them Chrome sends none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_agent_metadata: Option<UserAgentMetadata>,
}

/// A brand and its version, as `navigator.userAgentData` lists them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Brand {
    pub brand: String,
    pub version: String,
}

/// The user agent's client hints: the fields of CDP's
/// `Emulation.UserAgentMetadata`, named as `getHighEntropyValues` answers
/// them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct UserAgentMetadata {
    pub brands: Vec<Brand>,
    pub full_version_list: Vec<Brand>,
    pub platform: String,
    pub platform_version: String,
    pub architecture: String,
    pub model: String,
    pub mobile: bool,
    pub bitness: String,
    pub wow64: bool,
}
command!(SetUserAgentOverride => "Network.setUserAgentOverride", Empty);

/// Every request of the session goes to the network, never to a service
/// worker's `fetch` handler (which the request stage could not see).
#[derive(Debug, Serialize)]
pub struct SetBypassServiceWorker {
    pub bypass: bool,
}
command!(SetBypassServiceWorker => "Network.setBypassServiceWorker", Empty);

/// One entry of [`SetBlockedUrls`]: a URLPattern constructor string
/// (the syntax of `[[policy.rules]]`), and whether a URL it matches is
/// blocked (`false`: let through, whatever later entries say).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockPattern {
    pub url_pattern: String,
    pub block: bool,
}

/// Requests of the session whose URL matches (the first matching entry
/// decides) are failed where they start, before they leave (needs
/// `Network.enable`). Sent before a paused target runs, it holds from its
/// first request: Chrome runs a session's commands in order.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetBlockedUrls {
    pub url_patterns: Vec<BlockPattern>,
}
command!(SetBlockedUrls => "Network.setBlockedURLs", Empty);

/// A request as the page sent it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Request {
    pub url: String,
    pub method: String,
    /// Header names as sent (any case), values as text.
    pub headers: Map<String, Value>,
    pub post_data: Option<String>,
    /// The request has a body (it may be absent from `post_data` when large).
    pub has_post_data: bool,
}

/// A response as the network answered it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Response {
    pub url: String,
    pub status: i64,
    pub status_text: String,
    /// Header names as received (any case), values as text.
    pub headers: Map<String, Value>,
    pub mime_type: String,
}

impl Response {
    /// A header's value, its name matched without regard to case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .and_then(|(_, value)| value.as_str())
    }
}

// Events.

/// A request is about to leave; `redirect_response` is set when it follows
/// an HTTP redirect.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RequestWillBeSent {
    pub request_id: String,
    /// The document load this request belongs to (for a document, its own).
    pub loader_id: String,
    pub request: Request,
    pub redirect_response: Option<Response>,
    /// "Document", "Script", "XHR", … (kept as text).
    #[serde(rename = "type")]
    pub kind: String,
    pub frame_id: Option<String>,
    /// Seconds on the browser's monotonic clock.
    pub timestamp: f64,
    /// Seconds since the epoch, when it was sent (a trace's HAR).
    pub wall_time: Option<f64>,
}
crate::event!(RequestWillBeSent => "Network.requestWillBeSent");

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ResponseReceived {
    pub request_id: String,
    pub loader_id: String,
    /// "Document", "Script", "XHR", … (kept as text).
    #[serde(rename = "type")]
    pub kind: String,
    pub response: Response,
    pub frame_id: Option<String>,
    /// Seconds on the browser's monotonic clock.
    pub timestamp: f64,
}
crate::event!(ResponseReceived => "Network.responseReceived");

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LoadingFailed {
    pub request_id: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// `net::ERR_…`.
    pub error_text: String,
    pub canceled: bool,
    pub blocked_reason: Option<String>,
    /// Seconds on the browser's monotonic clock.
    pub timestamp: f64,
}
crate::event!(LoadingFailed => "Network.loadingFailed");

/// A request's response has been received in full.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LoadingFinished {
    pub request_id: String,
    /// Seconds on the browser's monotonic clock.
    pub timestamp: f64,
    /// Bytes received over the network (headers included).
    pub encoded_data_length: f64,
}
crate::event!(LoadingFinished => "Network.loadingFinished");

/// The body of a finished response the browser still holds.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetResponseBody {
    pub request_id: String,
}
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ResponseBody {
    pub body: String,
    /// The body is binary, sent as base64.
    pub base64_encoded: bool,
}
command!(GetResponseBody => "Network.getResponseBody", ResponseBody);

/// A request's body, when the request event did not carry it (large bodies).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetRequestPostData {
    pub request_id: String,
}
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PostData {
    pub post_data: String,
}
command!(GetRequestPostData => "Network.getRequestPostData", PostData);

/// Offline (or a throttled network) for one target.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmulateNetworkConditions {
    pub offline: bool,
    /// Milliseconds added to each request.
    pub latency: f64,
    /// Bytes per second; -1: unthrottled.
    pub download_throughput: f64,
    pub upload_throughput: f64,
}
command!(EmulateNetworkConditions => "Network.emulateNetworkConditions", Empty);

/// The user agent and the `Accept-Language` (and `navigator.language`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetUserAgentAndLanguage {
    pub user_agent: String,
    pub accept_language: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_agent_metadata: Option<UserAgentMetadata>,
}
command!(SetUserAgentAndLanguage => "Network.setUserAgentOverride", Empty);
