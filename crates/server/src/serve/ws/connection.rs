//! One WebSocket connection of the action API: the `hello` handshake, then
//! requests run concurrently, each under its own budget and cancellation.
//!
//! Owns the connection's in-flight table (request id → its cancellation),
//! kept by the connection's own task, so no lock guards it. Each request
//! runs as a task that reports back through `done`; a response is sent only
//! if its entry is still the one that started it, which is what keeps a
//! late result from following a cancel. Writes go through a bounded queue to
//! one writer task; a client that does not read fills it and is
//! disconnected rather than stalling anyone else.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use engine::events::{EndReason, SessionEvent};
use engine::policy::Asker;
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::sync::{broadcast, mpsc};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_util::sync::CancellationToken;

use super::ask::WsAsker;
use super::messages::{self, ClientMessage, ErrorBody, RejectReason, ServerMessage, PROTOCOL_VERSION};
use crate::serve::sessions::Lease;
use crate::serve::state::ServeState;
use crate::serve::turns::Turn;
use crate::serve::upgrade::Socket;

/// A kept session's name: 1 to 64 of `[A-Za-z0-9._-]`.
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// How long a new connection may take to send `hello`.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// Messages queued for a client that has not read them yet.
const SEND_QUEUE: usize = 256;
/// How long the last messages (a close frame) may take to go out.
const WRITE_GRACE: Duration = Duration::from_secs(5);

/// A request in flight: its sequence number (ids may be reused once
/// finished) and its cancellation.
struct InFlight {
    seq: u64,
    cancel: CancellationToken,
    /// The client cancelled it: whatever it returns, the answer is `canceled`.
    canceled: bool,
}

/// A finished request, reported by its task.
struct Done {
    id: String,
    seq: u64,
    outcome: Result<Value, ErrorBody>,
}

/// Serves one connection until the client closes it, breaks the protocol
/// past repair, or the server stops.
pub async fn serve(socket: Socket, state: Arc<ServeState>, header_authenticated: bool) {
    let (mut sink, mut incoming) = socket.split();
    let (outgoing, mut queue) = mpsc::channel::<Message>(SEND_QUEUE);
    let writer = tokio::spawn(async move {
        while let Some(message) = queue.recv().await {
            let closing = matches!(message, Message::Close(_));
            if sink.send(message).await.is_err() || closing {
                break;
            }
        }
        let _ = sink.close().await;
    });
    let connection = Connection {
        state,
        outgoing,
        stopping: CancellationToken::new(),
    };
    connection.run(&mut incoming, header_authenticated).await;
    drop(connection);
    // A client that stopped reading can hold the writer in a send forever.
    let abort = writer.abort_handle();
    if tokio::time::timeout(WRITE_GRACE, writer).await.is_err() {
        abort.abort();
    }
}

struct Connection {
    state: Arc<ServeState>,
    /// To the writer task; bounded.
    outgoing: mpsc::Sender<Message>,
    /// Cancelled when this connection ends: its requests stop.
    stopping: CancellationToken,
}

type Incoming = futures_util::stream::SplitStream<Socket>;

impl Drop for Connection {
    fn drop(&mut self) {
        self.stopping.cancel();
    }
}

impl Connection {
    async fn run(&self, incoming: &mut Incoming, header_authenticated: bool) {
        let server_stopping = self.state.stopping.clone();
        let hello = tokio::select! {
            hello = tokio::time::timeout(HELLO_TIMEOUT, self.handshake(incoming, header_authenticated)) => hello,
            _ = server_stopping.cancelled() => return self.close(CloseCode::Away, "server stopping"),
        };
        let (lease, asks) = match hello {
            Ok(Some(hello)) => hello,
            Ok(None) => return,
            Err(_) => return self.close(CloseCode::Policy, "no hello within 10 s"),
        };
        // A client that said it answers `ask` events asks for its session.
        let asker = asks.then(|| Arc::new(WsAsker::new(self.outgoing.clone(), lease.id())));
        let consent = lease.session().consent();
        if let Some(asker) = &asker {
            consent.install(Some(asker.clone() as Arc<dyn Asker>));
        } else if consent.asker().is_none() {
            // Nobody on this connection answers asks: the dashboard may.
            consent.install(Some(self.state.asks.asker_for(lease.id())));
        }
        self.requests(incoming, &lease, asker.as_deref()).await;
        if let Some(asker) = asker {
            // Only if it is still ours (another connection may have joined since).
            let ours = consent
                .asker()
                .is_some_and(|current| std::ptr::addr_eq(Arc::as_ptr(&current), Arc::as_ptr(&asker)));
            if ours {
                consent.install(Some(self.state.asks.asker_for(lease.id())));
            }
        }
    }

