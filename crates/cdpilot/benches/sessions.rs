//! Many sessions on one `cdpilot serve`, for memory (issue 24). Two runs:
//!
//! - `soak`: one session parked on a light page (the baseline: browser up,
//!   one session; the server's "cold" reading), then a warm-up session
//!   that runs the soak's five calls on one corpus page and closes (the
//!   server's "warm" reading, after its trim: the code pages those calls
//!   touch are in its RSS, as after the soak), then N sessions (16) looping navigate → snapshot →
//!   extract → evaluate → snapshot diff over the reading corpus's real
//!   pages for S seconds. The server's RSS is sampled every second and
//!   averaged per third of the run; the server's RSS and the process tree's
//!   PSS (server + Chromium, shared pages split) and private memory (by
//!   process kind: it does not move with other Chromiums sharing the code
//!   pages on a shared machine) are read before, at N live sessions,
//!   after every looping session closed (once their renderers exited,
//!   polled for at most 30 s) and a minute after; then the parked session
//!   closes too, serve closes the idle browser (`[serve]
//!   browser_idle_restart_s`, `CDPILOT_SERVE_BROWSER_IDLE_RESTART_S`
//!   through the environment, default 60; 0 skips this part), and the
//!   tree is read with the next session on the light page, on the new
//!   browser it launched. `CDPILOT_HEAP_STATS_S=5` makes
//!   the server log its heap (live against kept free) every 5 s; the bench
//!   reads those lines and prints, by third and after close, the server's
//!   RSS split into anonymous and file-backed memory beside glibc's live
//!   heap, and the CDP events the server holds for its tabs' readers (now,
//!   and the peak since it started) at the warm reading and at the soak's
//!   end. Built with `--features dhat-heap` (and `CDPILOT_DHAT_FILE`),
//!   the server writes a dhat heap profile when it exits; with
//!   `--features mimalloc` it runs on mimalloc (docs/src/figures.md).
//! - `cost`: 1, 8, 32, 64 sessions open at once on a light page, then on an
//!   article; the tree's PSS at each level against the tree with one
//!   session open on the light page: the marginal PSS per session and
//!   sessions per GiB. `cost playwright` measures Playwright MCP the
//!   same way: one server over streamable HTTP with `--isolated` (one
//!   browser it launches, a browser context per MCP client), N clients.
//!   Each level also prints the split of its cost: the change of each
//!   process kind's private memory per session.
//! - `infra`: Chromium's own accounting (memory-infra dumps) by process
//!   kind and allocator with one session on a light page, with N more on
//!   corpus pages, after those close (their contexts and renderers awaited
//!   back), `CDPILOT_INFRA_LATER_S` seconds after that (0: not read), and
//!   after a memory-pressure signal; serve attaches to a Chromium the
//!   bench launches with cdpilot's flags and a DevTools port.
//!   `CDPILOT_INFRA_CLOSE_TARGETS=1` closes the N sessions' pages
//!   (`Target.closeTarget`) before serve disposes their contexts.
//!
//! Run: `cargo bench -p cdpilot --bench sessions -- soak` (or `cost`);
//! `CDPILOT_SOAK_SECS` (default 480), `CDPILOT_SOAK_SESSIONS` (16),
//! `CDPILOT_COST_LEVELS` (1,8,32,64), `CDPILOT_COST_PAGES` (light,article),
//! `CDPILOT_COST_ARGS` (browser flags added, `;`-separated: one
//! measurement of a flag); `CDPILOT_PLAYWRIGHT_MCP`, Playwright
//! MCP's `cli.js` (default: the 0.0.83 that scripts/bench-widgets.py
//! installs under ~/.cache/cdpilot). `CDPILOT_MALLOC_TRIM=0` is passed to
//! the server to measure it without the trim after a session ends.
//! Loopback only: the browser resolves no other name and the policy
//! allows only 127.0.0.1. Not a test: it asserts nothing, a failed call is
//! counted.

