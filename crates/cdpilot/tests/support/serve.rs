//! Spawning `cdpilot serve` on a free loopback port, and a WebSocket client
//! of its action API.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// A running `cdpilot serve`, killed on drop.
pub struct Serve {
    pub child: Child,
    /// The server's stderr lines after it started listening.
    pub log: Arc<Mutex<Vec<String>>>,
    /// `127.0.0.1:PORT`.
    pub authority: String,
    pub token: String,
    /// TMPDIR of the server: every Chromium it starts mentions it.
    pub tmp: tempfile::TempDir,
}

impl Serve {
    /// `cdpilot serve --listen 127.0.0.1:0` plus `flags`, with a config file
    /// holding `config` (TOML); waits until it listens.
    pub async fn start(config: &str, flags: &[&str]) -> Serve {
        let tmp = tempfile::Builder::new()
            .prefix("cdpilot-serve-test-")
            .tempdir()
            .expect("tempdir");
        Serve::start_in(tmp, "127.0.0.1:0", config, flags, &[]).await
    }

    /// [`Serve::start`] with `env` added to serve's environment.
    #[allow(dead_code)] // not every test binary sets one
    pub async fn start_with_env(config: &str, flags: &[&str], env: &[(&str, &str)]) -> Serve {
        let tmp = tempfile::Builder::new()
            .prefix("cdpilot-serve-test-")
            .tempdir()
            .expect("tempdir");
        Serve::start_in(tmp, "127.0.0.1:0", config, flags, env).await
    }

    /// Stops this serve (SIGTERM) and starts it again on the same address,
    /// TMPDIR and state directory (its extension pairings), with `config`
    /// and `flags`.
    pub async fn restart(mut self, config: &str, flags: &[&str]) -> Serve {
        self.terminate().await;
        let Serve { tmp, authority, .. } = self;
        Serve::start_in(tmp, &authority, config, flags, &[]).await
    }

    async fn start_in(
        tmp: tempfile::TempDir,
        listen: &str,
        config: &str,
        flags: &[&str],
        env: &[(&str, &str)],
    ) -> Serve {
        let config_dir = tempfile::tempdir().expect("tempdir");
        let config_path = config_dir.path().join("cdpilot.toml");
        std::fs::write(&config_path, config).unwrap();
        let chrome = testkit::chromium::executable();
        let mut child = Command::new(env!("CARGO_BIN_EXE_cdpilot"))
            .args(["serve", "--listen", listen, "--config"])
            .arg(&config_path)
            .args(flags)
            .env("TMPDIR", tmp.path())
            // Extension pairings are kept per test, not in the user's state.
            .env("CDPILOT_STATE_DIR", tmp.path().join("state"))
            .env("CDPILOT_CHROME", chrome)
            .env_remove("CDPILOT_SERVE_TOKEN")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn cdpilot serve");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut token = flags
            .iter()
            .position(|f| *f == "--token")
            .map(|i| flags[i + 1].to_owned());
        let authority = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                let line = lines
                    .next_line()
                    .await
                    .unwrap()
                    .expect("cdpilot serve exited before listening");
                eprintln!("[serve] {line}");
                if let Some(rest) = line.strip_prefix("cdpilot serve: token ") {
                    token = Some(rest.split_whitespace().next().unwrap().to_owned());
                }
                if let Some(rest) = line.strip_prefix("cdpilot serve: listening on http://") {
                    return rest.split_whitespace().next().unwrap().to_owned();
                }
            }
        })
        .await
        .expect("cdpilot serve did not listen within 30 s");
        // Keep reading stderr so the server never blocks on a full pipe;
        // the lines are kept for tests about what the log says.
        let log = Arc::new(Mutex::new(Vec::new()));
        let kept = log.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("[serve] {line}");
                kept.lock().unwrap().push(line);
            }
        });
        drop(config_dir);
        Serve {
            child,
            log,
            authority,
            token: token.expect("a token: given or printed"),
            tmp,
        }
    }

    /// `GET path` with the server's token: the body of its 200.
    pub async fn get(&self, path: &str) -> String {
        let bearer = format!("Bearer {}", self.token);
        let reply = testkit::http_mcp::http(
            &self.authority,
            "GET",
            path,
            &[("Authorization", bearer.as_str())],
            "",
        )
        .await;
        assert_eq!(reply.status, 200, "GET {path}: {reply:?}");
        reply.body
    }

    /// One sample of `/metrics`, its series written as the exposition
    /// writes it (`cdpilot_sessions_open`, `name{label="…"}`); `None` when
    /// the server shows none.
    pub async fn metric(&self, series: &str) -> Option<f64> {
        let prefix = format!("{series} ");
        self.get("/metrics")
            .await
            .lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .and_then(|v| v.trim().parse().ok())
    }

    pub fn mcp_client(&self) -> testkit::McpHttpClient {
        testkit::McpHttpClient::new(&self.authority, &self.token)
    }

    /// A WebSocket to `/v1/ws`, the token sent in `hello` (not a header).
    pub async fn ws(&self) -> Ws {
        self.ws_with_header(None).await.expect("WebSocket upgrade")
    }

    /// A WebSocket to `/v1/ws` with `Authorization: Bearer <bearer>` when given.
    pub async fn ws_with_header(
        &self,
        bearer: Option<&str>,
    ) -> Result<Ws, tokio_tungstenite::tungstenite::Error> {
        let mut request = format!("ws://{}/v1/ws", self.authority)
            .into_client_request()
            .unwrap();
        if let Some(bearer) = bearer {
            request
                .headers_mut()
                .insert("authorization", format!("Bearer {bearer}").parse().unwrap());
        }
        let (socket, _) = tokio_tungstenite::connect_async(request).await?;
        Ok(Ws { socket })
    }

    /// Sends SIGTERM and waits (bounded) for the exit status.
    pub async fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().expect("running").to_string();
        std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap();
        tokio::time::timeout(Duration::from_secs(60), self.child.wait())
            .await
            .expect("cdpilot serve did not exit within 60 s of SIGTERM")
            .unwrap()
    }
}