    /// Waits for `hello`; answers `ack` with the session, or `reject` and
    /// `None`. Other messages before it get a protocol error.
    /// The flag says the client answers `ask` events.
    async fn handshake(
        &self,
        incoming: &mut Incoming,
        header_authenticated: bool,
    ) -> Option<(Arc<Lease>, bool)> {
        loop {
            let text = self.next_text(incoming).await?;
            let (protocol_version, token, session, asks, keep, client) = match messages::parse(&text) {
                Ok(ClientMessage::Hello {
                    protocol_version,
                    token,
                    session,
                    ask,
                    keep,
                    client,
                }) => (protocol_version, token, session, ask, keep, client),
                Ok(other) => {
                    let id = match other {
                        ClientMessage::Request { id, .. }
                        | ClientMessage::Replay { id, .. }
                        | ClientMessage::Cancel { id }
                        | ClientMessage::Decide { id, .. } => Some(id),
                        ClientMessage::Hello { .. } => None,
                    };
                    self.send(ServerMessage::Error {
                        id,
                        error: ErrorBody::invalid("send hello first: {\"type\": \"hello\", \"protocol_version\": 1, \"token\": \"…\"}"),
                    });
                    continue;
                }
                Err(error) => {
                    self.send(error);
                    continue;
                }
            };
            let token_ok = match token {
                Some(token) => self.state.guard.token_matches(&token),
                None => header_authenticated,
            };
            if !token_ok {
                return self.reject(
                    RejectReason::BadToken,
                    "the token is wrong or missing; put it in hello's token or the Authorization header",
                );
            }
            if protocol_version != PROTOCOL_VERSION {
                return self.reject(
                    RejectReason::UnsupportedVersion,
                    &format!("this server speaks protocol_version {PROTOCOL_VERSION}"),
                );
            }
            let (lease, started) = match (session, keep) {
                (Some(_), Some(_)) => {
                    self.send(ServerMessage::Error {
                        id: None,
                        error: ErrorBody::invalid(
                            "hello takes session (join by id) or keep (join or start by name), not both",
                        ),
                    });
                    continue;
                }
                (None, Some(name)) if !valid_name(&name) => {
                    self.send(ServerMessage::Error {
                        id: None,
                        error: ErrorBody::invalid("keep: a name of 1 to 64 letters, digits, '-', '_' or '.'"),
                    });
                    continue;
                }
                (None, Some(name)) => match self.state.sessions.keep(&name) {
                    Ok(kept) => kept,
                    Err(full) => return self.reject(RejectReason::TooManySessions, &full.to_string()),
                },
                (Some(id), None) => match self.state.sessions.get(&id) {
                    Some(lease) => (lease, false),
                    None => {
                        return self.reject(
                            RejectReason::SessionNotFound,
                            &format!(
                                "there is no open session \"{id}\"; leave session out to start a new one"
                            ),
                        )
                    }
                },
                (None, None) => match self.state.sessions.start() {
                    Ok(lease) => (lease, true),
                    Err(full) => return self.reject(RejectReason::TooManySessions, &full.to_string()),
                },
            };
            if started || client.is_some() {
                lease.set_client(client.as_deref().unwrap_or("websocket"));
            }
            let tools = engine::tools::offered(self.state.engine.config())
                .map(|t| t.name.to_owned())
                .collect();
            self.send(ServerMessage::Ack {
                protocol_version: PROTOCOL_VERSION,
                session: lease.id().to_owned(),
                tools,
            });
            if started {
                self.event(&lease, "session_started", serde_json::json!({}));
            }
            return Some((lease, asks));
        }
    }

