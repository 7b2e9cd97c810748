//! What the CLI and the dashboard cost (issue 11):
//!
//! 1. Tokens: one five-step task on the test site (open, snapshot, click,
//!    type --submit, extract) through the CLI, counting the characters it
//!    prints (stdout and stderr, what a shell-driven model reads), and the
//!    same five tool calls over MCP stdio, counting the characters of the
//!    results (the text blocks alone, and the whole result JSON with
//!    `structuredContent`, which clients may also hand the model).
//! 2. Audit thumbnails: click latency (p50) over the WebSocket API with no
//!    dashboard open, then with one open (thumbnails taken after each page
//!    action, off the call's path), and what each thumbnail cost the server
//!    (its own figures in `/v1/dashboard/state`).
//!
//! Run: `cargo bench -p cdpilot --bench cli`. Not a test: asserts nothing.

#[path = "../tests/support/serve.rs"]
#[allow(dead_code)]
mod serve;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use testkit::{McpClient, TestSite};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn cli(runtime: &std::path::Path, tmp: &std::path::Path, args: &[&str]) -> (String, usize) {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
        .args(args)
        .env("CDPILOT_RUNTIME_DIR", runtime)
        .env("TMPDIR", tmp)
        .env("CDPILOT_CHROME", testkit::chromium::executable())
        .env("CDPILOT_CONFIG", "")
        .output()
        .await
        .expect("cdpilot");
    assert!(output.status.success(), "cdpilot {args:?}: {output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let printed = stdout.chars().count() + String::from_utf8_lossy(&output.stderr).chars().count();
    (stdout, printed)
}

fn ref_on(snapshot: &str, needle: &str) -> String {
    let line = snapshot.lines().find(|l| l.contains(needle)).expect(needle);
    let start = line.find("[ref=").expect("a ref") + 5;
    line[start..start + line[start..].find(']').unwrap()].to_owned()
}

async fn tokens(site: &TestSite) {
    let dir = tempfile::tempdir().unwrap();
    let runtime = dir.path().join("run");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut cli_chars = Vec::new();
    let (_, n) = cli(&runtime, &tmp, &["open", &site.url("/index.html")]).await;
    cli_chars.push(n);
    let (snapshot, n) = cli(&runtime, &tmp, &["snapshot"]).await;
    cli_chars.push(n);
    let link = ref_on(&snapshot, "Go to form");
    let (_, n) = cli(&runtime, &tmp, &["click", &link]).await;
    cli_chars.push(n);
    let (_, n) = cli(
        &runtime,
        &tmp,
        &["type", "--selector", "#email", "new@example.com", "--submit"],
    )
    .await;
    cli_chars.push(n);
    let (_, n) = cli(&runtime, &tmp, &["extract"]).await;
    cli_chars.push(n);
    cli(&runtime, &tmp, &["stop", "--all"]).await;

    let chrome = testkit::chromium::executable();
    let mut mcp = McpClient::spawn(
        env!("CARGO_BIN_EXE_cdpilot"),
        &["mcp"],
        &[
            ("TMPDIR", tmp.to_str().unwrap()),
            ("CDPILOT_CHROME", chrome.to_str().unwrap()),
            ("CDPILOT_CONFIG", ""),
        ],
    );
    mcp.initialize().await;
    let mut text_chars = Vec::new();
    let mut json_chars = Vec::new();
    let mut count = |result: &Value| {
        let text: usize = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["text"].as_str())
            .map(|t| t.chars().count())
            .sum();
        text_chars.push(text);
        json_chars.push(result.to_string().chars().count());
    };
    count(
        &mcp.call("browser_navigate", json!({"url": site.url("/index.html")}))
            .await,
    );
    let snapshot = mcp.call("browser_snapshot", json!({})).await;
    count(&snapshot);
    let link = ref_on(snapshot["content"][0]["text"].as_str().unwrap(), "Go to form");
    count(&mcp.call("browser_click", json!({"ref": link})).await);
    count(
        &mcp.call(
            "browser_type",
            json!({"selector": "#email", "text": "new@example.com", "submit": true}),
        )
        .await,
    );
    count(&mcp.call("browser_extract", json!({})).await);
    mcp.close_stdin();

    let sum = |v: &[usize]| v.iter().sum::<usize>();
    println!("five-step task (open, snapshot, click, type --submit, extract), characters:");
    println!(
        "  CLI printed (stdout+stderr):        {:>6}  per step {cli_chars:?}",
        sum(&cli_chars)
    );
    println!(
        "  MCP results, text blocks:           {:>6}  per step {text_chars:?}",
        sum(&text_chars)
    );
    println!(
        "  MCP results, whole JSON (+structured): {:>3}  per step {json_chars:?}",
        sum(&json_chars)
    );
}

async fn get_state(serve: &serve::Serve) -> Value {
    let mut stream = tokio::net::TcpStream::connect(&serve.authority).await.unwrap();
    let request = format!(
        "GET /v1/dashboard/state HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
        serve.authority, serve.token
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let body = response.split_once("\r\n\r\n").unwrap().1;
    serde_json::from_str(body).unwrap()
}

fn p50(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

async fn clicks(ws: &mut serve::Ws, n: usize, tag: &str) -> Vec<Duration> {
    let mut took = Vec::new();
    for i in 0..n {
        let started = Instant::now();
        let response = ws
            .call(
                &format!("{tag}{i}"),
                "browser_click",
                json!({"selector": "button"}),
            )
            .await;
        assert!(response.get("error").is_none(), "{response}");
        took.push(started.elapsed());
    }
    took
}

async fn thumbnails(site: &TestSite) {
    let serve = serve::Serve::start("", &[]).await;
    let mut ws = serve.ws().await;
    ws.open(&serve.token).await;
    ws.call("nav", "browser_navigate", json!({"url": site.url("/index.html")}))
        .await;
    clicks(&mut ws, 5, "warm").await;
    let unwatched = p50(clicks(&mut ws, 40, "a").await);
    get_state(&serve).await; // a dashboard is open from now on
    let watched = p50(clicks(&mut ws, 40, "b").await);
    tokio::time::sleep(Duration::from_millis(500)).await; // the last thumbnails land
    let state = get_state(&serve).await;
    println!("audit thumbnails (240 px JPEG after each page action, while a dashboard is open):");
    println!("  click p50 without a dashboard: {unwatched:?}; with one (thumbnails on): {watched:?}");
    println!("  per thumbnail (server's own figures): {}", state["thumbnails"]);
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let site = TestSite::start().await;
    tokens(&site).await;
    thumbnails(&site).await;
}
