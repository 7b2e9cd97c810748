//! What every route of `cdpilot serve` shares: the engine, the sessions,
//! the guard, the shutdown token and the connections' tasks, and the
//! dashboard's rings and tables. Made once by `serve::run_with`, handed to
//! the WebSocket API and the dashboard as axum state; it owns nothing
//! itself (each field's owner is named on it).

use std::sync::Arc;

use engine::Engine;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::serve::auth::Guard;
use crate::serve::dashboard::asks::DashboardAsks;
use crate::serve::dashboard::thumbnails::Thumbnails;
use crate::serve::metrics::ServeMetrics;
use crate::serve::sessions::Sessions;

/// The server-wide state of `cdpilot serve`.
pub struct ServeState {
    pub engine: Arc<Engine>,
    /// The open sessions (`sessions.rs` owns the table).
    pub sessions: Arc<Sessions>,
    /// Host, Origin and token checks.
    pub guard: Arc<Guard>,
    /// Cancelled at shutdown: every connection says goodbye and closes.
    pub stopping: CancellationToken,
    /// The upgraded connections' tasks (the WebSocket API's, the live
    /// views'), awaited at shutdown: an upgraded socket is no longer the
    /// HTTP server's to wait for.
    pub connections: TaskTracker,
    /// Audit thumbnails taken after page actions (the dashboard shows them).
    pub thumbnails: Arc<Thumbnails>,
    /// URL asks waiting for the dashboard.
    pub asks: Arc<DashboardAsks>,
}

impl ServeState {
    /// The state of a server over `engine` guarded by `guard`, its
    /// sessions (at most `[serve] max_sessions`) counted in `metrics`.
    pub fn new(engine: Arc<Engine>, guard: Arc<Guard>, metrics: Arc<ServeMetrics>) -> Arc<ServeState> {
        let max = engine.config().serve.max_sessions;
        Arc::new(ServeState {
            sessions: Sessions::new(engine.clone(), max, metrics),
            engine,
            guard,
            stopping: CancellationToken::new(),
            connections: TaskTracker::new(),
            thumbnails: Arc::default(),
            asks: Arc::default(),
        })
    }
}
