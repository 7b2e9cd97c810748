//! The dashboard at `/` of `cdpilot serve`: what people watch and answer
//! while agents drive the browser. Plain HTML, CSS and JavaScript embedded
//! in the binary (`include_str!`); the page polls one JSON state endpoint
//! and opens a WebSocket for the live view of the tab it shows.
//!
//! Routes (all behind the same token as every endpoint; `/?token=…` once
//! sets it as an HttpOnly cookie, see `auth`):
//! - `GET /`, `/dashboard/app.js`, `/dashboard/style.css`: the page;
//! - `GET /v1/dashboard/state`: sessions, pending dialogs, the audit tail
//!   (with thumbnails), as JSON (also what `cdpilot sessions` prints);
//! - `POST /v1/dashboard/stop` `{session}` or `{all: true}`: Stop;
//! - `POST /v1/dashboard/dialog` `{session, tab?, action, prompt_text?}`:
//!   answers a dialog through the one dispatch (`browser_dialog`);
//! - `POST /v1/dashboard/decide` `{id, allow: once | always | deny}`:
//!   answers a URL ask waiting for the dashboard (see `asks`);
//! - `GET /v1/dashboard/thumb/{n}`: one audit thumbnail (JPEG);
//! - `GET /v1/dashboard/screencast?session=…&tab=…`: a WebSocket of JPEG
//!   frames (base64 text), `Page.startScreencast` only while it is open.
//!
//! Owns the routes; the thumbnail ring is `thumbnails.rs`, the asks
//! `asks.rs`, the live views `screencast.rs` (each below the server-wide
//! state, which holds them; this file is above it).

pub mod asks;
pub mod handoff;
pub mod screencast;
pub mod thumbnails;

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::{Path, Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::serve::auth::query_value;
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

pub fn routes() -> Router<Arc<ServeState>> {
    Router::new()
        .route("/", get(|| async { page("text/html; charset=utf-8", INDEX) }))
        .route(
            "/dashboard/app.js",
            get(|| async { page("text/javascript", APP_JS) }),
        )
        .route("/dashboard/style.css", get(|| async { page("text/css", STYLE) }))
        .route("/v1/dashboard/state", get(state))
        .route("/v1/dashboard/stop", post(stop))
        .route("/v1/dashboard/dialog", post(dialog))
        .route("/v1/dashboard/decide", post(decide))
        .route("/v1/dashboard/thumb/{n}", get(thumb))
        .route("/v1/dashboard/screencast", get(screencast))
}

/// Every answer of the server says it may not be framed
/// (`X-Frame-Options: DENY`, CSP `frame-ancestors 'none'`): a page the
/// agent visits must not frame the dashboard and trick a person into
/// pressing Stop, Allow or a dialog's answer (clickjacking).
pub async fn no_framing(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::X_FRAME_OPTIONS, header::HeaderValue::from_static("DENY"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        header::HeaderValue::from_static("frame-ancestors 'none'"),
    );
    response
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

/// `GET /v1/dashboard/screencast?session=…&tab=…`: the live view.
async fn screencast(State(state): State<Arc<ServeState>>, request: Request) -> Response {
    let Some(lease) = query_value(&request, "session").and_then(|id| state.sessions.get(id)) else {
        return (StatusCode::NOT_FOUND, "session: the id of an open session\n").into_response();
    };
    let tab = query_value(&request, "tab")
        .filter(|t| !t.is_empty())
        .map(str::to_owned);
    screencast::watch(request, lease, tab, &state.connections, state.stopping.clone())
}
