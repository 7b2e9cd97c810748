//! One pipe to one browser (a WebSocket, through a [`Transport`]): the
//! writer task owns the sink, the reader task owns the stream and routes
//! what arrives.
//!
//! Owns: the table of commands awaiting a response, the list of event
//! subscribers, and the bookkeeping of attached sessions (done before an
//! event is routed, as Puppeteer's `Connection` does, so a command on a
//! detached session fails at once instead of hanging). The session table
//! also records which session each one was attached on (its parent), so a
//! subscriber can follow one session and everything attached beneath it
//! (a tab's iframes and workers) and hear nothing of the others.
//!
//! The reader never awaits a CDP reply: it only completes oneshots and pushes
//! into unbounded channels, so a handler that waits on a response cannot
//! deadlock it.

use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::transport::{self, Outgoing, Transport, WebSocket};
use crate::CdpError;

/// A CDP event as it arrived. `session_id` is `""` for the browser session.
/// Its params stay the JSON text Chrome sent (a few times smaller than the
/// parsed tree of a `Network` event's headers and initiator stack) until a
/// reader decodes the kind it wants ([`Event::decode`]); an event no one
/// decodes is never parsed.
#[derive(Debug)]
pub struct Event {
    pub session_id: String,
    pub method: String,
    /// `None`: sent without params.
    params: Option<Box<RawValue>>,
}

/// The events held in this process now (routed from a connection and not
/// yet dropped by every subscriber they were queued for: what readers have
/// not read yet, and what they are reading), their params' bytes, and the
/// peak of each since the process started. A diagnostic (the soak bench
/// reads it from serve's heap lines): two atomic additions per event.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HeldEvents {
    pub now: u64,
    pub now_bytes: u64,
    pub peak: u64,
    pub peak_bytes: u64,
}

/// [`HeldEvents`]' counters: process-wide because an event outlives the
/// connection that routed it in the queues of its subscribers.
static HELD: AtomicU64 = AtomicU64::new(0);
static HELD_BYTES: AtomicU64 = AtomicU64::new(0);
static HELD_PEAK: AtomicU64 = AtomicU64::new(0);
static HELD_PEAK_BYTES: AtomicU64 = AtomicU64::new(0);

/// How many events are held now and at the peak ([`HeldEvents`]).
pub fn held_events() -> HeldEvents {
    HeldEvents {
        now: HELD.load(Ordering::Relaxed),
        now_bytes: HELD_BYTES.load(Ordering::Relaxed),
        peak: HELD_PEAK.load(Ordering::Relaxed),
        peak_bytes: HELD_PEAK_BYTES.load(Ordering::Relaxed),
    }
}

impl Event {
    /// Counts the event in [`held_events`] (undone when it drops).
    fn held(self) -> Event {
        let bytes = self.params().len() as u64;
        let now = HELD.fetch_add(1, Ordering::Relaxed) + 1;
        let now_bytes = HELD_BYTES.fetch_add(bytes, Ordering::Relaxed) + bytes;
        HELD_PEAK.fetch_max(now, Ordering::Relaxed);
        HELD_PEAK_BYTES.fetch_max(now_bytes, Ordering::Relaxed);
        self
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        HELD.fetch_sub(1, Ordering::Relaxed);
        HELD_BYTES.fetch_sub(self.params().len() as u64, Ordering::Relaxed);
    }
}

/// A typed event: its method name and the shape of its params.
pub trait EventKind: serde::de::DeserializeOwned {
    const METHOD: &'static str;
}

impl Event {
    /// An event with these params (tests, and what a relay hands on).
    pub fn new(session_id: impl Into<String>, method: impl Into<String>, params: &Value) -> Event {
        let params = match params {
            Value::Null => None,
            params => serde_json::value::to_raw_value(params).ok(),
        };
        Event {
            session_id: session_id.into(),
            method: method.into(),
            params,
        }
        .held()
    }

