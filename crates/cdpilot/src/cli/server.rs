//! Finding, or starting, the `cdpilot serve` the CLI talks to, and talking
//! to it: one WebSocket request per CLI call, plain HTTP for the dashboard
//! endpoints (`sessions`, `stop`).
//!
//! Owns the runtime directory: `$CDPILOT_RUNTIME_DIR`, else
//! `$XDG_RUNTIME_DIR/cdpilot`, else `/tmp/cdpilot-<uid>` (mode 0700). In it:
//! `token` (0600, the bearer token), `serve.json` (0600, `{url, pid}`, written
//! by the server once it listens, removed when it exits), `serve.log` (the
//! server's stderr) and `start.lock` (while one CLI starts the server).

use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
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
}

/// The runtime directory, made (0700) if missing.
pub fn runtime_dir() -> Result<PathBuf, Unreachable> {
    let dir = match std::env::var_os("CDPILOT_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
            Some(dir) => PathBuf::from(dir).join("cdpilot"),
            None => {
                let uid = std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(0);
                PathBuf::from(format!("/tmp/cdpilot-{uid}"))
            }
        },
    };
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

/// The background server's pid, when its state file names a live one.
pub fn background_pid() -> Option<u32> {
    let dir = runtime_dir().ok()?;
    let (_, pid) = read_state(&dir)?;
    std::path::Path::new(&format!("/proc/{pid}"))
        .exists()
        .then_some(pid)
}

/// The running background server, if one answers.
pub async fn find() -> Result<Option<Server>, Unreachable> {
    let dir = runtime_dir()?;
    let Some((url, _)) = read_state(&dir) else {
        return Ok(None);
    };
    let Ok(token) = std::fs::read_to_string(dir.join("token")) else {
        return Ok(None);
    };
    let server = Server {
        url,
        token: token.trim().to_owned(),
    };
    Ok(server.answers().await.then_some(server))
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

    /// Whether `/healthz` answers with this token.
    async fn answers(&self) -> bool {
        matches!(
            tokio::time::timeout(Duration::from_secs(2), self.http("GET", "/healthz", None)).await,
            Ok(Ok((200, _)))
        )
    }

    /// One HTTP/1.1 request (Connection: close): status and body.
    pub async fn http(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, String), Unreachable> {
        let mut stream = tokio::net::TcpStream::connect(self.authority())
            .await
            .map_err(|e| Unreachable(format!("cannot reach cdpilot serve at {}: {e}", self.url)))?;
        let body = body.map(Value::to_string).unwrap_or_default();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.authority(),
            self.token,
            body.len()
        );
        let io = async {
            stream.write_all(request.as_bytes()).await?;
            let mut response = Vec::new();
            stream.read_to_end(&mut response).await?;
            Ok::<_, std::io::Error>(response)
        };
        let response = io
            .await
            .map_err(|e| Unreachable(format!("talking to cdpilot serve: {e}")))?;
        let text = String::from_utf8_lossy(&response);
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let body = match head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
            true => dechunk(body),
            false => body.to_owned(),
        };
        Ok((status, body))
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
        let (mut socket, _) = tokio_tungstenite::connect_async(request)
            .await
            .map_err(|e| Unreachable(format!("cannot open the WebSocket API at {}: {e}", self.url)))?;
        let hello = json!({"type": "hello", "protocol_version": 1, "keep": session, "client": "cdpilot-cli"});
        let request = json!({"type": "request", "id": "1", "tool": tool, "arguments": arguments});
        for message in [hello, request] {
            socket
                .send(Message::text(message.to_string()))
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
            let message: Value = serde_json::from_str(text.as_str()).unwrap_or_default();
            match message["type"].as_str() {
                Some("reject") => {
                    return Err(Unreachable(format!(
                        "cdpilot serve refused the session: {}",
                        message["message"].as_str().unwrap_or("")
                    )))
                }
                Some("error") => return Ok(Err(message["error"].clone())),
                Some("response") if message["id"] == "1" => {
                    let _ = socket.close(None).await;
                    return Ok(match message.get("error") {
                        Some(error) => Err(error.clone()),
                        None => Ok(message["result"].clone()),
                    });
                }
                // browser_handoff: the person's link, where the user sees it.
                Some("event") if message["event"] == "handoff" => {
                    let data = &message["data"];
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

/// The body of a chunked HTTP response.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}