#[path = "shared/readings.rs"]
mod readings;

#[path = "../tests/support/serve.rs"]
#[allow(dead_code)]
mod serve;

#[path = "figures/memory.rs"]
#[allow(dead_code)]
mod memory;

#[path = "figures/memory_infra.rs"]
mod memory_infra;

#[path = "sessions/infra.rs"]
mod infra;

use readings::{env_or, load_average, percentile, rss_mib, rss_parts_mib};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use testkit::corpus::{self, CorpusSite};
use testkit::{McpHttpClient, TestSite};

use serve::{Serve, Ws};

/// The tree's PSS in MiB: (server, Chromium, total).
fn tree_mib(pid: u32) -> (f64, f64, f64) {
    let parts = memory::tree_pss_kib(pid);
    let server = parts.first().map_or(0, |p| p.1) as f64 / 1024.0;
    let total = parts.iter().map(|p| p.1).sum::<u64>() as f64 / 1024.0;
    (server, total - server, total)
}

/// The tree's private memory in MiB by kind (server, Chromium's
/// `browser`, `renderer`, …), largest first, and its total.
fn private_mib(pid: u32) -> (f64, String) {
    let mut kinds: Vec<(String, u64)> = Vec::new();
    for (kind, kib) in memory::tree_private_kib(pid) {
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some(entry) => entry.1 += kib,
            None => kinds.push((kind, kib)),
        }
    }
    kinds.sort_by_key(|k| std::cmp::Reverse(k.1));
    let total = kinds.iter().map(|k| k.1).sum::<u64>() as f64 / 1024.0;
    let parts: Vec<String> = kinds
        .iter()
        .map(|(k, kib)| format!("{k} {:.0}", *kib as f64 / 1024.0))
        .collect();
    (total, parts.join(", "))
}

/// The tree's private memory in KiB by kind (summed per kind).
fn private_kinds(pid: u32) -> Vec<(String, u64)> {
    let mut kinds: Vec<(String, u64)> = Vec::new();
    for (kind, kib) in memory::tree_private_kib(pid) {
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some(entry) => entry.1 += kib,
            None => kinds.push((kind, kib)),
        }
    }
    kinds
}

/// The change per session of each kind's private memory from `base` to
/// `now`, in MiB, largest first (the split of a level's cost: renderers,
/// Chromium's browser process, its network service, the server).
fn split(base: &[(String, u64)], now: &[(String, u64)], n: usize) -> String {
    let of = |list: &[(String, u64)], kind: &str| list.iter().find(|k| k.0 == kind).map_or(0, |k| k.1);
    let mut kinds: Vec<&String> = base.iter().chain(now).map(|k| &k.0).collect();
    kinds.sort();
    kinds.dedup();
    let mut parts: Vec<(String, f64)> = kinds
        .into_iter()
        .map(|k| {
            (
                k.clone(),
                (of(now, k) as f64 - of(base, k) as f64) / 1024.0 / n as f64,
            )
        })
        .filter(|(_, d)| d.abs() >= 0.05)
        .collect();
    parts.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
    let total: f64 = parts.iter().map(|p| p.1).sum();
    let parts: Vec<String> = parts.iter().map(|(k, d)| format!("{k} {d:+.1}")).collect();
    format!("{total:.1} MiB ({})", parts.join(", "))
}

/// Chromium's renderer processes in the tree under `root` (the server, or
/// a launch guard).
fn renderer_count(root: u32) -> usize {
    memory::tree_kinds(root)
        .iter()
        .filter(|kind| *kind == "renderer")
        .count()
}

/// Waits, up to `limit`, until the tree under `root` has no more renderer
/// processes than `renderers` (the closed sessions' renderers exited:
/// Chromium sends no event a serve client could read for that, so the
/// tree is polled every 250 ms, reading command lines only). Returns how
/// long it took and whether the count came back.
async fn renderers_back(root: u32, renderers: usize, limit: Duration) -> (Duration, bool) {
    let started = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    loop {
        tick.tick().await;
        if renderer_count(root) <= renderers {
            return (started.elapsed(), true);
        }
        if started.elapsed() >= limit {
            return (started.elapsed(), false);
        }
    }
}

