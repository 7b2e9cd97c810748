//! `cdpilot serve`: many isolated sessions on one shared browser, over
//! MCP's streamable HTTP (`/mcp`) and the WebSocket action API (`/v1/ws`,
//! its schema at `/v1/schema`).
//!
//! Owns the listener, the routes and the order of shutdown: stop accepting
//! and cancel every call in flight, let connections say goodbye, end the
//! sessions (their browser contexts), then close the browser. Each front
//! end lives in its own module; all of them call `engine::dispatch`.

pub mod auth;
mod mcp_http;
pub mod metrics;
pub mod sessions;
pub mod ws;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::middleware::from_fn_with_state;
use axum::routing::get;
use axum::Router;
use engine::Engine;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use auth::Guard;
use sessions::Sessions;
use ws::WsState;

/// How long connections may take to finish after shutdown began.
const DRAIN: Duration = Duration::from_secs(10);

/// The bearer token to require: `[serve] token`, else a generated one
/// (`generated` is true: print it). A non-loopback address without a
/// configured token is refused: anyone who can reach it could drive the
/// browser.
pub fn token(engine: &Engine) -> Result<(String, bool), String> {
    let serve = &engine.config().serve;
    if !serve.token.is_empty() {
        return Ok((serve.token.clone(), false));
    }
    let listen: SocketAddr = serve
        .listen
        .parse()
        .map_err(|e| format!("serve.listen = {:?}: {e}", serve.listen))?;
    if !listen.ip().is_loopback() {
        return Err(format!(
            "serve.listen = {listen} is reachable from other machines; set a token ([serve] token, CDPILOT_SERVE_TOKEN or --token)"
        ));
    }
    Ok((auth::random_hex(24), true))
}

fn prometheus_text(metrics: &metrics::ServeMetrics) -> axum::response::Response {
    use axum::response::IntoResponse;
    (
        [(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        metrics.text(),
    )
        .into_response()
}

/// `/healthz`: 200 `ok`, or 503 when every browser endpoint of a fleet is
/// taken out (a single browser is launched again on demand, so it is never
/// the reason to take the server out).
fn health(engine: &Engine) -> axum::response::Response {
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    let fleet = !engine.config().browser.endpoints.is_empty();
    if fleet && !engine.browser_endpoints().iter().any(|e| e.up) {
        return (StatusCode::SERVICE_UNAVAILABLE, "no browser endpoint is up\n").into_response();
    }
    "ok\n".into_response()
}

/// Serves until `stop` completes, then shuts down in order. Prints the
/// address (and a generated token) on stderr once listening.
pub async fn run(engine: Arc<Engine>, stop: impl Future<Output = ()>) -> Result<(), String> {
    let (token, generated) = token(&engine)?;
    let config = &engine.config().serve;
    let listener = tokio::net::TcpListener::bind(&config.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("cannot read the listening address: {e}"))?;
    let guard = Arc::new(Guard::new(token.clone(), local, config.allowed_origins.clone()));
    let metrics = Arc::new(metrics::ServeMetrics::new(engine.clone()));
    let sessions = Sessions::new(engine.clone(), config.max_sessions, metrics.clone());
    let stopping = CancellationToken::new();
    let ws_state = Arc::new(WsState {
        engine: engine.clone(),
        sessions: sessions.clone(),
        guard: guard.clone(),
        stopping: stopping.clone(),
        connections: TaskTracker::new(),
    });

    let health_engine = engine.clone();
    let mcp = Router::new()
        .route_service(
            "/mcp",
            mcp_http::service(engine.clone(), sessions.clone(), stopping.clone()),
        )
        .layer(axum::middleware::from_fn(mcp_http::limit_sessions));
    let app = Router::new()
        .route(auth::WS_PATH, get(ws::upgrade))
        .route("/v1/schema", get(ws::schema))
        .with_state(ws_state.clone())
        .merge(mcp)
        .route("/metrics", get(move || async move { prometheus_text(&metrics) }))
        .route(
            auth::HEALTH_PATH,
            get(move || async move { health(&health_engine) }),
        )
        .layer(from_fn_with_state(guard, auth::check));

    if generated {
        eprintln!("cdpilot serve: token {token} (set [serve] token or --token to choose one)");
    }
    eprintln!("cdpilot serve: listening on http://{local} (MCP at /mcp, WebSocket API at /v1/ws)");

    let shutdown = stopping.clone();
    let server = axum::serve(listener, app).with_graceful_shutdown(async move { shutdown.cancelled().await });
    let mut server = std::pin::pin!(std::future::IntoFuture::into_future(server));
    let served = tokio::select! {
        served = &mut server => served.map_err(|e| format!("the HTTP server failed: {e}")),
        _ = stop => {
            tracing::info!("shutting down: no new connections, cancelling calls in flight");
            stopping.cancel();
            if tokio::time::timeout(DRAIN, &mut server).await.is_err() {
                tracing::warn!("connections still open after {DRAIN:?}; closing anyway");
            }
            Ok(())
        }
    };
    stopping.cancel();
    ws_state.connections.close();
    if tokio::time::timeout(DRAIN, ws_state.connections.wait())
        .await
        .is_err()
    {
        tracing::warn!("WebSocket connections still open after {DRAIN:?}; closing anyway");
    }
    sessions.close_all().await;
    engine.shutdown().await;
    served
}
