//! The user's own Chrome through the cdpilot extension (issue 22): a real
//! `cdpilot serve --extension`, a real headless Chromium that loads the
//! unpacked extension from `extension/` (a fresh profile: "the user's
//! Chrome"), pages from the two-origin test site. The harness drives the
//! user's side (opening the pairing link, the popup's buttons, stopping the
//! service worker) through that Chromium's own DevTools pipe.

mod support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cdp::launch::{self, BrowserProcess, LaunchOptions};
use cdp::{Connection, Session};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use support::serve::Serve;
use support::text_of;
use testkit::http_mcp::http;
use testkit::TestSite;
use tokio_tungstenite::tungstenite::Message;

const EXTENSION_ID: &str = "cgolnlbbddjholdlhbgdgeffmhifhpfg";

fn extension_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../extension").canonicalize().unwrap()
}

fn soon() -> tokio::time::Instant {
    tokio::time::Instant::now() + Duration::from_secs(20)
}

/// The user's Chrome: headless Chromium with the extension loaded, driven
/// by the test through its DevTools pipe (never by cdpilot).
struct UserChrome {
    process: Option<BrowserProcess>,
    conn: Connection,
}

impl UserChrome {
    async fn start() -> UserChrome {
        let dir = extension_dir();
        let options = LaunchOptions {
            executable: Some(testkit::chromium::executable()),
            headless: true,
            args: vec![
                "--site-per-process".into(),
                format!("--load-extension={}", dir.display()),
                format!("--disable-extensions-except={}", dir.display()),
            ],
            ..Default::default()
        };
        let process = launch::launch(&options, Duration::from_secs(30)).await.unwrap();
        let conn = Connection::open(process.transport()).await.unwrap();
        UserChrome {
            process: Some(process),
            conn,
        }
    }

    /// Opens `url` in a new tab of the user's; its target id.
    async fn open(&self, url: &str) -> String {
        let created = self
            .conn
            .browser()
            .send("Target.createTarget", json!({"url": url}), soon())
            .await
            .unwrap();
        created["targetId"].as_str().unwrap().to_owned()
    }

    async fn session(&self, target_id: &str) -> Session {
        let attached = self
            .conn
            .browser()
            .send(
                "Target.attachToTarget",
                json!({"targetId": target_id, "flatten": true}),
                soon(),
            )
            .await
            .unwrap();
        self.conn.session(attached["sessionId"].as_str().unwrap())
    }

    /// Evaluates `expression` (awaited) in page `session`; a page still
    /// loading (its first document replaced) is asked again in its next one.
    async fn eval(session: &Session, expression: &str) -> Value {
        let until = soon();
        loop {
            let answer = session
                .send(
                    "Runtime.evaluate",
                    json!({"expression": expression, "awaitPromise": true, "returnByValue": true}),
                    until,
                )
                .await;
            match answer {
                Ok(answer) => return answer["result"]["value"].clone(),
                Err(e) if e.kind() == cdp::ProtocolErrorKind::ContextGone && tokio::time::Instant::now() < until => {
                    tokio::time::sleep(Duration::from_millis(50)).await
                }
                Err(e) => panic!("{expression}: {e}"),
            }
        }
    }

    async fn targets(&self) -> Vec<Value> {
        let answer = self
            .conn
            .browser()
            .send("Target.getTargets", json!({}), soon())
            .await
            .unwrap();
        answer["targetInfos"].as_array().unwrap().clone()
    }

    /// The extension's popup, opened as a tab (its buttons and state).
    async fn popup(&self) -> Session {
        let target = self
            .open(&format!("chrome-extension://{EXTENSION_ID}/popup.html"))
            .await;
        let popup = self.session(&target).await;
        let ready = "new Promise(r => { const go = () => document.getElementById('pairing').textContent ? r(true) : setTimeout(go, 50); go(); })";
        UserChrome::eval(&popup, ready).await;
        popup
    }
}

impl Drop for UserChrome {
    fn drop(&mut self) {
        self.conn.close();
        drop(self.process.take());
    }
}