pub struct Ws {
    pub socket: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Ws {
    pub async fn send(&mut self, message: Value) {
        self.send_text(&message.to_string()).await;
    }

    pub async fn send_text(&mut self, text: &str) {
        self.socket
            .send(Message::text(text.to_owned()))
            .await
            .expect("send");
    }

    /// The next JSON message (60 s at most); `None` once the socket closed.
    pub async fn next(&mut self) -> Option<Value> {
        self.next_within(Duration::from_secs(60))
            .await
            .expect("no message within 60 s")
    }

    /// The next JSON message, `Some(None)` when the socket closed, `None`
    /// when nothing came within `within`.
    pub async fn next_within(&mut self, within: Duration) -> Option<Option<Value>> {
        let read = async {
            loop {
                match self.socket.next().await {
                    Some(Ok(Message::Text(text))) => {
                        return Some(serde_json::from_str(text.as_str()).expect("JSON"))
                    }
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return None,
                    Some(Ok(_)) => {}
                }
            }
        };
        tokio::time::timeout(within, read).await.ok()
    }

    /// The close frame's code, reading past other messages (60 s at most).
    pub async fn close_code(&mut self) -> Option<u16> {
        let read = async {
            loop {
                match self.socket.next().await {
                    Some(Ok(Message::Close(frame))) => return frame.map(|f| u16::from(f.code)),
                    None | Some(Err(_)) => return None,
                    Some(Ok(_)) => {}
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(60), read)
            .await
            .expect("no close within 60 s")
    }

    /// `browser_snapshot` as request `id`: the text of its result.
    pub async fn snapshot(&mut self, id: &str) -> String {
        let snap = self.call(id, "browser_snapshot", json!({})).await;
        snap["result"]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no snapshot: {snap}"))
            .to_owned()
    }

    /// `hello` with `token`; returns the server's answer.
    pub async fn hello(&mut self, token: &str) -> Value {
        self.send(json!({"type": "hello", "protocol_version": 1, "token": token, "client": "test"}))
            .await;
        self.next().await.expect("an answer to hello")
    }

    /// `hello` that must be acknowledged; returns the session id (and
    /// skips the `session_started` event).
    pub async fn open(&mut self, token: &str) -> String {
        let ack = self.hello(token).await;
        assert_eq!(ack["type"], "ack", "{ack}");
        let started = self.next().await.unwrap();
        assert_eq!(started["event"], "session_started", "{started}");
        ack["session"].as_str().unwrap().to_owned()
    }

    /// Sends a request and waits for its response (other messages are
    /// skipped after checking they answer no other request of ours).
    pub async fn call(&mut self, id: &str, tool: &str, arguments: Value) -> Value {
        self.send(json!({"type": "request", "id": id, "tool": tool, "arguments": arguments}))
            .await;
        loop {
            let message = self.next().await.expect("socket open");
            if message["type"] == "response" && message["id"] == id {
                return message;
            }
            assert_ne!(message["type"], "response", "unexpected response: {message}");
        }
    }
}

/// A WebSocket client that keeps the events it reads while waiting for a
/// response, so a test can ask for them afterwards.
pub struct Client {
    /// Its socket.
    pub ws: Ws,
    /// The session's id.
    pub session: String,
    /// Events read while waiting, not yet asked for.
    pub events: VecDeque<Value>,
}

impl Client {
    /// A new session on `serve`.
    pub async fn open(serve: &Serve) -> Client {
        let mut ws = serve.ws().await;
        let session = ws.open(&serve.token).await;
        Client {
            ws,
            session,
            events: VecDeque::new(),
        }
    }

    /// Sends a request and returns its response; events read meanwhile are kept.
    pub async fn call(&mut self, id: &str, tool: &str, arguments: Value) -> Value {
        self.ws
            .send(json!({"type": "request", "id": id, "tool": tool, "arguments": arguments}))
            .await;
        loop {
            let message = self.ws.next().await.expect("socket open");
            match message["type"].as_str() {
                Some("response") if message["id"] == id => return message,
                Some("event") => self.events.push_back(message),
                _ => panic!("unexpected message: {message}"),
            }
        }
    }

    /// A call that must succeed; its `result`.
    pub async fn ok(&mut self, id: &str, tool: &str, arguments: Value) -> Value {
        let response = self.call(id, tool, arguments.clone()).await;
        assert!(response["result"].is_object(), "{tool} {arguments}: {response}");
        response["result"].clone()
    }

    /// The first event named `name` (kept or still to come; 60 s at most),
    /// with its `data`. Events before it stay kept.
    pub async fn event(&mut self, name: &str) -> Value {
        if let Some(i) = self.events.iter().position(|e| e["event"] == name) {
            return self.events.remove(i).unwrap();
        }
        loop {
            let message = self.ws.next().await.expect("socket open");
            assert_eq!(message["type"], "event", "{message}");
            assert_eq!(message["session"], self.session.as_str(), "{message}");
            if message["event"] == name {
                return message;
            }
            self.events.push_back(message);
        }
    }

    /// Whether an event named `name` was kept.
    pub fn saw(&self, name: &str) -> bool {
        self.events.iter().any(|e| e["event"] == name)
    }
}
