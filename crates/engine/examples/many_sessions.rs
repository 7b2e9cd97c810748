//! Runs N sessions at once on one shared Chromium, each in a browser context
//! of its own: each opens a page, writes a cookie, and reads back only its own.
//!
//! `cargo run -p cdpilot-engine --example many_sessions -- [N] [URL]`
//! (default 4 sessions on the test site, served on loopback).

use std::time::{Duration, Instant};

use engine::{dispatch, ActionError, Budget, Config, Engine, Session};
use futures_util::future::join_all;
use serde_json::json;

/// One session's run, through the dispatch every transport uses (tool name
/// and JSON arguments, as an agent would send them).
async fn run(session: &Session, n: usize, url: &str) -> Result<String, ActionError> {
    let call = |tool: &'static str, arguments: serde_json::Value| {
        dispatch::call(session, tool, arguments, Default::default())
    };
    call("browser_navigate", json!({"url": url})).await?;
    let write = format!("document.cookie = 'who=session{n}'; document.cookie");
    call("browser_evaluate", json!({"expression": write})).await?;
    let snapshot = call("browser_snapshot", json!({})).await?;
    let cookies = call("browser_evaluate", json!({"expression": "document.cookie"})).await?;
    Ok(format!(
        "{} refs, cookies {}",
        snapshot.data["ref_count"], cookies.data["value"]
    ))
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let count: usize = args.next().map_or(4, |n| n.parse().expect("N is a number"));
    // Without a URL, the test site's pages on loopback (dropped at the end).
    let site = testkit::TestSite::start().await;
    let url = args.next().unwrap_or_else(|| site.url("index.html"));

    let engine = Engine::new(Config::default());
    let sessions: Vec<Session> = (0..count).map(|_| engine.new_session()).collect();
    let started = Instant::now();
    let results = join_all(sessions.iter().enumerate().map(|(n, s)| run(s, n, &url))).await;
    println!("{count} sessions in {:.1?}", started.elapsed());
    for (n, result) in results.iter().enumerate() {
        match result {
            Ok(line) => println!("session {n}: {line}"),
            Err(e) => println!("session {n}: {e}"),
        }
    }
    let close = Budget::with_timeout(Duration::from_secs(10));
    join_all(sessions.iter().map(|s| s.close(&close))).await;
    engine.shutdown().await;
}
