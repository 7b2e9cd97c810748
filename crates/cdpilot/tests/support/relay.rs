//! The relay door's attackers and a raw relay client: an impostor that
//! takes the relay's port while cdpilot is down and plays the server, and
//! a program speaking `/v1/extension` itself (with or without the pairing
//! secret), to check what serve refuses.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::extension::UserChrome;

pub type Raw = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// What the impostor heard from the relay on its first connection, and
/// whether the relay closed it.
#[derive(Debug, Default)]
pub struct Heard {
    pub texts: Vec<String>,
    pub closed_by_relay: bool,
}

/// Plays cdpilot on `listener` for the first relay that connects: answers
/// its hello with a forged challenge, an ack (both protocol versions), and
/// commands that would open a tab on `bait` in the user's Chrome, chaining
/// the context id if the relay answers; records every text until the relay
/// closes the socket (or `limit` passes: then the relay kept it open).
pub async fn impostor(listener: TcpListener, bait: &str, limit: Duration) -> Heard {
    let mut heard = Heard::default();
    let until = tokio::time::Instant::now() + limit;
    let Ok(Ok((stream, _))) = tokio::time::timeout_at(until, listener.accept()).await else {
        return heard;
    };
    let Ok(mut socket) = tokio_tungstenite::accept_async(stream).await else {
        return heard;
    };
    let mut said_commands = false;
    loop {
        let next = match tokio::time::timeout_at(until, socket.next()).await {
            Ok(next) => next,
            Err(_) => return heard,
        };
        let text = match next {
            Some(Ok(Message::Text(text))) => text.as_str().to_owned(),
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => {
                heard.closed_by_relay = true;
                return heard;
            }
            Some(Ok(_)) => continue,
        };
        heard.texts.push(text.clone());
        let message: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let mut out = Vec::new();
        if !said_commands {
            said_commands = true;
            out.push(json!({"type": "challenge", "nonce": "ab".repeat(32), "proof": "00".repeat(32)}));
            out.push(json!({"type": "ack", "protocol_version": 2, "session": "extension", "tools": []}));
            out.push(json!({"type": "ack", "protocol_version": 1, "session": "extension", "tools": []}));
            out.push(
                json!({"type": "request", "id": "1", "method": "Target.createBrowserContext", "params": {}}),
            );
        }
        if message["type"] == "response" && message["id"] == "1" {
            if let Some(context) = message["result"]["browserContextId"].as_str() {
                out.push(json!({"type": "request", "id": "2", "method": "Target.createTarget", "params": {"url": bait, "browserContextId": context}}));
            }
        }
        for m in out {
            if socket.send(Message::text(m.to_string())).await.is_err() {
                heard.closed_by_relay = true;
                return heard;
            }
        }
    }
}

/// The pairing token the extension keeps (what a thief would be after).
pub async fn stored_token(chrome: &UserChrome) -> String {
    let worker = chrome.worker().await;
    let token = UserChrome::eval(
        &worker,
        "chrome.storage.local.get('token').then(s => s.token || '')",
    )
    .await;
    token.as_str().unwrap().to_owned()
}

/// A raw socket to `authority`'s relay path, as a program would open it
/// (with the extension's Origin: a program can say anything).
pub async fn connect(authority: &str) -> Raw {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut request = format!("ws://{authority}/v1/extension")
        .into_client_request()
        .unwrap();
    request.headers_mut().insert(
        "Origin",
        format!("chrome-extension://{}", super::extension::EXTENSION_ID)
            .parse()
            .unwrap(),
    );
    tokio_tungstenite::connect_async(request).await.unwrap().0
}

pub async fn send(socket: &mut Raw, message: Value) {
    socket.send(Message::text(message.to_string())).await.unwrap();
}

/// The next text, or what ended the socket: `Err(close reason)` (the
/// reason of the close frame, "" if none).
pub async fn next(socket: &mut Raw) -> Result<Value, String> {
    loop {
        match tokio::time::timeout(Duration::from_secs(20), socket.next())
            .await
            .expect("the server answers or closes within 20 s")
        {
            Some(Ok(Message::Text(text))) => return Ok(serde_json::from_str(text.as_str()).unwrap()),
            Some(Ok(Message::Close(frame))) => {
                return Err(frame.map(|f| f.reason.to_string()).unwrap_or_default())
            }
            Some(Ok(_)) => continue,
            None | Some(Err(_)) => return Err(String::new()),
        }
    }
}

/// The socket is refused: a `reject` naming `reason`, then a close frame
/// saying it.
pub async fn refused(socket: &mut Raw, reason: &str) {
    let reject = next(socket).await.expect("a reject before the close");
    assert_eq!(reject["type"], "reject", "{reject}");
    assert_eq!(reject["reason"], reason, "{reject}");
    assert_eq!(next(socket).await, Err(reason.to_owned()), "closed, saying why");
}
