//! `/v1/extension`: the cdpilot extension's relay socket, its pairing and
//! its status (`docs/src/spec/protocol.md`, "Pairing").
//!
//! - `POST /v1/extension/pair` (server token): a one-time code and the
//!   link that carries it, `chrome-extension://<id>/pair.html#server=…&code=…`;
//!   the code is good for [`CODE_TTL`] and for one `hello`.
//! - `GET /v1/extension` (WebSocket): the relay handshake
//!   (`hello {key, nonce}` → `challenge {nonce, proof}` → `proof {proof}` →
//!   `ack {token?}`; the proofs are [`super::extension_proof`]'s): both ends
//!   prove they hold the pairing secret (the code while pairing, then the
//!   token) and neither sends it; one relay at a time, any other socket is
//!   refused with its reason. Then CDP travels inside the envelope
//!   ([`super::extension_wire`]): `request {id, method, params, sessionId?}`
//!   to the extension, `response {id, result | error}` and
//!   `event "cdp" {method, params, sessionId?}` back, and `sessions
//!   {sessions: [{context, client}]}` to the extension when who drives a
//!   context changes (its popup names the client); the extension also says
//!   `event "session_stopped" {context, reason}` (the user's Stop) and
//!   `ping` (answered `pong`). The CDP side is plugged into the engine's
//!   `Relay` (`[browser] source = "extension"`).
//! - `GET /v1/extension/status` (server token): `{paired, connected,
//!   sessions, enabled}` (`enabled`: sessions run in the paired Chrome).
//!
//! Owns the pairing codes, the extension tokens (kept hashed in the user's
//! state directory, `super::extension_store`: a restarted server knows an
//! extension paired before), and the relay slot (whether a relay is
//! connected). The
//! sessions the user's Stop ends are a [`Holders`]'s: serve's table, or the
//! one session of `cdpilot mcp --extension`, whose loopback listener
//! ([`listen_for_stdio`]) offers these routes alone.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use engine::browser_extension::Socket;
use engine::events::EndReason;
use engine::Engine;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

use super::auth::{self, random_hex};
use super::extension_proof::{key_id, key_of, nonce_well_formed, proof, verify, Key, Role, RELAY_VERSION};
use super::extension_store::{self, Tokens};
use super::extension_wire::{self as wire, Event, FromRelay, Named, ToRelay};
use super::routes::{Credential, Routes};
use super::sessions::Sessions;
use super::upgrade;

/// The extension's id: the guard's (`auth`, below this module), since it
/// lets the extension's origin in.
pub use super::auth::EXTENSION_ID;
/// The path of the relay's socket.
pub const PATH: &str = "/v1/extension";
/// How long a pairing code may wait to be used.
pub const CODE_TTL: Duration = Duration::from_secs(300);
/// How often the relay socket checks who drives each context.
const NAMING: Duration = Duration::from_millis(500);
/// How long a relay socket may take from its upgrade to its proof: one that
/// stalls gives up its socket (it never holds the relay slot).
const HANDSHAKE: Duration = Duration::from_secs(10);

/// What holds for sessions in the user's own Chrome through the extension
/// (`cdpilot doctor --extension` prints it; `docs/src/own-chrome.md`, "What
/// holds there, and what does not", says the same).
pub const WHAT_HOLDS: &[&str] = &[
    "the relay obeys only a server that proves it holds the pairing (HMAC-SHA256 challenge and response, a nonce from each side, bound to the server's address): a program on the relay's port while cdpilot is down learns a key id and a nonce, gets no token, and is obeyed in nothing",
    "the token never crosses the socket after pairing, and the pairing code never does; serve takes one relay at a time and closes any other socket with its reason",
    "only the agent's tabs are attached, listed or touched; your other tabs are not",
    "your blocklist holds on every request of the agent's tabs (frames, subresources, fetches, navigations the page starts), for every spelling of a host (capitals, a trailing dot, an internationalised name as typed or in punycode, subdomains), with permission_denied to the agent",
    "cdpilot's URL rules hold at the tab's request stage; Stop, Stop all, the debugger bar's Cancel, the screen lock, idleness and the session TTL end sessions",
    "WebRTC's peer connections are taken away in the agent's pages (a script in the page's own world before its scripts run, a new frame's and a popup's first window included): no STUN datagram leaves them; a script's hold, not the browser's WebRTC policy",
];

