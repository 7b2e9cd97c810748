//! The WebSocket action API (`docs/src/spec/protocol.md`): `/v1/ws` and the
//! schema of its messages at `/v1/schema`. Calls go through the engine's one
//! dispatch, as MCP's do.

mod ask;
mod connection;
pub mod messages;
mod replay;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};

use crate::serve::auth::HeaderAuthenticated;
use crate::serve::state::ServeState;

pub use crate::serve::upgrade::MAX_MESSAGE;

/// `GET /v1/ws`.
pub async fn upgrade(State(state): State<Arc<ServeState>>, request: Request) -> Response {
    let header_authenticated = request.extensions().get::<HeaderAuthenticated>().is_some();
    let tracker = state.connections.clone();
    crate::serve::upgrade::accept(request, move |socket| {
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
