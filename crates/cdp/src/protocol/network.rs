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
}
command!(SetUserAgentOverride => "Network.setUserAgentOverride", Empty);

/// A request as the page sent it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Request {
    pub url: String,
    pub method: String,
    /// Header names as sent (any case), values as text.
    pub headers: Map<String, Value>,
    pub post_data: Option<String>,
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
}
crate::event!(LoadingFailed => "Network.loadingFailed");