    /// The params as JSON text (`{}` for an event sent without).
    pub fn params(&self) -> &str {
        self.params.as_deref().map_or("{}", RawValue::get)
    }

    /// The event as `E`, when it is one (lenient: missing fields default).
    /// The method is compared first: only the kind asked for is parsed.
    pub fn decode<E: EventKind>(&self) -> Option<E> {
        if self.method != E::METHOD {
            return None;
        }
        serde_json::from_str(self.params()).ok()
    }

    /// Whether this is an `E` (without decoding it).
    pub fn is<E: EventKind>(&self) -> bool {
        self.method == E::METHOD
    }
}

/// A stream of events for one session, one session's tree, or all
/// sessions. It ends when the connection closes.
pub type EventStream = mpsc::UnboundedReceiver<Arc<Event>>;

type Reply = Result<Box<RawValue>, CdpError>;

struct Pending {
    method: String,
    session_id: String,
    reply: oneshot::Sender<Reply>,
}

/// Commands awaiting a response. `closed` is set under the same lock as the
/// map is drained, so a command registered after the socket dropped fails at
/// once rather than waiting for a reply that can never come.
#[derive(Default)]
struct PendingTable {
    closed: bool,
    by_id: HashMap<u64, Pending>,
}

/// Which events a subscriber receives.
enum Scope {
    /// Every session's.
    All,
    /// One session's (`""` is the browser session).
    Session(String),
    /// One session's and those of every session attached beneath it, at
    /// any depth (the parent links of the session table).
    Tree(String),
}

struct Subscriber {
    scope: Scope,
    tx: mpsc::UnboundedSender<Arc<Event>>,
}

/// One attached flattened session, as the session table records it.
struct Attached {
    /// The session its `Target.attachedToTarget` arrived on (`""`: the
    /// browser session): what a tree subscription walks up.
    parent: String,
}

/// How far up the parent links routing looks: deeper than any frame
/// nesting a page makes in practice (each level is a cross-origin frame
/// inside a cross-origin frame), and a bound that a table corrupted into a
/// cycle cannot turn into an endless walk.
const MAX_NESTING: usize = 32;

pub(crate) struct Inner {
    /// Serialized commands for the writer task, which owns the pipe's sink.
    outgoing: mpsc::UnboundedSender<String>,
    /// What carries the pipe; asked when a second pipe is wanted.
    transport: Arc<dyn Transport>,
    /// Next request id; ids are unique per connection, across sessions.
    next_id: AtomicU64,
    /// Commands in flight. Locked for microseconds, never across an await.
    pending: Mutex<PendingTable>,
    /// Who wants events. Closed receivers are pruned as events are routed.
    subscribers: Mutex<Vec<Subscriber>>,
    /// Attached flattened sessions: session id → the session it was
    /// attached on. Updated by the reader before the event
    /// is routed. The one record of the session tree: tree subscriptions
    /// are routed by walking it.
    sessions: Mutex<HashMap<String, Attached>>,
    /// Cancelled when the socket is gone (or the last handle dropped), so
    /// the reader and writer stop and waiters notice.
    closed: CancellationToken,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}

/// A cloneable handle to one browser connection.
#[derive(Clone)]
pub struct Connection {
    inner: Arc<Inner>,
}

/// The parts of an incoming message we route on. Results stay raw so a large
/// answer is parsed once, into the type its caller wants.
#[derive(Deserialize)]
struct Incoming {
    id: Option<u64>,
    method: Option<String>,
    /// An event's params, kept as text (see [`Event`]).
    #[serde(default)]
    params: Option<Box<RawValue>>,
    result: Option<Box<RawValue>>,
    error: Option<ErrorBody>,
    #[serde(rename = "sessionId", default)]
    session_id: String,
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    code: i64,
    #[serde(default)]
    message: String,
    #[serde(default)]
    data: Option<String>,
}

