//! What every figure uses: the server it spawns, the medians it prints, a
//! raw CDP page beside it, and the first navigate of a fresh server.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use testkit::{McpClient, TestSite};

/// The binary measured: `$CDPILOT_BENCH_BIN`, else this build's.
fn binary() -> String {
    std::env::var("CDPILOT_BENCH_BIN")
        .ok()
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_cdpilot").to_owned())
}

/// `cdpilot mcp` on the test Chromium, no configuration file.
pub fn spawn() -> McpClient {
    spawn_with(&[], &[])
}

/// `cdpilot mcp` with more arguments and environment.
pub fn spawn_with(args: &[&str], env: &[(&str, &str)]) -> McpClient {
    spawn_binary(&binary(), args, env)
}

/// `cdpilot mcp` of the binary at `binary` (a build to compare with).
pub fn spawn_binary(binary: &str, args: &[&str], env: &[(&str, &str)]) -> McpClient {
    let chrome = testkit::chromium::executable();
    let mut vars = vec![
        ("CDPILOT_CHROME", chrome.to_str().unwrap()),
        ("CDPILOT_CONFIG", ""),
    ];
    vars.extend_from_slice(env);
    let mut all = vec!["mcp"];
    all.extend_from_slice(args);
    McpClient::spawn(binary, &all, &vars)
}

pub async fn shutdown(mut client: McpClient) {
    client.close_stdin();
    let _ = tokio::time::timeout(Duration::from_secs(10), client.child.wait()).await;
}

/// The first navigate of a fresh server (its browser's start), `pause`
/// after initialize: its wall time.
pub async fn first_navigate(site: &TestSite, env: &[(&str, &str)], pause: Duration) -> Duration {
    let mut client = spawn_with(&[], env);
    client.initialize().await;
    tokio::time::sleep(pause).await;
    let began = Instant::now();
    let nav = client
        .call("browser_navigate", json!({"url": site.url("/")}))
        .await;
    let took = began.elapsed();
    assert_eq!(nav["isError"], false, "{nav}");
    shutdown(client).await;
    took
}

pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

pub fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

pub fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A deadline for one raw CDP command (raw CDP has none of its own).
pub fn soon() -> tokio::time::Instant {
    tokio::time::Instant::now() + Duration::from_secs(30)
}

/// A separately launched Chromium's first page, attached over raw CDP (our
/// `cdp` crate, no engine, no MCP), with page events on.
pub struct RawPage {
    process: cdp::launch::BrowserProcess,
    conn: cdp::Connection,
    pub session: cdp::Session,
}

impl RawPage {
    pub async fn open(options: &cdp::launch::LaunchOptions) -> RawPage {
        use cdp::protocol::{page, target};
        let process = cdp::launch::launch(options, Duration::from_secs(30))
            .await
            .expect("launch");
        let conn = cdp::Connection::open(process.transport()).await.expect("connect");
        let targets = conn.browser().call(target::GetTargets {}, soon()).await.unwrap();
        let page_id = targets
            .target_infos
            .into_iter()
            .find(|t| t.kind == "page")
            .unwrap()
            .target_id;
        let attached = conn
            .browser()
            .call(
                target::AttachToTarget {
                    target_id: page_id,
                    flatten: true,
                },
                soon(),
            )
            .await
            .unwrap();
        let session = conn.session(attached.session_id);
        session.call(page::Enable {}, soon()).await.unwrap();
        RawPage {
            process,
            conn,
            session,
        }
    }

    /// Navigates and waits for the load event.
    pub async fn load(&self, url: String) {
        use cdp::protocol::page;
        let mut events = self.session.events();
        self.session.call(page::Navigate { url }, soon()).await.unwrap();
        while let Some(e) = events.recv().await {
            if e.is::<page::LoadEventFired>() {
                break;
            }
        }
    }

    pub async fn close(self) {
        self.conn.close();
        self.process.shutdown(Duration::from_secs(5)).await;
    }
}
