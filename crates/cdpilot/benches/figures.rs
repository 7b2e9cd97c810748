//! The figures cdpilot competes on, measured end to end through MCP stdio
//! on the optimized binary, against real headless Chromium and pages served
//! on loopback. Run: `cargo bench -p cdpilot --bench figures`.
//!
//! Not a test: it asserts nothing about speed, it prints medians.
//!
//! `-- breakdown` prints instead where the milliseconds of a snapshot, a
//! click and the first navigate (the browser's start) go, step by step, from
//! the server's `CDPILOT_TIMINGS` file. `CDPILOT_BENCH_BIN=<path>` measures
//! another build of the binary (a base to compare with, run back to back).
//! `-- screenshot` prints only the viewport screenshot: through MCP, and
//! raw `Page.captureScreenshot` with and without Chrome's `optimizeForSpeed`.

#[path = "figures/memory.rs"]
mod memory;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use memory::PeakPss;
use serde_json::{json, Value};
use testkit::snapshot::ref_of as ref_on_line;
use testkit::{McpClient, TestSite};

/// The binary measured: `$CDPILOT_BENCH_BIN`, else this build's.
fn binary() -> String {
    std::env::var("CDPILOT_BENCH_BIN")
        .ok()
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_cdpilot").to_owned())
}

fn spawn() -> McpClient {
    spawn_with(&[])
}

