//! `cdpilot serve`: many isolated sessions on one shared browser, over
//! MCP's streamable HTTP (`/mcp`) and the WebSocket action API (`/v1/ws`,
//! its schema at `/v1/schema`).
//!
//! Owns the listener, the routes and the order of shutdown: stop accepting
//! and cancel every call in flight, let connections say goodbye, end the
//! sessions (their browser contexts), then close the browser. Each front
//! end lives in its own module; all of them call `engine::dispatch`.

pub mod auth;
pub mod dashboard;
pub mod extension;
pub mod extension_proof;
pub mod extension_store;
pub mod extension_wire;
mod mcp_http;
pub mod metrics;
pub mod routes;
pub mod sessions;
pub mod state;
mod trim;
pub mod turns;
pub(crate) mod upgrade;
pub mod ws;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::http::Method;
use engine::Engine;
use tokio_util::sync::CancellationToken;

use auth::Guard;
use routes::Routes;
use sessions::Sessions;
use state::ServeState;

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

async fn prometheus_text(metrics: &metrics::ServeMetrics) -> axum::response::Response {
    use axum::response::IntoResponse;
    (
        [(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        metrics.text().await,
    )
        .into_response()
}

/// How `cdpilot serve` runs beyond its configuration.
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// Stop after `[session] idle_timeout_s` with no session (the server
    /// the CLI starts in the background).
    pub idle_exit: bool,
    /// Once listening, write `{"url", "pid"}` here (mode 0600); removed at exit.
    pub state_file: Option<std::path::PathBuf>,
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

/// Every route of `cdpilot serve`'s listener at `local`, each with the
/// credential it asks, guarded by `state.guard` (the table the guard's test
/// walks is this one).
pub fn app(state: &Arc<ServeState>, metrics: Arc<metrics::ServeMetrics>, local: SocketAddr) -> Routes {
    use routes::Credential::{Bearer, FirstMessage, Public};
    let engine = state.engine.clone();
    let guard = state.guard.clone();
    let mcp = axum::routing::any_service(mcp_http::service(
        engine.clone(),
        state.sessions.clone(),
        state.stopping.clone(),
    ))
    .layer(axum::middleware::from_fn(mcp_http::limit_sessions));
    let extension = extension::Extension::new(
        engine.clone(),
        state.sessions.clone(),
        local,
        state.stopping.clone(),
    );
    let health_engine = engine.clone();
    Routes::<Arc<ServeState>>::new(guard.clone())
        .get("/v1/ws", FirstMessage, ws::upgrade)
        .get("/v1/schema", Bearer, ws::schema)
        .merge(dashboard::routes(guard.clone()))
        .with_state::<()>(state.clone())
        .service(
            "/mcp",
            vec![Method::POST, Method::GET, Method::DELETE],
            Bearer,
            mcp,
        )
        .merge(extension::routes(extension, guard.clone()))
        .get("/metrics", Bearer, move || async move {
            prometheus_text(&metrics).await
        })
        // The load balancers' probe: it says only whether the server can take sessions.
        .get("/healthz", Public, move || async move { health(&health_engine) })
        .merge(dashboard::timeline::routes(
            Arc::new(dashboard::timeline::Shelf::of_engine(&engine)),
            guard.clone(),
        ))
        .merge(dashboard::handoff::routes(engine.handoffs().clone(), guard))
}

/// Serves until `stop` completes, then shuts down in order. Prints the
/// address (and a generated token) on stderr once listening.
pub async fn run(engine: Arc<Engine>, stop: impl Future<Output = ()>) -> Result<(), String> {
    run_with(engine, stop, Options::default()).await
}

/// [`run`] with [`Options`].
pub async fn run_with(
    engine: Arc<Engine>,
    stop: impl Future<Output = ()>,
    options: Options,
) -> Result<(), String> {
    if engine.config().tools.cdp == engine::config::CdpAccess::Unrestricted {
        return Err("tools.cdp = \"unrestricted\" is for a single-user stdio server (cdpilot mcp): cdpilot serve refuses it, since raw CDP reaches every session's targets and cookies. Use tools.cdp = true (fenced to the caller's tab) or false".into());
    }
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
    let state = ServeState::new(engine.clone(), guard, metrics.clone());
    let (sessions, stopping) = (state.sessions.clone(), state.stopping.clone());
    // A launched browser nobody used for a while gives all its memory back.
    engine.close_idle_browser_after(Duration::from_secs(config.browser_idle_restart_s));
    dashboard::install(&sessions, &state.thumbnails);
    let idle = Duration::from_secs(engine.config().session.idle_timeout_s);
    let idle_exit = {
        let (sessions, stopping) = (sessions.clone(), stopping.clone());
        let enabled = options.idle_exit && !idle.is_zero();
        async move {
            match enabled {
                true => idle_exit(sessions, idle, stopping).await,
                false => std::future::pending().await,
            }
        }
    };

    tokio::spawn(trim::report_heap(engine.clone(), stopping.clone()));
    tokio::spawn(trim::every(stopping.clone()));
    // Idle sessions give their seats back (a client that said hello and
    // never called included), so they never hold `max_sessions`.
    if !idle.is_zero() {
        let (sessions, stopping) = (sessions.clone(), stopping.clone());
        tokio::spawn(async move {
            let tick = (idle / 4).clamp(Duration::from_millis(200), Duration::from_secs(5));
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(tick) => sessions.expire_idle(idle),
                    _ = stopping.cancelled() => return,
                }
            }
        });
    }

    let app = app(&state, metrics, local).into_router();
    engine
        .handoffs()
        .serve_pages(Arc::new(dashboard::handoff::Served::at(local)));

    if generated {
        eprintln!("cdpilot serve: token {token} (set [serve] token or --token to choose one)");
    }
    eprintln!("cdpilot serve: listening on http://{local} (MCP at /mcp, WebSocket API at /v1/ws, dashboard at /#token=…)");
    if let Some(path) = &options.state_file {
        write_private(
            path,
            &serde_json::json!({"url": format!("http://{local}"), "pid": std::process::id()}).to_string(),
        )
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    }

    let shutdown = stopping.clone();
    let server = axum::serve(listener, app).with_graceful_shutdown(async move { shutdown.cancelled().await });
    let mut server = std::pin::pin!(std::future::IntoFuture::into_future(server));
    let served = tokio::select! {
        served = &mut server => served.map_err(|e| format!("the HTTP server failed: {e}")),
        _ = async { tokio::select! { _ = stop => {}, _ = idle_exit => {} } } => {
            tracing::info!("shutting down: no new connections, cancelling calls in flight");
            stopping.cancel();
            if tokio::time::timeout(DRAIN, &mut server).await.is_err() {
                tracing::warn!("connections still open after {DRAIN:?}; closing anyway");
            }
            Ok(())
        }
    };
    stopping.cancel();
    state.connections.close();
    if tokio::time::timeout(DRAIN, state.connections.wait())
        .await
        .is_err()
    {
        tracing::warn!("WebSocket connections still open after {DRAIN:?}; closing anyway");
    }
    sessions.close_all().await;
    engine.shutdown().await;
    if let Some(path) = &options.state_file {
        let _ = std::fs::remove_file(path);
    }
    served
}

/// Writes `text` to `path` readable by the user only (written aside, then
/// renamed into place, so a reader never sees half of it).
pub fn write_private(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let aside = path.with_extension("tmp");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(&aside)?;
    file.write_all(text.as_bytes())?;
    drop(file);
    std::fs::rename(&aside, path)
}

/// Stops `cdpilot serve` started in the background once it has had no
/// session for `idle` (`[session] idle_timeout_s`): resolves then.
async fn idle_exit(sessions: Arc<Sessions>, idle: Duration, stopping: CancellationToken) {
    let tick = (idle / 4).clamp(Duration::from_millis(200), Duration::from_secs(5));
    loop {
        tokio::select! {
            _ = tokio::time::sleep(tick) => {}
            _ = stopping.cancelled() => return,
        }
        sessions.expire_kept(idle);
        if sessions.empty_for().is_some_and(|empty| empty >= idle) {
            tracing::info!("no session for {idle:?}: the background server stops");
            return;
        }
    }
}
