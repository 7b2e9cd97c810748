//! A minimal MCP client over stdio for tests: newline-delimited JSON-RPC to
//! a spawned binary, reading exactly what a real client would read.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

pub struct McpClient {
    pub child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
    next_id: u64,
    /// Notifications received while waiting for responses.
    pub notifications: Vec<Value>,
}

impl McpClient {
    /// Spawns `program args…` with piped stdio (stderr inherited, so server
    /// logs show up in test output).
    pub fn spawn(program: &str, args: &[&str], env: &[(&str, &str)]) -> McpClient {
        let mut command = Command::new(program);
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("spawn MCP server");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
        McpClient {
            child,
            stdin,
            stdout,
            next_id: 1,
            notifications: Vec::new(),
        }
    }

    /// `initialize` + `notifications/initialized`; returns the initialize result.
    pub async fn initialize(&mut self) -> Value {
        let result = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "cdpilot-testkit", "version": "0"}
                }),
            )
            .await;
        self.notify("notifications/initialized", json!({})).await;
        result.expect("initialize succeeded")
    }

    pub async fn list_tools(&mut self) -> Vec<Value> {
        let result = self.request("tools/list", json!({})).await.expect("tools/list");
        result["tools"].as_array().cloned().unwrap_or_default()
    }

    /// `tools/call`; returns the CallToolResult (tool errors are results too).
    pub async fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
            .await
            .unwrap_or_else(|e| panic!("tools/call {name} got a protocol error: {e}"))
    }

    /// Sends a request and waits for its response: `Ok(result)` or
    /// `Err(error object)`.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.send_request(method, params).await;
        self.response(id).await
    }

    /// Sends a request without waiting; returns its id.
    pub async fn send_request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.write(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// Waits for the response to request `id` (60 s at most).
    pub async fn response(&mut self, id: u64) -> Result<Value, Value> {
        let wait = async {
            loop {
                let line = self
                    .stdout
                    .next_line()
                    .await
                    .expect("read stdout")
                    .expect("server closed stdout before answering");
                let message: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("server wrote a non-JSON line ({e}): {line}"));
                if message["id"] == json!(id) {
                    return match message.get("error") {
                        Some(error) => Err(error.clone()),
                        None => Ok(message["result"].clone()),
                    };
                }
                self.notifications.push(message);
            }
        };
        tokio::time::timeout(Duration::from_secs(60), wait)
            .await
            .expect("no MCP response within 60 s")
    }

    /// An id no request of this client has used (for hand-written lines).
    pub fn fresh_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id - 1
    }

    /// Sends `line` exactly as given (a newline is added): for lines no
    /// well-behaved client would write.
    pub async fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).await.expect("write stdin");
        stdin.write_all(b"\n").await.expect("write stdin");
        stdin.flush().await.expect("flush stdin");
    }

    /// The next message the server writes, whatever it is; `None` when
    /// nothing comes within `within`.
    pub async fn next_message(&mut self, within: Duration) -> Option<Value> {
        let line = tokio::time::timeout(within, self.stdout.next_line())
            .await
            .ok()?
            .expect("read stdout")
            .expect("server closed stdout");
        Some(
            serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("server wrote a non-JSON line ({e}): {line}")),
        )
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        self.write(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// Closes the server's stdin, as a client does when it goes away.
    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    async fn write(&mut self, message: Value) {
        self.send_line(&message.to_string()).await;
    }
}
