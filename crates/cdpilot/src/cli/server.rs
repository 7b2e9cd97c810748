//! Finding, or starting, the `cdpilot serve` the CLI talks to, and talking
//! to it: one WebSocket request per CLI call (the server's own message
//! types, `server::serve::ws::messages`), plain HTTP for the dashboard
//! endpoints (`sessions`, `stop`) with hyper's HTTP/1.1 client.
//!
//! Owns the runtime directory: `$CDPILOT_RUNTIME_DIR`, else
//! `$XDG_RUNTIME_DIR/cdpilot`, else `/tmp/cdpilot-<uid>` (mode 0700). In it:
//! `token` (0600, the bearer token), `serve.json` (0600, `{url, pid}`, written
//! by the server once it listens, removed when it exits), `serve.log` (the
//! server's stderr), `start.lock` (while one CLI starts the server) and
//! `extension-mcp.json` (0600, `{url, token, pid}` of the loopback listener
//! of a `cdpilot mcp --extension`, removed when it exits).
//!
//! A state file is a claim, not a proof: it survives a `kill -9` of the
//! process that wrote it, and another local user may bind the port it
//! names. Before a byte (or the TCP handshake) goes to a port, the one rule
//! for local peers (`cdp::peer::listener_is_ours`) checks that the process
//! the file names is alive and holds the listening socket, owned by this
//! user; a file that fails is dropped with a message naming it and what
//! was found, and the CLI starts a serve of its own. Every connection is
//! checked, not only the first.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use server::serve::ws::messages::{ClientMessage, ServerMessage, PROTOCOL_VERSION};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

/// How long a background server may take to start listening.
const START_WAIT: Duration = Duration::from_secs(20);

/// Why a call could not be made, as opposed to a tool's own error.
#[derive(Debug)]
pub struct Unreachable(pub String);

/// The server the CLI talks to.
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    pub token: String,
    /// The process the state file names, which must hold the port
    /// (`None`: named by the user, `--server`: only its owner is checked).
    pub pid: Option<u32>,
    /// What named it, for messages (`serve.json`'s path, `--server`).
    pub named_by: String,
}

/// Where the runtime directory is (not made).
fn runtime_path() -> PathBuf {
    match std::env::var_os("CDPILOT_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
            Some(dir) => PathBuf::from(dir).join("cdpilot"),
            None => {
                let uid = std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(0);
                PathBuf::from(format!("/tmp/cdpilot-{uid}"))
            }
        },
    }
}

/// The runtime directory, made (0700) if missing.
pub fn runtime_dir() -> Result<PathBuf, Unreachable> {
    let dir = runtime_path();
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| {
            Unreachable(format!(
                "cannot make the runtime directory {}: {e}",
                dir.display()
            ))
        })?;
    let meta = std::fs::metadata(&dir).map_err(|e| Unreachable(format!("{}: {e}", dir.display())))?;
    let me = std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(meta.uid());
    if meta.uid() != me || meta.permissions().mode() & 0o077 != 0 {
        return Err(Unreachable(format!(
            "{} must belong to you with mode 0700 (it holds the server's token); fix it or set CDPILOT_RUNTIME_DIR",
            dir.display()
        )));
    }
    Ok(dir)
}

fn read_state(dir: &std::path::Path) -> Option<(String, u32)> {
    let text = std::fs::read_to_string(dir.join("serve.json")).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    Some((value["url"].as_str()?.to_owned(), value["pid"].as_u64()? as u32))
}

/// Whether the process `pid` holds the port of `url` (`http://HOST:PORT`),
/// owned by this user: `Err` says what was found instead.
pub fn owned(url: &str, pid: Option<u32>) -> Result<(), String> {
    let authority = url.trim_start_matches("http://").trim_start_matches("ws://");
    let authority = authority.split('/').next().unwrap_or(authority);
    let address = std::net::ToSocketAddrs::to_socket_addrs(authority)
        .map_err(|e| format!("{authority} is not an address: {e}"))?
        .next()
        .ok_or_else(|| format!("{authority} resolves to no address"))?;
    cdp::peer::listener_is_ours(address, pid)
}

/// What a state file in the runtime directory names, checked by the one
/// rule for local peers: `Ok((url, pid))`, or `Err` with the message
/// naming the file and what was found (the file is removed then).
fn checked_state(path: &std::path::Path, url: String, pid: u32) -> Result<(String, u32), String> {
    match owned(&url, Some(pid)) {
        Ok(()) => Ok((url, pid)),
        Err(why) => {
            let _ = std::fs::remove_file(path);
            Err(format!(
                "{} names {url}, refused: {why}; the file was removed",
                path.display()
            ))
        }
    }
}