/// What does not hold there (same places).
pub const WHAT_DOES_NOT_HOLD: &[&str] = &[
    "no egress gate: connections follow your Chrome's own proxy settings, so cdpilot's address rules (0.0.0.0, [::1], the addresses a name resolves to), ask rules at the connection and the browser's WebRTC IP policy are not applied",
    "the agent's tabs share your cookies and logins (HttpOnly ones included) for the sites they open",
    "a popup an agent's tab opens is under the blocklist from the moment Chrome reports the new tab; its first request may leave before that",
    "the extension's source is what you loaded: Chrome does not check an unpacked extension's folder, and cdpilot checks that the relay holds the pairing key, not which code holds it; keep the folder writable by you alone",
    "whoever can read extension-tokens in your state directory (you, root) can pass for the paired extension",
    "blocklist entries that are IPv6 literals are judged on the agent's commands only, not on every request",
    "a shared worker an agent's page starts belongs to no tab: its requests are under neither your blocklist nor cdpilot's URL rules (the door matrix's extension column)",
    "a dedicated worker's request is judged by cdpilot's path rules only as they are written (Chrome's blocklist): the same path spelled another way (//secret, %73ecret, localhost., [::ffff:127.0.0.1]) is not refused, since no egress gate sees the URL",
];

/// The sessions that may run in the paired Chrome: what the user's Stop
/// ends, and how many there are.
pub trait Holders: Send + Sync {
    /// Sessions open now.
    fn count(&self) -> usize;
    /// Ends the sessions whose browser context is `context`, saying
    /// `reason`.
    fn stop_context(&self, context: &str, reason: EndReason);
    /// Each session's browser context (once opened) and who drives it:
    /// the popup names the client, not the context.
    fn clients(&self) -> Vec<(String, String)>;
}

/// serve's sessions: a stopped one's calls in flight end (`canceled`) and
/// later ones find no session.
impl Holders for Sessions {
    fn count(&self) -> usize {
        Sessions::count(self)
    }

    fn clients(&self) -> Vec<(String, String)> {
        self.list()
            .iter()
            .filter_map(|lease| Some((lease.session().browser_context_id()?, lease.client())))
            .collect()
    }

    fn stop_context(&self, context: &str, reason: EndReason) {
        for lease in self.list() {
            if lease.session().browser_context_id().as_deref() == Some(context) {
                lease.session().say_ended(reason);
                self.stop(lease.id());
            }
        }
    }
}

/// `cdpilot mcp --extension`'s one session (the engine's default one): a
/// Stop closes its context and its tabs, the calls in flight on them fail,
/// and the next call opens a new context (a new window) in the user's
/// Chrome, as after an idle expiry.
pub struct DefaultSession(pub Arc<Engine>);

impl Holders for DefaultSession {
    fn count(&self) -> usize {
        usize::from(self.0.session().browser_context_id().is_some())
    }

    fn clients(&self) -> Vec<(String, String)> {
        let session = self.0.session();
        let name = match session.client_name() {
            name if name.is_empty() => "mcp".to_owned(),
            name => name,
        };
        session
            .browser_context_id()
            .map(|c| (c, name))
            .into_iter()
            .collect()
    }

    fn stop_context(&self, context: &str, reason: EndReason) {
        let session = self.0.session();
        if session.browser_context_id().as_deref() != Some(context) {
            return;
        }
        session.say_ended(reason);
        let engine = self.0.clone();
        tokio::spawn(async move {
            engine
                .session()
                .close(&engine::Budget::with_timeout(Duration::from_secs(5)))
                .await;
        });
    }
}

