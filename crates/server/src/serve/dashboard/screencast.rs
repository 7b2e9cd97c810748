//! The dashboard's live view (`GET /v1/dashboard/screencast?session=…&tab=…`)
//! upgrades to a WebSocket that carries the tab's `Page.screencastFrame`
//! JPEGs (base64, one text frame each; `error: …` when there is none). The
//! screencast is the tab's, shared with every other viewer of it (other
//! dashboards, a hand-off page): it runs while someone watches, and a
//! viewer leaving stops nobody else's frames (`engine::screencast`).
//!
//! Owns one viewer's connection.

use std::sync::Arc;

use axum::extract::Request;
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::serve::sessions::Lease;
use crate::serve::upgrade::accept;

/// Upgrades `request` to a viewer of `tab` (default the active one) of
/// `lease`: frames until the viewer leaves, the session is stopped or
/// `stopping` fires (shutdown); its task is tracked by `tracker`.
pub fn watch(
    request: Request,
    lease: Arc<Lease>,
    tab: Option<String>,
    tracker: &TaskTracker,
    stopping: CancellationToken,
) -> Response {
    let tracker = tracker.clone();
    accept(request, move |socket| {
        tracker.track_future(async move {
            let (mut sink, mut incoming) = socket.split();
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