fn spawn_with(env: &[(&str, &str)]) -> McpClient {
    let chrome = testkit::chromium::executable();
    let mut vars = vec![
        ("CDPILOT_CHROME", chrome.to_str().unwrap()),
        ("CDPILOT_CONFIG", ""),
    ];
    vars.extend_from_slice(env);
    McpClient::spawn(&binary(), &["mcp"], &vars)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn shutdown(mut client: McpClient) {
    client.close_stdin();
    let _ = tokio::time::timeout(Duration::from_secs(10), client.child.wait()).await;
}

#[tokio::main]
async fn main() {
    let site = TestSite::start().await;
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "breakdown") {
        let parts: Vec<&str> = args[at + 1..]
            .iter()
            .map(String::as_str)
            .filter(|a| !a.starts_with('-'))
            .collect();
        breakdown(&site, &parts).await;
        return;
    }
    if args.iter().any(|a| a == "screenshot") {
        screenshot(&site).await;
        return;
    }
    println!("cdpilot figures (medians; MCP stdio, release build, headless Chromium)\n");

    // Cold start: spawn → initialize → tools/list answered.
    let mut starts = Vec::new();
    let mut memory = Vec::new();
    for _ in 0..20 {
        let began = Instant::now();
        let mut client = spawn();
        client.initialize().await;
        let tools = client.list_tools().await;
        starts.push(began.elapsed());
        assert!(!tools.is_empty());
        memory.push(rss_kib(client.child.id().unwrap()));
        shutdown(client).await;
    }
    memory.sort();
    let tool_chars: usize = {
        let mut client = spawn();
        client.initialize().await;
        let tools = client.list_tools().await;
        shutdown(client).await;
        tools.iter().map(|t| t.to_string().len()).sum()
    };
    println!(
        "cold start (spawn → initialize → tools/list): {}",
        ms(median(starts))
    );
    println!(
        "server memory after initialize (RSS):        {:.1} MB",
        memory[memory.len() / 2] as f64 / 1024.0
    );
    println!("all tool definitions (JSON):                 {tool_chars} chars");

    // First navigate, including the browser launch.
    let mut firsts = Vec::new();
    for _ in 0..5 {
        let mut client = spawn();
        client.initialize().await;
        let began = Instant::now();
        let nav = client
            .call("browser_navigate", json!({"url": site.url("/")}))
            .await;
        firsts.push(began.elapsed());
        assert_eq!(nav["isError"], false, "{nav}");
        shutdown(client).await;
    }
    println!(
        "first navigate incl. browser launch:         {}",
        ms(median(firsts))
    );

    // The same, called 500 ms after initialize (as a client that lists its
    // tools and lets a model think first): the start began at initialize.
    let mut later = Vec::new();
    for _ in 0..5 {
        let mut client = spawn();
        client.initialize().await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let began = Instant::now();
        let nav = client
            .call("browser_navigate", json!({"url": site.url("/")}))
            .await;
        later.push(began.elapsed());
        assert_eq!(nav["isError"], false, "{nav}");
        shutdown(client).await;
    }
    println!(
        "first navigate, 500 ms after initialize:     {}",
        ms(median(later))
    );

    let mut client = spawn();
    client.initialize().await;
    let server = client.child.id().unwrap();
    let peak = PeakPss::watch(server);

    // Snapshots of pages with N controls, every control ref'd.
    println!("\nsnapshot (whole page, no cap)      wall        chars      refs");
    for count in [1_000usize, 5_000, 10_000, 20_000] {
        client
            .call(
                "browser_navigate",
                json!({"url": site.url(&format!("/controls/{count}"))}),
            )
            .await;
        let mut times = Vec::new();
        let mut last = Value::Null;
        for _ in 0..7 {
            let began = Instant::now();
            last = client
                .call("browser_snapshot", json!({"max_elements": 1_000_000}))
                .await;
            times.push(began.elapsed());
        }
        let chars = text_of(&last).chars().count();
        println!(
            "  {count:>6} controls            {:>10}  {chars:>9}  {:>8}",
            ms(median(times)),
            last["structuredContent"]["ref_count"]
        );
    }
    println!(
        "server RSS after a 20,000-control snapshot:  {:.1} MB",
        rss_kib(server) as f64 / 1024.0
    );

    // A fresh document each time: the navigate and its first full snapshot.
    let mut firsts = Vec::new();
    for i in 0..5 {
        let began = Instant::now();
        client
            .call(
                "browser_navigate",
                json!({"url": site.url(&format!("/controls/20000?n={i}"))}),
            )
            .await;
        let snap = client
            .call("browser_snapshot", json!({"max_elements": 1_000_000}))
            .await;
        firsts.push(began.elapsed());
        assert_eq!(snap["isError"], false, "{snap}");
    }
    println!(
        "navigate + first full snapshot, 20,000 controls: {}",
        ms(median(firsts))
    );

    // Five cross-origin iframes: the first snapshot of a document against
    // the second.
    let (mut first, mut second) = (Vec::new(), Vec::new());
    for i in 0..7 {
        client
            .call(
                "browser_navigate",
                json!({"url": site.url(&format!("/frames5.html?n={i}"))}),
            )
            .await;
        for times in [&mut first, &mut second] {
            let began = Instant::now();
            let snap = client.call("browser_snapshot", json!({})).await;
            times.push(began.elapsed());
            assert!(text_of(&snap).contains("Child frame"), "{snap}");
        }
    }
    println!(
        "five cross-origin iframes: first snapshot {}, second {}",
        ms(median(first)),
        ms(median(second))
    );

    // Snapshot sizes on the test site's pages (compare with other tools on
    // the same pages).
    println!("\nsnapshot size on test-site pages       chars   refs");
    for page in [
        "/index.html",
        "/form.html",
        "/snapshot.html",
        "/article.html",
        "/inputs.html",
        "/frames.html",
    ] {
        client
            .call("browser_navigate", json!({"url": site.url(page)}))
            .await;
        let snap = client.call("browser_snapshot", json!({})).await;
        println!(
            "  {page:<30} {:>8} {:>6}",
            text_of(&snap).chars().count(),
            snap["structuredContent"]["ref_count"]
        );
    }

    // Evaluate 1+1 end to end (the evaluate lane: its own session, warm).
    client
        .call("browser_navigate", json!({"url": site.url("/")}))
        .await;
    let mut evals = Vec::new();
    for _ in 0..30 {
        let began = Instant::now();
        let r = client
            .call("browser_evaluate", json!({"expression": "1+1"}))
            .await;
        evals.push(began.elapsed());
        assert_eq!(r["structuredContent"]["value"], 2, "{r}");
    }
    println!("\nbrowser_evaluate 1+1 through MCP:  {}", ms(median(evals)));

    // Click by ref: a small page and a 5,000-control page.
    println!("\nclick by ref (one MCP call, trusted input)");
    for (label, path, needle) in [
        ("small page", "/".to_owned(), "button \"Trusted click\""),
        (
            "5,000-control page",
            "/controls/5000".to_owned(),
            "button \"Buy 2500\"",
        ),
    ] {
        client
            .call("browser_navigate", json!({"url": site.url(&path)}))
            .await;
        let snap = text_of(
            &client
                .call("browser_snapshot", json!({"max_elements": 1_000_000}))
                .await,
        );
        let reference = ref_on_line(&snap, needle);
        let mut times = Vec::new();
        for _ in 0..30 {
            let began = Instant::now();
            let r = client.call("browser_click", json!({"ref": reference})).await;
            times.push(began.elapsed());
            assert_eq!(r["isError"], false, "{r}");
        }
        println!("  {label:<22} {}", ms(median(times)));
    }
    let (peak, parts) = peak.stop();
    println!(
        "\npeak PSS of the process tree (server + Chromium) during the run: {:.0} MiB",
        peak as f64 / 1024.0
    );
    let parts: Vec<String> = parts
        .iter()
        .take(6)
        .map(|(kind, kib)| format!("{kind} {:.0}", *kib as f64 / 1024.0))
        .collect();
    println!("  at the peak, by process (MiB): {}", parts.join(", "));
    shutdown(client).await;
    forms(&site).await;
    url_rules(&site).await;
    raw_cdp_floor(&site).await;
}

