//! `infra` of the sessions bench: what Chromium holds by process and
//! allocator, read through its own memory-infra accounting (issue 24).

use super::*;

/// The browser contexts Chromium lists (`Target.getBrowserContexts`).
async fn context_count(conn: &cdp::Connection) -> usize {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let listed = conn
        .browser()
        .send("Target.getBrowserContexts", json!({}), deadline)
        .await
        .expect("Target.getBrowserContexts");
    listed["browserContextIds"].as_array().map_or(0, Vec::len)
}

/// `infra`: what Chromium holds by process and allocator (its own
/// memory-infra accounting) with one session on a light page, with N more
/// (16) on the corpus's real pages, and after those N closed; then after a
/// critical memory-pressure signal. Chromium is launched here with the
/// flags cdpilot launches it with (a DevTools port instead of the pipe, so
/// the bench holds a browser-level connection of its own) and `cdpilot
/// serve` attaches to it (`cdp_url`).
pub(crate) async fn infra() {
    let sessions: usize = env_or("CDPILOT_SOAK_SESSIONS", 16).clamp(1, 64);
    let reads: usize = env_or("CDPILOT_INFRA_PAGES", 1).clamp(1, 100);
    let (_corpus_site, pages) = corpus_pages().await;
    let site = TestSite::start().await;
    let mut args: Vec<String> = corpus::BLOCK_EXTERNAL.iter().map(|f| f.to_string()).collect();
    args.push("--js-flags=--max-old-space-size=1024".into());
    args.extend(extra_args());
    let options = cdp::launch::LaunchOptions {
        executable: Some(testkit::chromium::executable()),
        headless: true,
        args,
        debugging: cdp::launch::Debugging::Port,
        ..Default::default()
    };
    let process = cdp::launch::launch(&options, Duration::from_secs(60))
        .await
        .expect("launch Chromium");
    let guard = process.guard_pid().expect("guard");
    let config = format!(
        "[serve]\nmax_sessions = 80\n[session]\nidle_timeout_s = 0\n[browser]\ncdp_url = \"{}\"\n[policy]\ndefault = \"deny\"\n[[policy.rules]]\npattern = \"http://127.0.0.1:*/*\"\naction = \"allow\"\n",
        process.ws_url()
    );
    let mut serve = Serve::start(&config, &[]).await;
    let conn = cdp::Connection::connect(process.ws_url()).await.expect("connect");
    println!(
        "infra: Chromium's own accounting (deterministic detailed dumps); {reads} page(s) a session; flags {:?}; load average {}",
        extra_args(),
        load_average()
    );
    let _baseline = open_at(&serve, &site.url("index.html")).await;
    settle().await;
    let (contexts_one, renderers_one) = (context_count(&conn).await, renderer_count(guard));
    let one = memory_infra::summarize(&memory_infra::dump(&conn).await);
    memory_infra::print(
        &format!(
            "one session on a light page ({contexts_one} contexts, {renderers_one} renderers; load {})",
            load_average()
        ),
        &one,
    );
    let opening: Vec<_> = (0..sessions)
        .map(|i| {
            let (serve_ws, token, url) = (serve.ws(), serve.token.clone(), pages[i % pages.len()].clone());
            let pages_of = pages.clone();
            async move {
                let mut ws = serve_ws.await;
                ws.open(&token).await;
                let _ = ws
                    .call(
                        "nav",
                        "browser_navigate",
                        json!({"url": url, "timeout_ms": 120000}),
                    )
                    .await;
                // More pages in turn (`CDPILOT_INFRA_PAGES`, default 1):
                // what a session that read many pages leaves behind.
                for k in 1..reads {
                    let next = &pages_of[(i * 7 + k) % pages_of.len()];
                    let nav = json!({"url": next, "timeout_ms": 120000});
                    let _ = ws.call(&format!("nav{k}"), "browser_navigate", nav).await;
                    let _ = ws.call(&format!("snap{k}"), "browser_snapshot", json!({})).await;
                }
                ws
            }
        })
        .collect();
    let mut open = Vec::new();
    for task in opening {
        open.push(task.await);
    }
    settle().await;
    let (contexts_live, renderers_live) = (context_count(&conn).await, renderer_count(guard));
    if std::env::var_os("CDPILOT_INFRA_LABELS").is_some() {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        let targets = conn
            .browser()
            .send("Target.getTargets", json!({}), deadline)
            .await
            .expect("targets");
        for t in targets["targetInfos"].as_array().into_iter().flatten() {
            println!("    target {} {} {}", t["type"], t["browserContextId"], t["url"]);
        }
        for (kind, kib) in memory::tree_private_kib(guard) {
            println!("    process {kind} {} MiB", kib / 1024);
        }
    }
    let live = memory_infra::summarize(&memory_infra::dump(&conn).await);
    memory_infra::print(
        &format!(
            "{sessions} more on corpus pages ({contexts_live} contexts, {renderers_live} renderers; load {})",
            load_average()
        ),
        &live,
    );
    memory_infra::print_change(&format!("per session of the {sessions}"), &one, &live, sessions);
    if std::env::var_os("CDPILOT_INFRA_CLOSE_TARGETS").is_some() {
        // One reading: the sessions' pages closed (`Target.closeTarget`)
        // before serve disposes their contexts, as their sockets close.
        let deadline = || tokio::time::Instant::now() + Duration::from_secs(30);
        let listed = conn
            .browser()
            .send("Target.getTargets", json!({}), deadline())
            .await
            .expect("Target.getTargets");
        let baseline_context = listed["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["url"].as_str().is_some_and(|u| u.ends_with("/index.html")))
            .map(|t| t["browserContextId"].clone());
        // Only the contexts sessions created (not the default one's blank
        // page, not the baseline session's).
        let created = conn
            .browser()
            .send("Target.getBrowserContexts", json!({}), deadline())
            .await
            .expect("Target.getBrowserContexts");
        let created: Vec<Value> = created["browserContextIds"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut closed = 0;
        for t in listed["targetInfos"].as_array().into_iter().flatten() {
            let context = &t["browserContextId"];
            if t["type"] == "page" && created.contains(context) && Some(context) != baseline_context.as_ref()
            {
                let close = json!({"targetId": t["targetId"]});
                if conn
                    .browser()
                    .send("Target.closeTarget", close, deadline())
                    .await
                    .is_ok()
                {
                    closed += 1;
                }
            }
        }
        println!("closed {closed} pages of the {sessions} sessions before their contexts");
    }
    drop(open);
    // Awaited, with a deadline: Chromium's contexts, then its renderers,
    // back to what one session had.
    let deadline = Instant::now() + Duration::from_secs(60);
    while context_count(&conn).await > contexts_one && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let contexts_back = context_count(&conn).await;
    let renderers_back = testkit::processes::wait_until(deadline - Instant::now(), || {
        renderer_count(guard) <= renderers_one
    })
    .await;
    println!(
        "after close: {contexts_back} contexts (one session: {contexts_one}), {} renderers (one session: {renderers_one}; back: {renderers_back})",
        renderer_count(guard)
    );
    settle().await;
    let after = memory_infra::summarize(&memory_infra::dump(&conn).await);
    memory_infra::print(
        &format!("after the {sessions} closed (load {})", load_average()),
        &after,
    );
    memory_infra::print_change("kept after close, against one session", &one, &after, 1);
    let later: u64 = env_or("CDPILOT_INFRA_LATER_S", 0);
    if later > 0 {
        // Whether time alone gives more back (PartitionAlloc's periodic
        // reclaim, the thread caches' purge).
        tokio::time::sleep(Duration::from_secs(later)).await;
        let waited = memory_infra::summarize(&memory_infra::dump(&conn).await);
        memory_infra::print_change(
            &format!(
                "kept {later} s later, against one session (load {})",
                load_average()
            ),
            &one,
            &waited,
            1,
        );
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let _ = conn
        .browser()
        .send(
            "Memory.simulatePressureNotification",
            json!({"level": "critical"}),
            deadline,
        )
        .await;
    settle().await;
    let pressed = memory_infra::summarize(&memory_infra::dump(&conn).await);
    memory_infra::print_change(
        "kept after a critical pressure signal, against one session",
        &one,
        &pressed,
        1,
    );
    serve.terminate().await;
    conn.close();
    process.shutdown(Duration::from_secs(10)).await;
}
