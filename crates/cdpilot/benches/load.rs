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
//! Paced as agents are (issue 24): `CDPILOT_LOAD_PACE=500-1500` makes each
//! session pause a random 0.5–1.5 s (its own sequence) after every call, as
//! a model's step does, and opens every session at the same moment: the
//! first navigate of each (its browser context's opening) is reported on a
//! line of its own, apart from the paced calls. The paced run of the issue:
//! `CDPILOT_LOAD_PACE=500-1500 CDPILOT_LOAD_LEVELS=64 CDPILOT_LOAD_SECS=180`.
//!
//! Where an opening's time goes: the server writes its step timings
//! (`CDPILOT_TIMINGS`, a file in the bench's temporary directory) and the
//! bench prints, after each level's openings, every opening step's p50,
//! p99 and max: waiting for its turn (`session.queued`), the browser
//! context (`context.create`), its first tab (`tab.create`, `tab.attach`,
//! `tab.enable`), the whole context (`session.context`), where downloads
//! go (`session.downloads`) and the first navigate's own work
//! (`session.action`).
//!
//! Not a test: it asserts nothing about speed. A call that fails is counted
//! and reported (`timeout` answers apart), not retried.

#[path = "shared/readings.rs"]
#[allow(dead_code)]
mod readings;

#[path = "../tests/support/serve.rs"]
#[allow(dead_code)]
mod serve;

use readings::{env_or, load_average, percentile, rss_mib};
use std::collections::BTreeMap;
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
    /// Of those, the ones that answered `timeout`.
    timeouts: u64,
}

/// `CDPILOT_LOAD_PACE=MIN-MAX`: the pause after each call, in ms.
#[derive(Clone, Copy)]
struct Pace {
    min: u64,
    max: u64,
}

impl Pace {
    fn from_env() -> Option<Pace> {
        let v = std::env::var("CDPILOT_LOAD_PACE").ok()?;
        let (min, max) = v.split_once('-').unwrap_or((&v, &v));
        let (min, max) = (min.trim().parse().ok()?, max.trim().parse().ok()?);
        Some(Pace {
            min,
            max: u64::max(min, max),
        })
    }
}

/// A session's own pauses: xorshift from its number, so runs repeat and
/// the sessions drift apart as agents do.
struct Pauses {
    pace: Pace,
    state: u64,
}

impl Pauses {
    fn new(pace: Pace, session: usize) -> Pauses {
        Pauses {
            pace,
            state: 0x9E37_79B9_7F4A_7C15 ^ (session as u64 + 1).wrapping_mul(0x2545_F491_4F6C_DD1D),
        }
    }

