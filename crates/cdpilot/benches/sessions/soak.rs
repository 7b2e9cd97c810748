//! `soak` of the sessions bench: N sessions looping over the corpus pages
//! for S seconds; the server's RSS by third, before (cold and warm) and
//! after close; the tree once the closed sessions' renderers exited, a
//! minute later, and on the next session after serve closed the idle
//! browser (issue 24; the head of `sessions.rs` says what it prints).

use super::*;

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

/// The server's latest line starting with `prefix` (its heap lines).
fn last_line(serve: &Serve, prefix: &str) -> String {
    let log = serve.log.lock().unwrap();
    log.iter()
        .rev()
        .find(|l| l.starts_with(prefix))
        .cloned()
        .unwrap_or_default()
}

/// The server's anonymous memory by mapping, largest first (the top
/// `n`): glibc's main heap is `[heap]`, each other arena a mapping of
/// up to 64 MiB, each thread's stack a mapping of its own.
fn anonymous_maps(pid: u32, n: usize) -> String {
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap_or_default();
    let mut maps: Vec<(u64, String)> = Vec::new();
    let mut current: Option<(String, u64)> = None;
    for line in smaps.lines() {
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or("");
        if first.contains('-') && !first.ends_with(':') {
            let (start, end) = first.split_once('-').unwrap_or(("0", "0"));
            let size =
                u64::from_str_radix(end, 16).unwrap_or(0) - u64::from_str_radix(start, 16).unwrap_or(0);
            let name = words.nth(4).unwrap_or("").to_owned();
            current = (name.is_empty() || name == "[heap]" || name == "[stack]")
                .then(|| (if name.is_empty() { "anon".into() } else { name }, size >> 10));
        } else if first == "Rss:" {
            if let Some((name, size)) = current.take() {
                let rss: u64 = words.next().and_then(|v| v.parse().ok()).unwrap_or(0);
                if rss > 0 {
                    maps.push((rss, format!("{name} {size} kB")));
                }
            }
        }
    }
    maps.sort_by_key(|m| std::cmp::Reverse(m.0));
    let total: u64 = maps.iter().map(|m| m.0).sum();
    let top: Vec<String> = maps
        .iter()
        .take(n)
        .map(|(rss, name)| format!("{name}: {rss} kB"))
        .collect();
    format!("{} mappings, {total} kB: {}", maps.len(), top.join("; "))
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

/// The soak run (`cargo bench -p cdpilot --bench sessions -- soak`).
pub async fn soak() {
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
        "server before the soak, warm, anonymous: {}",
        anonymous_maps(pid, 10)
    );
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
    println!(
        "server after the {sessions} closed: {}",
        last_line(&serve, "audit ring: ")
    );
    // `--features dhat-heap`: what is live now, with its stacks.
    if let Ok(file) = std::env::var("CDPILOT_DHAT_FILE") {
        let _ = std::fs::write(format!("{file}.now"), "");
    }
    println!(
        "server after the {sessions} closed, anonymous: {}",
        anonymous_maps(pid, 10)
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
