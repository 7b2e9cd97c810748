//! The dashboard's live view: `GET /v1/dashboard/screencast?session=…&tab=…`
//! upgrades to a WebSocket that carries the tab's `Page.screencastFrame`
//! JPEGs (base64, one text frame each). The screencast runs only while the
//! socket is open: closing the page stops it in the browser too.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures_util::{SinkExt, StreamExt};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

use super::query_value;
use crate::serve::ws::{upgrade::accept, WsState};

/// Frames waiting for a slow viewer; older ones are dropped.
const QUEUE: usize = 2;

/// `GET /v1/dashboard/screencast`.
pub async fn upgrade(State(state): State<Arc<WsState>>, request: Request) -> Response {
    let Some(lease) = query_value(&request, "session").and_then(|id| state.sessions.get(id)) else {
        return (StatusCode::NOT_FOUND, "session: the id of an open session\n").into_response();
    };
    let tab = query_value(&request, "tab")
        .filter(|t| !t.is_empty())
        .map(str::to_owned);
    let tracker = state.connections.clone();
    let stopping = state.stopping.clone();
    accept(request, move |socket| {
        tracker.track_future(async move {
            let (mut sink, mut incoming) = socket.split();
            let (frames, mut queue) = mpsc::channel::<String>(QUEUE);
            let stop = lease.stop_token().child_token();
            let cast = {
                let (lease, stop) = (lease.clone(), stop.clone());
                tokio::spawn(async move { lease.session().screencast(tab.as_deref(), frames, stop).await })
            };
            loop {
                tokio::select! {
                    frame = queue.recv() => match frame {
                        Some(frame) => if sink.send(Message::text(frame)).await.is_err() { break },
                        None => break,
                    },
                    message = incoming.next() => match message {
                        Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                        Some(Ok(_)) => {}
                    },
                    _ = stopping.cancelled() => break,
                    _ = stop.cancelled() => break,
                }
            }
            stop.cancel();
            if let Ok(Err(why)) = cast.await {
                let _ = sink.send(Message::text(format!("error: {why}"))).await;
            }
            let _ = sink.close().await;
        })
    })
}
