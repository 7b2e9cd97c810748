//! `cdpilot mcp --extension`: MCP over stdio with sessions in the user's
//! Chrome. The binary listens on loopback for the extension (a port kept
//! in the user's state directory), `cdpilot pair` finds that listener, and
//! the extension token survives a restart (kept hashed), so the extension
//! reconnects to the next `cdpilot mcp --extension` without pairing again.
//! The popup's Stop closes the stdio session's tabs; its next call opens a
//! new window. A web page in the user's Chrome gets nothing from the
//! listener.

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::extension::{UserChrome, EXTENSION_ID};
use support::text_of;
use testkit::http_mcp::http;
use testkit::{McpClient, TestSite};

/// Where one "user" keeps its state and runtime files, and its TMPDIR.
struct Home {
    tmp: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            tmp: tempfile::Builder::new()
                .prefix("cdpilot-xstdio-")
                .tempdir()
                .unwrap(),
        }
    }

    fn path(&self, name: &str) -> String {
        let path = self.tmp.path().join(name);
        std::fs::create_dir_all(&path).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        path.display().to_string()
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("TMPDIR", self.path("tmp")),
            ("CDPILOT_STATE_DIR", self.path("state")),
            ("CDPILOT_RUNTIME_DIR", self.path("run")),
            ("CDPILOT_CONFIG", String::new()),
            (
                "CDPILOT_CHROME",
                testkit::chromium::executable().display().to_string(),
            ),
        ]
    }

    /// `cdpilot mcp --extension`, initialized, once its listener is up.
    async fn mcp(&self) -> (McpClient, Listener) {
        let env = self.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let file = Path::new(&self.path("run")).join("extension-mcp.json");
        let _ = std::fs::remove_file(&file);
        let mut client = McpClient::spawn(env!("CARGO_BIN_EXE_cdpilot"), &["mcp", "--extension"], &env);
        client.initialize().await;
        let until = Instant::now() + Duration::from_secs(20);
        let listener = loop {
            if let Some(listener) = std::fs::read_to_string(&file)
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            {
                break Listener {
                    authority: listener["url"]
                        .as_str()
                        .unwrap()
                        .trim_start_matches("http://")
                        .to_owned(),
                    token: listener["token"].as_str().unwrap().to_owned(),
                };
            }
            assert!(Instant::now() < until, "no {} within 20 s", file.display());
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        (client, listener)
    }

    /// `cdpilot pair` with no address: it finds the stdio listener.
    fn pair(&self) -> String {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
            .arg("pair")
            .envs(self.env())
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let stdout = String::from_utf8(output.stdout).unwrap();
        stdout.trim_end().lines().last().unwrap().to_owned()
    }
}

struct Listener {
    authority: String,
    token: String,
}

impl Listener {
    async fn status(&self) -> Value {
        let bearer = format!("Bearer {}", self.token);
        let reply = http(
            &self.authority,
            "GET",
            "/v1/extension/status",
            &[("Authorization", &bearer)],
            "",
        )
        .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        serde_json::from_str(&reply.body).unwrap()
    }

