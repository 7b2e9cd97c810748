//! A load run of `cdpilot serve` (issue 10): 1, 8 and 32 concurrent
//! WebSocket sessions, each in its own browser context on one shared
//! Chromium, doing snapshot/click loops on a test-site page for a bounded
//! time. Prints actions per second, p50/p99 latency per level, and the
//! server's RSS before the first level and after each one.
//!
//! Run: `cargo bench -p cdpilot --bench load` (the optimized binary);
//! `CDPILOT_LOAD_SECS=60` sets the time per level (default 20),
//! `CDPILOT_LOAD_LEVELS=8,32` the levels. Loopback only; at most 64
//! sessions and 600 s per level.
//!
//! Through a Selenium Grid (issue 23): `CDPILOT_LOAD_GRID=http://hub:4444`
//! runs the same loops with `[browser] grid` set (each session its own
//! Grid session, a browser of its own on a node); `CDPILOT_LOAD_GRID=start`
//! first starts a hub and two nodes on loopback (testkit's helper, installed
//! by scripts/ensure-grid) with enough slots for the largest level. The
//! load average is printed before and after each level: compare runs made
//! back to back.
//!
//! Not a test: it asserts nothing about speed. A call that fails is counted
//! and reported, not retried.

#[path = "../tests/support/serve.rs"]
#[allow(dead_code)]
mod serve;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use testkit::grid::Grid;
use testkit::snapshot::find_ref as ref_on_line;
use testkit::TestSite;

use serve::{Serve, Ws};

/// What one session did in its time.
#[derive(Default)]
struct Tally {
    /// Latency of every call that succeeded.
    latencies: Vec<Duration>,
    /// Calls that answered with an error.
    errors: u64,
}

fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib: u64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    kib as f64 / 1024.0
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

/// `/proc/loadavg`'s 1-minute figure.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// A session ready for the timed loop: `hello` answered and the page open
/// (not timed: opening 32 browser contexts at once is not the steady state).
async fn open_session(mut ws: Ws, token: String, url: String) -> Ws {
    ws.open(&token).await;
    // On a Grid the first call waits for a node to start a browser: eight
    // at once on a loaded machine take a while.
    let nav = ws
        .call(
            "nav",
            "browser_navigate",
            json!({"url": url, "timeout_ms": 120000}),
        )
        .await;
    assert!(nav.get("error").is_none(), "navigate failed: {nav}");
    ws
}

/// One session's loop: snapshot → click the button by its ref until
/// `until`. Every call is timed from send to response.
async fn session_loop(mut ws: Ws, until: Instant) -> (Ws, Tally) {
    let mut tally = Tally::default();
    let mut n = 0u64;
    let timed = |tally: &mut Tally, started: Instant, response: &Value| {
        if response.get("error").is_some() {
            tally.errors += 1;
        } else {
            tally.latencies.push(started.elapsed());
        }
    };
    while Instant::now() < until {
        n += 1;
        let started = Instant::now();
        let snap = ws.call(&format!("s{n}"), "browser_snapshot", json!({})).await;
        timed(&mut tally, started, &snap);
        let Some(button) = snap["result"]["text"]
            .as_str()
            .and_then(|t| ref_on_line(t, "button \"Trusted click\""))
        else {
            continue;
        };
        let started = Instant::now();
        let click = ws
            .call(&format!("c{n}"), "browser_click", json!({"ref": button}))
            .await;
        timed(&mut tally, started, &click);
    }
    (ws, tally)
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::main]
async fn main() {
    let secs: u64 = env_or("CDPILOT_LOAD_SECS", 20).clamp(1, 600);
    let levels: Vec<usize> = std::env::var("CDPILOT_LOAD_LEVELS")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 8, 32])
        .into_iter()
        .map(|n: usize| n.clamp(1, 64))
        .collect();
    let site = TestSite::start().await;
    let url = site.url("/index.html");
    let mut config = "[serve]\nmax_sessions = 64\n[session]\nidle_timeout_s = 0\n".to_owned();
    // Kept until the end: dropping it stops the Grid it started.
    let mut started_grid = None;
    match std::env::var("CDPILOT_LOAD_GRID").unwrap_or_default().as_str() {
        "" => println!("browser: one launched Chromium, a browser context per session"),
        hub => {
            let hub = if hub == "start" {
                let most = levels.iter().copied().max().unwrap_or(1);
                let slots = most.div_ceil(2);
                let grid = Grid::hub_and_nodes_with_slots(2, slots).await;
                println!("started a Grid: a hub and 2 nodes of {slots} slots each");
                let url = grid.url().to_owned();
                started_grid = Some(grid);
                url
            } else {
                hub.to_owned()
            };
            println!("browser: a Selenium Grid session per session, hub {hub}");
            // Chromium on the node runs as this user (root here): no
            // sandbox, as the launched browser's flags say.
            config.push_str(&format!(
                "[browser]\ngrid = \"{hub}\"\nargs = [\"--no-sandbox\"]\n"
            ));
        }
    }
    let serve = Serve::start(&config, &[]).await;
    let pid = serve.child.id().expect("serve running");
    println!(
        "cdpilot serve (pid {pid}) on {}, {secs} s per level, levels {levels:?}",
        serve.authority
    );
    println!("server RSS at start: {:.1} MiB", rss_mib(pid));
    println!(
        "{:>8} {:>9} {:>8} {:>10} {:>10} {:>10} {:>10} {:>7} {:>14} {:>12}",
        "sessions", "open", "actions", "actions/s", "p50", "p95", "p99", "errors", "RSS after", "load avg"
    );
    for &level in &levels {
        let load_before = load_average();
        let setup = Instant::now();
        let mut opening = Vec::with_capacity(level);
        for _ in 0..level {
            let ws = serve.ws().await;
            opening.push(tokio::spawn(open_session(ws, serve.token.clone(), url.clone())));
        }
        let mut sockets = Vec::with_capacity(level);
        for task in opening {
            sockets.push(task.await.expect("session opened"));
        }
        let setup = setup.elapsed();
        let started = Instant::now();
        let until = started + Duration::from_secs(secs);
        let tasks: Vec<_> = sockets
            .into_iter()
            .map(|ws| tokio::spawn(session_loop(ws, until)))
            .collect();
        let mut latencies = Vec::new();
        let mut errors = 0;
        let mut done = Vec::with_capacity(level);
        for task in tasks {
            let (ws, tally) = task.await.expect("session task");
            latencies.extend(tally.latencies);
            errors += tally.errors;
            done.push(ws);
        }
        let elapsed = started.elapsed();
        latencies.sort();
        // Closing the sockets ends those sessions and their contexts. Give
        // the server a moment to do so before reading its memory (a bench,
        // not a test: the figure is a reading, not an assertion).
        drop(done);
        tokio::time::sleep(Duration::from_secs(2)).await;
        println!(
            "{:>8} {:>9} {:>8} {:>10.1} {:>10} {:>10} {:>10} {:>7} {:>10.1} MiB {:>12}",
            level,
            format!("{:.1?}", setup),
            latencies.len(),
            latencies.len() as f64 / elapsed.as_secs_f64(),
            ms(percentile(&latencies, 0.50)),
            ms(percentile(&latencies, 0.95)),
            ms(percentile(&latencies, 0.99)),
            errors,
            rss_mib(pid),
            format!("{load_before} → {}", load_average()),
        );
    }
    let mut serve = serve;
    let status = serve.terminate().await;
    println!("server exit: {status}");
    drop(started_grid);
}
