//! How bytes reach a browser: the [`Transport`] trait and its WebSocket
//! implementation.
//!
//! A transport opens message pipes (text in, text out) to one browser. The
//! [`Connection`](crate::Connection) on top does not know what carries them,
//! so a relay (a browser extension forwarding CDP) can replace the WebSocket
//! later. What needs more than one pipe (the isolated evaluate lane, a
//! reconnect after a drop) asks [`Transport::capabilities`] first instead of
//! assuming a URL it could dial again.
//!
//! Every message from the browser is bounded by [`MAX_MESSAGE`] (64 MiB:
//! a full accessibility tree reached 36 MB in one response, past
//! tungstenite's 16 MiB frame default). A transport never buffers past it:
//! the pipe skips such a message to its NUL and hands on a short note in
//! its place ([`Oversized`], an event named [`DROPPED`]), so the session
//! goes on; tungstenite cannot skip a frame, so over a WebSocket the
//! message ends the connection (as any drop: the engine reconnects). Both
//! are counted ([`dropped_messages`]).
//! `wss://` endpoints (remote browsers) go through rustls with webpki roots.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::future::BoxFuture;
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

use crate::CdpError;

/// Messages to the browser. Closing it ends the pipe politely.
pub type Outgoing = Pin<Box<dyn Sink<String, Error = CdpError> + Send>>;
/// Messages from the browser; ends when the pipe closes.
pub type Incoming = Pin<Box<dyn Stream<Item = Result<String, CdpError>> + Send>>;

/// The largest message from the browser cdpilot reads whole.
pub const MAX_MESSAGE: usize = 64 << 20;

/// The method of the note a transport hands on in place of a message over
/// [`MAX_MESSAGE`]: `{"method": DROPPED, "params": {"bytes", "method"?,
/// "id"?}, "sessionId"}` (the dropped message's own method, command id and
/// session, as far as its first and last bytes tell). The connection fails
/// the command it answered; a tab's console notes it.
pub const DROPPED: &str = "cdpilot.messageDropped";

/// Messages over [`MAX_MESSAGE`] dropped by this process so far.
static DROPPED_MESSAGES: AtomicU64 = AtomicU64::new(0);

/// Messages from browsers over [`MAX_MESSAGE`] dropped by this process.
pub fn dropped_messages() -> u64 {
    DROPPED_MESSAGES.load(Ordering::Relaxed)
}

/// A message being skipped: its length so far, its first and last bytes
/// (where its method, id and session id are), never the rest.
#[derive(Debug, Default)]
pub struct Oversized {
    bytes: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
}

/// Bytes of each end of a dropped message kept to name it.
const ENDS: usize = 512;

impl Oversized {
    /// Takes the next `chunk` of the message (only its ends are kept).
    pub fn push(&mut self, chunk: &[u8]) {
        self.bytes += chunk.len();
        let room = ENDS.saturating_sub(self.head.len());
        self.head.extend_from_slice(&chunk[..room.min(chunk.len())]);
        if chunk.len() >= ENDS {
            self.tail.clear();
            self.tail.extend_from_slice(&chunk[chunk.len() - ENDS..]);
        } else {
            self.tail.extend_from_slice(chunk);
            let extra = self.tail.len().saturating_sub(ENDS);
            self.tail.drain(..extra);
        }
    }

    /// The [`DROPPED`] note that stands for the message (and counts it).
    pub fn note(&self) -> String {
        DROPPED_MESSAGES.fetch_add(1, Ordering::Relaxed);
        let head = String::from_utf8_lossy(&self.head);
        let tail = String::from_utf8_lossy(&self.tail);
        tracing::warn!(
            "a message of {} bytes from the browser was over the limit of {MAX_MESSAGE} and dropped: {:.120}",
            self.bytes,
            head
        );
        // Only where the browser writes them (the page's words sit in
        // between): the method or id first, the session id last.
        let mut params = serde_json::json!({ "bytes": self.bytes });
        if let Some(method) = head.strip_prefix("{\"method\":\"").and_then(word) {
            // A page tool's answer names its invocation first.
            let first = format!("{{\"method\":\"{method}\",\"params\":{{\"invocationId\":\"");
            if let Some(id) = head.strip_prefix(first.as_str()).and_then(word) {
                params["invocationId"] = id.into();
            }
            params["method"] = method.into();
        }
        if let Some(id) = head
            .strip_prefix("{\"id\":")
            .map(|rest| rest.chars().take_while(char::is_ascii_digit).collect::<String>())
            .and_then(|digits| digits.parse::<u64>().ok())
        {
            params["id"] = id.into();
        }
        let session = tail
            .strip_suffix("\"}")
            .and_then(|rest| rest.rsplit_once(",\"sessionId\":\""))
            .map(|(_, id)| id)
            .filter(|id| !id.is_empty() && id.len() <= 128 && id.chars().all(|c| c.is_ascii_alphanumeric()))
            .unwrap_or_default();
        serde_json::json!({ "method": DROPPED, "params": params, "sessionId": session }).to_string()
    }
}

/// The plain word (a method's name) `text` starts with, up to its quote.
fn word(text: &str) -> Option<String> {
    let word: String = text
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_'))
        .take(128)
        .collect();
    (!word.is_empty() && text[word.len()..].starts_with('"')).then_some(word)
}

/// What a transport can do beyond carrying one pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Several pipes to the browser may be open at once (evaluate's own
    /// lane, so a runaway script cannot block the main connection).
    pub parallel_pipes: bool,
    /// A pipe that dropped can be opened again to the same browser.
    pub reopen: bool,
}