impl Connection {
    /// Connects to a browser's WebSocket endpoint (`ws://…/devtools/browser/…`).
    pub async fn connect(url: &str) -> Result<Connection, CdpError> {
        Self::open(Arc::new(WebSocket::new(url))).await
    }

    /// Opens a pipe through `transport` and starts routing it.
    pub async fn open(transport: Arc<dyn Transport>) -> Result<Connection, CdpError> {
        let (sink, stream) = transport.open().await?;
        let (outgoing, outgoing_rx) = mpsc::unbounded_channel();
        let closed = CancellationToken::new();
        let inner = Arc::new(Inner {
            outgoing,
            transport,
            next_id: AtomicU64::new(1),
            pending: Mutex::new(PendingTable::default()),
            subscribers: Mutex::new(Vec::new()),
            sessions: Mutex::new(HashMap::new()),
            closed: closed.clone(),
        });
        tokio::spawn(write_loop(sink, outgoing_rx, closed.clone()));
        tokio::spawn(read_loop(stream, Arc::downgrade(&inner), closed));
        Ok(Connection { inner })
    }

    /// What carries this connection: ask it before opening another pipe.
    pub fn transport(&self) -> &Arc<dyn Transport> {
        &self.inner.transport
    }

    /// True once the socket is gone; every later command fails with
    /// [`CdpError::Disconnected`].
    pub fn is_closed(&self) -> bool {
        self.inner.closed.is_cancelled()
    }

    /// Resolves when the socket is gone.
    pub async fn closed(&self) {
        self.inner.closed.cancelled().await
    }

    /// Closes the socket; pending commands fail with `Disconnected`.
    pub fn close(&self) {
        fail_all_pending(&self.inner);
        self.inner.closed.cancel();
    }

    /// Whether `session_id` is currently attached on this connection.
    pub fn has_session(&self, session_id: &str) -> bool {
        session_id.is_empty() || self.inner.sessions.lock().unwrap().contains_key(session_id)
    }

    /// How many event subscribers and attached sessions it holds now
    /// (diagnostics: each is bounded by what is live).
    pub fn routes(&self) -> (usize, usize) {
        let subscribers = self.inner.subscribers.lock().unwrap().len();
        (subscribers, self.inner.sessions.lock().unwrap().len())
    }

    /// Subscribes to events of one session (`Some("")` is the browser
    /// session) or of all sessions (`None`). Subscribe before sending the
    /// command whose events you wait for, so none is missed.
    pub fn events(&self, session_id: Option<&str>) -> EventStream {
        self.subscribe(match session_id {
            Some(id) => Scope::Session(id.to_owned()),
            None => Scope::All,
        })
    }

    /// Subscribes to the events of `root` and of every session attached
    /// beneath it, at any depth (a page's cross-origin iframes, its
    /// workers, their nested frames): what arrives on a session whose
    /// chain of parents reaches `root`. A child is in the tree from the
    /// `Target.attachedToTarget` that announced it (which `root`'s tree
    /// hears itself); a session that detaches leaves its own children to
    /// its parent, so they stay in the tree until they detach too.
    pub fn tree_events(&self, root: &str) -> EventStream {
        self.subscribe(Scope::Tree(root.to_owned()))
    }

    fn subscribe(&self, scope: Scope) -> EventStream {
        let (tx, rx) = mpsc::unbounded_channel();
        if !self.is_closed() {
            let mut subscribers = self.inner.subscribers.lock().unwrap();
            // A subscriber of a session that ended hears no more events, so
            // routing never prunes it: prune every closed one here, which
            // bounds the list by the live subscribers (issue 24).
            subscribers.retain(|s| !s.tx.is_closed());
            subscribers.push(Subscriber { scope, tx });
        }
        rx
    }