pub struct Extension {
    engine: Arc<Engine>,
    sessions: Arc<dyn Holders>,
    /// Where the extension reaches this server (`ws://127.0.0.1:PORT`).
    server: String,
    /// One-time pairing codes, by the key id of their key (the extension
    /// proves it holds the code, never sends it): the key and when it
    /// stops being good.
    codes: Mutex<HashMap<String, (Key, Instant)>>,
    /// Extension tokens handed out by a pairing (this server's or an
    /// earlier one's).
    tokens: Tokens,
    /// Whether a relay holds the slot (it passed the handshake and is
    /// open): a second one is refused.
    connected: AtomicBool,
    /// Cancelled at shutdown: relay sockets close.
    stopping: CancellationToken,
}

impl Extension {
    pub fn new(
        engine: Arc<Engine>,
        sessions: Arc<dyn Holders>,
        local: SocketAddr,
        stopping: CancellationToken,
    ) -> Arc<Extension> {
        let host = match local.ip() {
            ip if ip.is_unspecified() => "127.0.0.1".to_owned(),
            std::net::IpAddr::V6(ip) => format!("[{ip}]"),
            ip => ip.to_string(),
        };
        Arc::new(Extension {
            engine,
            sessions,
            server: format!("ws://{host}:{}", local.port()),
            codes: Mutex::default(),
            tokens: Tokens::load(extension_store::state_dir().as_deref()),
            connected: AtomicBool::new(false),
            stopping,
        })
    }

    /// A new one-time pairing code and its link.
    pub fn pairing_link(&self) -> (String, String) {
        let code = random_hex(16);
        let mut codes = self.codes.lock().unwrap();
        codes.retain(|_, (_, until)| *until > Instant::now());
        let key = key_of(&code);
        codes.insert(key_id(&key), (key, Instant::now() + CODE_TTL));
        let link = format!(
            "chrome-extension://{EXTENSION_ID}/pair.html#server={}&code={code}",
            self.server
        );
        (code, link)
    }

    /// Takes a good code by its key id (it is spent, whatever follows):
    /// its key.
    fn redeem(&self, key_id: &str) -> Option<Key> {
        let (key, until) = self.codes.lock().unwrap().remove(key_id)?;
        (until > Instant::now()).then_some(key)
    }

    fn status(&self) -> Value {
        let connected = self.connected.load(Ordering::Acquire);
        let sessions = match self.engine.extension_relay() {
            Some(_) => self.sessions.count(),
            None => 0,
        };
        json!({
            "paired": !self.tokens.is_empty(),
            "connected": connected,
            "sessions": sessions,
            // Whether sessions run in the paired Chrome here (`--extension`).
            "enabled": self.engine.extension_relay().is_some(),
        })
    }

    /// The user stopped the session whose browser context is `context` in
    /// their Chrome: it says `session_ended` with `reason`, its calls in
    /// flight end, later ones find no session.
    fn stopped(&self, context: &str, reason: &str) {
        let reason = match reason {
            "idle" => EndReason::Idle,
            _ => EndReason::StoppedByUser,
        };
        self.sessions.stop_context(context, reason);
    }
}

/// `cdpilot mcp --extension`'s loopback listener: the extension's routes
/// alone, behind a bearer token of its own (and the Host/Origin guard), on
/// the port kept in the user's state directory (chosen once), until
/// `stopping`. Answers the address and the token (for `cdpilot pair`).
pub async fn listen_for_stdio(
    engine: Arc<Engine>,
    stopping: CancellationToken,
) -> Result<(SocketAddr, String), String> {
    let dir = extension_store::state_dir();
    let saved = extension_store::saved_port(dir.as_deref());
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", saved.unwrap_or(0)))
        .await
        .map_err(|e| match saved {
            Some(port) => format!(
                "the extension's listener cannot take 127.0.0.1:{port} (kept in {}): {e}; is another `cdpilot mcp --extension` running? The extension connects to one server at a time",
                dir.as_deref().map(|d| d.join("extension-port").display().to_string()).unwrap_or_default()
            ),
            None => format!("the extension's listener cannot listen on loopback: {e}"),
        })?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    if saved.is_none() {
        extension_store::save_port(dir.as_deref(), local.port());
    }
    let token = random_hex(32);
    let guard = Arc::new(auth::Guard::new(token.clone(), local, Vec::new()));
    let holders: Arc<dyn Holders> = Arc::new(DefaultSession(engine.clone()));
    let app = routes(Extension::new(engine, holders, local, stopping.clone()), guard).into_router();
    tokio::spawn(async move {
        let served = axum::serve(listener, app)
            .with_graceful_shutdown(async move { stopping.cancelled().await })
            .await;
        if let Err(e) = served {
            tracing::warn!("the extension's listener failed: {e}");
        }
    });
    Ok((local, token))
}

