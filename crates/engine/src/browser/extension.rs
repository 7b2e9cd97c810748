//! `[browser] source = "extension"`: the user's own Chrome, reached through
//! cdpilot's extension relay instead of a DevTools socket.
//!
//! [`Relay`] is a [`Transport`] whose pipe is whatever extension socket
//! `cdpilot serve`'s `/v1/extension` last plugged in ([`Relay::plug`]).
//! The server translates between CDP messages (this side) and the relay's
//! envelope (the extension's side); the extension answers the browser
//! session itself from the tabs it owns and sends tab commands through
//! `chrome.debugger`. So the engine drives the paired Chrome as any
//! browser: `Browser::attach` over this transport, contexts and tabs as
//! usual.
//!
//! One pipe at a time (no second pipe: evaluate's lane is a session on the
//! same pipe); a pipe that ended (the extension's service worker stopped,
//! Chrome quit) may be reopened: [`Transport::open`] waits a while for
//! the extension to connect again. Owns only the plugged pipe waiting to be
//! opened; touches no session.

use std::sync::Mutex;
use std::time::Duration;

use cdp::transport::{Capabilities, Incoming, Outgoing};
use cdp::{CdpError, Transport};
use futures_util::future::BoxFuture;
use tokio::sync::{mpsc, Notify};

use crate::config::Source;

/// How long opening a pipe waits for the extension to (re)connect: longer
/// than the relay's longest backoff step (4 s) after its worker restarts.
const CONNECT_WAIT: Duration = Duration::from_secs(8);

/// The two ends the engine's side of one extension socket needs.
struct Plugged {
    /// CDP messages for the extension (the server wraps them).
    to_extension: mpsc::UnboundedSender<String>,
    /// CDP messages from the extension (unwrapped by the server); ends when
    /// the socket does.
    from_extension: mpsc::UnboundedReceiver<String>,
}

/// The engine's end of the extension relay.
#[derive(Default)]
pub struct Relay {
    /// The last socket plugged in and not opened yet. Locked for
    /// microseconds.
    waiting: Mutex<Option<Plugged>>,
    /// Told when a socket is plugged in.
    plugged: Notify,
}

/// The server's end of one plugged socket.
pub struct Socket {
    /// CDP messages the engine sends; ends when the engine's connection is
    /// dropped.
    pub outgoing: mpsc::UnboundedReceiver<String>,
    /// CDP messages (responses and events) for the engine; dropping it ends
    /// the engine's connection (its pending commands fail at once).
    pub incoming: mpsc::UnboundedSender<String>,
}

impl Relay {
    /// A relay with no extension plugged in yet.
    pub fn new() -> Relay {
        Relay::default()
    }

    /// An extension connected: the next [`Transport::open`] gets this
    /// socket (one plugged before and never opened is dropped).
    pub fn plug(&self) -> Socket {
        let (to_extension, outgoing) = mpsc::unbounded_channel();
        let (incoming, from_extension) = mpsc::unbounded_channel();
        *self.waiting.lock().unwrap() = Some(Plugged {
            to_extension,
            from_extension,
        });
        self.plugged.notify_waiters();
        Socket { outgoing, incoming }
    }

    fn take(&self) -> Option<Plugged> {
        self.waiting.lock().unwrap().take()
    }
}

impl Transport for Relay {
    fn open(&self) -> BoxFuture<'_, Result<(Outgoing, Incoming), CdpError>> {
        Box::pin(async move {
            let deadline = tokio::time::Instant::now() + CONNECT_WAIT;
            let plugged = loop {
                let notified = self.plugged.notified();
                if let Some(plugged) = self.take() {
                    break plugged;
                }
                if tokio::time::timeout_at(deadline, notified).await.is_err() {
                    return Err(CdpError::Connect(
                        "the cdpilot extension is not connected: open Chrome with the extension, pair it \
                         (`cdpilot pair` prints the link) and check that its popup says Connected"
                            .into(),
                    ));
                }
            };
            let outgoing: Outgoing = Box::pin(futures_util::sink::unfold(
                plugged.to_extension,
                |tx, text: String| async move {
                    tx.send(text).map_err(|_| CdpError::Disconnected)?;
                    Ok(tx)
                },
            ));
            let incoming: Incoming = Box::pin(futures_util::stream::unfold(
                plugged.from_extension,
                |mut rx| async move { rx.recv().await.map(|text| (Ok(text), rx)) },
            ));
            Ok((outgoing, incoming))
        })
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            parallel_pipes: false,
            reopen: true,
        }
    }

    fn describe(&self) -> String {
        "the cdpilot extension in the paired Chrome".into()
    }
}

/// `[browser] source`: `launch`, `extension` or `auto_connect`, and an
/// extension or auto-connect source with nothing else to reach a browser by.
pub fn check(config: &crate::config::BrowserConfig) -> Result<(), String> {
    let elsewhere = !config.cdp_url.is_empty() || !config.endpoints.is_empty() || !config.grid.is_empty();
    match config.source {
        Source::Launch => Ok(()),
        Source::Extension if elsewhere => Err(
            "browser.source = \"extension\" with browser.cdp_url, endpoints or grid set: sessions run in the paired Chrome, so leave those empty".into(),
        ),
        Source::AutoConnect if elsewhere => Err(
            "browser.source = \"auto_connect\" with browser.cdp_url, endpoints or grid set: sessions run in your running Chrome, found through its DevToolsActivePort, so leave those empty".into(),
        ),
        Source::Extension | Source::AutoConnect => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::{SinkExt, StreamExt};

    #[tokio::test]
    async fn a_plugged_socket_carries_both_ways_and_its_end_ends_the_pipe() {
        let relay = Relay::new();
        let mut socket = relay.plug();
        let (mut out, mut inc) = relay.open().await.unwrap();
        out.send("{\"id\":1}".into()).await.unwrap();
        assert_eq!(socket.outgoing.recv().await.unwrap(), "{\"id\":1}");
        socket.incoming.send("{\"id\":1,\"result\":{}}".into()).unwrap();
        assert_eq!(inc.next().await.unwrap().unwrap(), "{\"id\":1,\"result\":{}}");
        drop(socket);
        assert!(inc.next().await.is_none(), "the pipe ends with the socket");
    }

    #[tokio::test(start_paused = true)]
    async fn opening_without_an_extension_says_what_to_do() {
        let relay = Relay::new();
        let error = relay.open().await.err().expect("nothing plugged");
        assert!(error.to_string().contains("cdpilot pair"), "{error}");
    }
}
