//! The WebSocket action API (`shared/spec/PROTOCOL.md`): `/v1/ws` and the
//! schema of its messages at `/v1/schema`. Calls go through the engine's one
//! dispatch, as MCP's do.

mod ask;
mod connection;
pub mod messages;
pub(crate) mod upgrade;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use engine::Engine;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::auth::{Guard, HeaderAuthenticated};
use super::sessions::Sessions;

pub use upgrade::MAX_MESSAGE;

/// What every connection shares.
pub struct WsState {
    pub engine: Arc<Engine>,
    pub sessions: Arc<Sessions>,
    pub guard: Arc<Guard>,
    /// Cancelled at shutdown: every connection says goodbye and closes.
    pub stopping: CancellationToken,
    /// The connections' tasks, awaited at shutdown (an upgraded socket is
    /// no longer the HTTP server's to wait for).
    pub connections: TaskTracker,
    /// Audit thumbnails taken after page actions (the dashboard shows them).
    pub thumbnails: Arc<super::dashboard::Thumbnails>,
    /// URL asks waiting for the dashboard.
    pub asks: Arc<super::dashboard::DashboardAsks>,
    /// The dashboard's live views, shared per tab.
    pub screencasts: Arc<super::dashboard::Screencasts>,
}

/// `GET /v1/ws`.
pub async fn upgrade(State(state): State<Arc<WsState>>, request: Request) -> Response {
    let header_authenticated = request.extensions().get::<HeaderAuthenticated>().is_some();
    let tracker = state.connections.clone();
    upgrade::accept(request, move |socket| {
        tracker.track_future(connection::serve(socket, state, header_authenticated))
    })
}

/// `GET /v1/schema`.
pub async fn schema() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        messages::schema().to_string(),
    )
        .into_response()
}
