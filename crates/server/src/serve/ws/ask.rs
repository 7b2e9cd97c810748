//! Asking the user over the WebSocket API: an `ask` event
//! `{id, url, rule}` goes to a connection whose `hello` said `ask: true`,
//! and its `decide` message `{id, allow: once | always | deny}` answers it.
//!
//! Owns the questions waiting for a `decide` (id → the waiting ask), locked
//! for microseconds; a question whose ask ended (the call's budget ran out,
//! it was cancelled) is removed, and a late `decide` for it is an error.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use engine::policy::{Answer, Asker, Verdict};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

use super::messages::{Allow, ServerMessage};

pub struct WsAsker {
    /// To the connection's writer.
    outgoing: mpsc::Sender<Message>,
    /// The session's id, as events name it.
    session: String,
    next: AtomicU64,
    waiting: Arc<Mutex<HashMap<String, oneshot::Sender<Allow>>>>,
}

/// Removes a question from the waiting table when its ask ends.
struct Waiting<'a> {
    id: String,
    table: &'a Mutex<HashMap<String, oneshot::Sender<Allow>>>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.table.lock().unwrap().remove(&self.id);
    }
}

impl WsAsker {
    pub fn new(outgoing: mpsc::Sender<Message>, session: &str) -> WsAsker {
        WsAsker {
            outgoing,
            session: session.to_owned(),
            next: AtomicU64::new(1),
            waiting: Arc::default(),
        }
    }

    /// Hands a `decide` to the ask waiting for it; false if none is.
    pub fn decide(&self, id: &str, allow: Allow) -> bool {
        let waiting = self.waiting.lock().unwrap().remove(id);
        waiting.is_some_and(|tx| tx.send(allow).is_ok())
    }
}

impl Asker for WsAsker {
    fn ask<'a>(&'a self, verdict: &'a Verdict) -> Pin<Box<dyn Future<Output = Answer> + Send + 'a>> {
        Box::pin(async move {
            let id = format!("ask{}", self.next.fetch_add(1, Ordering::Relaxed));
            let (tx, rx) = oneshot::channel();
            self.waiting.lock().unwrap().insert(id.clone(), tx);
            let _waiting = Waiting {
                id: id.clone(),
                table: &self.waiting,
            };
            let event = ServerMessage::Event {
                event: "ask".into(),
                session: self.session.clone(),
                data: serde_json::json!({ "id": id, "url": verdict.url, "rule": verdict.rule }),
            };
            if self.outgoing.try_send(Message::text(event.to_text())).is_err() {
                return Answer::Failed("the WebSocket client is gone or not reading".into());
            }
            match rx.await {
                Ok(Allow::Once) => Answer::Once,
                Ok(Allow::Always) => Answer::Always,
                Ok(Allow::Deny) => Answer::Deny,
                Err(_) => Answer::Failed("the WebSocket connection ended before the user answered".into()),
            }
        })
    }
}