/// The background server's pid, when its state file names a live one
/// that holds its port.
pub fn background_pid() -> Option<u32> {
    let dir = runtime_dir().ok()?;
    let (url, pid) = read_state(&dir)?;
    owned(&url, Some(pid)).ok().map(|()| pid)
}

/// What `doctor` says of the runtime directory's state files: each one
/// present, and whether the one rule for local peers trusts it (read
/// only: nothing is removed).
pub fn state_report() -> Vec<(bool, String)> {
    let dir = runtime_path();
    let mut lines = Vec::new();
    for name in ["serve.json", "extension-mcp.json"] {
        let path = dir.join(name);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let value: Value = serde_json::from_str(&text).unwrap_or_default();
        let (url, pid) = (value["url"].as_str().unwrap_or(""), value["pid"].as_u64());
        lines.push(match owned(url, pid.map(|p| p as u32)) {
            Ok(()) => (
                true,
                format!(
                    "{} names {url}, held by its process {} (yours)",
                    path.display(),
                    pid.unwrap_or(0)
                ),
            ),
            Err(why) => (
                false,
                format!(
                    "{} names {url}, refused: {why}. The CLI removes it and starts a serve of its own",
                    path.display()
                ),
            ),
        });
    }
    lines
}

/// The running background server, if one answers. A state file the one
/// rule for local peers refuses is removed, said on stderr, and taken as
/// no server.
pub async fn find() -> Result<Option<Server>, Unreachable> {
    let dir = runtime_dir()?;
    let path = dir.join("serve.json");
    let Some((url, pid)) = read_state(&dir) else {
        return Ok(None);
    };
    let (url, pid) = match checked_state(&path, url, pid) {
        Ok(found) => found,
        Err(why) => {
            eprintln!("cdpilot: {why}");
            return Ok(None);
        }
    };
    let Ok(token) = std::fs::read_to_string(dir.join("token")) else {
        return Ok(None);
    };
    let server = Server {
        url,
        token: token.trim().to_owned(),
        pid: Some(pid),
        named_by: path.display().to_string(),
    };
    Ok(server.answers().await.then_some(server))
}

/// `cdpilot mcp --extension`'s listener, as `cdpilot pair` finds it: the
/// file naming it, removed when this drops.
pub struct ListenerFile(PathBuf);

impl ListenerFile {
    pub fn write(url: &str, token: &str) -> Result<ListenerFile, Unreachable> {
        let path = runtime_dir()?.join("extension-mcp.json");
        let text = serde_json::json!({"url": url, "token": token, "pid": std::process::id()}).to_string();
        let _ = std::fs::remove_file(&path);
        std::fs::OpenOptions::new()
            .create_new(true)
            .write(true)
            .mode(0o600)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
            .map_err(|e| Unreachable(format!("writing {}: {e}", path.display())))?;
        Ok(ListenerFile(path))
    }
}

impl Drop for ListenerFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A running `cdpilot mcp --extension`'s listener, if one answers. A file
/// the one rule for local peers refuses is removed and said on stderr.
pub async fn find_extension_listener() -> Result<Option<Server>, Unreachable> {
    let path = runtime_dir()?.join("extension-mcp.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    let Ok(value) = serde_json::from_str::<Value>(&text) else {
        return Ok(None);
    };
    let (Some(url), Some(token), Some(pid)) = (
        value["url"].as_str(),
        value["token"].as_str(),
        value["pid"].as_u64(),
    ) else {
        return Ok(None);
    };
    let (url, pid) = match checked_state(&path, url.to_owned(), pid as u32) {
        Ok(found) => found,
        Err(why) => {
            eprintln!("cdpilot: {why}");
            return Ok(None);
        }
    };
    let server = Server {
        url,
        token: token.to_owned(),
        pid: Some(pid),
        named_by: path.display().to_string(),
    };
    let answers = tokio::time::timeout(
        Duration::from_secs(2),
        server.http("GET", "/v1/extension/status", None),
    )
    .await;
    Ok(matches!(answers, Ok(Ok((200, _)))).then_some(server))
}