    /// The request loop: reads messages, starts and cancels requests, and
    /// sends the answers of those that finish.
    async fn requests(&self, incoming: &mut Incoming, lease: &Arc<Lease>, asker: Option<&WsAsker>) {
        let (done_tx, mut done) = mpsc::channel::<Done>(SEND_QUEUE);
        // The session's events (dialogs, navigations, refusals, its end),
        // sent to every connection holding it.
        let mut events = lease.session().events().subscribe();
        let mut in_flight: HashMap<String, InFlight> = HashMap::new();
        let mut next_seq = 0u64;
        let stopped = lease.stop_token().clone();
        let mut told_stopped = false;
        loop {
            if told_stopped && in_flight.is_empty() {
                self.close(CloseCode::Normal, "session stopped");
                break;
            }
            tokio::select! {
                text = self.next_text(incoming) => {
                    let Some(text) = text else { break };
                    match messages::parse(&text) {
                        Ok(ClientMessage::Request { id, tool, arguments, timeout_ms }) => {
                            if in_flight.contains_key(&id) {
                                self.send(ServerMessage::Error {
                                    id: Some(id),
                                    error: ErrorBody::invalid("a request with this id is still running; ids must be unique per connection"),
                                });
                                continue;
                            }
                            // Its turn is taken here, in the order the
                            // requests came; beyond the session's line it
                            // is `busy` at once.
                            let turn = match lease.take_turn(&tool) {
                                Ok(turn) => turn,
                                Err(busy) => {
                                    self.send(ServerMessage::Response { id, result: None, error: Some(ErrorBody::of(&busy)) });
                                    continue;
                                }
                            };
                            next_seq += 1;
                            let cancel = self.stopping.child_token();
                            in_flight.insert(id.clone(), InFlight { seq: next_seq, cancel: cancel.clone(), canceled: false });
                            let mut arguments = arguments.unwrap_or_default();
                            if let Some(ms) = timeout_ms {
                                arguments.entry("timeout_ms").or_insert(ms.into());
                            }
                            let task = Request { id, seq: next_seq, tool, arguments: Value::Object(arguments) };
                            tokio::spawn(task.run(lease.clone(), turn, cancel, done_tx.clone()));
                        }
                        Ok(ClientMessage::Replay { id, trace, until, continue_on_change }) => {
                            if in_flight.contains_key(&id) {
                                self.send(ServerMessage::Error {
                                    id: Some(id),
                                    error: ErrorBody::invalid("a request with this id is still running; ids must be unique per connection"),
                                });
                                continue;
                            }
                            next_seq += 1;
                            let cancel = self.stopping.child_token();
                            in_flight.insert(id.clone(), InFlight { seq: next_seq, cancel: cancel.clone(), canceled: false });
                            let shelf = crate::serve::dashboard::timeline::Shelf::of_engine(&self.state.engine);
                            let options = engine::replay::Options { until, continue_on_change };
                            let (lease, done, seq) = (lease.clone(), done_tx.clone(), next_seq);
                            tokio::spawn(async move {
                                let outcome = super::replay::run(shelf, lease, trace, options, cancel).await;
                                let _ = done.send(Done { id, seq, outcome }).await;
                            });
                        }
                        Ok(ClientMessage::Cancel { id }) => {
                            // Unknown or finished ids are ignored (PROTOCOL.md).
                            if let Some(request) = in_flight.get_mut(&id) {
                                request.canceled = true;
                                request.cancel.cancel();
                            }
                        }
                        Ok(ClientMessage::Decide { id, allow }) => {
                            if !asker.is_some_and(|a| a.decide(&id, allow)) {
                                self.send(ServerMessage::Error {
                                    id: Some(id),
                                    error: ErrorBody::invalid("no ask with this id is waiting (it was answered, its call ended, or this connection did not say ask: true in hello)"),
                                });
                            }
                        }
                        Ok(ClientMessage::Hello { .. }) => self.send(ServerMessage::Error {
                            id: None,
                            error: ErrorBody::invalid("hello was already acknowledged on this connection"),
                        }),
                        Err(error) => self.send(error),
                    }
                }
                Some(finished) = done.recv() => {
                    let Some(request) = in_flight.get(&finished.id).filter(|r| r.seq == finished.seq) else {
                        continue;
                    };
                    let canceled = request.canceled;
                    in_flight.remove(&finished.id);
                    let outcome = if canceled {
                        Err(ErrorBody { code: "canceled".into(), message: "the request was canceled by the client. Send it again if you still need it.".into(), data: None })
                    } else {
                        finished.outcome
                    };
                    let (result, error) = match outcome {
                        Ok(result) => (Some(result), None),
                        Err(error) => (None, Some(error)),
                    };
                    self.send(ServerMessage::Response { id: finished.id, result, error });
                }
                event = events.recv() => match event {
                    Ok(event) => self.event(lease, event.name(), event.data()),
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "a WebSocket connection fell behind its session's events");
                    }
                    // The lease we hold keeps the sender: cannot happen.
                    Err(broadcast::error::RecvError::Closed) => break,
                },
                _ = self.stopping.cancelled() => break,
                // Stopped from the dashboard or `cdpilot stop`: its calls end
                // (`canceled`), then the connection says so and closes.
                _ = stopped.cancelled(), if !told_stopped => {
                    told_stopped = true;
                    self.say_stopped(lease, &mut events);
                }
                _ = self.state.stopping.cancelled() => {
                    self.say_stopped(lease, &mut events);
                    self.close(CloseCode::Away, "server stopping");
                    break;
                }
            }
        }
        // Requests still running stop; their answers go nowhere.
        self.stopping.cancel();
    }

    /// The next text frame; `None` when the connection is over (closed,
    /// broken, or a message over the size limit, which is answered 1009).
    async fn next_text(&self, incoming: &mut Incoming) -> Option<String> {
        loop {
            match incoming.next().await? {
                Ok(Message::Text(text)) => return Some(text.as_str().to_owned()),
                Ok(Message::Binary(_)) => self.send(ServerMessage::Error {
                    id: None,
                    error: ErrorBody::invalid(
                        "binary frames are not part of the protocol; send JSON as text frames",
                    ),
                }),
                Ok(Message::Close(_)) => return None,
                Ok(_) => {} // ping/pong: tungstenite answers pings itself
                Err(WsError::Capacity(e)) => {
                    self.close(
                        CloseCode::Size,
                        &format!("message too big ({e}); the limit is 16 MiB"),
                    );
                    return None;
                }
                Err(e) => {
                    tracing::debug!("WebSocket read failed: {e}");
                    return None;
                }
            }
        }
    }

    fn reject<T>(&self, reason: RejectReason, message: &str) -> Option<T> {
        self.send(ServerMessage::Reject {
            reason,
            message: message.to_owned(),
        });
        self.close(CloseCode::Policy, "rejected");
        None
    }

    /// `session_ended` (`stopped`), said once by the session (every
    /// connection holding it hears it, and a session that had already ended
    /// says nothing twice); sent before this connection closes.
    fn say_stopped(&self, lease: &Lease, events: &mut broadcast::Receiver<SessionEvent>) {
        lease.session().say_ended(EndReason::Stopped);
        while let Ok(event) = events.try_recv() {
            self.event(lease, event.name(), event.data());
        }
    }

    fn event(&self, lease: &Lease, event: &str, data: Value) {
        self.send(ServerMessage::Event {
            event: event.to_owned(),
            session: lease.id().to_owned(),
            data,
        });
    }

    /// Queues a message; a client so far behind that the queue is full is
    /// disconnected.
    fn send(&self, message: ServerMessage) {
        self.queue(Message::text(message.to_text()));
    }

    fn close(&self, code: CloseCode, reason: &str) {
        self.queue(Message::Close(Some(CloseFrame {
            code,
            reason: reason.to_owned().into(),
        })));
    }

    fn queue(&self, message: Message) {
        if let Err(mpsc::error::TrySendError::Full(_)) = self.outgoing.try_send(message) {
            tracing::warn!("a WebSocket client is not reading its messages; disconnecting it");
            self.stopping.cancel();
        }
    }
}

/// One request, run as its own task.
struct Request {
    id: String,
    seq: u64,
    tool: String,
    arguments: Value,
}

impl Request {
    async fn run(self, lease: Arc<Lease>, turn: Turn, cancel: CancellationToken, done: mpsc::Sender<Done>) {
        let outcome = lease.call_in_turn(turn, &self.tool, self.arguments, cancel).await;
        let outcome = match outcome {
            Ok(output) => Ok(crate::outcome::result_object(output)),
            Err(error) if lease.stop_token().is_cancelled() && error.code == engine::ErrorCode::Canceled => Err(ErrorBody {
                code: "canceled".into(),
                message: "canceled: the session was stopped (the dashboard's Stop, cdpilot stop, or the user's Stop in the cdpilot extension). Start a new session to go on.".into(),
                data: None,
            }),
            Err(error) => Err(ErrorBody::of(&error)),
        };
        let _ = done
            .send(Done {
                id: self.id,
                seq: self.seq,
                outcome,
            })
            .await;
    }
}
