//! The dashboard's live view (`GET /v1/dashboard/screencast?session=…&tab=…`)
//! upgrades to a WebSocket that carries the tab's `Page.screencastFrame`
//! JPEGs (base64, one text frame each; `error: …` when there is none). The
//! screencast is the tab's, shared with every other viewer of it (other
//! dashboards, a hand-off page): it runs while someone watches, and a
//! viewer leaving stops nobody else's frames (`engine::screencast`).
//!
//! The page cannot set a header on the upgrade, so its first message is
//! `{"token": "…"}` (serve's token); nothing is sent, and no session looked
//! up, before it (or an upgrade with the right bearer header).
//!
//! Owns one viewer's connection.

use std::sync::Arc;

use axum::extract::Request;
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;

use crate::serve::state::ServeState;
use crate::serve::upgrade::accept;

/// How long the socket waits for its first message (the token).
const FIRST_MESSAGE: std::time::Duration = std::time::Duration::from_secs(10);

/// Upgrades `request` to a viewer of `tab` (default the active one) of
/// session `session` once the token is shown: frames until the viewer
/// leaves, the session is stopped or the server stops; its task is
/// tracked with the server's connections.
pub fn watch(
    request: Request,
    state: Arc<ServeState>,
    session: String,
    tab: Option<String>,
    header_authenticated: bool,
) -> Response {
    let tracker = state.connections.clone();
    let stopping = state.stopping.clone();
    accept(request, move |socket| {
        tracker.track_future(async move {
            let (mut sink, mut incoming) = socket.split();
            let shown = header_authenticated || {
                let first = tokio::time::timeout(FIRST_MESSAGE, incoming.next()).await;
                match first {
                    Ok(Some(Ok(Message::Text(text)))) => serde_json::from_str::<serde_json::Value>(text.as_str())
                        .ok()
                        .and_then(|v| v["token"].as_str().map(|t| state.guard.token_matches(t)))
                        .unwrap_or(false),
                    _ => false,
                }
            };
            if !shown {
                let why = "error: bad_token: send {\"token\": \"<token>\"} as the first message";
                let _ = sink.send(Message::text(why)).await;
                let _ = sink.close().await;
                return;
            }
            let Some(lease) = state.sessions.get(&session) else {
                let _ = sink.send(Message::text("error: session: the id of an open session")).await;
                let _ = sink.close().await;
                return;
            };
            drop(state);
            let session_stopped = lease.stop_token().clone();
            let watched = lease.session().watch(tab.as_deref());
            drop(lease);
            let mut viewer = match watched {
                Ok(viewer) => viewer,
                Err(why) => {
                    let _ = sink.send(Message::text(format!("error: {why}"))).await;
                    let _ = sink.close().await;
                    return;
                }
            };
            if let Some(frame) = viewer.latest() {
                let _ = sink.send(Message::text(frame.data.to_string())).await;
            }
            loop {
                tokio::select! {
                    frame = viewer.next() => match frame {
                        Ok(frame) => if sink.send(Message::text(frame.data.to_string())).await.is_err() { break },
                        Err(why) => {
                            if let Some(why) = why {
                                let _ = sink.send(Message::text(format!("error: {why}"))).await;
                            }
                            break;
                        }
                    },
                    message = incoming.next() => match message {
                        Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                        Some(Ok(_)) => {}
                    },
                    _ = stopping.cancelled() => break,
                    _ = session_stopped.cancelled() => break,
                }
            }
            drop(viewer);
            let _ = sink.close().await;
        })
    })
}