/// The routes, with their state and their credentials (see `routes.rs`):
/// the relay's socket says its own in its `hello`; pairing and the status
/// ask serve's token.
pub fn routes(extension: Arc<Extension>, guard: Arc<auth::Guard>) -> Routes {
    use Credential::{Bearer, FirstMessage};
    Routes::<Arc<Extension>>::new(guard)
        .get(PATH, FirstMessage, upgrade_relay)
        .post("/v1/extension/pair", Bearer, pair)
        .get("/v1/extension/status", Bearer, status)
        .with_state(extension)
}

async fn pair(State(extension): State<Arc<Extension>>) -> Response {
    let (code, link) = extension.pairing_link();
    json_response(
        StatusCode::OK,
        json!({"link": link, "code": code, "expires_in_s": CODE_TTL.as_secs(), "extension_id": EXTENSION_ID}),
    )
}

async fn status(State(extension): State<Arc<Extension>>) -> Response {
    json_response(StatusCode::OK, extension.status())
}

fn json_response(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn upgrade_relay(State(extension): State<Arc<Extension>>, request: Request) -> Response {
    upgrade::accept(request, move |socket| serve(socket, extension))
}

/// Why a relay socket was closed before (or instead of) carrying CDP: the
/// `reject` reason, and what to do.
struct Refusal(&'static str, String);

/// A relay socket that passed the handshake: it holds the relay slot
/// until dropped.
struct Proved<'a> {
    extension: &'a Extension,
    /// The long-lived token a pairing code was exchanged for.
    token: Option<String>,
}

impl Drop for Proved<'_> {
    fn drop(&mut self) {
        self.extension.connected.store(false, Ordering::Release);
    }
}

/// One relay socket, from `hello` to close.
async fn serve(socket: upgrade::Socket, extension: Arc<Extension>) {
    let (mut sink, mut stream) = socket.split();
    let (to_socket, mut outbox) = mpsc::unbounded_channel::<Message>();
    let writer = tokio::spawn(async move {
        while let Some(message) = outbox.recv().await {
            let closing = matches!(message, Message::Close(_));
            if sink.send(message).await.is_err() || closing {
                break;
            }
        }
        let _ = sink.close().await;
    });
    let send = |message: ToRelay| {
        let _ = to_socket.send(Message::Text(message.text().into()));
    };
    // Says why, closes with that reason; the paired relay, if any, is
    // left alone.
    let refuse = |Refusal(reason, message): Refusal| {
        tracing::warn!("extension relay socket closed: {reason}: {message}");
        send(ToRelay::Reject { reason, message });
        let _ = to_socket.send(Message::Close(Some(CloseFrame {
            code: CloseCode::Policy,
            reason: reason.into(),
        })));
    };

    let proved = match tokio::time::timeout(HANDSHAKE, handshake(&extension, &mut stream, &send)).await {
        Ok(Ok(proved)) => proved,
        Ok(Err(refusal)) => {
            refuse(refusal);
            drop(to_socket);
            let _ = writer.await;
            return;
        }
        Err(_) => {
            refuse(Refusal(
                "timeout",
                format!("the handshake took longer than {} s", HANDSHAKE.as_secs()),
            ));
            drop(to_socket);
            let _ = writer.await;
            return;
        }
    };
    send(ToRelay::Ack {
        protocol_version: RELAY_VERSION,
        token: proved.token.clone(),
    });
    tracing::info!("the cdpilot extension connected");

    let relay = extension.engine.extension_relay().cloned();
    let mut cdp = relay.as_ref().map(|r| r.plug());
    // Who drives each context, said to the extension when it changes.
    let mut named = Vec::new();
    let mut naming = tokio::time::interval(NAMING);
    loop {
        tokio::select! {
            _ = naming.tick() => {
                let mut clients: Vec<Named> = extension
                    .sessions
                    .clients()
                    .into_iter()
                    .map(|(context, client)| Named { context, client })
                    .collect();
                clients.sort();
                if clients != named {
                    send(ToRelay::Sessions { sessions: clients.clone() });
                    named = clients;
                }
            }
            text = next_text(&mut stream) => {
                let Some(text) = text else { break };
                match from_extension(&text) {
                    Ok(Carried::Cdp(message)) => {
                        if let Some(cdp) = &cdp {
                            let _ = cdp.incoming.send(message);
                        }
                    }
                    Ok(Carried::Stopped { context, reason }) => extension.stopped(&context, &reason),
                    Ok(Carried::Ping) => send(ToRelay::Pong),
                    Err(refusal) => {
                        refuse(refusal);
                        break;
                    }
                }
            }
            command = next_command(&mut cdp) => match command {
                Some(text) => match wire::request(&text) {
                    Some(request) => send(request),
                    None => tracing::warn!("a CDP message the relay cannot carry: {:.200}", text),
                },
                // The engine let go of this pipe (its connection ended):
                // the next connection it opens gets this socket again.
                None => cdp = relay.as_ref().map(|r| r.plug()),
            },
            _ = extension.stopping.cancelled() => break,
        }
    }
    drop(proved);
    tracing::info!("the cdpilot extension disconnected");
    // Dropping the engine's side ends its connection: commands in flight
    // fail at once (`browser_disconnected`) instead of waiting.
    drop(cdp);
    drop(to_socket);
    let _ = writer.await;
}