/// The running background server, or a new one started for this user.
pub async fn find_or_start() -> Result<Server, Unreachable> {
    if let Some(server) = find().await? {
        return Ok(server);
    }
    let dir = runtime_dir()?;
    let _lock = StartLock::take(&dir).await?;
    // Another CLI may have started it while we waited for the lock.
    if let Some(server) = find().await? {
        return Ok(server);
    }
    let token = hex_token();
    let token_path = dir.join("token");
    std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(&token_path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, token.as_bytes()))
        .map_err(|e| Unreachable(format!("writing {}: {e}", token_path.display())))?;
    let _ = std::fs::remove_file(dir.join("serve.json"));
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(dir.join("serve.log"))
        .map_err(|e| Unreachable(format!("opening serve.log: {e}")))?;
    let exe =
        std::env::current_exe().map_err(|e| Unreachable(format!("cannot find the cdpilot binary: {e}")))?;
    let mut child = std::process::Command::new(exe);
    child
        // Every tool group: a CLI user names the tool, so an unused one
        // costs nothing (the groups exist to keep MCP's tool list short).
        .args(["serve", "--listen", "127.0.0.1:0", "--caps", "all", "--idle-exit"])
        .arg("--state-file")
        .arg(dir.join("serve.json"))
        .env("CDPILOT_SERVE_TOKEN", &token)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log);
    // Its own process group: a Ctrl-C meant for this CLI call is not its.
    std::os::unix::process::CommandExt::process_group(&mut child, 0);
    let mut child = child
        .spawn()
        .map_err(|e| Unreachable(format!("cannot start cdpilot serve: {e}")))?;
    let started = Instant::now();
    loop {
        if let Some((url, pid)) = read_state(&dir) {
            if pid == child.id() {
                let server = Server {
                    url,
                    token: token.clone(),
                    pid: Some(pid),
                    named_by: dir.join("serve.json").display().to_string(),
                };
                if server.answers().await {
                    // Not waited for: it outlives this call by design.
                    std::mem::forget(child);
                    return Ok(server);
                }
            }
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(Unreachable(format!(
                "cdpilot serve exited at start ({status}); see {}",
                dir.join("serve.log").display()
            )));
        }
        if started.elapsed() > START_WAIT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Unreachable(format!(
                "cdpilot serve did not start listening within {START_WAIT:?}; see {}",
                dir.join("serve.log").display()
            )));
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// `start.lock`, held while one CLI starts the server; a lock older than
/// the start's own limit is left over from a crash and taken over.
struct StartLock(PathBuf);

impl StartLock {
    async fn take(dir: &std::path::Path) -> Result<StartLock, Unreachable> {
        let path = dir.join("start.lock");
        let started = Instant::now();
        loop {
            match std::fs::OpenOptions::new()
                .create_new(true)
                .write(true)
                .mode(0o600)
                .open(&path)
            {
                Ok(_) => return Ok(StartLock(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let stale = std::fs::metadata(&path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| t.elapsed().ok())
                        .is_some_and(|age| age > START_WAIT + Duration::from_secs(5));
                    if stale {
                        let _ = std::fs::remove_file(&path);
                    } else if started.elapsed() > START_WAIT + Duration::from_secs(5) {
                        return Err(Unreachable(format!(
                            "{} is held by another cdpilot",
                            path.display()
                        )));
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => return Err(Unreachable(format!("{}: {e}", path.display()))),
            }
        }
    }
}

impl Drop for StartLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn hex_token() -> String {
    let mut buf = [0u8; 24];
    let read =
        std::fs::File::open("/dev/urandom").and_then(|mut f| std::io::Read::read_exact(&mut f, &mut buf));
    read.expect("reading /dev/urandom");
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

impl Server {
    fn authority(&self) -> &str {
        self.url.trim_start_matches("http://")
    }

    /// A connection to the server, made only when the one rule for local
    /// peers trusts its port (checked before connecting, every time: the
    /// process may have died since the last call and a neighbour bound
    /// the port).
    async fn connect(&self) -> Result<tokio::net::TcpStream, Unreachable> {
        owned(&self.url, self.pid).map_err(|why| {
            Unreachable(format!(
                "{} names {}, refused: {why}; nothing was sent to it",
                self.named_by, self.url
            ))
        })?;
        tokio::net::TcpStream::connect(self.authority())
            .await
            .map_err(|e| Unreachable(format!("cannot reach cdpilot serve at {}: {e}", self.url)))
    }

    /// Whether `/healthz` answers with this token.
    async fn answers(&self) -> bool {
        matches!(
            tokio::time::timeout(Duration::from_secs(2), self.http("GET", "/healthz", None)).await,
            Ok(Ok((200, _)))
        )
    }

    /// One HTTP/1.1 request on a connection of its own: status and body.
    pub async fn http(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, String), Unreachable> {
        let unreachable = |e: &dyn std::fmt::Display| Unreachable(format!("talking to cdpilot serve: {e}"));
        let stream = self.connect().await?;
        let body = body.map(Value::to_string).unwrap_or_default();
        let request = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, self.authority())
            .header(header::AUTHORIZATION, format!("Bearer {}", self.token))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| unreachable(&e))?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| unreachable(&e))?;
        // Drives the connection until the answer's body has been read.
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let response = sender.send_request(request).await.map_err(|e| unreachable(&e))?;
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| unreachable(&e))?
            .to_bytes();
        Ok((status, String::from_utf8_lossy(&body).into_owned()))
    }

