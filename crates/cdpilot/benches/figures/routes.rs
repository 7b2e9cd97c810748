//! What routes cost a page (issue 44): the routes page (`routes.html`:
//! a document, an API fetch, a worker and its fetch, an image, a
//! cross-origin frame and its XHR) loaded with no routes, with 10 and with
//! 100 routes that match none of its requests (every request then pauses
//! at the request stage and is matched against each), and with its image
//! aborted and its API fulfilled by two routes. Run alone:
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
