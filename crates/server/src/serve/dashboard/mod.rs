//! The dashboard at `/` of `cdpilot serve`: what people watch and answer
//! while agents drive the browser. Plain HTML, CSS and JavaScript embedded
//! in the binary (`include_str!`); the page polls one JSON state endpoint
//! and opens a WebSocket for the live view of the tab it shows.
//!
//! Routes (declared with their credentials in [`routes`]; the person opens
//! `/#token=…` once: the page keeps the token in its tab's `sessionStorage`,
//! which no other port or site reads, sends it as `Authorization: Bearer`
//! and as the live view's first message; no cookie is set or read):
//! - `GET /`, `/dashboard/app.js`, `/dashboard/style.css`: the page (static);
//! - `GET /v1/dashboard/state`: sessions, pending dialogs, the audit tail
//!   (with thumbnails), as JSON (also what `cdpilot sessions` prints);
//! - `POST /v1/dashboard/stop` `{session}` or `{all: true}`: Stop;
//! - `POST /v1/dashboard/dialog` `{session, tab?, action, prompt_text?}`:
//!   answers a dialog through the one dispatch (`browser_dialog`);
//! - `POST /v1/dashboard/decide` `{id, allow: once | always | deny}`:
//!   answers a URL ask waiting for the dashboard (see `asks`);
//! - `GET /v1/dashboard/thumb/{n}`: one audit thumbnail (JPEG);
//! - `GET /v1/dashboard/screencast?session=…&tab=…`: a WebSocket of JPEG
//!   frames (base64 text) after its first message `{"token": "…"}` (or an
//!   upgrade with the right bearer header), `Page.startScreencast` only
//!   while it is open.
//!
//! The timeline of a session's trace (`/timeline`, `/v1/timeline/…`) has
//! routes of its own (`timeline.rs`).
//!
//! Owns the routes; the thumbnail ring is `thumbnails.rs`, the asks
//! `asks.rs`, the live views `screencast.rs` (each below the server-wide
//! state, which holds them; this file is above it).

