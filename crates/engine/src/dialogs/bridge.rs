//! The dialog bridge (`dialogs.bridge = "on"`), for browser backends whose
//! proxies dismiss native dialogs within milliseconds. Every document gets
//! `alert`/`confirm`/`prompt` replaced by a synchronous XHR to a reserved
//! `.invalid` host; `Fetch` pauses that request, the supervisor records it as
//! a pending dialog, and the answer goes back as the request's response,
//! which the override returns to the page. The page waits as it would for a
//! native dialog. Native dialog detection stays on as the fallback.
//!
//! Owns the override script, the request pattern and the answer's shape;
//! the book records bridged dialogs like native ones.

use std::time::Duration;

use base64::Engine as _;
use cdp::Session;
use serde_json::{json, Value};

/// The reserved host (`.invalid` never resolves, so nothing leaks out).
pub const HOST: &str = "cdpilot-dialog.invalid";

/// Installed in every frame's page world before page scripts run.
pub const OVERRIDE: &str = r#"(() => {
  const ask = (type, message, defaultPrompt) => {
    const request = new XMLHttpRequest();
    request.open('POST', location.protocol.replace(/^(?!https?:).*/, 'http:') + '//cdpilot-dialog.invalid/', false);
    request.send(JSON.stringify({ type, message: message === undefined ? '' : String(message),
      default_prompt: defaultPrompt === undefined || defaultPrompt === null ? null : String(defaultPrompt) }));
    try { return JSON.parse(request.responseText); } catch (e) { return { accept: false }; }
  };
  const define = (name, fn) => Object.defineProperty(window, name, { value: fn, writable: true, configurable: true });
  define('alert', function alert(message) { ask('alert', message); });
  define('confirm', function confirm(message) { return ask('confirm', message).accept === true; });
  define('prompt', function prompt(message, defaultValue) {
    const answer = ask('prompt', message, defaultValue);
    if (answer.accept !== true) return null;
    return answer.prompt_text ?? (defaultValue === undefined ? '' : String(defaultValue));
  });
})();"#;

/// The `Fetch.enable` pattern of the bridge's requests, paused before they
/// leave (merged with the URL policy's into the session's one `Fetch.enable`).
pub fn fetch_pattern() -> cdp::protocol::fetch::RequestPattern {
    cdp::protocol::fetch::RequestPattern {
        url_pattern: format!("*://{HOST}/*"),
        resource_type: None,
        request_stage: "Request".into(),
    }
}

/// Whether a `Fetch.requestPaused` is the bridge's, and its dialog fields
/// (`type`, `message`, `default_prompt`).
pub fn dialog_of(params: &Value) -> Option<Value> {
    let url = params["request"]["url"].as_str()?;
    // The host itself, not the text: a document at `/?cdpilot-dialog.invalid`
    // must still be judged by the URL policy.
    if url::Url::parse(url).ok()?.host_str() != Some(HOST) {
        return None;
    }
    let body = params["request"]["postData"].as_str().unwrap_or("{}");
    let fields: Value = serde_json::from_str(body).unwrap_or_else(|_| json!({}));
    Some(json!({
        "type": fields["type"].as_str().unwrap_or("alert"),
        "message": fields["message"].as_str().unwrap_or_default(),
        "defaultPrompt": fields["default_prompt"],
        "frameId": params["frameId"],
    }))
}

/// Answers a bridged dialog: the paused request gets `{accept, prompt_text}`.
pub async fn answer(
    session: &Session,
    request_id: &str,
    accept: bool,
    prompt_text: Option<&str>,
    timeout: Duration,
) -> Result<(), cdp::CdpError> {
    let body = json!({ "accept": accept, "prompt_text": prompt_text }).to_string();
    session
        .send(
            "Fetch.fulfillRequest",
            json!({
                "requestId": request_id,
                "responseCode": 200,
                "responseHeaders": [
                    { "name": "Content-Type", "value": "application/json" },
                    { "name": "Access-Control-Allow-Origin", "value": "*" },
                ],
                "body": base64::engine::general_purpose::STANDARD.encode(body),
            }),
            tokio::time::Instant::now() + timeout,
        )
        .await
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_bridge_requests_are_dialogs() {
        let paused = json!({
            "requestId": "R1", "frameId": "F",
            "request": { "url": "http://cdpilot-dialog.invalid/", "postData": "{\"type\":\"prompt\",\"message\":\"Name?\",\"default_prompt\":\"x\"}" },
        });
        let d = dialog_of(&paused).unwrap();
        assert_eq!(
            (
                d["type"].as_str(),
                d["message"].as_str(),
                d["defaultPrompt"].as_str()
            ),
            (Some("prompt"), Some("Name?"), Some("x"))
        );
        assert!(dialog_of(&json!({"request": {"url": "http://example.com/"}})).is_none());
        let lookalike = json!({"request": {"url": "http://example.com/?cdpilot-dialog.invalid/"}});
        assert!(dialog_of(&lookalike).is_none());
    }
}
