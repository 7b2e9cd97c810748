//! `-- screenshot`: the viewport screenshot (issue 24): raw
//! `Page.captureScreenshot` as PNG with and without `optimizeForSpeed`
//! (Chrome's encoding, what cdpilot asks for since), then
//! `browser_screenshot` through MCP; on a light page and an article.

use std::time::Instant;

use cdp::launch::LaunchOptions;
use cdp::protocol::page;
use serde_json::json;
use testkit::TestSite;

use crate::common::*;
use crate::readings::load_average;

pub async fn figures(site: &TestSite) {
    let options = LaunchOptions {
        executable: Some(testkit::chromium::executable()),
        headless: true,
        ..Default::default()
    };
    let raw = RawPage::open(&options).await;
    let s = &raw.session;
    let pages = ["/index.html", "/article.html"];
    println!(
        "viewport screenshot, PNG (medians of 30; load average {})",
        load_average()
    );
    for path in pages {
        raw.load(site.url(path)).await;
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
    raw.close().await;

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
