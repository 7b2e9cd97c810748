//! The dashboard's live view (`GET /v1/dashboard/screencast?session=…&tab=…`)
//! upgrades to a WebSocket that carries the tab's `Page.screencastFrame`
//! JPEGs (base64, one text frame each). The screencast runs only while
//! someone watches: Chrome keeps one screencast per tab session, so the
//! viewers of one tab share it, and the last one to leave stops it.
//!
//! Owns the running screencasts (tab → the shared cast), locked for
//! microseconds; each cast ends when its last viewer drops it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use axum::extract::Request;
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use tokio::sync::{broadcast, mpsc};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::serve::sessions::Lease;
use crate::serve::upgrade::accept;

/// Frames waiting for a slow viewer; older ones are dropped.
const QUEUE: usize = 2;

/// The screencasts running now, by `session|tab`.
#[derive(Default)]
pub struct Screencasts {
    /// Weak: the viewers keep a cast alive, not this table.
    running: Mutex<HashMap<String, Weak<Cast>>>,
}

/// One tab's screencast, shared by its viewers; dropping the last one
/// stops it in the browser.
struct Cast {
    frames: broadcast::Sender<String>,
    /// The latest frame: a viewer who joins sees it at once (Chrome sends
    /// a frame only when the page repaints).
    last: Arc<Mutex<Option<String>>>,
    /// Ends the screencast task (also when the session is stopped).
    stop: CancellationToken,
}

impl Drop for Cast {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Screencasts {
    /// Joins the screencast of `tab` (default the active one) of `lease`,
    /// starting it when nobody watches it yet.
    fn join(
        &self,
        lease: &Arc<Lease>,
        tab: Option<String>,
    ) -> (Arc<Cast>, broadcast::Receiver<String>, Option<String>) {
        let key = format!("{}|{}", lease.id(), tab.as_deref().unwrap_or(""));
        let mut running = self.running.lock().unwrap();
        running.retain(|_, cast| cast.strong_count() > 0);
        if let Some(cast) = running.get(&key).and_then(Weak::upgrade) {
            let frames = cast.frames.subscribe();
            let last = cast.last.lock().unwrap().clone();
            return (cast, frames, last);
        }
        let (sender, frames) = broadcast::channel(QUEUE);
        let cast = Arc::new(Cast {
            frames: sender.clone(),
            last: Arc::default(),
            stop: lease.stop_token().child_token(),
        });
        running.insert(key, Arc::downgrade(&cast));
        let (lease, stop, last) = (lease.clone(), cast.stop.clone(), cast.last.clone());
        tokio::spawn(async move {
            let (into, mut out) = mpsc::channel::<String>(QUEUE);
            let cast = lease.session().screencast(tab.as_deref(), into, stop);
            let forward = async {
                while let Some(frame) = out.recv().await {
                    *last.lock().unwrap() = Some(frame.clone());
                    let _ = sender.send(frame);
                }
            };
            let (outcome, ()) = tokio::join!(cast, forward);
            if let Err(why) = outcome {
                let _ = sender.send(format!("error: {why}"));
            }
        });
        (cast, frames, None)
    }
}

impl Screencasts {
    /// Upgrades `request` to a viewer of `tab` (default the active one) of
    /// `lease`: frames until the viewer leaves, the session is stopped or
    /// `stopping` fires (shutdown); its task is tracked by `tracker`.
    pub fn watch(
        self: Arc<Self>,
        request: Request,
        lease: Arc<Lease>,
        tab: Option<String>,
        tracker: &TaskTracker,
        stopping: CancellationToken,
    ) -> Response {
        let (tracker, screencasts) = (tracker.clone(), self);
        accept(request, move |socket| {
            tracker.track_future(async move {
                let (mut sink, mut incoming) = socket.split();
                let (cast, mut frames, last) = screencasts.join(&lease, tab);
                drop(lease);
                if let Some(frame) = last {
                    let _ = sink.send(Message::text(frame)).await;
                }
                loop {
                    tokio::select! {
                        frame = frames.recv() => match frame {
                            Ok(frame) => if sink.send(Message::text(frame)).await.is_err() { break },
                            Err(broadcast::error::RecvError::Lagged(_)) => {}
                            Err(broadcast::error::RecvError::Closed) => break,
                        },
                        message = incoming.next() => match message {
                            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                            Some(Ok(_)) => {}
                        },
                        _ = stopping.cancelled() => break,
                        _ = cast.stop.cancelled() => break,
                    }
                }
                drop(cast);
                let _ = sink.close().await;
            })
        })
    }
}
