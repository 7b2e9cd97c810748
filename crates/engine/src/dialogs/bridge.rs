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
use cdp::protocol::{fetch, page};
use cdp::Session;
use serde_json::json;

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
pub fn fetch_pattern() -> fetch::RequestPattern {
    fetch::RequestPattern {
        url_pattern: format!("*://{HOST}/*"),
        resource_type: None,
        request_stage: "Request".into(),
    }
}

/// Whether a paused request is the bridge's, and its dialog as Chrome would
/// announce a native one.
pub fn dialog_of(paused: &fetch::RequestPaused) -> Option<page::JavascriptDialogOpening> {
    // The host itself, not the text: a document at `/?cdpilot-dialog.invalid`
    // must still be judged by the URL policy.
    if url::Url::parse(&paused.request.url).ok()?.host_str() != Some(HOST) {
        return None;
    }
    /// What the override script posts.
    #[derive(Default, serde::Deserialize)]
    #[serde(default)]
    struct Asked {
        #[serde(rename = "type")]
        kind: Option<String>,
        message: Option<String>,
        default_prompt: Option<String>,
    }
    let body = paused.request.post_data.as_deref().unwrap_or("{}");
    let asked: Asked = serde_json::from_str(body).unwrap_or_default();
    Some(page::JavascriptDialogOpening {
        url: paused.request.url.clone(),
        frame_id: Some(paused.frame_id.clone()).filter(|f| !f.is_empty()),
        message: asked.message.unwrap_or_default(),
        kind: asked.kind.unwrap_or_else(|| "alert".to_owned()),
        default_prompt: asked.default_prompt,
        ..Default::default()
    })
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
    let header = |name: &str, value: &str| fetch::HeaderEntry {
        name: name.to_owned(),
        value: value.to_owned(),
    };
    let fulfill = fetch::FulfillRequest {
        request_id: request_id.to_owned(),
        response_code: 200,
        response_headers: vec![
            header("Content-Type", "application/json"),
            header("Access-Control-Allow-Origin", "*"),
        ],
        body: Some(base64::engine::general_purpose::STANDARD.encode(body)),
    };
    session
        .call(fulfill, tokio::time::Instant::now() + timeout)
        .await
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paused(params: serde_json::Value) -> fetch::RequestPaused {
        cdp::Event::new("S", "Fetch.requestPaused", &params)
            .decode()
            .expect("a Fetch.requestPaused")
    }

    #[test]
    fn only_the_bridge_requests_are_dialogs() {
        let asked = paused(json!({
            "requestId": "R1", "frameId": "F",
            "request": { "url": "http://cdpilot-dialog.invalid/", "postData": "{\"type\":\"prompt\",\"message\":\"Name?\",\"default_prompt\":\"x\"}" },
        }));
        let d = dialog_of(&asked).unwrap();
        assert_eq!(
            (d.kind.as_str(), d.message.as_str(), d.default_prompt.as_deref()),
            ("prompt", "Name?", Some("x"))
        );
        assert_eq!(d.frame_id.as_deref(), Some("F"));
        assert!(dialog_of(&paused(json!({"request": {"url": "http://example.com/"}}))).is_none());
        let lookalike = paused(json!({"request": {"url": "http://example.com/?cdpilot-dialog.invalid/"}}));
        assert!(dialog_of(&lookalike).is_none());
    }
}