    async fn pause(&mut self) {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        let span = self.pace.max - self.pace.min + 1;
        tokio::time::sleep(Duration::from_millis(self.pace.min + self.state % span)).await;
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// How long the bench waits for any one answer: a burst of 64 contexts
/// opening on a loaded 2-core machine takes longer than the test client's
/// 60 s (the bench reports it; the tests' client would panic).
const PATIENCE: Duration = Duration::from_secs(300);

/// `hello` (acknowledged) without the test client's 60 s limit.
async fn hello(ws: &mut Ws, token: &str) {
    ws.send(json!({"type": "hello", "protocol_version": 1, "token": token, "client": "load"}))
        .await;
    let ack = ws
        .next_within(PATIENCE)
        .await
        .flatten()
        .expect("an answer to hello");
    assert_eq!(ack["type"], "ack", "{ack}");
}

/// A call and its response, without the test client's 60 s limit.
async fn call(ws: &mut Ws, id: &str, tool: &str, arguments: Value) -> Value {
    ws.send(json!({"type": "request", "id": id, "tool": tool, "arguments": arguments}))
        .await;
    loop {
        let message = ws.next_within(PATIENCE).await.flatten().expect("an answer");
        if message["type"] == "response" && message["id"] == id {
            return message;
        }
    }
}

/// A session ready for the timed loop: `hello` answered and the page open
/// (not timed: opening 32 browser contexts at once is not the steady state).
async fn open_session(mut ws: Ws, token: String, url: String) -> (Ws, Duration) {
    hello(&mut ws, &token).await;
    let started = Instant::now();
    // On a Grid the first call waits for a node to start a browser: eight
    // at once on a loaded machine take a while.
    let nav = call(
        &mut ws,
        "nav",
        "browser_navigate",
        json!({"url": url, "timeout_ms": 240000}),
    )
    .await;
    assert!(nav.get("error").is_none(), "navigate failed: {nav}");
    (ws, started.elapsed())
}

/// One session's loop: snapshot → click the button by its ref until
/// `until`, pausing after each call when paced. Every call is timed from
/// send to response.
async fn session_loop(mut ws: Ws, until: Instant, mut pauses: Option<Pauses>) -> (Ws, Tally) {
    let mut tally = Tally::default();
    let mut n = 0u64;
    let timed = |tally: &mut Tally, started: Instant, response: &Value| {
        if let Some(error) = response.get("error") {
            tally.errors += 1;
            if error["code"] == "timeout" {
                tally.timeouts += 1;
            }
        } else {
            tally.latencies.push(started.elapsed());
        }
    };
    while Instant::now() < until {
        n += 1;
        let started = Instant::now();
        let snap = call(&mut ws, &format!("s{n}"), "browser_snapshot", json!({})).await;
        timed(&mut tally, started, &snap);
        if let Some(p) = pauses.as_mut() {
            p.pause().await;
        }
        let Some(button) = snap["result"]["text"]
            .as_str()
            .and_then(|t| ref_on_line(t, "button \"Trusted click\""))
        else {
            continue;
        };
        let started = Instant::now();
        let click = call(&mut ws, &format!("c{n}"), "browser_click", json!({"ref": button})).await;
        timed(&mut tally, started, &click);
        if let Some(p) = pauses.as_mut() {
            p.pause().await;
        }
    }
    (ws, tally)
}

/// The steps of a session's opening, in the order they happen.
const OPENING_STEPS: [&str; 8] = [
    "session.queued",
    "context.create",
    "tab.create",
    "tab.attach",
    "tab.enable",
    "session.context",
    "session.downloads",
    "session.action",
];

/// The server's step timings written since byte `from` of `timings`.
fn steps_since(timings: &std::path::Path, from: usize) -> String {
    let text = std::fs::read_to_string(timings).unwrap_or_default();
    text.get(from..).unwrap_or_default().to_owned()
}

/// The server's step timings in `steps` (one JSON line each), by step
/// name, each list sorted.
fn steps_by_name(steps: &str) -> BTreeMap<String, Vec<Duration>> {
    let mut times: BTreeMap<String, Vec<Duration>> = BTreeMap::new();
    for line in steps.lines() {
        let Ok(step) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let (Some(name), Some(ms)) = (step["step"].as_str(), step["ms"].as_f64()) else {
            continue;
        };
        times
            .entry(name.to_owned())
            .or_default()
            .push(Duration::from_secs_f64(ms / 1000.0));
    }
    for list in times.values_mut() {
        list.sort();
    }
    times
}

/// One line per opening step in `steps` (the server's step timings of a
/// level's openings: the first calls are the only calls by then) with its
/// p50, p99, max and count.
fn print_opening_phases(steps: &str) {
    let times = steps_by_name(steps);
    for name in OPENING_STEPS {
        let Some(times) = times.get(name) else {
            continue;
        };
        println!(
            "         opening step {name:<18} p50 {:>10}  p99 {:>10}  max {:>10}  ({} times)",
            ms(percentile(times, 0.50)),
            ms(percentile(times, 0.99)),
            ms(times.last().copied().unwrap_or_default()),
            times.len(),
        );
    }
}

/// Whether every session progressed alike: the median session's median
/// call and the slowest session's, and their ratio.
fn session_medians(medians: &mut [Duration]) {
    if medians.len() < 2 {
        return;
    }
    medians.sort();
    let middle = percentile(medians, 0.50);
    let slowest = medians.last().copied().unwrap_or_default();
    println!(
        "         sessions' own medians: the median session {}, the slowest {} ({:.2}x)",
        ms(middle),
        ms(slowest),
        slowest.as_secs_f64() / middle.as_secs_f64().max(1e-9),
    );
}

/// The ten steps of the loop's calls with the longest p99, each with its
/// p50, p99, max and count: where a slow call waited.
fn print_tails(steps: &str) {
    let times = steps_by_name(steps);
    let mut tails: Vec<(&String, &Vec<Duration>)> = times.iter().collect();
    tails.sort_by_key(|(_, list)| std::cmp::Reverse(percentile(list, 0.99)));
    for (name, list) in tails.into_iter().take(10) {
        println!(
            "         loop step {name:<24} p50 {:>10}  p99 {:>10}  max {:>10}  ({} times)",
            ms(percentile(list, 0.50)),
            ms(percentile(list, 0.99)),
            ms(list.last().copied().unwrap_or_default()),
            list.len(),
        );
    }
}

#[tokio::main]
async fn main() {
    // The server's step timings (the openings' phases), in a file of the
    // bench's own; the spawned server inherits the variable.
    let scratch = tempfile::tempdir().expect("tempdir");
    let timings = scratch.path().join("timings.jsonl");
    std::env::set_var("CDPILOT_TIMINGS", &timings);
    let mut timings_read = 0;
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
        "{:>8} {:>9} {:>8} {:>10} {:>10} {:>10} {:>10} {:>14} {:>14} {:>12}",
        "sessions", "open", "actions", "actions/s", "p50", "p95", "p99", "errors", "RSS after", "load avg"
    );
    let pace = Pace::from_env();
    if let Some(p) = pace {
        println!(
            "paced: each session pauses {}–{} ms after every call; all sessions open at the same moment",
            p.min, p.max
        );
    }
    for &level in &levels {
        let load_before = load_average();
        let setup = Instant::now();
        // Every socket first, then every hello + first navigate at once.
        let mut sockets = Vec::with_capacity(level);
        for _ in 0..level {
            sockets.push(serve.ws().await);
        }
        let opening: Vec<_> = sockets
            .into_iter()
            .map(|ws| tokio::spawn(open_session(ws, serve.token.clone(), url.clone())))
            .collect();
        let mut sockets = Vec::with_capacity(level);
        let mut openings = Vec::with_capacity(level);
        for task in opening {
            let (ws, took) = task.await.expect("session opened");
            sockets.push(ws);
            openings.push(took);
        }
        let setup = setup.elapsed();
        openings.sort();
        let opening_steps = steps_since(&timings, timings_read);
        timings_read += opening_steps.len();
        let started = Instant::now();
        let until = started + Duration::from_secs(secs);
        let tasks: Vec<_> = sockets
            .into_iter()
            .enumerate()
            .map(|(i, ws)| tokio::spawn(session_loop(ws, until, pace.map(|p| Pauses::new(p, i)))))
            .collect();
        let mut latencies = Vec::new();
        let (mut errors, mut timeouts) = (0, 0);
        let mut done = Vec::with_capacity(level);
        let mut medians = Vec::with_capacity(level);
        for task in tasks {
            let (ws, mut tally) = task.await.expect("session task");
            tally.latencies.sort();
            medians.push(percentile(&tally.latencies, 0.50));
            latencies.extend(tally.latencies);
            errors += tally.errors;
            timeouts += tally.timeouts;
            done.push(ws);
        }
        let elapsed = started.elapsed();
        latencies.sort();
        let rss_during = rss_mib(pid);
        // Closing the sockets ends those sessions and their contexts. Give
        // the server a moment to do so before reading its memory (a bench,
        // not a test: the figure is a reading, not an assertion).
        drop(done);
        tokio::time::sleep(Duration::from_secs(2)).await;
        println!(
            "{:>8} {:>9} {:>8} {:>10.1} {:>10} {:>10} {:>10} {:>14} {:>10.1} MiB {:>12}",
            level,
            format!("{:.1?}", setup),
            latencies.len(),
            latencies.len() as f64 / elapsed.as_secs_f64(),
            ms(percentile(&latencies, 0.50)),
            ms(percentile(&latencies, 0.95)),
            ms(percentile(&latencies, 0.99)),
            format!("{errors} ({timeouts} timeout)"),
            rss_mib(pid),
            format!("{load_before} → {}", load_average()),
        );
        println!(
            "         first navigate of each session (its context's opening, not in the figures above): p50 {}, p99 {}, max {}; the slowest call above {:.1} ms; server RSS before the sessions closed {:.1} MiB",
            ms(percentile(&openings, 0.50)),
            ms(percentile(&openings, 0.99)),
            ms(openings.last().copied().unwrap_or_default()),
            latencies.last().copied().unwrap_or_default().as_secs_f64() * 1000.0,
            rss_during,
        );
        print_opening_phases(&opening_steps);
        session_medians(&mut medians);
        // Where the loop's slow calls wait: its steps with the longest tails.
        let loop_steps = steps_since(&timings, timings_read);
        timings_read += loop_steps.len();
        print_tails(&loop_steps);
    }
    let mut serve = serve;
    let status = serve.terminate().await;
    println!("server exit: {status}");
    drop(started_grid);
}