    /// Runs `tool` in the kept session `session`: the response's `result`
    /// or `error` object. `progress` is called about every 200 ms while
    /// the call runs.
    pub async fn call(
        &self,
        session: &str,
        tool: &str,
        arguments: Value,
        mut progress: impl FnMut(Duration),
    ) -> Result<Result<Value, Value>, Unreachable> {
        let mut request = format!("ws://{}/v1/ws", self.authority())
            .into_client_request()
            .map_err(|e| Unreachable(e.to_string()))?;
        request.headers_mut().insert(
            "Authorization",
            format!("Bearer {}", self.token)
                .parse()
                .map_err(|_| Unreachable("the token is not a valid header".into()))?,
        );
        let stream = self.connect().await?;
        let (mut socket, _) = tokio_tungstenite::client_async(request, stream)
            .await
            .map_err(|e| Unreachable(format!("cannot open the WebSocket API at {}: {e}", self.url)))?;
        let hello = ClientMessage::Hello {
            protocol_version: PROTOCOL_VERSION,
            token: None,
            session: None,
            client: Some("cdpilot-cli".into()),
            ask: false,
            keep: Some(session.to_owned()),
        };
        let arguments = match arguments {
            Value::Object(map) => Some(map),
            _ => None,
        };
        let request = ClientMessage::Request {
            id: "1".into(),
            tool: tool.to_owned(),
            arguments,
            timeout_ms: None,
        };
        for message in [hello, request] {
            socket
                .send(Message::text(message.to_text()))
                .await
                .map_err(|e| Unreachable(format!("sending to cdpilot serve: {e}")))?;
        }
        let started = Instant::now();
        let mut tick = tokio::time::interval(Duration::from_millis(200));
        loop {
            let message = tokio::select! {
                message = socket.next() => message,
                _ = tick.tick() => { progress(started.elapsed()); continue; }
            };
            let text = match message {
                Some(Ok(Message::Text(text))) => text,
                Some(Ok(Message::Close(frame))) => {
                    let why = frame.map(|f| f.reason.to_string()).unwrap_or_default();
                    return Err(Unreachable(format!(
                        "cdpilot serve closed the connection ({why})"
                    )));
                }
                None => return Err(Unreachable("cdpilot serve closed the connection".into())),
                Some(Err(e)) => {
                    return Err(Unreachable(format!("the connection to cdpilot serve broke: {e}")))
                }
                Some(Ok(_)) => continue,
            };
            let message: ServerMessage = serde_json::from_str(text.as_str()).map_err(|e| {
                Unreachable(format!(
                    "cdpilot serve sent a message this CLI cannot read ({e}): {text}"
                ))
            })?;
            match message {
                ServerMessage::Reject { message, .. } => {
                    return Err(Unreachable(format!(
                        "cdpilot serve refused the session: {message}"
                    )))
                }
                ServerMessage::Error { error, .. } => return Ok(Err(error_value(error))),
                ServerMessage::Response { id, result, error } if id == "1" => {
                    let _ = socket.close(None).await;
                    return Ok(match error {
                        Some(error) => Err(error_value(error)),
                        None => Ok(result.unwrap_or(Value::Null)),
                    });
                }
                // browser_handoff: the person's link, where the user sees it.
                ServerMessage::Event { event, data, .. } if event == "handoff" => {
                    eprintln!(
                        "\nA person is needed ({}): open {}",
                        data["reason"].as_str().unwrap_or(""),
                        data["url"].as_str().unwrap_or("")
                    );
                }
                _ => {} // ack, other events
            }
        }
    }
}

/// A protocol error body as the CLI prints it (`{code, message}`).
fn error_value(error: server::serve::ws::messages::ErrorBody) -> Value {
    serde_json::to_value(error).expect("an error body serializes")
}
