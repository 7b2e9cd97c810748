//! The lines of `trace.jsonl`, version [`VERSION`] (`docs/src/spec/trace.md`):
//! a [`Header`] first, then [`Step`]s, [`Chapter`]s and at most one [`End`].
//! Every line is one JSON object with a `kind`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Target;
use crate::console::ConsoleMessage;

/// What the header's `format` says.
pub const FORMAT: &str = "cdpilot-trace";

/// The format's version: a reader refuses any other.
pub const VERSION: u32 = 1;

/// One line of `trace.jsonl`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Line {
    /// The first line.
    Header(Header),
    /// One call, as the agent saw it.
    Step(Box<Step>),
    /// A named point in the run (`browser_trace chapter`).
    Chapter(Chapter),
    /// The trace stopped (the last line when it stopped cleanly).
    End(End),
}

/// The first line: what wrote the trace and under which budget.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`] when written by this build.
    pub version: u32,
    /// The session's id, as the audit names it.
    pub session: String,
    /// When the trace started (RFC 3339, UTC).
    pub started: String,
    /// The cdpilot version that wrote it.
    pub cdpilot: String,
    /// The size budget in bytes (`[trace] max_mb`).
    pub max_bytes: u64,
}

/// One call: what the agent sent and what it read back.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Step {
    /// 1, 2, …: the step's number in the trace.
    pub step: u64,
    /// When the call came in (RFC 3339, UTC).
    pub at: String,
    /// How long it took, in milliseconds.
    pub ms: u64,
    /// Its budget in milliseconds (its `timeout_ms`, else the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_ms: Option<u64>,
    /// The tool's name.
    pub tool: String,
    /// Its arguments, secrets replaced by their placeholders.
    pub arguments: Value,
    /// `ok`, or the error's code.
    pub outcome: String,
    /// The text the agent read (page text inside the session's markers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The result's structured data.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub data: Value,
    /// The error, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<StepError>,
    /// The tab's URL before the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_before: Option<String>,
    /// The tab's URL after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_after: Option<String>,
    /// The URL policy's verdicts on it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<Value>,
    /// What the session's routes answered in its tab since the call
    /// before there, by route, as the audit has it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routed: Vec<Value>,
    /// Each ref the arguments name (by its JSON pointer, `/ref`), as the
    /// snapshot the agent had showed it: role, name, ordinal.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub targets: BTreeMap<String, Target>,
    /// The screenshot taken after it (`shots/0003.jpg`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shot: Option<String>,
    /// The box of the element the call aimed its input at (the last one,
    /// for a call that aims at several: a drag's drop target, a form's
    /// last field), in CSS px of the tab's viewport, measured as the call
    /// ran (before its effect). Optional: absent for calls that aim at
    /// nothing, and in traces written before it was added.
    #[serde(rename = "box", default, skip_serializing_if = "Option::is_none")]
    pub target_box: Option<TargetBox>,
    /// The viewport the screenshot shows, in CSS px (the JPEG may be
    /// scaled down from it): what `box` is measured against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub viewport: Option<Viewport>,
    /// Why no screenshot was kept for a call that acts (`budget`,
    /// `secret_on_page`, `no_page`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shot_dropped: Option<String>,
    /// Console messages and uncaught errors since the step before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub console: Vec<ConsoleMessage>,
    /// Requests that finished since the step before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<RequestRecord>,
    /// What happened to the session during the call, as its events say
    /// (redacted as every event): dialogs opened and answered
    /// (`dialog_opened`, `dialog_closed`), hand-offs to a person and their
    /// end (`handoff`, `handoff_ended`), URLs refused (`permission_denied`,
    /// an ask denied among them). Each `{event, …its data}`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<Value>,
}

/// An element's box in CSS px of the tab's viewport.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TargetBox {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

/// The size of the viewport a screenshot shows, in CSS px.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Viewport {
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