    /// The session `session_id` was attached on (`Some("")`: the browser
    /// session), while it is attached.
    pub fn parent_of(&self, session_id: &str) -> Option<String> {
        let sessions = self.inner.sessions.lock().unwrap();
        sessions.get(session_id).map(|a| a.parent.clone())
    }

    /// Sends one command without waiting for its answer (the reply, when
    /// it comes, finds no one waiting and is dropped). Commands of one
    /// session reach Chrome in the order they were sent, awaited or not.
    pub(crate) fn post_raw(&self, session_id: &str, method: &str, params: Value) -> Result<(), CdpError> {
        if self.inner.pending.lock().unwrap().closed {
            return Err(CdpError::Disconnected);
        }
        if !session_id.is_empty() && !self.inner.sessions.lock().unwrap().contains_key(session_id) {
            return Err(CdpError::TargetClosed {
                session_id: session_id.to_owned(),
            });
        }
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let mut message = serde_json::json!({ "id": id, "method": method, "params": params });
        if !session_id.is_empty() {
            message["sessionId"] = Value::String(session_id.to_owned());
        }
        self.inner
            .outgoing
            .send(message.to_string())
            .map_err(|_| CdpError::Disconnected)
    }

    /// Sends one command and waits for its raw result until `deadline`
    /// (the caller's: the wire has no default).
    pub(crate) async fn call_raw(
        &self,
        session_id: &str,
        method: &str,
        params: Value,
        deadline: Instant,
    ) -> Result<Box<RawValue>, CdpError> {
        if deadline <= Instant::now() {
            return Err(CdpError::Timeout {
                method: method.to_owned(),
                after: std::time::Duration::ZERO,
            });
        }
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply_tx, reply_rx) = oneshot::channel();
        {
            let mut table = self.inner.pending.lock().unwrap();
            if table.closed {
                return Err(CdpError::Disconnected);
            }
            if !session_id.is_empty() && !self.inner.sessions.lock().unwrap().contains_key(session_id) {
                return Err(CdpError::TargetClosed {
                    session_id: session_id.to_owned(),
                });
            }
            table.by_id.insert(
                id,
                Pending {
                    method: method.to_owned(),
                    session_id: session_id.to_owned(),
                    reply: reply_tx,
                },
            );
        }
        // Removes the table entry if this future is dropped (deadline hit or
        // the caller's budget cancelled it), so nothing leaks.
        let _guard = PendingGuard {
            inner: &self.inner,
            id,
        };
        let mut message = serde_json::json!({ "id": id, "method": method, "params": params });
        if !session_id.is_empty() {
            message["sessionId"] = Value::String(session_id.to_owned());
        }
        if self.inner.outgoing.send(message.to_string()).is_err() {
            return Err(CdpError::Disconnected);
        }
        let sent = Instant::now();
        match tokio::time::timeout_at(deadline, reply_rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => Err(CdpError::Disconnected),
            Err(_) => Err(CdpError::Timeout {
                method: method.to_owned(),
                after: sent.elapsed(),
            }),
        }
    }
}

struct PendingGuard<'a> {
    inner: &'a Inner,
    id: u64,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.inner.pending.lock().unwrap().by_id.remove(&self.id);
    }
}

fn fail_all_pending(inner: &Inner) {
    let drained: Vec<Pending> = {
        let mut table = inner.pending.lock().unwrap();
        table.closed = true;
        table.by_id.drain().map(|(_, p)| p).collect()
    };
    for pending in drained {
        let _ = pending.reply.send(Err(CdpError::Disconnected));
    }
    // Dropping the senders ends every event stream.
    inner.subscribers.lock().unwrap().clear();
}

async fn write_loop(
    mut sink: Outgoing,
    mut outgoing: mpsc::UnboundedReceiver<String>,
    closed: CancellationToken,
) {
    loop {
        let message = tokio::select! {
            m = outgoing.recv() => m,
            _ = closed.cancelled() => None,
        };
        let Some(message) = message else { break };
        if sink.send(message).await.is_err() {
            break;
        }
    }
    let _ = sink.close().await;
    closed.cancel();
}

