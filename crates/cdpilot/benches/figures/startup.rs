//! The server's start: spawn to tools/list, its memory, the size of the
//! tool definitions, and the first navigate (the browser's launch), at once
//! and 500 ms after initialize.

use std::time::{Duration, Instant};

use testkit::TestSite;

use crate::common::*;

pub async fn figures(site: &TestSite) {
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

    // First navigate, including the browser launch; then the same called
    // 500 ms after initialize (as a client that lists its tools and lets a
    // model think first): the start began at initialize.
    let mut first = Duration::ZERO;
    for (label, pause) in [
        ("first navigate incl. browser launch:        ", Duration::ZERO),
        (
            "first navigate, 500 ms after initialize:    ",
            Duration::from_millis(500),
        ),
    ] {
        let mut times = Vec::new();
        for _ in 0..5 {
            times.push(first_navigate(site, &[], pause).await);
        }
        let took = median(times);
        if pause.is_zero() {
            first = took;
        }
        println!("{label} {}", ms(took));
    }

    // The floor of the first navigate (issue 46): Chromium's own start to
    // the same page loaded, with a bare CDP client (launch over the pipe,
    // attach to its first tab, Page.enable, navigate, the load event).
    let mut bare = Vec::new();
    for _ in 0..5 {
        let began = Instant::now();
        let page = RawPage::open(&testkit::chromium::launch_options(cdp::launch::Debugging::Pipe)).await;
        page.load(site.url("/")).await;
        bare.push(began.elapsed());
        page.close().await;
    }
    let bare = median(bare);
    println!(
        "Chromium's own start to the page loaded (bare CDP): {} (cdpilot's first navigate {:.2}x)",
        ms(bare),
        first.as_secs_f64() / bare.as_secs_f64()
    );
}