/// The server's latest heap line (`CDPILOT_HEAP_STATS_S`): glibc's live
/// bytes and the free bytes it keeps, in MiB (None without the setting).
fn heap_mib(serve: &Serve) -> Option<(f64, f64)> {
    let log = serve.log.lock().unwrap();
    let line = log.iter().rev().find(|l| l.starts_with("heap: live "))?;
    let number = |after: &str| -> Option<f64> {
        let rest = &line[line.find(after)? + after.len()..];
        rest.split_whitespace().next()?.parse().ok()
    };
    Some((number("heap: live ")?, number("by the allocator ")?))
}

/// The server's threads now (each with its stack in RSS).
fn threads(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("Threads:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// One reading of the server: RSS, its anonymous and file-backed parts,
/// glibc's live heap and kept free bytes (0 without heap lines), in MiB.
#[derive(Clone, Copy, Default)]
struct Reading {
    rss: f64,
    anon: f64,
    file: f64,
    live: f64,
    free: f64,
}

impl Reading {
    fn now(serve: &Serve, pid: u32) -> Reading {
        let (anon, file) = rss_parts_mib(pid);
        let (live, free) = heap_mib(serve).unwrap_or_default();
        Reading {
            rss: rss_mib(pid),
            anon,
            file,
            live,
            free,
        }
    }

    /// The mean of `readings` (zero when empty).
    fn mean(readings: &[Reading]) -> Reading {
        let n = readings.len().max(1) as f64;
        let sum = |f: fn(&Reading) -> f64| readings.iter().map(f).sum::<f64>() / n;
        Reading {
            rss: sum(|r| r.rss),
            anon: sum(|r| r.anon),
            file: sum(|r| r.file),
            live: sum(|r| r.live),
            free: sum(|r| r.free),
        }
    }
}

impl std::fmt::Display for Reading {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "RSS {:.1} (anon {:.1}, file {:.1}); heap live {:.1}, free kept {:.1}",
            self.rss, self.anon, self.file, self.live, self.free
        )
    }
}

/// Lets the server end the sessions whose sockets closed and the browser
/// close their contexts before a reading (a bench reading, not an
/// assertion: no event tells a client that a renderer exited).
async fn settle() {
    tokio::time::sleep(Duration::from_secs(5)).await;
}

async fn start_serve(max: usize) -> Serve {
    let flags: Vec<String> = corpus::BLOCK_EXTERNAL
        .iter()
        .map(|f| f.to_string())
        .chain(extra_args())
        .map(|f| format!("\"{f}\""))
        .collect();
    let config = format!(
        "[serve]\nmax_sessions = {max}\n[session]\nidle_timeout_s = 0\n[browser]\nargs = [{}]\n[policy]\ndefault = \"deny\"\n[[policy.rules]]\npattern = \"http://127.0.0.1:*/*\"\naction = \"allow\"\n",
        flags.join(", ")
    );
    Serve::start(&config, &[]).await
}

