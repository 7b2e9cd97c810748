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
//!   end. After close it also prints the audit ring's records and bytes
//!   and the server's anonymous memory by mapping (glibc's arenas, the
//!   threads' stacks), largest first. Built with `--features dhat-heap`
//!   (and `CDPILOT_DHAT_FILE`), the server writes a dhat heap profile of
//!   what is live 20 s after the sessions closed (the bench creates the
//!   file's name plus `.now` then; the profile is written at exit
//!   otherwise); with `--features mimalloc` or `jemalloc` it runs on that
//!   allocator (its settings: `MIMALLOC_*`, `_RJEM_MALLOC_CONF`);
//!   `CDPILOT_MALLOC_TCACHE=1` keeps glibc's thread caches
//!   (docs/src/figures.md).
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

#[path = "sessions/soak.rs"]
mod soak;

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

/// The reading corpus served on loopback and its pages' URLs (keep the
/// site for as long as the pages are read).
async fn corpus_pages() -> (CorpusSite, Vec<String>) {
    let dir = corpus::dir().expect("the reading corpus (tests/corpus/reading)");
    let site = CorpusSite::start(&dir).await;
    let pages = corpus::pages(&dir).iter().map(|p| site.url(&p.name)).collect();
    (site, pages)
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
        _ => soak::soak().await,
    }
}