/// The relay handshake (`docs/src/spec/protocol.md`, "Relay handshake"):
/// `hello {key, nonce}` → `challenge {nonce, proof}` → `proof {proof}`.
/// The server proves itself first; the extension's proof must answer this
/// socket's challenge. Only one relay holds the slot at a time.
async fn handshake<'a>(
    extension: &'a Extension,
    stream: &mut futures_util::stream::SplitStream<upgrade::Socket>,
    send: &impl Fn(ToRelay),
) -> Result<Proved<'a>, Refusal> {
    let bad_hello = |m: &str| Refusal("bad_hello", m.to_owned());
    let text = next_text(stream)
        .await
        .ok_or_else(|| bad_hello("the relay closed before hello"))?;
    let hello = match serde_json::from_str::<FromRelay>(&text) {
        Ok(FromRelay::Hello(hello)) => hello,
        Ok(_) => return Err(bad_hello("the first message must be hello")),
        Err(e) => return Err(bad_hello(&format!("hello does not parse: {e}"))),
    };
    if hello.protocol_version != RELAY_VERSION {
        return Err(Refusal(
            "unsupported_version",
            format!(
                "this server speaks relay protocol_version {RELAY_VERSION}: reload the cdpilot extension from this cdpilot's extension/ folder"
            ),
        ));
    }
    if hello.client != "extension" {
        return Err(bad_hello(
            "/v1/extension is for the cdpilot extension (client: \"extension\"); programs use /v1/ws",
        ));
    }
    if hello.token.is_some() || hello.code.is_some() {
        return Err(bad_hello(
            "the relay never sends its token or pairing code (it proves it holds them): reload the cdpilot extension from this cdpilot's extension/ folder",
        ));
    }
    let (Some(key_id), Some(nonce)) = (hello.key, hello.nonce) else {
        return Err(bad_hello("hello needs key and nonce"));
    };
    if !nonce_well_formed(&nonce) {
        return Err(bad_hello(
            "hello's nonce must be 32 random bytes in lowercase hex",
        ));
    }
    let unknown = || {
        Refusal(
            "bad_token",
            "this server does not know the extension's pairing (a wrong, used or expired code, or a pairing with another server): run `cdpilot pair` and open the link".into(),
        )
    };
    // Whether another relay holds the slot is told only to a relay that
    // proved its pairing (below): a stranger learns that its key is unknown.
    let (key, pairing) = match extension.tokens.key(&key_id) {
        Some(key) => (key, false),
        None => (extension.redeem(&key_id).ok_or_else(unknown)?, true),
    };
    let server_nonce = random_hex(32);
    send(ToRelay::Challenge {
        proof: proof(&key, Role::Server, &extension.server, &nonce, &server_nonce),
        nonce: server_nonce.clone(),
    });
    let bad_proof = |m: &str| Refusal("bad_proof", m.to_owned());
    let text = next_text(stream)
        .await
        .ok_or_else(|| bad_proof("the relay closed before its proof"))?;
    let claimed = match serde_json::from_str::<FromRelay>(&text) {
        Ok(FromRelay::Proof { proof }) => proof,
        Ok(_) => return Err(bad_proof("the second message must be proof")),
        Err(e) => return Err(bad_proof(&format!("proof does not parse: {e}"))),
    };
    if !verify(
        &key,
        Role::Extension,
        &extension.server,
        &nonce,
        &server_nonce,
        &claimed,
    ) {
        return Err(bad_proof(
            "the relay's proof does not answer this socket's challenge with the pairing's key",
        ));
    }
    if extension
        .connected
        .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return Err(already_connected());
    }
    let token = pairing.then(|| {
        let token = random_hex(32);
        extension.tokens.insert(&token);
        token
    });
    Ok(Proved { extension, token })
}