/// Messages at least this long have their parsing timed (`cdpilot::timing`).
const LARGE_MESSAGE: usize = 64 * 1024;

async fn read_loop(mut stream: transport::Incoming, inner: Weak<Inner>, closed: CancellationToken) {
    loop {
        let frame = tokio::select! {
            f = stream.next() => f,
            _ = closed.cancelled() => None,
        };
        let Some(Ok(text)) = frame else { break };
        let Some(inner) = inner.upgrade() else { break };
        let began = std::time::Instant::now();
        match serde_json::from_str::<Incoming>(&text) {
            Ok(incoming) => {
                if text.len() >= LARGE_MESSAGE {
                    let ms = began.elapsed().as_secs_f64() * 1000.0;
                    tracing::info!(target: "cdpilot::timing", step = "cdp.parse_large", ms, bytes = text.len());
                }
                route(&inner, incoming)
            }
            Err(e) => tracing::warn!("unparseable CDP message ({e}): {:.200}", text.as_str()),
        }
    }
    if let Some(inner) = inner.upgrade() {
        fail_all_pending(&inner);
    }
    closed.cancel();
    tracing::debug!("CDP connection closed");
}

fn route(inner: &Inner, incoming: Incoming) {
    if let Some(id) = incoming.id {
        let pending = inner.pending.lock().unwrap().by_id.remove(&id);
        let Some(pending) = pending else { return };
        let reply = match (incoming.result, incoming.error) {
            (_, Some(error)) => Err(CdpError::Protocol {
                method: pending.method,
                code: error.code,
                message: match error.data {
                    Some(data) if !data.is_empty() => format!("{} ({data})", error.message),
                    _ => error.message,
                },
            }),
            (Some(result), None) => Ok(result),
            (None, None) => Ok(RawValue::from_string("{}".into()).expect("valid JSON")),
        };
        let _ = pending.reply.send(reply);
        return;
    }
    let Some(method) = incoming.method else {
        return;
    };
    if method == transport::DROPPED {
        answer_dropped(inner, incoming.params.as_deref());
    }
    track_sessions(inner, &incoming.session_id, &method, incoming.params.as_deref());
    let event = Arc::new(
        Event {
            session_id: incoming.session_id,
            method,
            params: incoming.params,
        }
        .held(),
    );
    // The event's session and its ancestors, read once for all tree
    // subscribers (and only when there is one).
    let mut lineage: Option<Vec<String>> = None;
    let mut subscribers = inner.subscribers.lock().unwrap();
    subscribers.retain(|s| {
        let wanted = match &s.scope {
            Scope::All => true,
            Scope::Session(id) => *id == event.session_id,
            Scope::Tree(root) if *root == event.session_id => true,
            Scope::Tree(root) => lineage
                .get_or_insert_with(|| ancestors(inner, &event.session_id))
                .contains(root),
        };
        !wanted || s.tx.send(event.clone()).is_ok()
    });
}

/// A reply over the limit was dropped (`params` is the transport's note):
/// its command fails at once, saying so, instead of waiting out its deadline.
fn answer_dropped(inner: &Inner, params: Option<&RawValue>) {
    #[derive(Deserialize)]
    struct Note {
        bytes: u64,
        id: Option<u64>,
    }
    let Some(note) = params.and_then(|p| serde_json::from_str::<Note>(p.get()).ok()) else {
        return;
    };
    let Some(id) = note.id else { return };
    let pending = inner.pending.lock().unwrap().by_id.remove(&id);
    if let Some(pending) = pending {
        let _ = pending.reply.send(Err(CdpError::TooLarge {
            method: pending.method,
            mib: (note.bytes + (1 << 19)) >> 20,
            limit_mib: transport::MAX_MESSAGE >> 20,
        }));
    }
}

