//! MCP over streamable HTTP at `/mcp`, with rmcp's server transport: each
//! MCP session (`Mcp-Session-Id`) is one cdpilot session, created when the
//! client initializes and ended when the MCP session ends (the client's
//! DELETE, `[session] idle_timeout_s` without a message, or shutdown).
//!
//! The tool list and the call mapping are [`McpServer`]'s, shared with
//! stdio; its calls go through the session's `Lease::call`. This file only
//! wires the transport.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use engine::Engine;
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::sessions::{Sessions, TooManySessions};
use crate::mcp::McpServer;

pub type Service = StreamableHttpService<McpServer, LocalSessionManager>;

/// The `/mcp` service. `stopping` ends every MCP session and call at
/// shutdown.
pub fn service(engine: Arc<Engine>, sessions: Arc<Sessions>, stopping: CancellationToken) -> Service {
    let idle = engine.config().session.idle_timeout_s;
    let mut manager = LocalSessionManager::default();
    let mut session_config = SessionConfig::default();
    session_config.keep_alive = (idle > 0).then(|| Duration::from_secs(idle));
    manager.session_config = session_config;
    // Host and Origin are checked for every route by the one guard
    // (`auth::check`, wrapped around each route by `routes.rs`).
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_cancellation_token(stopping.clone());
    let factory = move || {
        let lease = sessions.start().map_err(|full| {
            // Tell `limit_sessions`, which runs this request, to say so.
            let _ = REFUSED.try_with(|refused| refused.set(Some(full.max)));
            std::io::Error::other(full)
        })?;
        lease.set_client("mcp");
        // Its calls end at shutdown (this token) and at Stop (the lease's
        // own token, which `Lease::call` links to every call).
        Ok(McpServer::for_session(
            engine.clone(),
            Arc::new(lease),
            stopping.child_token(),
        ))
    };
    StreamableHttpService::new(factory, Arc::new(manager), config)
}

tokio::task_local! {
    /// Set by the service factory when `max_sessions` refused the session
    /// this request was opening (rmcp runs the factory inside the
    /// request's own future, so the middleware around it can read it).
    static REFUSED: std::cell::Cell<Option<usize>>;
}

/// Middleware on `/mcp`: a new MCP session past `max_sessions` gets a
/// JSON-RPC error that says so (rmcp would answer a bare 500); an ended
/// session's DELETE answers 204 (rmcp says 202, which clients such as the
/// Python SDK report as a failed termination).
///
/// The limit itself is decided once, by `Sessions::start` under its lock
/// when rmcp creates the session; checking the count here first would let
/// two initializes arriving together both pass. This only turns that
/// refusal into the answer.
pub async fn limit_sessions(request: Request, next: Next) -> Response {
    if request.method() == Method::DELETE {
        let mut response = next.run(request).await;
        if response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::NO_CONTENT;
        }
        return response;
    }
    let opens_session = request.method() == Method::POST && !request.headers().contains_key("mcp-session-id");
    if !opens_session {
        return next.run(request).await;
    }
    let (response, refused) = REFUSED
        .scope(std::cell::Cell::new(None), async {
            let response = next.run(request).await;
            (response, REFUSED.with(|r| r.get()))
        })
        .await;
    let Some(max) = refused else { return response };
    let message = TooManySessions { max }.to_string();
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": message}});
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}