pub mod asks;
pub mod handoff;
pub mod screencast;
pub mod thumbnails;
pub mod timeline;

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::{Path, Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::serve::auth::{query_value, Guard, HeaderAuthenticated};
use crate::serve::routes::{Credential, Routes};
use crate::serve::sessions::Sessions;
use crate::serve::state::ServeState;
use thumbnails::Thumbnails;

const INDEX: &str = include_str!("index.html");
const APP_JS: &str = include_str!("app.js");
const STYLE: &str = include_str!("style.css");

/// How many audit records the state shows.
const AUDIT_TAIL: usize = 50;
/// Installs the thumbnail hook: every call that ends `ok` in a serve
/// session (WebSocket, MCP over HTTP, a dashboard answer) reaches
/// [`Thumbnails::after_call`].
pub fn install(sessions: &Sessions, thumbnails: &Arc<Thumbnails>) {
    let thumbnails = thumbnails.clone();
    sessions.on_success(Arc::new(move |lease, tool| thumbnails.after_call(lease, tool)));
}

/// The dashboard's routes: its page, script and style sheet are static
/// files (the page takes the token from its address into its tab's
/// `sessionStorage` and sends it as a header); everything else asks the
/// token, the live view's socket in its first message.
pub fn routes(guard: Arc<Guard>) -> Routes<Arc<ServeState>> {
    use Credential::{Bearer, FirstMessage, Public};
    Routes::new(guard)
        .get("/", Public, || async { page("text/html; charset=utf-8", INDEX) })
        .get("/dashboard/app.js", Public, || async {
            page("text/javascript", APP_JS)
        })
        .get("/dashboard/style.css", Public, || async {
            page("text/css", STYLE)
        })
        .get("/v1/dashboard/state", Bearer, state)
        .post("/v1/dashboard/stop", Bearer, stop)
        .post("/v1/dashboard/dialog", Bearer, dialog)
        .post("/v1/dashboard/decide", Bearer, decide)
        .get("/v1/dashboard/thumb/{n}", Bearer, thumb)
        .get("/v1/dashboard/screencast", FirstMessage, screencast)
}

fn page(mime: &'static str, body: &'static str) -> Response {
    (
        [(header::CONTENT_TYPE, mime), (header::CACHE_CONTROL, "no-store")],
        body,
    )
        .into_response()
}

fn json_response(status: StatusCode, value: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

fn bad_request(message: &str) -> Response {
    json_response(
        StatusCode::BAD_REQUEST,
        json!({"error": {"code": "invalid_argument", "message": message}}),
    )
}

/// `GET /v1/dashboard/state`.
async fn state(State(state): State<Arc<ServeState>>) -> Response {
    *state.thumbnails.watched.lock().unwrap() = Some(Instant::now());
    state.asks.watched();
    json_response(StatusCode::OK, snapshot(&state))
}

/// Everything the dashboard shows, as JSON.
pub fn snapshot(state: &ServeState) -> Value {
    let sessions: Vec<Value> = state.sessions.list().iter().map(|l| l.view()).collect();
    let records = state.engine.audit().recent(AUDIT_TAIL);
    let audit: Vec<Value> = records
        .iter()
        .rev()
        .map(|record| {
            let mut value = serde_json::to_value(record).unwrap_or_default();
            let key = format!("{}|{}", record.session, record.at);
            if let Some(n) = state.thumbnails.number_of(&key) {
                value["thumbnail"] = format!("/v1/dashboard/thumb/{n}").into();
            }
            value
        })
        .collect();
    // Redacted as a whole on its way out: tab URLs, dialog messages, asks'
    // URLs, the audit's captions (each part is redacted at its source too).
    state.engine.secrets().redact_value(json!({
        "sessions": sessions,
        "max_sessions": state.sessions.max(),
        "asks": state.asks.pending(),
        "audit": audit,
        "thumbnails": state.thumbnails.cost(),
    }))
}

/// The body as a JSON object, or the 400 to answer (boxed: a `Response`
/// is large).
fn parse_body(body: &Bytes) -> Result<Value, Box<Response>> {
    serde_json::from_slice::<Value>(body)
        .ok()
        .filter(Value::is_object)
        .ok_or_else(|| Box::new(bad_request("send a JSON object")))
}

/// `POST /v1/dashboard/stop`: `{session}` or `{all: true}`.
async fn stop(State(state): State<Arc<ServeState>>, body: Bytes) -> Response {
    let body = match parse_body(&body) {
        Ok(body) => body,
        Err(refused) => return *refused,
    };
    if body["all"].as_bool() == Some(true) {
        let stopped = state.sessions.stop_all();
        return json_response(StatusCode::OK, json!({"stopped": stopped}));
    }
    let Some(id) = body["session"].as_str() else {
        return bad_request("send {\"session\": \"s-…\"} or {\"all\": true}");
    };
    let id = state.sessions.resolve(id).unwrap_or_else(|| id.to_owned());
    match state.sessions.stop(&id) {
        true => json_response(StatusCode::OK, json!({"stopped": 1})),
        false => json_response(
            StatusCode::NOT_FOUND,
            json!({"error": {"code": "invalid_argument", "message": format!("no open session \"{id}\"")}}),
        ),
    }
}

/// `POST /v1/dashboard/dialog`: answers a pending dialog of a session
/// through the one dispatch, as an agent's `browser_dialog` would (audited
/// like any call).
async fn dialog(State(state): State<Arc<ServeState>>, body: Bytes) -> Response {
    let body = match parse_body(&body) {
        Ok(body) => body,
        Err(refused) => return *refused,
    };
    let Some(lease) = body["session"].as_str().and_then(|id| state.sessions.get(id)) else {
        return bad_request("session: the id of an open session");
    };
    let mut arguments = serde_json::Map::new();
    for key in ["action", "prompt_text", "tab", "dialog_id"] {
        if let Some(value) = body.get(key).filter(|v| !v.is_null()) {
            arguments.insert(key.into(), value.clone());
        }
    }
    let outcome = lease
        .call(
            "browser_dialog",
            Value::Object(arguments),
            CancellationToken::new(),
        )
        .await;
    match outcome {
        Ok(output) => json_response(
            StatusCode::OK,
            json!({"text": output.text, "result": output.data}),
        ),
        Err(error) => json_response(
            StatusCode::CONFLICT,
            json!({"error": crate::outcome::error_object(&error)}),
        ),
    }
}

/// `POST /v1/dashboard/decide`: `{id, allow}`.
async fn decide(State(state): State<Arc<ServeState>>, body: Bytes) -> Response {
    let body = match parse_body(&body) {
        Ok(body) => body,
        Err(refused) => return *refused,
    };
    let (Some(id), Some(allow)) = (body["id"].as_str(), body["allow"].as_str()) else {
        return bad_request("send {\"id\": \"ask1\", \"allow\": \"once\" | \"always\" | \"deny\"}");
    };
    match state.asks.decide(id, allow) {
        Ok(true) => json_response(StatusCode::OK, json!({"decided": id})),
        Ok(false) => json_response(
            StatusCode::CONFLICT,
            json!({"error": {"code": "invalid_argument", "message": "no such question waits (answered, or its call ended)"}}),
        ),
        Err(why) => bad_request(&why),
    }
}

/// `GET /v1/dashboard/thumb/{n}`.
async fn thumb(State(state): State<Arc<ServeState>>, Path(n): Path<u64>) -> Response {
    match state.thumbnails.jpeg(n) {
        Some(jpeg) => ([(header::CONTENT_TYPE, "image/jpeg")], jpeg).into_response(),
        None => (
            StatusCode::NOT_FOUND,
            "no such thumbnail (the ring keeps the last 200)\n",
        )
            .into_response(),
    }
}

/// `GET /v1/dashboard/screencast?session=…&tab=…`: the live view. Nothing
/// about the session is looked up before the token is shown.
async fn screencast(State(state): State<Arc<ServeState>>, request: Request) -> Response {
    let session = query_value(&request, "session").unwrap_or_default().to_owned();
    let tab = query_value(&request, "tab")
        .filter(|t| !t.is_empty())
        .map(str::to_owned);
    let header_authenticated = request.extensions().get::<HeaderAuthenticated>().is_some();
    screencast::watch(request, state, session, tab, header_authenticated)
}