async fn open_at(serve: &Serve, url: &str) -> Ws {
    let mut ws = serve.ws().await;
    ws.open(&serve.token).await;
    // Many contexts opening at once on a loaded machine take longer than
    // a call's default budget: the bench reads memory, not latency.
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

/// The soak's five calls on one page.
fn soak_calls(url: &str) -> [(&'static str, Value); 5] {
    [
        ("browser_navigate", json!({"url": url})),
        ("browser_snapshot", json!({})),
        ("browser_extract", json!({"max_chars": 4000})),
        (
            "browser_evaluate",
            json!({"expression": "document.querySelectorAll('a').length"}),
        ),
        ("browser_snapshot", json!({"diff": true})),
    ]
}

/// The server's latest line on the CDP events it holds
/// (`CDPILOT_HEAP_STATS_S`): held now and at the peak, each with its
/// params' MiB.
fn held_events(serve: &Serve) -> Option<String> {
    let log = serve.log.lock().unwrap();
    let line = log.iter().rev().find(|l| l.starts_with("cdp events: "))?;
    Some(line["cdp events: ".len()..].to_owned())
}

/// One soak session: the corpus's pages in turn, from its own offset.
async fn soak_loop(mut ws: Ws, pages: Vec<String>, offset: usize, until: Instant) -> (Vec<Duration>, u64) {
    let (mut latencies, mut errors) = (Vec::new(), 0u64);
    let mut n = offset;
    while Instant::now() < until {
        let url = &pages[n % pages.len()];
        n += 1;
        for (i, (tool, args)) in soak_calls(url).into_iter().enumerate() {
            let started = Instant::now();
            let answer = ws.call(&format!("c{n}-{i}"), tool, args).await;
            match answer.get("error") {
                Some(_) => errors += 1,
                None => latencies.push(started.elapsed()),
            }
        }
    }
    (latencies, errors)
}

/// The reading corpus served on loopback and its pages' URLs (keep the
/// site for as long as the pages are read).
async fn corpus_pages() -> (CorpusSite, Vec<String>) {
    let dir = corpus::dir().expect("the reading corpus (tests/corpus/reading)");
    let site = CorpusSite::start(&dir).await;
    let pages = corpus::pages(&dir).iter().map(|p| site.url(&p.name)).collect();
    (site, pages)
}

async fn soak() {
    let secs: u64 = env_or("CDPILOT_SOAK_SECS", 480).clamp(10, 3600);
    let sessions: usize = env_or("CDPILOT_SOAK_SESSIONS", 16).clamp(1, 64);
    let (_corpus_site, pages) = corpus_pages().await;
    let site = TestSite::start().await;
    let serve = start_serve(64).await;
    let pid = serve.child.id().expect("serve running");
    println!(
        "soak: {sessions} sessions × {secs} s over {} corpus pages; load average {}",
        pages.len(),
        load_average()
    );
    let _baseline = open_at(&serve, &site.url("index.html")).await;
    // Past one heap line (`CDPILOT_HEAP_STATS_S=5`).
    tokio::time::sleep(Duration::from_secs(6)).await;
    let before = (rss_mib(pid), tree_mib(pid));
    let server_before = Reading::now(&serve, pid);
    let private_before = private_mib(pid);
    let renderers_before = renderer_count(pid);
    println!(
        "browser up, one session on a light page: private {:.1} MiB ({})",
        private_before.0, private_before.1
    );
    println!(
        "browser up, one session on a light page: server RSS {:.1} MiB; PSS server {:.1} + Chromium {:.1} = {:.1} MiB",
        before.0, before.1 .0, before.1 .1, before.1 .2
    );
    // The warm baseline: the cold reading has not yet touched the code
    // pages (file-backed RSS) snapshot, extract and diff run, so the soak's
    // after-close reading is also compared with one taken after a session
    // ran the soak's calls on a corpus page, closed, and was trimmed.
    let mut warm_up = open_at(&serve, &pages[0]).await;
    for (i, (tool, args)) in soak_calls(&pages[0]).into_iter().enumerate() {
        let answer = warm_up.call(&format!("w{i}"), tool, args).await;
        assert!(answer.get("error").is_none(), "warm-up {tool}: {answer}");
    }
    let _ = warm_up.socket.close(None).await;
    drop(warm_up);
    // The session's end is trimmed at once, the periodic trim follows
    // within 10 s, and a heap line within 5 s after that.
    tokio::time::sleep(Duration::from_secs(16)).await;
    let server_warm = Reading::now(&serve, pid);
    println!(
        "server before the soak, warm (a session ran the soak's calls on one corpus page and closed): {server_warm}; CDP events {}",
        held_events(&serve).unwrap_or_default()
    );

    let mut opening = Vec::new();
    for i in 0..sessions {
        let first = pages[i % pages.len()].clone();
        let serve_ws = serve.ws().await;
        let token = serve.token.clone();
        opening.push(tokio::spawn(async move {
            let mut ws = serve_ws;
            ws.open(&token).await;
            let _ = ws.call("nav", "browser_navigate", json!({"url": first})).await;
            ws
        }));
    }
    let mut sockets = Vec::new();
    for task in opening {
        sockets.push(task.await.expect("session opened"));
    }
    let started = Instant::now();
    let until = started + Duration::from_secs(secs);
    let tasks: Vec<_> = sockets
        .into_iter()
        .enumerate()
        .map(|(i, ws)| tokio::spawn(soak_loop(ws, pages.clone(), i * 7, until)))
        .collect();
    // Sample the server's RSS every second; the tree at two thirds.
    let mut samples: Vec<(f64, Reading)> = Vec::new();
    let mut during = None;
    while Instant::now() < until {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let t = started.elapsed().as_secs_f64() / secs as f64;
        samples.push((t, Reading::now(&serve, pid)));
        if during.is_none() && t >= 0.66 {
            during = Some(tree_mib(pid));
            let private = private_mib(pid);
            println!(
                "at {sessions} live sessions: private {:.1} MiB ({})",
                private.0, private.1
            );
        }
    }
    let (mut latencies, mut errors) = (Vec::new(), 0);
    for task in tasks {
        let (l, e) = task.await.expect("session task");
        latencies.extend(l);
        errors += e;
    }
    let third = |k: f64| {
        let v: Vec<Reading> = samples
            .iter()
            .filter(|(t, _)| *t >= k / 3.0 && *t < (k + 1.0) / 3.0)
            .map(|s| s.1)
            .collect();
        Reading::mean(&v)
    };
    latencies.sort();
    let thirds = [third(0.0), third(1.0), third(2.0)];
    let (t1, t2, t3) = (thirds[0].rss, thirds[1].rss, thirds[2].rss);
    println!(
        "{} calls, {errors} errors, p50 {:.0} ms, p99 {:.0} ms; load average {}",
        latencies.len(),
        percentile(&latencies, 0.5).as_secs_f64() * 1000.0,
        percentile(&latencies, 0.99).as_secs_f64() * 1000.0,
        load_average()
    );
    println!(
        "server RSS by third: {t1:.1} / {t2:.1} / {t3:.1} MiB ({:+.0}% first → last)",
        (t3 / t1 - 1.0) * 100.0
    );
    println!(
        "CDP events held by the server at the soak's end: {}",
        held_events(&serve).unwrap_or_else(|| "(set CDPILOT_HEAP_STATS_S)".into())
    );
    println!(
        "server before the soak (one session on a light page): {server_before}; {} threads",
        threads(pid)
    );
    for (i, r) in thirds.iter().enumerate() {
        println!("server, third {}: {r}", i + 1);
    }
    if let Some((s, c, t)) = during {
        println!("at {sessions} live sessions: PSS server {s:.1} + Chromium {c:.1} = {t:.1} MiB");
    }
    // Every looping session's socket is closed now (each loop's `Ws` is
    // dropped as its task ends). The server is read 5 s and 20 s after;
    // the tree once the closed sessions' renderers exited (bounded).
    let closed_at = Instant::now();
    tokio::time::sleep_until((closed_at + Duration::from_secs(5)).into()).await;
    let closed = Reading::now(&serve, pid);
    let closed_threads = threads(pid);
    let (waited, back) = renderers_back(pid, renderers_before, Duration::from_secs(30)).await;
    let waited = waited.max(closed_at.elapsed());
    let after = (rss_mib(pid), tree_mib(pid));
    let private_after = private_mib(pid);
    println!(
        "after the {sessions} closed: renderers {} (one session: {renderers_before}; back: {back}) {:.1} s after close",
        renderer_count(pid),
        waited.as_secs_f64()
    );
    println!(
        "after the {sessions} closed: private {:.1} MiB ({:+.0}% against one session; {})",
        private_after.0,
        (private_after.0 / private_before.0 - 1.0) * 100.0,
        private_after.1
    );
    println!(
        "after the {sessions} closed: server RSS {:.1} MiB ({:+.0}% against before the soak's first third: {t1:.1}); PSS server {:.1} + Chromium {:.1} = {:.1} MiB ({:+.0}% against one session); load average {}",
        after.0,
        (after.0 / t1 - 1.0) * 100.0,
        after.1 .0,
        after.1 .1,
        after.1 .2,
        (after.1 .2 / before.1 .2 - 1.0) * 100.0,
        load_average()
    );
    println!(
        "server after the {sessions} closed (5 s): {closed}; {closed_threads} threads; RSS {:+.0}% against before the soak ({:.1})",
        (closed.rss / server_before.rss - 1.0) * 100.0,
        server_before.rss
    );
    tokio::time::sleep_until((closed_at + Duration::from_secs(20)).into()).await;
    let later = Reading::now(&serve, pid);
    println!(
        "server after the {sessions} closed ({:.0} s): {later}; {} threads; RSS {:+.0}% against the first third, {:+.0}% against before the soak, {:+.0}% against before the soak warm; load average {}",
        closed_at.elapsed().as_secs_f64(),
        threads(pid),
        (later.rss / t1 - 1.0) * 100.0,
        (later.rss / server_before.rss - 1.0) * 100.0,
        (later.rss / server_warm.rss - 1.0) * 100.0,
        load_average()
    );
    // A minute on: what Chromium's periodic reclaim gave back meanwhile.
    tokio::time::sleep_until((closed_at + Duration::from_secs(60)).into()).await;
    let minute = tree_mib(pid);
    let private_minute = private_mib(pid);
    println!(
        "after the {sessions} closed ({:.0} s): PSS server {:.1} + Chromium {:.1} = {:.1} MiB ({:+.0}% against one session); private {:.1} MiB ({:+.0}%; {}); load average {}",
        closed_at.elapsed().as_secs_f64(),
        minute.0,
        minute.1,
        minute.2,
        (minute.2 / before.1 .2 - 1.0) * 100.0,
        private_minute.0,
        (private_minute.0 / private_before.0 - 1.0) * 100.0,
        private_minute.1,
        load_average()
    );
    after_all_closed(&serve, pid, _baseline, &site, before.1 .2).await;
    let mut serve = serve;
    serve.terminate().await;
}

/// The last session (`baseline`) closed too: serve closes the browser
/// after `[serve] browser_idle_restart_s` (`CDPILOT_SERVE_BROWSER_IDLE_RESTART_S`
/// reaches it through the environment); awaited (a bound of that period
/// and 60 s), then the tree is read with the next session on the light
/// page, on the browser it launches, against `one` (the tree's PSS with
/// one session before the soak).
async fn after_all_closed(serve: &Serve, pid: u32, baseline: Ws, site: &TestSite, one: f64) {
    let idle: u64 = env_or("CDPILOT_SERVE_BROWSER_IDLE_RESTART_S", 60);
    if idle == 0 {
        return;
    }
    drop(baseline);
    let closed_at = Instant::now();
    let browsers = || memory::tree_kinds(pid).iter().filter(|k| *k == "browser").count();
    let limit = Duration::from_secs(idle + 60);
    let gone = testkit::processes::wait_until(limit, || browsers() == 0).await;
    let (server, _, total) = tree_mib(pid);
    println!(
        "every session closed: browser exited {:.1} s after the last session closed ({gone}); PSS server {server:.1} MiB, tree {total:.1} MiB; load average {}",
        closed_at.elapsed().as_secs_f64(),
        load_average()
    );
    let started = Instant::now();
    let _next = open_at(serve, &site.url("index.html")).await;
    let opened = started.elapsed();
    // As the baseline was read: past one heap line.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let (s, c, t) = tree_mib(pid);
    let private = private_mib(pid);
    println!(
        "the next session on a light page (a new browser, opened in {:.0} ms): PSS server {s:.1} + Chromium {c:.1} = {t:.1} MiB ({:+.0}% against one session before the soak); private {:.1} MiB ({}); load average {}",
        opened.as_secs_f64() * 1000.0,
        (t / one - 1.0) * 100.0,
        private.0,
        private.1,
        load_average()
    );
}

/// A server the cost bench measures.
enum Server {
    Cdpilot(Serve),
    /// Playwright MCP over streamable HTTP, `--isolated`: one browser it
    /// launches at the first client, a context per client.
    Playwright {
        child: tokio::process::Child,
        authority: String,
        _cwd: tempfile::TempDir,
    },
}

/// One client of it, its page open.
enum Client {
    /// Boxed: a WebSocket client is much larger than the HTTP one.
    Ws(Box<Ws>),
    Http(McpHttpClient),
}

/// Playwright MCP's `cli.js`.
fn playwright_cli() -> String {
    std::env::var("CDPILOT_PLAYWRIGHT_MCP").unwrap_or_else(|_| {
        let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
        format!("{home}/.cache/cdpilot/playwright-mcp-0.0.83/node_modules/@playwright/mcp/cli.js")
    })
}

impl Server {
    async fn start(playwright: bool) -> Server {
        if !playwright {
            // Level 64 with the anchor session is 65 seats.
            return Server::Cdpilot(start_serve(80).await);
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let cwd = tempfile::tempdir().expect("tempdir");
        // The same Chromium and the same flag keeping it off the network.
        let config = json!({"browser": {"launchOptions": {"args": corpus::BLOCK_EXTERNAL}}});
        let config_path = cwd.path().join("playwright.json");
        std::fs::write(&config_path, config.to_string()).unwrap();
        let chrome = testkit::chromium::executable();
        let child = tokio::process::Command::new("node")
            .arg(playwright_cli())
            .args([
                "--headless",
                "--isolated",
                "--browser",
                "chromium",
                "--host",
                "127.0.0.1",
            ])
            .args([
                "--allowed-hosts",
                "*",
                "--port",
                &port.to_string(),
                "--executable-path",
            ])
            .arg(chrome)
            .arg("--config")
            .arg(&config_path)
            .current_dir(cwd.path())
            // Closing it is how it is told to close its browser and exit.
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn Playwright MCP (node)");
        let authority = format!("127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(30);
        while tokio::net::TcpStream::connect(&authority).await.is_err() {
            assert!(
                Instant::now() < deadline,
                "Playwright MCP did not listen within 30 s"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Server::Playwright {
            child,
            authority,
            _cwd: cwd,
        }
    }

    fn pid(&self) -> u32 {
        match self {
            Server::Cdpilot(serve) => serve.child.id(),
            Server::Playwright { child, .. } => child.id(),
        }
        .expect("server running")
    }

    async fn open_at(&self, url: &str) -> Client {
        match self {
            Server::Cdpilot(serve) => Client::Ws(Box::new(open_at(serve, url).await)),
            Server::Playwright { authority, .. } => {
                let mut client = McpHttpClient::new(authority, "");
                let reply = client.initialize().await;
                assert_eq!(reply.status, 200, "Playwright MCP initialize: {reply:?}");
                let nav = client.call("browser_navigate", json!({"url": url})).await;
                assert!(nav["isError"] != json!(true), "navigate failed: {nav}");
                Client::Http(client)
            }
        }
    }

    async fn stop(self) {
        match self {
            Server::Cdpilot(mut serve) => {
                serve.terminate().await;
            }
            Server::Playwright { mut child, .. } => {
                drop(child.stdin.take());
                if tokio::time::timeout(Duration::from_secs(20), child.wait())
                    .await
                    .is_err()
                {
                    let _ = child.start_kill();
                    let _ = child.wait().await;
                }
            }
        }
    }
}

impl Client {
    /// Ends the client's session (a closed socket; an MCP session's DELETE).
    async fn close(self) {
        match self {
            Client::Ws(ws) => drop(ws),
            Client::Http(mut client) => {
                client.end().await;
            }
        }
    }
}

async fn cost(playwright: bool) {
    let levels: Vec<usize> = std::env::var("CDPILOT_COST_LEVELS")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 8, 32, 64])
        .into_iter()
        .map(|n: usize| n.clamp(1, 64))
        .collect();
    let site = TestSite::start().await;
    let dir = corpus::dir();
    let corpus_site = match &dir {
        Some(d) => Some(CorpusSite::start(d).await),
        None => None,
    };
    let article = match (&dir, &corpus_site) {
        (Some(d), Some(c)) => c.url(&corpus::pages(d)[0].name),
        _ => site.url("article.html"),
    };
    let who = if playwright {
        "Playwright MCP (--isolated, streamable HTTP)"
    } else {
        "cdpilot serve"
    };
    println!("per-session cost of {who}; load average {}", load_average());
    println!(
        "{:>8} {:>8} {:>12} {:>12} {:>12} {:>14} {:>10} {:>16}",
        "page",
        "sessions",
        "server MiB",
        "Chromium MiB",
        "tree MiB",
        "per session",
        "per GiB",
        "load average"
    );
    // `CDPILOT_COST_PAGES`: `light`, `article` or both (the default).
    let pages = std::env::var("CDPILOT_COST_PAGES").unwrap_or_default();
    for (name, url) in [("light", site.url("index.html")), ("article", article)] {
        if !pages.is_empty() && !pages.split(',').any(|p| p.trim() == name) {
            continue;
        }
        for &n in &levels {
            // A fresh server per level: each level's tree is read alone.
            let server = Server::start(playwright).await;
            let pid = server.pid();
            // The base: the browser up and one session open on the light
            // page, kept through the level (Playwright MCP closes its
            // browser with its last client, so "no session" cannot be read
            // there; both are read the same way).
            let anchor = server.open_at(&site.url("index.html")).await;
            settle().await;
            let (_, _, base) = tree_mib(pid);
            let kinds_base = private_kinds(pid);
            let server = std::sync::Arc::new(server);
            let opening: Vec<_> = (0..n)
                .map(|_| {
                    let (server, url) = (server.clone(), url.clone());
                    tokio::spawn(async move { server.open_at(&url).await })
                })
                .collect();
            let mut open = Vec::new();
            for task in opening {
                open.push(task.await.expect("session opened"));
            }
            tokio::time::sleep(Duration::from_secs(3)).await;
            let (server_mib, chromium, total) = tree_mib(pid);
            let per = (total - base) / n as f64;
            println!(
                "{name:>8} {n:>8} {server_mib:>12.1} {chromium:>12.1} {total:>12.1} {:>10.1} MiB {:>10.0} {:>16}",
                per,
                1024.0 / per,
                load_average()
            );
            println!(
                "{:>8} {:>8} private per session: {}",
                "",
                "",
                split(&kinds_base, &private_kinds(pid), n)
            );
            for client in open {
                client.close().await;
            }
            anchor.close().await;
            let server = std::sync::Arc::into_inner(server).expect("no client left");
            server.stop().await;
        }
    }
}

/// Extra browser flags for a measurement (`CDPILOT_COST_ARGS`, separated
/// by `;`), after the configured ones.
fn extra_args() -> Vec<String> {
    std::env::var("CDPILOT_COST_ARGS")
        .unwrap_or_default()
        .split(';')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(str::to_owned)
        .collect()
}

#[tokio::main]
async fn main() {
    let mode = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_default();
    let playwright = std::env::args().any(|a| a == "playwright");
    match mode.as_str() {
        "cost" => cost(playwright).await,
        "infra" => infra::infra().await,
        _ => soak().await,
    }
}
