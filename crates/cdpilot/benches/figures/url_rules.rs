//! What the request-stage URL check costs a navigation: no rules against
//! 50 (49 allows that do not match, then a deny of origin B), and what a
//! redirect to the denied origin costs (the call fails at that hop).

use std::time::Instant;

use serde_json::json;
use testkit::TestSite;

use crate::common::*;

pub async fn figures(site: &TestSite) {
    let mut fifty: Vec<String> = (0..49)
        .flat_map(|i| ["--allow".to_owned(), format!("https://{{*.}}?site{i}.example/*")])
        .collect();
    fifty.extend(["--deny".to_owned(), format!("{}/*", site.b)]);
    println!("\nURL rules (request stage)          navigate    redirect to a denied origin");
    for (name, flags) in [("no rules", Vec::new()), ("50 rules", fifty)] {
        let args: Vec<&str> = flags.iter().map(String::as_str).collect();
        let mut client = spawn_with(&args, &[]);
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
