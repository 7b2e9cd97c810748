//! A minimal MCP client over streamable HTTP for tests: one HTTP/1.0
//! request per message on a fresh loopback connection (so the body ends
//! when the server closes it, no chunked decoding), SSE `data:` lines read
//! as JSON-RPC messages; and the session's own stream (`GET /mcp`, also
//! HTTP/1.0), read message by message as the server sends them
//! ([`EventStream`]: notifications no request answers). Reads exactly what
//! a real client would read.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub struct McpHttpClient {
    /// `127.0.0.1:PORT`.
    pub authority: String,
    pub token: String,
    /// `Mcp-Session-Id`, once initialized.
    pub session: Option<String>,
    next_id: u64,
}

/// One HTTP answer.
#[derive(Debug)]
pub struct HttpReply {
    pub status: u16,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl HttpReply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages of an SSE body (or a JSON one).
    pub fn messages(&self) -> Vec<Value> {
        if self
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/json"))
        {
            return serde_json::from_str(&self.body).into_iter().collect();
        }
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    }
}

/// Sends one HTTP/1.0 request to `authority` and reads the whole answer
/// (60 s at most).
pub async fn http(
    authority: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> HttpReply {
    let exchange = async {
        let mut stream = TcpStream::connect(authority)
            .await
            .expect("connect to the server");
        let mut head = format!("{method} {path} HTTP/1.0\r\n");
        if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
            head += &format!("Host: {authority}\r\n");
        }
        for (name, value) in headers {
            head += &format!("{name}: {value}\r\n");
        }
        head += &format!("Content-Length: {}\r\n\r\n", body.len());
        stream.write_all(head.as_bytes()).await.expect("write request");
        stream.write_all(body.as_bytes()).await.expect("write body");
        // To the end of the connection, or of the body its
        // Content-Length gives (a server that keeps an HTTP/1.0
        // connection open after the answer, as Node's does).
        let mut raw = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        loop {
            let n = stream.read(&mut chunk).await.expect("read response");
            if n == 0 {
                break;
            }
            raw.extend_from_slice(&chunk[..n]);
            if body_complete(&raw) {
                break;
            }
        }
        raw
    };
    let raw = tokio::time::timeout(Duration::from_secs(60), exchange)
        .await
        .expect("no HTTP answer within 60 s");
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP head");
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    HttpReply {
        status,
        headers,
        body: body.to_owned(),
    }
}

/// Whether `raw` holds a head with a Content-Length and that many body
/// bytes after it.
fn body_complete(raw: &[u8]) -> bool {
    let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&raw[..end]);
    head.lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(n, _)| n.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .is_some_and(|length| raw.len() >= end + 4 + length)
}

impl McpHttpClient {
    pub fn new(authority: &str, token: &str) -> McpHttpClient {
        McpHttpClient {
            authority: authority.to_owned(),
            token: token.to_owned(),
            session: None,
            next_id: 1,
        }
    }

    /// POSTs one JSON-RPC message to `/mcp` with this client's headers.
    pub async fn post(&self, message: &Value) -> HttpReply {
        let bearer = format!("Bearer {}", self.token);
        let mut headers = vec![
            ("Authorization", bearer.as_str()),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        if let Some(session) = &self.session {
            headers.push(("Mcp-Session-Id", session));
            headers.push(("MCP-Protocol-Version", "2025-06-18"));
        }
        http(&self.authority, "POST", "/mcp", &headers, &message.to_string()).await
    }

    /// `initialize` + `notifications/initialized`; returns the initialize
    /// reply (its status says whether a session was opened).
    pub async fn initialize(&mut self) -> HttpReply {
        let reply = self
            .post(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "cdpilot-testkit-http", "version": "0"}
                }}),
            )
            .await;
        if reply.status == 200 {
            self.session = reply.header("mcp-session-id").map(str::to_owned);
            let initialized = self
                .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .await;
            assert_eq!(initialized.status, 202, "{initialized:?}");
        }
        reply
    }

    /// Sends a request and reads its response: `Ok(result)` or `Err(error)`.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.next_id;
        self.next_id += 1;
        let reply = self
            .post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        assert_eq!(reply.status, 200, "{method}: {reply:?}");
        let response = reply
            .messages()
            .into_iter()
            .find(|m| m["id"] == json!(id))
            .unwrap_or_else(|| panic!("no response to {method} in {reply:?}"));
        match response.get("error") {
            Some(error) => Err(error.clone()),
            None => Ok(response["result"].clone()),
        }
    }

    /// `tools/call`; returns the CallToolResult (tool errors are results too).
    pub async fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
            .await
            .unwrap_or_else(|e| panic!("tools/call {name} got a protocol error: {e}"))
    }

    /// Ends the MCP session (HTTP DELETE); returns the status (2xx: ended).
    pub async fn end(&mut self) -> u16 {
        let bearer = format!("Bearer {}", self.token);
        let session = self.session.take().expect("an open session");
        let headers = [
            ("Authorization", bearer.as_str()),
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        http(&self.authority, "DELETE", "/mcp", &headers, "").await.status
    }
}

/// The session's stream of messages that answer no request (`GET /mcp`):
/// notifications such as `tools/list_changed`, read as they come.
pub struct EventStream {
    /// The stream's HTTP status (200: open).
    pub status: u16,
    stream: TcpStream,
    /// Bytes read past the last whole line.
    pending: Vec<u8>,
}

impl McpHttpClient {
    /// Opens the session's stream (`GET /mcp`, `Accept: text/event-stream`).
    pub async fn listen(&self) -> EventStream {
        let session = self.session.as_deref().expect("an open session");
        let mut stream = TcpStream::connect(&self.authority)
            .await
            .expect("connect to the server");
        let head = format!(
            "GET /mcp HTTP/1.0\r\nHost: {}\r\nAuthorization: Bearer {}\r\nAccept: text/event-stream\r\n\
             Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n",
            self.authority, self.token
        );
        stream.write_all(head.as_bytes()).await.expect("write request");
        let mut raw = Vec::new();
        let mut chunk = [0u8; 4096];
        let end = loop {
            if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                break end;
            }
            let n = tokio::time::timeout(Duration::from_secs(30), stream.read(&mut chunk))
                .await
                .expect("no HTTP head within 30 s")
                .expect("read response");
            assert!(n > 0, "the server closed the stream before its head");
            raw.extend_from_slice(&chunk[..n]);
        };
        let status = String::from_utf8_lossy(&raw[..end])
            .lines()
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|s| s.parse().ok())
            .expect("a status line");
        EventStream {
            status,
            stream,
            pending: raw[end + 4..].to_vec(),
        }
    }
}

impl EventStream {
    /// The next JSON-RPC message the server sends on the stream; `None`
    /// when none comes within `within` or the stream ends.
    pub async fn next_message(&mut self, within: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            while let Some(at) = self.pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=at).collect();
                let line = String::from_utf8_lossy(&line);
                if let Some(message) = line
                    .strip_prefix("data:")
                    .and_then(|d| serde_json::from_str(d.trim()).ok())
                {
                    return Some(message);
                }
            }
            let mut chunk = [0u8; 4096];
            let n = tokio::time::timeout_at(deadline, self.stream.read(&mut chunk))
                .await
                .ok()?
                .ok()?;
            if n == 0 {
                return None;
            }
            self.pending.extend_from_slice(&chunk[..n]);
        }
    }
}
