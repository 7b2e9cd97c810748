//! Forms, drags and scrolling (issue 12): one `browser_fill_form` of eleven
//! controls against one call per control, a drag of each kind, a wheel
//! scroll of one viewport.

use std::time::Instant;

use serde_json::json;
use testkit::TestSite;

use crate::common::*;

pub async fn figures(site: &TestSite) {
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