/// A way to reach one browser.
pub trait Transport: Send + Sync + 'static {
    /// Opens one pipe to the browser.
    fn open(&self) -> BoxFuture<'_, Result<(Outgoing, Incoming), CdpError>>;
    fn capabilities(&self) -> Capabilities;
    /// Where it leads, for messages (`ws://127.0.0.1:9222/devtools/browser/…`).
    fn describe(&self) -> String;
    /// True when the browser is known to be gone now, asked synchronously:
    /// a launched browser's pipe with no writer left (Chromium exited). It
    /// does not wait for the connection's reader to read the end, which on
    /// a busy runtime may come after the next call has started. `false`
    /// when the transport cannot tell (a socket's end is only seen by
    /// reading it).
    fn hung_up(&self) -> bool {
        false
    }
}

/// The browser's DevTools WebSocket (`ws://` or `wss://`).
#[derive(Clone)]
pub struct WebSocket {
    url: String,
    /// Sent with every handshake (a Selenium Grid behind a gateway wants
    /// its `Authorization`); empty for a local browser.
    headers: Vec<(String, String)>,
}

/// Header values (credentials) are not shown.
impl std::fmt::Debug for WebSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("WebSocket")
            .field("url", &self.url)
            .field("headers", &names)
            .finish()
    }
}

impl WebSocket {
    pub fn new(url: impl Into<String>) -> WebSocket {
        WebSocket {
            url: url.into(),
            headers: Vec::new(),
        }
    }

    /// The same, sending `headers` with each handshake.
    pub fn with_headers(url: impl Into<String>, headers: Vec<(String, String)>) -> WebSocket {
        WebSocket {
            url: url.into(),
            headers,
        }
    }
}

impl Transport for WebSocket {
    fn open(&self) -> BoxFuture<'_, Result<(Outgoing, Incoming), CdpError>> {
        Box::pin(async move {
            let config = WebSocketConfig::default()
                .max_frame_size(Some(MAX_MESSAGE))
                .max_message_size(Some(MAX_MESSAGE));
            let failed =
                |e: &dyn std::fmt::Display| CdpError::Connect(format!("cannot open {}: {e}", self.url));
            let mut request = self.url.as_str().into_client_request().map_err(|e| failed(&e))?;
            for (name, value) in &self.headers {
                let name = HeaderName::from_bytes(name.as_bytes()).map_err(|e| failed(&e))?;
                let value = HeaderValue::from_str(value).map_err(|e| failed(&e))?;
                request.headers_mut().insert(name, value);
            }
            let (socket, _response) =
                tokio_tungstenite::connect_async_with_config(request, Some(config), true)
                    .await
                    .map_err(|e| failed(&e))?;
            let (sink, stream) = socket.split();
            let outgoing: Outgoing = Box::pin(
                sink.sink_map_err(|_| CdpError::Disconnected)
                    .with(|text: String| async move { Ok::<_, CdpError>(Message::Text(text.into())) }),
            );
            let incoming: Incoming = Box::pin(stream.filter_map(|frame| async move {
                match frame {
                    Ok(Message::Text(text)) => Some(Ok(text.to_string())),
                    Ok(Message::Binary(bytes)) => String::from_utf8(bytes.to_vec()).ok().map(Ok),
                    Err(tokio_tungstenite::tungstenite::Error::Capacity(e)) => {
                        // Read no further: the socket cannot skip a frame.
                        DROPPED_MESSAGES.fetch_add(1, Ordering::Relaxed);
                        tracing::warn!(
                            "a message from the browser was over the limit and ended the connection: {e}"
                        );
                        Some(Err(CdpError::Disconnected))
                    }
                    Ok(Message::Close(_)) | Err(_) => Some(Err(CdpError::Disconnected)),
                    Ok(_) => None,
                }
            }));
            Ok((outgoing, incoming))
        })
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            parallel_pipes: true,
            reopen: true,
        }
    }

    fn describe(&self) -> String {
        self.url.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oversized_message_is_named_by_its_ends() {
        let mut event = Oversized::default();
        event.push(br#"{"method":"Runtime.consoleAPICalled","params":{"args":[{"value":""#);
        event.push(&vec![b'x'; 3 * ENDS]);
        event.push(br#""}]},"sessionId":"AB12"}"#);
        let note: serde_json::Value = serde_json::from_str(&event.note()).unwrap();
        assert_eq!(note["method"], DROPPED);
        assert_eq!(note["sessionId"], "AB12");
        assert_eq!(note["params"]["method"], "Runtime.consoleAPICalled");
        assert!(note["params"]["bytes"].as_u64().unwrap() > 3 * ENDS as u64);
        let mut answer = Oversized::default();
        answer.push(br#"{"method":"WebMCP.toolResponded","params":{"invocationId":"7","output":""#);
        answer.push(&vec![b'z'; 2 * ENDS]);
        let note: serde_json::Value = serde_json::from_str(&answer.note()).unwrap();
        assert_eq!(note["params"]["invocationId"], "7");
        let mut reply = Oversized::default();
        reply.push(br#"{"id":42,"result":{"result":{"value":"#);
        reply.push(&vec![b'y'; 2 * ENDS]);
        let note: serde_json::Value = serde_json::from_str(&reply.note()).unwrap();
        assert_eq!(
            (note["params"]["id"].as_u64(), note["sessionId"].as_str()),
            (Some(42), Some(""))
        );
    }

    #[tokio::test]
    async fn wss_endpoints_are_supported() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let error = WebSocket::new(format!("wss://127.0.0.1:{port}/devtools/browser/x"))
            .open()
            .await
            .err()
            .expect("nothing listens");
        let message = error.to_string();
        assert!(!message.contains("TLS support not compiled in"), "{message}");
        assert!(message.contains("refused"), "{message}");
        // The call tungstenite makes for a handshake: it panics when no
        // crypto provider was compiled in.
        let _ = rustls::ClientConfig::builder()
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth();
    }
}
