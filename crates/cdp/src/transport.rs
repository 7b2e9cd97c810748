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
//! The WebSocket lifts tungstenite's frame and message size limits: a full
//! accessibility tree reached 36 MB in one response, past the 16 MiB default.
//! `wss://` endpoints (remote browsers) go through rustls with webpki roots.

use std::pin::Pin;

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
                .max_frame_size(None)
                .max_message_size(None);
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
