//! Attaching to a Chromium someone else started, by `cdp_url`: the
//! `http://host:port` form is resolved through `/json/version`, and an
//! address that does not lead to DevTools fails naming that step.

mod common;

use std::time::Duration;

use cdp::launch::{launch, Debugging, LaunchOptions};
use common::{call, engine_with, ok, ref_of};
use engine::ErrorCode;
use serde_json::json;
use testkit::TestSite;

// Issue 8: `cdp_url = "http://127.0.0.1:PORT"` never connected: Chromium
// answers /json/version and keeps the socket open, and the endpoint step
// read until it closed, so every call timed out.
#[tokio::test]
async fn an_http_cdp_url_attaches_to_a_running_chromium() {
    let site = TestSite::start().await;
    let options = LaunchOptions {
        args: Vec::new(),
        ..testkit::chromium::launch_options(Debugging::Port)
    };
    let chromium = launch(&options, Duration::from_secs(30)).await.expect("launch");
    // ws://127.0.0.1:PORT/devtools/browser/… → http://127.0.0.1:PORT
    let host_port = chromium
        .ws_url()
        .trim_start_matches("ws://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let engine = engine_with(|c| c.browser.cdp_url = format!("http://{host_port}"));

    let nav = ok(&engine, "browser_navigate", json!({"url": site.url("/")})).await;
    assert_eq!(nav.data["title"], "cdpilot test home");
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    ref_of(&snap.text, "button \"Trusted click\"");

    engine.shutdown().await;
    chromium.shutdown(Duration::from_secs(5)).await;
}

// Issue 8: the error named no step a user could act on.
#[tokio::test]
async fn an_unreachable_cdp_url_names_the_endpoint_step() {
    let closed = TestSite::closed_port();
    let engine = engine_with(|c| c.browser.cdp_url = format!("http://127.0.0.1:{}", closed.port));
    let e = call(&engine, "browser_snapshot", json!({})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::BrowserDisconnected, "{e}");
    assert!(e.message.contains("finding the browser endpoint"), "{e}");
    assert!(e.message.contains("--remote-debugging-port"), "{e}");
}

// Issue 8: an endpoint that accepts but never answers ran out the budget
// with "take a browser_snapshot" as the advice, which cannot help.
#[tokio::test]
async fn a_silent_cdp_url_times_out_naming_the_endpoint_step() {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = silent.local_addr().unwrap();
    let engine = engine_with(|c| c.browser.cdp_url = format!("http://{address}"));
    let e = call(&engine, "browser_snapshot", json!({"timeout_ms": 1000}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::Timeout, "{e}");
    assert!(e.message.contains("finding the browser endpoint"), "{e}");
    assert!(!e.next_step.contains("snapshot"), "{e}");
    assert!(e.next_step.contains("cdp_url"), "{e}");
    drop(silent);
}