/// The same operations over raw CDP (our `cdp` crate, no engine, no MCP) on
/// a separately launched Chromium: the floor cdpilot's overhead sits on.
/// What the request-stage URL check costs a navigation: no rules against 50
/// (49 allows that do not match, then a deny of origin B), and what a
/// redirect to the denied origin costs (the call fails at that hop).
async fn url_rules(site: &TestSite) {
    let chrome = testkit::chromium::executable();
    let mut fifty: Vec<String> = (0..49)
        .flat_map(|i| ["--allow".to_owned(), format!("https://{{*.}}?site{i}.example/*")])
        .collect();
    fifty.extend(["--deny".to_owned(), format!("{}/*", site.b)]);
    println!("\nURL rules (request stage)          navigate    redirect to a denied origin");
    for (name, flags) in [("no rules", Vec::new()), ("50 rules", fifty)] {
        let mut args = vec!["mcp"];
        args.extend(flags.iter().map(String::as_str));
        let mut client = McpClient::spawn(
            env!("CARGO_BIN_EXE_cdpilot"),
            &args,
            &[
                ("CDPILOT_CHROME", chrome.to_str().unwrap()),
                ("CDPILOT_CONFIG", ""),
            ],
        );
        client.initialize().await;
        client
            .call("browser_navigate", json!({"url": site.url("/?warm")}))
            .await;
        let mut navigations = Vec::new();
        for i in 0..30 {
            let began = Instant::now();
            client
                .call("browser_navigate", json!({"url": site.url(&format!("/?n={i}"))}))
                .await;
            navigations.push(began.elapsed());
        }
        let mut redirects = Vec::new();
        for i in 0..10 {
            let to = site
                .url_b(&format!("/?r={i}"))
                .replace(':', "%3A")
                .replace('/', "%2F")
                .replace('?', "%3F")
                .replace('=', "%3D");
            let began = Instant::now();
            client
                .call(
                    "browser_navigate",
                    json!({"url": site.url(&format!("/redirect?to={to}"))}),
                )
                .await;
            redirects.push(began.elapsed());
        }
        println!(
            "  {name:<32} {:>10}  {:>10}",
            ms(median(navigations)),
            ms(median(redirects))
        );
        shutdown(client).await;
    }
}

async fn raw_cdp_floor(site: &TestSite) {
    use cdp::launch::launch;
    use cdp::protocol::{input, page, runtime, target};
    // Raw CDP has no default deadline: each command gets this much.
    let soon = || tokio::time::Instant::now() + Duration::from_secs(30);

    let options = testkit::chromium::launch_options(cdp::launch::Debugging::Pipe);
    let process = launch(&options, Duration::from_secs(30)).await.expect("launch");
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
    let s = conn.session(attached.session_id);
    s.call(page::Enable {}, soon()).await.unwrap();
    let evaluate = |expression: &str| runtime::Evaluate {
        expression: expression.into(),
        context_id: None,
        return_by_value: true,
        await_promise: false,
        user_gesture: false,
    };
    let load = |url: String| {
        let s = s.clone();
        async move {
            let mut events = s.events();
            s.call(page::Navigate { url }, soon()).await.unwrap();
            while let Some(e) = events.recv().await {
                if e.is::<page::LoadEventFired>() {
                    break;
                }
            }
        }
    };

    println!("\nraw CDP floor (no engine, no MCP)");
    load(site.url("/")).await;
    let mut evals = Vec::new();
    for _ in 0..30 {
        let began = Instant::now();
        s.call(evaluate("1+1"), soon()).await.unwrap();
        evals.push(began.elapsed());
    }
    println!(
        "  Runtime.evaluate 1+1 on the page session: {}",
        ms(median(evals))
    );

    let mut clicks = Vec::new();
    for _ in 0..30 {
        let began = Instant::now();
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            let pressed = kind == "mousePressed";
            s.call(
                input::DispatchMouseEvent {
                    kind: kind.into(),
                    x: 40.0,
                    y: 120.0,
                    button: if kind == "mouseMoved" {
                        "none".into()
                    } else {
                        "left".into()
                    },
                    buttons: if pressed { 1 } else { 0 },
                    click_count: if kind == "mouseMoved" { 0 } else { 1 },
                    modifiers: 0,
                },
                soon(),
            )
            .await
            .unwrap();
        }
        clicks.push(began.elapsed());
    }
    println!(
        "  mouse move + press + release:             {}",
        ms(median(clicks))
    );

    println!("  bare in-page walk (TreeWalker over every element, count only):");
    for count in [1_000usize, 5_000, 10_000, 20_000] {
        load(site.url(&format!("/controls/{count}"))).await;
        let walk = "(() => { const w = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT); let n = 0; while (w.nextNode()) n++; return n; })()";
        let mut times = Vec::new();
        for _ in 0..7 {
            let began = Instant::now();
            s.call(evaluate(walk), soon()).await.unwrap();
            times.push(began.elapsed());
        }
        println!("    {count:>6} controls: {}", ms(median(times)));
    }
    conn.close();
    process.shutdown(Duration::from_secs(5)).await;
}

