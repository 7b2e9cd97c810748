//! The hand-off page's WebSocket: `GET /handoff/<id>/live?t=<token>`.
//! Out: `{"frame", "width", "height", "view"}` for each screencast frame of
//! the handed tab (`view`: its URL, the reason, what the URL rules refused;
//! its URLs redacted through the session's secrets), `{"view"}` alone at
//! the start and whenever the URL rules refuse something in the tab (a
//! refused navigation repaints nothing, so no frame would say it),
//! then `{"ended": true}` when the hand-off ends. In: the person's events,
//! JSON as `engine::handoff::person::Input` reads them; an event the engine
//! refuses is answered `{"error": "…"}`, one outside the viewport
//! `{"dropped": true}`.
//!
//! Owns one connection; the screencast is the tab's, shared by all its
//! viewers (`engine::tab::screencast`).

use std::sync::Arc;

use axum::extract::{Path, Request, State};
use axum::response::Response;
use engine::handoff::person::Input;
use engine::handoff::Handoffs;
use engine::screencast::Frame;
use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

use crate::serve::upgrade::accept;

/// `GET /handoff/<id>/live?t=<token>`: 410 unless that hand-off is open
/// and the token is its own.
pub async fn upgrade(
    State(handoffs): State<Arc<Handoffs>>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let token = super::super::query_value(&request, "t").unwrap_or_default();
    let Some(handoff) = handoffs.find(&id, token) else {
        return super::ended();
    };
    accept(request, move |socket| async move {
        let (mut sink, mut incoming) = socket.split();
        let mut viewer = handoff.watch();
        // A refused navigation commits nothing and repaints nothing: no
        // frame would carry it, so the view goes out on its own then
        // (heard from before the first view is read: none falls between).
        let mut refusals = handoff.refusals();
        let frame_message = |frame: Frame| {
            json!({
                "frame": &*frame.data,
                "width": frame.width,
                "height": frame.height,
                "view": handoff.view(),
            })
            .to_string()
        };
        let view = json!({"view": handoff.view()}).to_string();
        let _ = sink.send(Message::text(view)).await;
        if let Some(frame) = viewer.latest() {
            let _ = sink.send(Message::text(frame_message(frame))).await;
        }
        let ended = handoff.ended().clone();
        // Until the screencast ends (the tab closed, or it could not start):
        // the person's buttons still work then.
        let mut casting = true;
        loop {
            tokio::select! {
                frame = viewer.next(), if casting => match frame {
                    Ok(frame) => if sink.send(Message::text(frame_message(frame))).await.is_err() { break },
                    Err(why) => {
                        casting = false;
                        let why = why.unwrap_or_else(|| "the tab is gone".into());
                        let _ = sink.send(Message::text(json!({"error": format!("no live view: {why}")}).to_string())).await;
                    }
                },
                message = incoming.next() => match message {
                    Some(Ok(Message::Text(text))) => {
                        let answer = match serde_json::from_str::<Input>(text.as_str()) {
                            Err(e) => Some(json!({"error": format!("not an event: {e}")})),
                            Ok(input) => match handoff.act(input).await {
                                Ok(true) => None,
                                Ok(false) => Some(json!({"dropped": true})),
                                Err(e) => Some(json!({"error": e.message})),
                            },
                        };
                        if let Some(answer) = answer {
                            if sink.send(Message::text(answer.to_string())).await.is_err() {
                                break;
                            }
                        }
                    }
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => {}
                },
                Ok(()) = refusals.changed() => {
                    let view = json!({"view": handoff.view()}).to_string();
                    if sink.send(Message::text(view)).await.is_err() {
                        break;
                    }
                }
                _ = ended.cancelled() => {
                    let _ = sink.send(Message::text(json!({"ended": true}).to_string())).await;
                    break;
                }
            }
        }
        drop(viewer);
        let _ = sink.close().await;
    })
}
