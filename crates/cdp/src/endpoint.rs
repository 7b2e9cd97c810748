//! Resolving an attach address to a browser WebSocket URL.
//!
//! `ws://…` and `wss://…` are used as they are; `http://host:port` is asked
//! for `/json/version`, whose `webSocketDebuggerUrl` is the browser endpoint.
//! DevTools' HTTP endpoint is plain HTTP/1.1 on loopback or a tunnel, so a
//! single GET is written by hand rather than pulling in an HTTP client.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::CdpError;

pub async fn resolve(address: &str) -> Result<String, CdpError> {
    if address.starts_with("ws://") || address.starts_with("wss://") {
        return Ok(address.to_owned());
    }
    let Some(rest) = address.strip_prefix("http://") else {
        return Err(CdpError::Connect(format!(
            "cannot attach to {address:?}: use ws://… or http://host:port"
        )));
    };
    let host_port = rest.split('/').next().unwrap_or(rest);
    let mut stream = TcpStream::connect(host_port)
        .await
        .map_err(|e| CdpError::Connect(format!("cannot reach {host_port}: {e}")))?;
    let request = format!("GET /json/version HTTP/1.1\r\nHost: {host_port}\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| CdpError::Connect(format!("{host_port}: {e}")))?;
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .map_err(|e| CdpError::Connect(format!("{host_port}: {e}")))?;
    let body = response.split("\r\n\r\n").nth(1).unwrap_or("");
    let version: serde_json::Value = serde_json::from_str(body.trim())
        .map_err(|_| CdpError::Connect(format!("{address}/json/version did not answer with JSON")))?;
    version["webSocketDebuggerUrl"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| CdpError::Connect(format!("{address} gave no webSocketDebuggerUrl")))
}