fn already_connected() -> Refusal {
    Refusal(
        "already_connected",
        "another relay is connected to this server (one Chrome at a time): close it, or wait for it to go"
            .into(),
    )
}

async fn next_command(cdp: &mut Option<Socket>) -> Option<String> {
    match cdp {
        Some(socket) => socket.outgoing.recv().await,
        None => std::future::pending().await,
    }
}

async fn next_text(stream: &mut futures_util::stream::SplitStream<upgrade::Socket>) -> Option<String> {
    loop {
        match stream.next().await? {
            Ok(Message::Text(text)) => return Some(text.as_str().to_owned()),
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

/// What a relay message carries after the handshake.
enum Carried {
    /// A CDP response or event, as the engine's connection reads them.
    Cdp(String),
    Stopped {
        context: String,
        reason: String,
    },
    Ping,
}

/// Reads one relay message after the handshake; one that does not parse,
/// or a handshake message again (a replay), closes the socket.
fn from_extension(text: &str) -> Result<Carried, Refusal> {
    let malformed = |m: String| Refusal("malformed", m);
    match serde_json::from_str::<FromRelay>(text) {
        Ok(FromRelay::Ping) => Ok(Carried::Ping),
        Ok(FromRelay::Response { id, result, error }) => wire::response(&id, result.as_ref(), error.as_ref())
            .map(Carried::Cdp)
            .map_err(malformed),
        Ok(FromRelay::Event(Event::Cdp {
            method,
            params,
            session_id,
        })) => Ok(Carried::Cdp(wire::event(&method, &params, session_id.as_deref()))),
        Ok(FromRelay::Event(Event::SessionStopped { context, reason })) => Ok(Carried::Stopped {
            context,
            reason: reason.unwrap_or_else(|| "stopped_by_user".into()),
        }),
        Ok(FromRelay::Hello(_) | FromRelay::Proof { .. }) => Err(Refusal(
            "replayed",
            "a handshake message after the handshake".into(),
        )),
        Err(e) => Err(malformed(format!(
            "a relay message does not parse ({e}): the relay sends response, event and ping"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_the_handshake_a_bad_or_replayed_message_closes() {
        assert!(matches!(
            from_extension(r#"{"type":"response","id":"7","result":{}}"#),
            Ok(Carried::Cdp(_))
        ));
        assert!(matches!(from_extension(r#"{"type":"ping"}"#), Ok(Carried::Ping)));
        for (text, reason) in [
            (r#"{"type":"response","id":"x","result":{}}"#, "malformed"),
            (r#"{"type":"response"}"#, "malformed"),
            ("nope", "malformed"),
            (r#"{"type":"proof","proof":"00"}"#, "replayed"),
        ] {
            let Err(Refusal(said, _)) = from_extension(text) else {
                panic!("{text}")
            };
            assert_eq!(said, reason, "{text}");
        }
    }
}
