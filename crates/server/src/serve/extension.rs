//! `/v1/extension`: the cdpilot extension's relay socket, its pairing and
//! its status (`docs/src/spec/protocol.md`, "Pairing").
//!
//! - `POST /v1/extension/pair` (server token): a one-time code and the
//!   link that carries it, `chrome-extension://<id>/pair.html#server=…&code=…`;
//!   the code is good for [`CODE_TTL`] and for one `hello`.
//! - `GET /v1/extension` (WebSocket): `hello` with `client: "extension"` and
//!   either the code (answered by an `ack` carrying the long-lived extension
//!   token) or that token; anything else is `reject: bad_token`. Then CDP
//!   travels inside the envelope: `request {id, method, params, sessionId?}`
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
//! extension paired before), and whether an extension is connected. The
//! sessions the user's Stop ends are a [`Holders`]'s: serve's table, or the
//! one session of `cdpilot mcp --extension`, whose loopback listener
//! ([`listen_for_stdio`]) offers these routes alone.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
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
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

use super::auth::{self, random_hex};
use super::extension_store::{self, Tokens};
use super::routes::{Credential, Routes};
use super::sessions::Sessions;
use super::upgrade;

/// The extension's id, fixed by the `key` in `extension/manifest.json`.
pub const EXTENSION_ID: &str = "cgolnlbbddjholdlhbgdgeffmhifhpfg";
/// The path of the relay's socket.
pub const PATH: &str = "/v1/extension";
/// How long a pairing code may wait to be used.
pub const CODE_TTL: Duration = Duration::from_secs(300);
/// How often the relay socket checks who drives each context.
const NAMING: Duration = Duration::from_millis(500);
/// The envelope's version (the WebSocket API's).
const PROTOCOL_VERSION: u64 = 1;

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
    /// One-time pairing codes and when each stops being good.
    codes: Mutex<HashMap<String, Instant>>,
    /// Extension tokens handed out by a pairing (this server's or an
    /// earlier one's).
    tokens: Tokens,
    /// Relay sockets open now (after their `ack`).
    connected: AtomicUsize,
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
            connected: AtomicUsize::new(0),
            stopping,
        })
    }

    /// A new one-time pairing code and its link.
    pub fn pairing_link(&self) -> (String, String) {
        let code = random_hex(16);
        let mut codes = self.codes.lock().unwrap();
        codes.retain(|_, until| *until > Instant::now());
        codes.insert(code.clone(), Instant::now() + CODE_TTL);
        let link = format!(
            "chrome-extension://{EXTENSION_ID}/pair.html#server={}&code={code}",
            self.server
        );
        (code, link)
    }

    /// Takes a good code (it is spent) and hands out a new extension token.
    fn redeem(&self, code: &str) -> Option<String> {
        let until = self.codes.lock().unwrap().remove(code)?;
        if until <= Instant::now() {
            return None;
        }
        let token = random_hex(32);
        self.tokens.insert(&token);
        Some(token)
    }

    fn token_known(&self, token: &str) -> bool {
        self.tokens.contains(token)
    }

    fn status(&self) -> Value {
        let connected = self.connected.load(Ordering::Relaxed) > 0;
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

/// What the relay's `hello` offered.
enum Credentials {
    Token,
    /// A pairing code, redeemed for this token.
    Paired(String),
}

/// One relay socket, from `hello` to close.
async fn serve(socket: upgrade::Socket, extension: Arc<Extension>) {
    let (mut sink, mut stream) = socket.split();
    let (to_socket, mut outbox) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        while let Some(text) = outbox.recv().await {
            if sink.send(Message::Text(text.into())).await.is_err() {
                break;
            }
        }
        let _ = sink.close().await;
    });
    let send = |message: Value| {
        let _ = to_socket.send(message.to_string());
    };

    let credentials = match next_text(&mut stream).await {
        Some(text) => hello(&extension, &text),
        None => Err(("bad_token", "the relay closed before hello".to_owned())),
    };
    let credentials = match credentials {
        Ok(credentials) => credentials,
        Err((reason, message)) => {
            tracing::info!("extension relay rejected: {reason}: {message}");
            send(json!({"type": "reject", "reason": reason, "message": message}));
            drop(to_socket);
            let _ = writer.await;
            return;
        }
    };
    let mut ack =
        json!({"type": "ack", "protocol_version": PROTOCOL_VERSION, "session": "extension", "tools": []});
    if let Credentials::Paired(token) = &credentials {
        ack["token"] = token.clone().into();
    }
    send(ack);
    extension.connected.fetch_add(1, Ordering::Relaxed);
    tracing::info!("the cdpilot extension connected");

    let relay = extension.engine.extension_relay().cloned();
    let mut cdp = relay.as_ref().map(|r| r.plug());
    // Who drives each context, said to the extension when it changes.
    let mut named = Vec::new();
    let mut naming = tokio::time::interval(NAMING);
    loop {
        tokio::select! {
            _ = naming.tick() => {
                let mut clients = extension.sessions.clients();
                clients.sort();
                if clients != named {
                    let sessions: Vec<Value> = clients
                        .iter()
                        .map(|(context, client)| json!({"context": context, "client": client}))
                        .collect();
                    send(json!({"type": "sessions", "sessions": sessions}));
                    named = clients;
                }
            }
            text = next_text(&mut stream) => {
                let Some(text) = text else { break };
                match from_extension(&text) {
                    Ok(FromExtension::Cdp(message)) => {
                        if let Some(cdp) = &cdp {
                            let _ = cdp.incoming.send(message);
                        }
                    }
                    Ok(FromExtension::Stopped { context, reason }) => extension.stopped(&context, &reason),
                    Ok(FromExtension::Ping) => send(json!({"type": "pong"})),
                    Err((id, message)) => send(json!({
                        "type": "error",
                        "id": id,
                        "error": {"code": "invalid_argument", "message": message},
                    })),
                }
            }
            command = next_command(&mut cdp) => match command {
                Some(text) => match to_extension(&text) {
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
    extension.connected.fetch_sub(1, Ordering::Relaxed);
    tracing::info!("the cdpilot extension disconnected");
    // Dropping the engine's side ends its connection: commands in flight
    // fail at once (`browser_disconnected`) instead of waiting.
    drop(cdp);
    drop(to_socket);
    let _ = writer.await;
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

/// Checks the relay's `hello`.
fn hello(extension: &Extension, text: &str) -> Result<Credentials, (&'static str, String)> {
    let bad = |m: &str| ("bad_token", m.to_owned());
    let hello: Value = serde_json::from_str(text).map_err(|e| bad(&format!("hello is not JSON: {e}")))?;
    if hello["type"] != "hello" {
        return Err(bad("the first message must be hello"));
    }
    if hello["protocol_version"].as_u64() != Some(PROTOCOL_VERSION) {
        return Err((
            "unsupported_version",
            format!("this server speaks protocol_version {PROTOCOL_VERSION}"),
        ));
    }
    if hello["client"] != "extension" {
        return Err(bad(
            "/v1/extension is for the cdpilot extension (client: \"extension\"); programs use /v1/ws",
        ));
    }
    if let Some(code) = hello["code"].as_str() {
        return match extension.redeem(code) {
            Some(token) => Ok(Credentials::Paired(token)),
            None => Err(bad(
                "this pairing code is wrong, used or expired: run `cdpilot pair` again and open the new link",
            )),
        };
    }
    match hello["token"].as_str() {
        Some(token) if extension.token_known(token) => Ok(Credentials::Token),
        _ => Err(bad("this server does not know the extension's token (it was restarted, or paired with another extension): run `cdpilot pair` and open the link")),
    }
}

enum FromExtension {
    /// A CDP response or event, as the engine's connection reads them.
    Cdp(String),
    Stopped {
        context: String,
        reason: String,
    },
    Ping,
}

/// Unwraps one relay message; an error carries the message's id (if it
/// had one) and what is wrong with it.
fn from_extension(text: &str) -> Result<FromExtension, (Value, String)> {
    let message: Value = serde_json::from_str(text).map_err(|e| (Value::Null, format!("not JSON: {e}")))?;
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let broken = |what: &str| (id.clone(), what.to_owned());
    match message["type"].as_str() {
        Some("ping") => Ok(FromExtension::Ping),
        Some("response") => {
            let number = id
                .as_str()
                .and_then(|i| i.parse::<u64>().ok())
                .ok_or_else(|| broken("a response needs the id of its request"))?;
            let cdp = match (&message["result"], &message["error"]) {
                (_, Value::Object(error)) => {
                    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
                    match error.get("code").and_then(Value::as_str) {
                        Some("domain_blocked") => {
                            json!({"id": number, "error": {"code": -32000, "message": format!("domain_blocked: {message}")}})
                        }
                        _ => {
                            let code = error
                                .get("data")
                                .and_then(|d| d.get("cdp_code"))
                                .and_then(Value::as_i64)
                                .unwrap_or(-32000);
                            json!({"id": number, "error": {"code": code, "message": message}})
                        }
                    }
                }
                (Value::Object(_), _) => json!({"id": number, "result": message["result"]}),
                _ => return Err(broken("a response needs a result or an error object")),
            };
            Ok(FromExtension::Cdp(cdp.to_string()))
        }
        Some("event") => match message["event"].as_str() {
            Some("cdp") => {
                let data = &message["data"];
                let Some(method) = data["method"].as_str() else {
                    return Err(broken("a cdp event needs data.method"));
                };
                let mut cdp = json!({"method": method, "params": data["params"]});
                if let Some(session) = data["sessionId"].as_str() {
                    cdp["sessionId"] = session.into();
                }
                Ok(FromExtension::Cdp(cdp.to_string()))
            }
            Some("session_stopped") => {
                let data = &message["data"];
                let Some(context) = data["context"].as_str() else {
                    return Err(broken("session_stopped needs data.context"));
                };
                Ok(FromExtension::Stopped {
                    context: context.to_owned(),
                    reason: data["reason"].as_str().unwrap_or("stopped_by_user").to_owned(),
                })
            }
            _ => Err(broken("unknown event: the relay sends cdp and session_stopped")),
        },
        _ => Err(broken("unknown type: the relay sends response, event and ping")),
    }
}

/// Wraps one engine CDP command as a relay `request`.
fn to_extension(text: &str) -> Option<Value> {
    let command: Value = serde_json::from_str(text).ok()?;
    let mut request = json!({
        "type": "request",
        "id": command["id"].as_u64()?.to_string(),
        "method": command["method"].as_str()?,
        "params": command.get("params").cloned().unwrap_or(json!({})),
    });
    if let Some(session) = command["sessionId"].as_str().filter(|s| !s.is_empty()) {
        request["sessionId"] = session.into();
    }
    Some(request)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_is_unwrapped_into_cdp() {
        let Ok(FromExtension::Cdp(ok)) = from_extension(r#"{"type":"response","id":"7","result":{"a":1}}"#)
        else {
            panic!("a response")
        };
        assert_eq!(ok, r#"{"id":7,"result":{"a":1}}"#);
        let Ok(FromExtension::Cdp(blocked)) = from_extension(
            r#"{"type":"response","id":"8","error":{"code":"domain_blocked","message":"x.test is on the blocklist"}}"#,
        ) else {
            panic!("a response")
        };
        assert!(blocked.contains("domain_blocked: x.test"), "{blocked}");
        let Ok(FromExtension::Cdp(event)) = from_extension(
            r#"{"type":"event","event":"cdp","data":{"method":"Page.loadEventFired","params":{},"sessionId":"s1"}}"#,
        ) else {
            panic!("an event")
        };
        assert!(event.contains(r#""sessionId":"s1""#), "{event}");
        let (id, message) = from_extension(r#"{"type":"response","id":"x"}"#).err().unwrap();
        assert_eq!(id, "x");
        assert!(message.contains("id of its request"), "{message}");
        assert!(from_extension("nope").is_err());
    }

    #[test]
    fn commands_are_wrapped_with_their_session() {
        let request =
            to_extension(r#"{"id":3,"method":"Page.navigate","params":{"url":"u"},"sessionId":"s"}"#)
                .unwrap();
        assert_eq!(request["type"], "request");
        assert_eq!(request["id"], "3");
        assert_eq!(request["sessionId"], "s");
        let browser = to_extension(r#"{"id":4,"method":"Browser.getVersion"}"#).unwrap();
        assert!(browser.get("sessionId").is_none());
    }
}