/// Forms, drags and scrolling (issue 12): one `browser_fill_form` of eleven
/// controls against one call per control, a drag of each kind, a wheel
/// scroll of one viewport.
async fn forms(site: &TestSite) {
    let mut client = spawn();
    client.initialize().await;
    let form = site.url("/forms.html");
    let fields = json!([
        {"selector": "#name", "value": "Ada Lovelace"},
        {"selector": "#notes", "value": "two lines"},
        {"selector": "#gift", "value": "true"},
        {"selector": "#fancy", "value": "true"},
        {"selector": "[name=size][value=l]", "value": "true"},
        {"selector": "#colour", "value": "Green"},
        {"selector": "#volume", "value": "73"},
        {"selector": "#day", "value": "2026-11-23"},
        {"selector": "#time", "value": "18:30"},
        {"selector": "#tint", "value": "#ff8800"},
        {"selector": "#count", "value": "7"},
    ]);
    let mut one_call = Vec::new();
    let mut per_control = Vec::new();
    for _ in 0..7 {
        client.call("browser_navigate", json!({"url": form})).await;
        let began = Instant::now();
        let r = client.call("browser_fill_form", json!({"fields": fields})).await;
        one_call.push(began.elapsed());
        assert_eq!(r["isError"], false, "{r}");
        client.call("browser_navigate", json!({"url": form})).await;
        let began = Instant::now();
        for field in fields.as_array().unwrap() {
            let r = client.call("browser_fill_form", json!({"fields": [field]})).await;
            assert_eq!(r["isError"], false, "{r}");
        }
        per_control.push(began.elapsed());
    }
    println!(
        "
forms (test site /forms.html)"
    );
    println!("  fill_form, 11 controls in one call   {}", ms(median(one_call)));
    println!(
        "  the same, one call per control       {}",
        ms(median(per_control))
    );

    let mut html5 = Vec::new();
    let mut slider = Vec::new();
    for _ in 0..7 {
        client
            .call("browser_navigate", json!({"url": site.url("/drag.html")}))
            .await;
        let began = Instant::now();
        let r = client
            .call(
                "browser_drag",
                json!({"selector": "#list li", "to_selector": "#list li:last-child"}),
            )
            .await;
        html5.push(began.elapsed());
        assert_eq!(r["structuredContent"]["html5"], true, "{r}");
        let began = Instant::now();
        let r = client
            .call(
                "browser_drag",
                json!({"selector": "#knob", "to_selector": "#order"}),
            )
            .await;
        slider.push(began.elapsed());
        assert_eq!(r["structuredContent"]["html5"], false, "{r}");
    }
    println!("  drag, HTML5 sortable list            {}", ms(median(html5)));
    println!("  drag, mouse-driven slider            {}", ms(median(slider)));

    let mut scrolls = Vec::new();
    client
        .call("browser_navigate", json!({"url": site.url("/scroll.html")}))
        .await;
    for _ in 0..7 {
        client.call("browser_scroll", json!({"selector": "h1"})).await;
        let began = Instant::now();
        let r = client.call("browser_scroll", json!({"direction": "down"})).await;
        scrolls.push(began.elapsed());
        assert_eq!(r["isError"], false, "{r}");
    }
    println!("  scroll one viewport by wheel         {}", ms(median(scrolls)));
    shutdown(client).await;
}

