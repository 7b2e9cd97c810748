//! Reconnect: cdpilot reaches a browser through a loopback TCP proxy that
//! the test cuts. The session comes back on its own, with the pending
//! dialog and the frame records the supervisor held.

mod common;

use std::time::Duration;

use cdp::launch::{launch, Debugging};
use common::{call, engine_with, ok, ref_of};
use engine::ErrorCode;
use serde_json::json;
use testkit::{TcpProxy, TestSite};

#[tokio::test]
async fn a_cut_connection_is_reopened_and_the_pending_dialog_survives() {
    let site = TestSite::start().await;
    let options = testkit::chromium::launch_options(Debugging::Port);
    let chromium = launch(&options, Duration::from_secs(30)).await.expect("launch");
    let upstream = chromium
        .ws_url()
        .trim_start_matches("ws://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let proxy = TcpProxy::start(upstream.parse().unwrap()).await;
    let through_proxy = chromium.ws_url().replace(&upstream, &proxy.addr.to_string());
    let engine = engine_with(|c| {
        c.browser.cdp_url = through_proxy;
        c.tools.cdp = engine::config::CdpAccess::Unrestricted;
    });

    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/frames.html")}),
    )
    .await;
    let frames = ok(&engine, "browser_snapshot", json!({})).await;
    assert!(frames.data["frame_tree"]["children"].as_array().unwrap().len() >= 2);
    ok(&engine, "browser_navigate", json!({"url": site.url("/")})).await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let opened = ok(
        &engine,
        "browser_click",
        json!({"ref": ref_of(&snap.text, "button \"Ask\"")}),
    )
    .await;
    assert_eq!(opened.data["dialog_opened"]["message"], "Proceed?");

    proxy.cut();

    // The first call that talks to the browser may be the one that notices
    // the drop (browser_disconnected); the next one reconnects. (A raw CDP
    // command: browser_tabs lists what the target manager already knows and
    // sends nothing.)
    let talk = json!({"method": "Target.getTargets"});
    if let Err(e) = call(&engine, "browser_cdp", talk.clone()).await {
        assert_eq!(e.code, ErrorCode::BrowserDisconnected, "{e}");
        ok(&engine, "browser_cdp", talk).await;
    }
    let after = ok(&engine, "browser_snapshot", json!({})).await;
    assert_eq!(
        after.data["pending_dialogs"][0]["message"], "Proceed?",
        "{}",
        after.text
    );
    assert_eq!(engine.metrics().to_json()["reconnects"], 1);
    assert!(
        proxy.open_links() >= 1,
        "cdpilot connected again through the proxy"
    );

    // Chrome lets only the connection that saw a dialog answer it: the
    // record says so, and leaving the page is the way out.
    assert_eq!(
        after.data["pending_dialogs"][0]["orphaned"], true,
        "{}",
        after.text
    );
    let e = call(&engine, "browser_dialog", json!({"action": "accept"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::DialogPending, "{e}");
    assert!(e.next_step.contains("browser_navigate"), "{e}");
    let e = call(&engine, "browser_click", json!({"ref": "e1"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::DialogPending);
    let left = ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/form.html")}),
    )
    .await;
    assert_eq!(left.data["title"], "Form");
    let fresh = ok(&engine, "browser_snapshot", json!({})).await;
    assert!(fresh.data.get("pending_dialogs").is_none(), "{}", fresh.text);
    assert_eq!(fresh.data["recent_dialogs"][0]["message"], "Proceed?");
    let email = ref_of(&fresh.text, "textbox \"Email\"");
    let typed = ok(
        &engine,
        "browser_type",
        json!({"ref": email, "text": "back@work"}),
    )
    .await;
    assert_eq!(typed.data["value"], "back@work");

    engine.shutdown().await;
    chromium.shutdown(Duration::from_secs(5)).await;
}

/// A flake of `mcp_stdio::a_crashed_browser_is_relaunched_on_the_next_call`:
/// under load the call after a crash ran on the dead browser's connection
/// (its reader had not read the pipe's end yet) and answered
/// `browser_disconnected`. Here the reader cannot run at all between the
/// crash and the call (one thread, blocked while Chromium dies): the call
/// must still see that the browser is gone and relaunch it.
#[tokio::test(flavor = "current_thread")]
async fn a_browser_killed_just_before_a_call_is_relaunched_by_that_call() {
    let site = TestSite::start().await;
    let engine = common::engine();
    ok(&engine, "browser_navigate", json!({"url": site.url("/")})).await;
    let guard = engine.current_browser_guard_pid().await.expect("we launched it");
    let chromium = testkit::processes::children_of(guard);
    assert_eq!(chromium.len(), 1, "the guard runs one Chromium: {chromium:?}");
    let chromium = chromium[0];
    std::process::Command::new("kill")
        .args(["-KILL", &chromium.to_string()])
        .status()
        .unwrap();
    // Blocking, on purpose: no task of the runtime runs until Chromium has
    // exited and closed its pipe, so nothing has read the pipe's end.
    let started = std::time::Instant::now();
    while !testkit::processes::exited(chromium) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "Chromium did not die"
        );
        std::thread::sleep(Duration::from_millis(5));
    }

    let after = ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/form.html")}),
    )
    .await;
    assert_eq!(after.data["browser_restarted"], true, "{}", after.text);
    assert_eq!(after.data["title"], "Form");
    engine.shutdown().await;
}
