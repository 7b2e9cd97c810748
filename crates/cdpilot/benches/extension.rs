//! What the extension relay adds per action (issue 22): the same calls over
//! the WebSocket API against a browser `cdpilot serve` launched, then
//! against the user's Chrome through the extension (headless Chromium with
//! the unpacked extension, paired). Prints the median and p95 of each.
//!
//! Run: `cargo bench -p cdpilot --bench extension`. Not a test: asserts
//! nothing. Timings on a loaded machine are noisy: compare the two columns
//! of one run.

#[path = "../tests/support/serve.rs"]
#[allow(dead_code)]
mod serve;

#[path = "../tests/support/extension.rs"]
#[allow(dead_code)]
mod extension;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use serve::{Serve, Ws};
use testkit::TestSite;

const ROUNDS: usize = 30;

fn ref_on(snapshot: &str, needle: &str) -> String {
    let line = snapshot.lines().find(|l| l.contains(needle)).expect(needle);
    let start = line.find("[ref=").expect("a ref") + 5;
    line[start..start + line[start..].find(']').unwrap()].to_owned()
}

fn percentile(samples: &mut [Duration], p: f64) -> f64 {
    samples.sort();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i].as_secs_f64() * 1000.0
}

/// `(tool, p50 ms, p95 ms)` for evaluate, click, snapshot and navigate.
async fn measure(ws: &mut Ws, site: &TestSite) -> Vec<(&'static str, f64, f64)> {
    let mut id = 0;
    let mut call = |tool: &'static str, arguments: Value| {
        id += 1;
        (id.to_string(), tool, arguments)
    };
    let (i, t, a) = call("browser_navigate", json!({"url": site.url("/counter.html")}));
    ws.call(&i, t, a).await;
    let (i, t, a) = call("browser_snapshot", json!({}));
    let snapshot = ws.call(&i, t, a).await["result"]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    let add = ref_on(&snapshot, "Add one");
    let mut rows = Vec::new();
    for (tool, arguments) in [
        ("browser_evaluate", json!({"expression": "1 + 1"})),
        ("browser_click", json!({"ref": add})),
        ("browser_snapshot", json!({})),
        ("browser_navigate", json!({"url": site.url("/counter.html")})),
    ] {
        let mut samples = Vec::new();
        for round in 0..ROUNDS + 3 {
            let (i, t, a) = call(tool, arguments.clone());
            let began = Instant::now();
            let answer = ws.call(&i, t, a).await;
            assert!(answer.get("result").is_some(), "{answer}");
            if round >= 3 {
                samples.push(began.elapsed());
            }
        }
        if tool == "browser_navigate" {
            // Refs from before the navigations are gone; nothing follows.
        }
        rows.push((
            tool,
            percentile(&mut samples, 0.5),
            percentile(&mut samples, 0.95),
        ));
    }
    rows
}

#[tokio::main]
async fn main() {
    let site = TestSite::start().await;

    let launched = Serve::start("", &[]).await;
    let mut ws = launched.ws().await;
    ws.open(&launched.token).await;
    let direct = measure(&mut ws, &site).await;
    drop(ws);
    drop(launched);

    let (relayed_serve, chrome) = extension::paired("").await;
    let mut ws = relayed_serve.ws().await;
    ws.open(&relayed_serve.token).await;
    let relayed = measure(&mut ws, &site).await;
    drop(ws);
    let mut connects = connects(&chrome).await;

    println!("| tool | launched p50 / p95 (ms) | extension relay p50 / p95 (ms) | added p50 (ms) |");
    println!("| --- | --- | --- | --- |");
    for ((tool, d50, d95), (_, r50, r95)) in direct.iter().zip(&relayed) {
        println!(
            "| {tool} | {d50:.1} / {d95:.1} | {r50:.1} / {r95:.1} | {:+.1} |",
            r50 - d50
        );
    }
    println!(
        "\nrelay connect (socket open → ack, the handshake included), {} rounds: p50 {:.1} ms, p95 {:.1} ms",
        connects.len(),
        percentile(&mut connects, 0.5),
        percentile(&mut connects, 0.95)
    );
}

/// The relay's connect, timed in the extension's worker: closes its socket
/// and opens it again with the stored pairing, until the ack, `ROUNDS`
/// times (a refusal while the server lets go of the last socket is tried
/// again, and counted from the first try).
async fn connects(chrome: &extension::UserChrome) -> Vec<Duration> {
    let worker = chrome.worker().await;
    let expression = format!(
        "(async () => {{
          const relay = globalThis.cdpilot.relay;
          const {{ server, token }} = await chrome.storage.local.get(['server', 'token']);
          const secret = globalThis.cdpilot.relayVersion === 2 ? token : {{ token }};
          const times = [];
          for (let i = 0; i < {ROUNDS}; i++) {{
            relay.stop();
            const began = performance.now();
            for (;;) {{
              try {{ await relay.open(server, secret); break; }} catch (e) {{ relay.stop(); }}
            }}
            times.push(performance.now() - began);
          }}
          return times;
        }})()"
    );
    let times = extension::UserChrome::eval(&worker, &expression).await;
    times
        .as_array()
        .expect("the worker's timings")
        .iter()
        .map(|t| Duration::from_secs_f64(t.as_f64().unwrap() / 1000.0))
        .collect()
}