/// One call's steps from the server's timings file: the summed wall time
/// of each step (a step may run once per frame), by name.
type Steps = BTreeMap<String, f64>;

/// Reads the timings file from line `from` on; returns the calls it closes
/// (a call ends with its `dispatch` line) and the next line to read.
fn calls_in(path: &std::path::Path, from: usize) -> (Vec<(Steps, Vec<String>)>, usize) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let mut calls = Vec::new();
    let mut steps = Steps::new();
    let mut order = Vec::new();
    let mut next = from;
    for (i, line) in lines.iter().enumerate().skip(from) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let (Some(step), Some(took)) = (v["step"].as_str(), v["ms"].as_f64()) else {
            continue;
        };
        if !steps.contains_key(step) {
            order.push(step.to_owned());
        }
        *steps.entry(step.to_owned()).or_default() += took;
        if step == "dispatch" {
            calls.push((std::mem::take(&mut steps), std::mem::take(&mut order)));
            next = i + 1;
        }
    }
    (calls, next)
}

/// Prints the median of each step over `calls`, with the client's wall
/// times, and what MCP adds (wall minus the dispatch).
fn print_steps(title: &str, calls: &[(Steps, Vec<String>)], walls: &[Duration]) {
    println!("\n{title} ({} calls; medians)", calls.len());
    let mut order: Vec<String> = Vec::new();
    for (_, steps) in calls {
        for s in steps {
            if !order.contains(s) {
                order.push(s.clone());
            }
        }
    }
    let median_of = |values: Vec<f64>| {
        let mut values = values;
        values.sort_by(|a, b| a.partial_cmp(b).unwrap());
        values.get(values.len() / 2).copied().unwrap_or(0.0)
    };
    for step in &order {
        let values = calls
            .iter()
            .map(|(c, _)| c.get(step).copied().unwrap_or(0.0))
            .collect();
        println!("  {step:<28} {:>9.2} ms", median_of(values));
    }
    let wall = median(walls.to_vec());
    let dispatch = median_of(calls.iter().map(|(c, _)| c["dispatch"]).collect());
    println!("  {:<28} {:>9.2} ms", "client wall", wall.as_secs_f64() * 1000.0);
    println!(
        "  {:<28} {:>9.2} ms",
        "MCP (wall − dispatch)",
        wall.as_secs_f64() * 1000.0 - dispatch
    );
}