/// `GET /v1/extension/status`.
async fn status(serve: &Serve) -> Value {
    let bearer = format!("Bearer {}", serve.token);
    let reply = http(
        &serve.authority,
        "GET",
        "/v1/extension/status",
        &[("Authorization", &bearer)],
        "",
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    serde_json::from_str(&reply.body).unwrap()
}

/// Waits (up to `limit`) until the status says the extension is connected.
async fn connected_within(serve: &Serve, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if status(serve).await["connected"] == true {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

/// `cdpilot pair` against `serve`: its stdout's last line.
fn pair_link(serve: &Serve) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
        .args([
            "pair",
            "--server",
            &format!("http://{}", serve.authority),
            "--token",
            &serve.token,
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8(output.stdout).unwrap();
    stdout.trim_end().lines().last().unwrap().to_owned()
}

/// A serve with `--extension`, the user's Chrome, paired.
async fn paired(config: &str) -> (Serve, UserChrome) {
    let serve = Serve::start(config, &["--extension"]).await;
    let chrome = UserChrome::start().await;
    let link = pair_link(&serve);
    assert!(
        link.starts_with(&format!("chrome-extension://{EXTENSION_ID}/pair.html#server=ws://127.0.0.1:")),
        "{link}"
    );
    let page = chrome.open(&link).await;
    let page = chrome.session(&page).await;
    let said = "new Promise(r => { const go = () => { const s = document.getElementById('status'); s && s.className ? r(s.className + ': ' + s.textContent) : setTimeout(go, 50); }; go(); })";
    let said = UserChrome::eval(&page, said).await;
    assert!(said.as_str().unwrap().starts_with("ok"), "{said}");
    assert!(connected_within(&serve, Duration::from_secs(10)).await, "the relay connected");
    (serve, chrome)
}

/// A raw relay socket to `/v1/extension` (what the extension speaks).
async fn relay_socket(
    serve: &Serve,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>> {
    let (socket, _) = tokio_tungstenite::connect_async(format!("ws://{}/v1/extension", serve.authority))
        .await
        .unwrap();
    socket
}

async fn first_json(
    socket: &mut tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
) -> Value {
    loop {
        match tokio::time::timeout(Duration::from_secs(10), socket.next()).await.unwrap() {
            Some(Ok(Message::Text(text))) => return serde_json::from_str(text.as_str()).unwrap(),
            Some(Ok(_)) => continue,
            other => panic!("no message: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_bad_token_and_a_spent_or_wrong_code_are_rejected() {
    let serve = Serve::start("", &["--extension"]).await;
    let mut socket = relay_socket(&serve).await;
    socket
        .send(Message::text(
            json!({"type": "hello", "protocol_version": 1, "client": "extension", "token": "forged"}).to_string(),
        ))
        .await
        .unwrap();
    let answer = first_json(&mut socket).await;
    assert_eq!(answer["type"], "reject", "{answer}");
    assert_eq!(answer["reason"], "bad_token", "{answer}");

    let link = pair_link(&serve);
    let code = link.rsplit_once("code=").unwrap().1.to_owned();
    let hello = json!({"type": "hello", "protocol_version": 1, "client": "extension", "code": code}).to_string();
    let mut first = relay_socket(&serve).await;
    first.send(Message::text(hello.clone())).await.unwrap();
    let ack = first_json(&mut first).await;
    assert_eq!(ack["type"], "ack", "{ack}");
    let token = ack["token"].as_str().expect("a long-lived token").to_owned();
    // The code is spent.
    let mut second = relay_socket(&serve).await;
    second.send(Message::text(hello)).await.unwrap();
    let again = first_json(&mut second).await;
    assert_eq!(again["reason"], "bad_token", "{again}");
    // A broken envelope is answered, and the relay stays up.
    first.send(Message::text("{\"type\":\"response\"}")).await.unwrap();
    let error = first_json(&mut first).await;
    assert_eq!(error["type"], "error", "{error}");
    first.send(Message::text("{\"type\":\"ping\"}")).await.unwrap();
    assert_eq!(first_json(&mut first).await["type"], "pong");
    drop(first);
    // The token reconnects.
    let mut third = relay_socket(&serve).await;
    third
        .send(Message::text(
            json!({"type": "hello", "protocol_version": 1, "client": "extension", "token": token}).to_string(),
        ))
        .await
        .unwrap();
    assert_eq!(first_json(&mut third).await["type"], "ack");
    assert_eq!(status(&serve).await["paired"], true);
}

#[tokio::test]
async fn every_tool_works_through_the_relay_and_the_users_own_tab_is_left_alone() {
    let site = TestSite::start().await;
    let (serve, chrome) = paired("").await;
    // The user's own tab, open before the agent starts.
    let own = chrome.open(&site.url("/index.html")).await;

    let mut mcp = serve.mcp_client();
    assert_eq!(mcp.initialize().await.status, 200);
    let nav = mcp
        .call("browser_navigate", json!({"url": site.url("/counter.html")}))
        .await;
    assert_eq!(nav["isError"], false, "{nav}");
    let snapshot = text_of(&mcp.call("browser_snapshot", json!({})).await);
    let add = support::ref_on_line(&snapshot, "Add one");
    let click = mcp.call("browser_click", json!({"ref": add})).await;
    assert_eq!(click["isError"], false, "{click}");
    let name = support::ref_on_line(&snapshot, "Name");
    let typed = mcp
        .call("browser_type", json!({"ref": name, "text": "Ada"}))
        .await;
    assert_eq!(typed["isError"], false, "{typed}");
    let read = mcp
        .call(
            "browser_evaluate",
            json!({"expression": "document.getElementById('count').textContent + ' ' + document.getElementById('name').value"}),
        )
        .await;
    assert_eq!(read["structuredContent"]["value"], "Clicked 1 times Ada", "{read}");

    // A cross-origin iframe (its own process): its content is in the snapshot.
    let frames = mcp
        .call("browser_navigate", json!({"url": site.url("/frames.html")}))
        .await;
    assert_eq!(frames["isError"], false, "{frames}");
    let snapshot = text_of(&mcp.call("browser_snapshot", json!({})).await);
    assert!(snapshot.contains("Child frame"), "{snapshot}");

    // A dialog, answered.
    let nav = mcp
        .call("browser_navigate", json!({"url": site.url("/dialogs.html")}))
        .await;
    assert_eq!(nav["isError"], false, "{nav}");
    let snapshot = text_of(&mcp.call("browser_snapshot", json!({})).await);
    let chain = support::ref_on_line(&snapshot, "Chain");
    let clicked = mcp.call("browser_click", json!({"ref": chain})).await;
    assert!(text_of(&clicked).contains("first"), "{clicked}");
    let answered = mcp
        .call("browser_dialog", json!({"action": "accept"}))
        .await;
    assert_eq!(answered["isError"], false, "{answered}");

    // The agent's tabs are the only ones it can list; the user's tab is
    // where it was, in a window the agent never touched.
    let tabs = mcp.call("browser_tabs", json!({"action": "list"})).await;
    let listed = tabs["structuredContent"]["tabs"].as_array().unwrap().clone();
    assert_eq!(listed.len(), 1, "{tabs}");
    let targets = chrome.targets().await;
    let own_now = targets.iter().find(|t| t["targetId"] == own.as_str()).unwrap();
    assert_eq!(own_now["url"], site.url("/index.html"), "{own_now}");
    let user_tab_seen = site
        .received()
        .iter()
        .filter(|r| r.path.starts_with("/index.html"))
        .count();
    assert_eq!(user_tab_seen, 1, "the user's tab was loaded once, by the user");
    assert_eq!(status(&serve).await["sessions"], 1);
    // It all ran in the user's Chrome: the agent's tab is there, and serve
    // launched no browser of its own.
    assert!(
        targets.iter().any(|t| t["url"] == site.url("/dialogs.html")),
        "{targets:?}"
    );
    assert!(support::chromium_processes(serve.tmp.path()).is_empty());
}