/// The sessions `session_id` was attached beneath, nearest first, up to
/// the browser session (`""`) or the first one no longer attached.
fn ancestors(inner: &Inner, session_id: &str) -> Vec<String> {
    let sessions = inner.sessions.lock().unwrap();
    let mut chain = Vec::new();
    let mut at = session_id;
    while let Some(attached) = sessions.get(at) {
        if chain.len() == MAX_NESTING {
            break;
        }
        chain.push(attached.parent.clone());
        if attached.parent.is_empty() {
            break;
        }
        at = &attached.parent;
    }
    chain
}

/// Attach/detach bookkeeping, done before routing so that by the time anyone
/// sees `Target.attachedToTarget` the session is usable (and in its parent's
/// tree), and commands still waiting on a detached session fail at once.
/// `on` is the session the event arrived on: an attached child's parent.
/// Only these two events' params are parsed here, and only their
/// `sessionId`.
fn track_sessions(inner: &Inner, on: &str, method: &str, params: Option<&RawValue>) {
    /// What attach and detach events name: the child's session.
    #[derive(Deserialize)]
    struct Named {
        #[serde(rename = "sessionId")]
        session_id: String,
    }
    let named = || {
        let params = params?;
        serde_json::from_str::<Named>(params.get())
            .ok()
            .map(|n| n.session_id)
    };
    match method {
        "Target.attachedToTarget" => {
            if let Some(id) = named() {
                let attached = Attached {
                    parent: on.to_owned(),
                };
                inner.sessions.lock().unwrap().insert(id, attached);
            }
        }
        "Target.detachedFromTarget" => {
            let Some(id) = named() else {
                return;
            };
            let id = id.as_str();
            {
                let mut sessions = inner.sessions.lock().unwrap();
                if let Some(gone) = sessions.remove(id) {
                    // Its children (if Chrome detaches them after it) stay
                    // in the tree it was in.
                    for attached in sessions.values_mut() {
                        if attached.parent == id {
                            attached.parent = gone.parent.clone();
                        }
                    }
                }
            }
            let orphaned: Vec<Pending> = {
                let mut table = inner.pending.lock().unwrap();
                let ids: Vec<u64> = table
                    .by_id
                    .iter()
                    .filter(|(_, p)| p.session_id == id)
                    .map(|(k, _)| *k)
                    .collect();
                ids.iter().filter_map(|k| table.by_id.remove(k)).collect()
            };
            for pending in orphaned {
                let _ = pending.reply.send(Err(CdpError::TargetClosed {
                    session_id: id.to_owned(),
                }));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
pub(crate) mod fake_peer {
    //! A fake CDP peer for faults a real browser cannot be made to show on
    //! cue: a socket dropped while a command is in flight.
    use super::*;
    use tokio::net::TcpListener;

    /// Serves one WebSocket client; answers nothing, drops the socket when
    /// it has received `drop_after` messages.
    pub async fn dropping_peer(drop_after: usize) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
            let mut seen = 0;
            while let Some(Ok(_)) = ws.next().await {
                seen += 1;
                if seen >= drop_after {
                    break; // dropping `ws` closes the TCP socket without a close frame
                }
            }
        });
        format!("ws://{addr}/devtools/browser/fake")
    }

    /// Serves one WebSocket client: once it has sent its first message,
    /// sends `script` (raw CDP messages, in order) and then stays open.
    pub async fn scripted_peer(script: Vec<String>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
            if let Some(Ok(_)) = ws.next().await {
                for message in script {
                    ws.send(tokio_tungstenite::tungstenite::Message::text(message))
                        .await
                        .unwrap();
                }
            }
            while let Some(Ok(_)) = ws.next().await {}
        });
        format!("ws://{addr}/devtools/browser/fake")
    }
}

/// Routing, subscriptions and faults (tests).
#[cfg(test)]
#[path = "connection_tests.rs"]
mod tests;