    async fn connected_within(&self, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        while Instant::now() < until {
            if self.status().await["connected"] == true {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        false
    }
}

#[tokio::test]
async fn mcp_over_stdio_drives_the_paired_chrome_and_a_restart_keeps_the_pairing() {
    let site = TestSite::start().await;
    let home = Home::new();
    let chrome = UserChrome::start().await;
    let own = chrome.open(&site.url("/index.html?users-own")).await;

    let (mut mcp, listener) = home.mcp().await;
    let unpaired = listener.status().await;
    assert_eq!(unpaired["paired"], false, "{unpaired}");
    let link = home.pair();
    assert!(
        link.starts_with(&format!(
            "chrome-extension://{EXTENSION_ID}/pair.html#server=ws://{}&code=",
            listener.authority
        )),
        "{link}"
    );
    let page = chrome.open(&link).await;
    let page = chrome.session(&page).await;
    let said = "new Promise(r => { const go = () => { const s = document.getElementById('status'); s && s.className ? r(s.className + ': ' + s.textContent) : setTimeout(go, 50); }; go(); })";
    let said = UserChrome::eval(&page, said).await;
    assert!(said.as_str().unwrap().starts_with("ok"), "{said}");
    assert!(
        listener.connected_within(Duration::from_secs(10)).await,
        "the relay connected"
    );

    let nav = mcp
        .call("browser_navigate", json!({"url": site.url("/form.html")}))
        .await;
    assert_eq!(nav["isError"], false, "{nav}");
    let snapshot = text_of(&mcp.call("browser_snapshot", json!({})).await);
    support::ref_on_line(&snapshot, "textbox \"Email\"");
    let agent = chrome.agent_pages().await;
    assert!(
        agent
            .iter()
            .any(|t| t["url"].as_str().unwrap().ends_with("/form.html")),
        "the agent's tab is in the user's Chrome: {agent:?}"
    );
    let tabs = mcp.call("browser_tabs", json!({"action": "list"})).await;
    assert_eq!(
        tabs["structuredContent"]["tabs"].as_array().unwrap().len(),
        1,
        "{tabs}"
    );
    assert_eq!(listener.status().await["sessions"], 1);
    // The popup names the session by its MCP client (clientInfo.name).
    let popup = chrome.popup().await;
    let named = "new Promise(r => { const go = () => { const c = document.querySelector('#sessions tr[data-context] td'); c && c.textContent === 'cdpilot-testkit' ? r(true) : setTimeout(go, 100); }; go(); })";
    assert_eq!(UserChrome::eval(&popup, named).await, true);

    // cdpilot mcp ends (the client went away) and starts again: same port,
    // the extension comes back with the token it kept, no pairing.
    mcp.close_stdin();
    let _ = tokio::time::timeout(Duration::from_secs(20), mcp.child.wait()).await;
    let (mut mcp, again) = home.mcp().await;
    assert_eq!(again.authority, listener.authority, "the same port as before");
    assert!(
        again.connected_within(Duration::from_secs(15)).await,
        "the extension reconnected without pairing again"
    );
    assert_eq!(again.status().await["paired"], true);
    let nav = mcp
        .call(
            "browser_navigate",
            json!({"url": site.url("/index.html?after-restart")}),
        )
        .await;
    assert_eq!(nav["isError"], false, "{nav}");
    assert!(site.a_received("/index.html?after-restart"));

    // The user's own tab was never touched.
    let targets = chrome.targets().await;
    let own_now = targets.iter().find(|t| t["targetId"] == own.as_str()).unwrap();
    assert_eq!(own_now["url"], site.url("/index.html?users-own"), "{own_now}");
    let loads = site
        .received()
        .iter()
        .filter(|r| r.path == "/index.html?users-own")
        .count();
    assert_eq!(loads, 1);
    let state = std::fs::read_to_string(Path::new(&home.path("state")).join("extension-tokens")).unwrap();
    assert_eq!(state.lines().count(), 1, "one pairing, one hash kept: {state}");

    // Stop in the popup: the stdio session's tabs close at once; its next
    // call opens a new window (stdio has one session, as after an idle expiry).
    let popup = chrome.popup().await;
    let stop = "new Promise(r => { const go = () => { const b = document.querySelector('tr[data-context] button.stop'); if (!b) return setTimeout(go, 50); b.click(); r(true); }; go(); })";
    assert_eq!(UserChrome::eval(&popup, stop).await, true);
    let until = Instant::now() + Duration::from_secs(10);
    let agents = || async {
        let pages = chrome.agent_pages().await;
        pages
            .into_iter()
            .filter(|t| t["targetId"] != own.as_str())
            .count()
    };
    while agents().await > 0 {
        assert!(Instant::now() < until, "the stopped session's tabs stayed open");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let nav = mcp
        .call(
            "browser_navigate",
            json!({"url": site.url("/index.html?after-stop")}),
        )
        .await;
    assert_eq!(nav["isError"], false, "{nav}");
    let tabs = mcp.call("browser_tabs", json!({"action": "list"})).await;
    assert_eq!(
        tabs["structuredContent"]["tabs"].as_array().unwrap().len(),
        1,
        "{tabs}"
    );
}

#[tokio::test]
async fn a_web_page_in_the_users_chrome_cannot_pair_or_relay_through_the_stdio_listener() {
    let site = TestSite::start().await;
    let home = Home::new();
    let chrome = UserChrome::start().await;
    let (_mcp, listener) = home.mcp().await;
    // A page the user visits knows (or guesses) the loopback port.
    let tab = chrome.open(&site.url("/index.html")).await;
    let page = chrome.session(&tab).await;
    let attack = format!(
        "(async () => {{
  const said = [];
  for (const hello of [{{type: 'hello', protocol_version: 1, client: 'extension', code: 'guess'}}, {{type: 'hello', protocol_version: 1, client: 'extension', token: 'guess'}}]) {{
    said.push(await new Promise((resolve) => {{
      const ws = new WebSocket('ws://{authority}/v1/extension');
      ws.onopen = () => ws.send(JSON.stringify(hello));
      ws.onmessage = (m) => resolve('message: ' + m.data);
      ws.onerror = () => resolve('error');
      ws.onclose = () => resolve('closed');
    }}));
  }}
  for (const [method, path] of [['POST', '/v1/extension/pair'], ['GET', '/v1/extension/status']]) {{
    said.push(await fetch('http://{authority}' + path, {{method}}).then((r) => 'http ' + r.status, () => 'fetch refused'));
  }}
  return said;
}})()",
        authority = listener.authority
    );
    let said = UserChrome::eval(&page, &attack).await;
    let said: Vec<&str> = said
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    // The upgrade is refused for a web page's Origin: no hello is read.
    assert_eq!(&said[..2], ["error", "error"], "{said:?}");
    // Without the listener's token (and from a web page's Origin) nothing
    // answers: no code is handed out.
    for answer in &said[2..] {
        assert!(*answer == "fetch refused" || *answer == "http 403", "{said:?}");
    }
    // What the browser keeps from the page, the server says too: a web
    // page's Origin is refused, even with the listener's token.
    let origin = site.url("/");
    let origin = origin.trim_end_matches('/');
    let bearer = format!("Bearer {}", listener.token);
    let reply = http(
        &listener.authority,
        "POST",
        "/v1/extension/pair",
        &[("Origin", origin), ("Authorization", &bearer)],
        "",
    )
    .await;
    assert_eq!(reply.status, 403, "{}", reply.body);
    let status = listener.status().await;
    assert_eq!(status["paired"], false, "{status}");
    assert_eq!(status["connected"], false, "{status}");
}