/// A failed step's error, as the agent read it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepError {
    /// The contract's code (`ref_changed`).
    pub code: String,
    /// What went wrong.
    pub message: String,
    /// What the agent was told to do next.
    pub next_step: String,
}

/// A named point between steps.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Chapter {
    /// The step it comes after (0: before the first).
    pub after_step: u64,
    /// When (RFC 3339, UTC).
    pub at: String,
    /// What the steps after it do.
    pub name: String,
}

/// The trace stopped.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct End {
    /// When (RFC 3339, UTC).
    pub at: String,
    /// `stopped` (browser_trace stop), `session_ended`, `budget`.
    pub reason: String,
    /// Steps written.
    pub steps: u64,
    /// Screenshots not kept, and why (`budget`: 3, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub dropped: BTreeMap<String, u64>,
}

/// One request as the tab's request log held it once it finished, redacted.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RequestRecord {
    /// The tab's short id.
    pub tab: String,
    /// The tab's name for it (`r12`).
    pub id: String,
    /// `GET`, `POST`, …
    pub method: String,
    /// Its URL (cut as the request log cuts it).
    pub url: String,
    /// `document`, `xhr`, …
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The response's status, once it came.
    pub status: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Why it failed (`net::ERR_…`, `blocked (…)`), if it did.
    pub failed: Option<String>,
    /// When it was sent (seconds since the epoch).
    pub started: f64,
    /// Sent to finished, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<u64>,
    /// Bytes received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// The request's headers as sent.
    pub request_headers: serde_json::Map<String, Value>,
    /// The response's headers.
    pub response_headers: serde_json::Map<String, Value>,
    /// The response's type.
    #[serde(default)]
    pub mime_type: String,
    /// The request's body, when the browser reported it (at most
    /// [`POST_DATA_KEPT`] bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_data: Option<String>,
    /// The response's body as the browser kept it (at most
    /// [`RESPONSE_BODY_KEPT`] bytes decoded), redacted; base64 when
    /// `body_base64` (a binary body).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// `body` is base64 (the browser said the body is binary).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub body_base64: bool,
    /// Why a finished response's body is not kept: `too_large`,
    /// `unavailable` (the browser kept none), `budget` (the trace is past
    /// its screenshots' share), `secret` (a binary body holding a secret),
    /// `redirect`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_dropped: Option<String>,
    /// How a route answered it (`abort`, `fulfill`, `continue`, `delay`,
    /// `har`); absent when no route did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routed: Option<String>,
    /// The route that answered it (`route2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    /// That route's URL pattern.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
}

/// The longest request body a trace keeps, in bytes.
pub const POST_DATA_KEPT: usize = 64 * 1024;

/// The longest response body a trace keeps, in bytes (decoded).
pub const RESPONSE_BODY_KEPT: usize = 256 * 1024;

/// The time a step may spend asking the browser for its requests' bodies:
/// past it, the rest are `unavailable`.
pub const BODIES_BUDGET_MS: u64 = 2000;

/// Where step `step`'s screenshot is in a trace's directory: the one name
/// the writer gives it and every reader accepts (a path a trace names
/// otherwise is refused, never followed).
pub fn shot_name(step: u64) -> String {
    format!("shots/{step:04}.jpg")
}

/// One line of `cast.jsonl`: a frame of the tab's screencast kept between
/// steps (`[trace] video`), for the video.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CastFrame {
    /// 1, 2, …: the frame's number in the trace.
    pub frame: u64,
    /// When it arrived, in seconds since the Unix epoch.
    pub at: f64,
    /// Its JPEG in the directory: always [`cast_name`] of its number.
    pub file: String,
    /// The viewport it shows, in CSS px.
    pub viewport: Viewport,
}

/// Where screencast frame `frame` is in a trace's directory (as with
/// [`shot_name`], the one name a reader accepts).
pub fn cast_name(frame: u64) -> String {
    format!("cast/{frame:06}.jpg")
}
