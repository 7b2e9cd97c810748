//! Helpers for the binary's end-to-end tests: spawning cdpilot with its own
//! temp directory (so its Chromium and profile can be found), and reading
//! what the model would read.
#![allow(dead_code)]

use std::path::Path;

use serde_json::Value;
use testkit::McpClient;

pub mod extension;
pub mod person;
pub mod relay;
pub mod serve;

/// Spawns `cdpilot mcp` with TMPDIR set to a fresh directory: the temporary
/// profile, and so every Chromium process's command line, lives under it.
pub fn spawn_cdpilot() -> (McpClient, tempfile::TempDir) {
    spawn_cdpilot_with(&[])
}

/// Like [`spawn_cdpilot`], with `flags` after `mcp`.
pub fn spawn_cdpilot_with(flags: &[&str]) -> (McpClient, tempfile::TempDir) {
    let tmp = tempfile::Builder::new()
        .prefix("cdpilot-test-")
        .tempdir()
        .expect("tempdir");
    let chrome = testkit::chromium::executable();
    let args: Vec<&str> = ["mcp"].iter().chain(flags).copied().collect();
    let client = McpClient::spawn(
        env!("CARGO_BIN_EXE_cdpilot"),
        &args,
        &[
            ("TMPDIR", tmp.path().to_str().unwrap()),
            ("CDPILOT_CHROME", chrome.to_str().unwrap()),
            ("CDPILOT_CONFIG", ""),
        ],
    );
    (client, tmp)
}

/// The first text block of a tool result.
pub fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .and_then(|c| c.iter().find(|b| b["type"] == "text"))
        .and_then(|b| b["text"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// The ref of the element on the first snapshot line containing `needle`.
#[allow(unused_imports)] // not every test binary reads refs
pub use testkit::snapshot::ref_of as ref_on_line;

/// Pids of live processes whose command line mentions `dir`.
pub fn chromium_processes(dir: &Path) -> Vec<u32> {
    testkit::processes::mentioning(dir)
}

/// Pids of Chromium browser (not helper) processes using a profile in `dir`.
pub fn browser_main_processes(dir: &Path) -> Vec<u32> {
    testkit::processes::matching(|cmdline, _| {
        cmdline.contains(dir.to_str().unwrap())
            && cmdline.contains("--remote-debugging-")
            && !cmdline.contains("--type=")
            && !cmdline.starts_with("/bin/sh")
            && !cmdline.contains("setpriv")
    })
}

#[allow(unused_imports)] // not every test binary waits
pub use testkit::processes::wait_until;

/// Re-asks `condition` (a check that awaits: a request to the server)
/// every 100 ms until it holds or `limit` passes; whether it held. For
/// what no event tells a client (a session the server let go of).
pub async fn eventually<F, Fut>(limit: std::time::Duration, mut condition: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if condition().await {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