/// `-- breakdown`: where the milliseconds go, step by step.
async fn breakdown(site: &TestSite, parts: &[&str]) {
    let dir = tempfile::tempdir().expect("temp dir");
    println!("cdpilot step timings (CDPILOT_TIMINGS; release build)");
    let wanted = |part: &str| parts.is_empty() || parts.contains(&part);

    // The first navigate of a fresh server: the browser's start.
    let mut calls = Vec::new();
    let mut walls = Vec::new();
    for i in 0..if wanted("launch") { 5 } else { 0 } {
        let path = dir.path().join(format!("launch-{i}.jsonl"));
        let mut client = spawn_with(&[("CDPILOT_TIMINGS", path.to_str().unwrap())]);
        client.initialize().await;
        let began = Instant::now();
        let nav = client
            .call("browser_navigate", json!({"url": site.url("/")}))
            .await;
        walls.push(began.elapsed());
        assert_eq!(nav["isError"], false, "{nav}");
        calls.extend(calls_in(&path, 0).0);
        shutdown(client).await;
    }
    if wanted("launch") {
        print_steps("first navigate incl. browser launch", &calls, &walls);
    }

    let path = dir.path().join("run.jsonl");
    let mut client = spawn_with(&[("CDPILOT_TIMINGS", path.to_str().unwrap())]);
    client.initialize().await;
    let mut read = 0;
    for count in [5_000usize, 20_000] {
        if !wanted("snapshot") {
            break;
        }
        client
            .call(
                "browser_navigate",
                json!({"url": site.url(&format!("/controls/{count}"))}),
            )
            .await;
        read = calls_in(&path, read).1;
        let mut walls = Vec::new();
        for _ in 0..7 {
            let began = Instant::now();
            client
                .call("browser_snapshot", json!({"max_elements": 1_000_000}))
                .await;
            walls.push(began.elapsed());
        }
        let (calls, next) = calls_in(&path, read);
        read = next;
        print_steps(&format!("full snapshot, {count} controls"), &calls, &walls);
    }

    for (label, page, needle) in [
        ("small page", "/".to_owned(), "button \"Trusted click\""),
        (
            "5,000-control page",
            "/controls/5000".to_owned(),
            "button \"Buy 2500\"",
        ),
    ] {
        if !wanted("click") {
            break;
        }
        client
            .call("browser_navigate", json!({"url": site.url(&page)}))
            .await;
        let snap = text_of(
            &client
                .call("browser_snapshot", json!({"max_elements": 1_000_000}))
                .await,
        );
        read = calls_in(&path, read).1;
        let reference = ref_on_line(&snap, needle);
        let mut walls = Vec::new();
        for _ in 0..15 {
            let began = Instant::now();
            client.call("browser_click", json!({"ref": reference})).await;
            walls.push(began.elapsed());
        }
        let (calls, next) = calls_in(&path, read);
        read = next;
        print_steps(&format!("click by ref, {label}"), &calls, &walls);
    }

    let (mut first, mut second) = (Vec::new(), Vec::new());
    let (mut first_walls, mut second_walls) = (Vec::new(), Vec::new());
    for i in 0..if wanted("frames") { 5 } else { 0 } {
        client
            .call(
                "browser_navigate",
                json!({"url": site.url(&format!("/frames5.html?n={i}"))}),
            )
            .await;
        read = calls_in(&path, read).1;
        for (calls, walls) in [(&mut first, &mut first_walls), (&mut second, &mut second_walls)] {
            let began = Instant::now();
            client.call("browser_snapshot", json!({})).await;
            walls.push(began.elapsed());
            let (got, next) = calls_in(&path, read);
            read = next;
            calls.extend(got);
        }
    }
    if wanted("frames") {
        print_steps("five cross-origin iframes, first snapshot", &first, &first_walls);
        print_steps(
            "five cross-origin iframes, second snapshot",
            &second,
            &second_walls,
        );
    }
    shutdown(client).await;
}

/// The viewport screenshot (issue 24): raw `Page.captureScreenshot` as PNG
/// with and without `optimizeForSpeed` (Chrome's encoding, what cdpilot
/// asks for since), then `browser_screenshot` through MCP; on a light page
/// and an article.
async fn screenshot(site: &TestSite) {
    use cdp::launch::{launch, LaunchOptions};
    use cdp::protocol::{page, target};
    let soon = || tokio::time::Instant::now() + Duration::from_secs(30);
    let options = LaunchOptions {
        executable: Some(testkit::chromium::executable()),
        headless: true,
        ..Default::default()
    };
    let process = launch(&options, Duration::from_secs(30)).await.expect("launch");
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
    let s = conn.session(attached.session_id);
    s.call(page::Enable {}, soon()).await.unwrap();
    let pages = ["/index.html", "/article.html"];
    println!(
        "viewport screenshot, PNG (medians of 30; load average {})",
        load_average()
    );
    for path in pages {
        let mut events = s.events();
        s.call(page::Navigate { url: site.url(path) }, soon())
            .await
            .unwrap();
        while let Some(e) = events.recv().await {
            if e.is::<page::LoadEventFired>() {
                break;
            }
        }
        for fast in [false, true] {
            let (mut times, mut bytes) = (Vec::new(), 0);
            for _ in 0..30 {
                let began = Instant::now();
                let shot = s
                    .call(
                        page::CaptureScreenshot {
                            format: "png".into(),
                            optimize_for_speed: fast,
                            ..Default::default()
                        },
                        soon(),
                    )
                    .await
                    .unwrap();
                times.push(began.elapsed());
                bytes = shot.data.len() * 3 / 4;
            }
            println!(
                "  raw CDP {path:<16} optimizeForSpeed {fast:<5} {:>9}  {:>7} bytes",
                ms(median(times)),
                bytes
            );
        }
    }
    conn.close();
    process.shutdown(Duration::from_secs(5)).await;

    let mut client = spawn();
    client.initialize().await;
    for path in pages {
        client
            .call("browser_navigate", json!({"url": site.url(path)}))
            .await;
        let mut times = Vec::new();
        for _ in 0..30 {
            let began = Instant::now();
            let r = client.call("browser_screenshot", json!({})).await;
            times.push(began.elapsed());
            assert!(r["isError"] != true, "{r}");
        }
        println!("  browser_screenshot via MCP {path:<16} {:>9}", ms(median(times)));
    }
    shutdown(client).await;
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}
