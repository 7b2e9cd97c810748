//! One server's run over the test site's pages: full snapshots of 1,000 to
//! 20,000 controls, a fresh document's first snapshot, five cross-origin
//! iframes, snapshot sizes, evaluate, click by ref, and the peak PSS of the
//! process tree meanwhile.

use std::time::Instant;

use serde_json::{json, Value};
use testkit::snapshot::ref_of as ref_on_line;
use testkit::TestSite;

use crate::common::*;
use crate::memory::PeakPss;

pub async fn figures(site: &TestSite) {
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
}
