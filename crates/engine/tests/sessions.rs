//! Sessions on one shared browser (issue 8): each has a browser context of
//! its own, so cookies, storage and tabs do not cross between them; the
//! engine's stop leaves no task and no Chromium behind; an ended session's
//! trace keeps its last step.

mod common;

use std::time::Duration;

use common::{ok, ok_in};
use serde_json::json;

/// What the page's cookie jar and localStorage say, through one session.
async fn jar(session: &engine::Session) -> String {
    let out = ok_in(
        session,
        "browser_evaluate",
        json!({"expression": "document.cookie + '|' + (localStorage.getItem('who') || '')"}),
    )
    .await;
    out.data["value"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn two_sessions_in_one_browser_each_see_only_their_own_cookies_storage_and_tabs() {
    let site = testkit::TestSite::start().await;
    let engine = common::engine();
    let (a, b) = (engine.new_session(), engine.new_session());
    for (session, who) in [(&a, "alpha"), (&b, "beta")] {
        ok_in(
            session,
            "browser_navigate",
            json!({"url": site.url("index.html")}),
        )
        .await;
        let write =
            format!("document.cookie = 'who={who}; max-age=86400'; localStorage.setItem('who', '{who}'); 1");
        ok_in(session, "browser_evaluate", json!({"expression": write})).await;
    }
    assert_eq!(jar(&a).await, "who=alpha|alpha");
    assert_eq!(jar(&b).await, "who=beta|beta");

    // The default session (the browser's own context) saw neither.
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("index.html")}),
    )
    .await;
    assert_eq!(jar(engine.session()).await, "|");

    // Each session lists only its own tab, however many the browser has.
    ok_in(&a, "browser_tabs", json!({"action": "new"})).await;
    let count = |out: engine::ActionOutput| out.data["tabs"].as_array().map(Vec::len);
    let list = json!({"action": "list"});
    assert_eq!(count(ok_in(&a, "browser_tabs", list.clone()).await), Some(2));
    assert_eq!(count(ok_in(&b, "browser_tabs", list.clone()).await), Some(1));
    assert_eq!(count(ok(&engine, "browser_tabs", list).await), Some(1));

    // Ending a session closes its context; the others go on.
    a.close(&common::budget()).await;
    assert_eq!(jar(&b).await, "who=beta|beta");
    engine.shutdown().await;
}

/// Issue 8: "Tasks (watchdog, child preparation) outlive a tab's or the
/// server's shutdown: a test shows that stopping leaves no task and no
/// Chromium."
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_the_engine_leaves_no_task_and_no_chromium() {
    let site = testkit::TestSite::start().await;
    let tasks = tokio::runtime::Handle::current().metrics();
    let before = tasks.num_alive_tasks();
    let engine = common::engine();
    // A cross-origin iframe (its own session, prepared by a task) and a
    // dialog under must_respond (a watchdog waiting 300 s).
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("frames.html")}),
    )
    .await;
    let opened = ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "alert('stay'); 1"}),
    )
    .await;
    assert!(opened.data["dialog_opened"].is_object(), "{}", opened.data);
    let guard = engine.current_browser_guard_pid().await.expect("we launched it");
    let chromium = testkit::processes::children_of(guard);
    assert_eq!(chromium.len(), 1, "the guard runs one Chromium: {chromium:?}");
    let chromium = chromium[0];

    engine.shutdown().await;
    drop(engine);

    let gone = testkit::processes::wait_until(Duration::from_secs(10), || {
        testkit::processes::in_session(chromium).is_empty()
            && !std::path::Path::new(&format!("/proc/{guard}")).exists()
    })
    .await;
    assert!(
        gone,
        "Chromium is still running: {:?}",
        testkit::processes::in_session(chromium)
    );
    let idle =
        testkit::processes::wait_until(Duration::from_secs(10), || tasks.num_alive_tasks() <= before).await;
    assert!(
        idle,
        "{} tasks still alive after the stop (before: {before})",
        tasks.num_alive_tasks()
    );
}

/// Issue 9: a session idle past `[session] idle_timeout_s` kept its tabs
/// forever. Now its context is disposed, and the next call starts a fresh
/// one and says so; calls within the timeout (rolling) keep the session.
#[tokio::test]
async fn an_idle_session_expires_and_the_next_call_says_session_restarted() {
    let site = testkit::TestSite::start().await;
    let engine = common::engine_with(|c| c.session.idle_timeout_s = 1);
    let session = engine.new_session();
    let index = json!({"url": site.url("index.html")});
    let first = ok_in(&session, "browser_navigate", index.clone()).await;
    assert!(first.data.get("session_restarted").is_none(), "{:?}", first.data);
    ok_in(&session, "browser_tabs", json!({"action": "new"})).await;

    // Calls 0.6 s apart span more than the timeout: rolling, so no expiry.
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(600)).await;
        let out = ok_in(&session, "browser_tabs", json!({"action": "list"})).await;
        assert!(out.data.get("session_restarted").is_none(), "{:?}", out.data);
        assert_eq!(out.data["tabs"].as_array().map(Vec::len), Some(2));
    }

    // Idle past the timeout (the behaviour under test is a duration: the
    // timeout plus generous slack).
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let out = ok_in(&session, "browser_tabs", json!({"action": "list"})).await;
    assert_eq!(out.data["session_restarted"], true, "{:?}", out.data);
    assert!(out.text.contains("idle_timeout_s"), "{}", out.text);
    assert_eq!(
        out.data["tabs"].as_array().map(Vec::len),
        Some(1),
        "{:?}",
        out.data
    );
    let gone = common::call_in(&session, "browser_snapshot", json!({"tab": "t2"}))
        .await
        .unwrap_err();
    assert_eq!(gone.code, engine::ErrorCode::TabNotFound, "{gone}");
    // Said once: the call after is a plain one.
    let again = ok_in(&session, "browser_navigate", index).await;
    assert!(again.data.get("session_restarted").is_none(), "{:?}", again.data);
}

/// A traced session that ends (serve's way: its client left) keeps its
/// last acting call's step, whose screenshot was still being taken when
/// the end came, and its trace ends cleanly after it.
#[tokio::test]
async fn an_ended_session_keeps_the_step_its_last_call_was_still_writing() {
    let site = testkit::TestSite::start().await;
    let traces = std::env::temp_dir().join(format!("cdpilot-ended-trace-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&traces);
    let dir = traces.display().to_string();
    let engine = common::engine_with(|c| c.trace.dir = dir);
    let session = engine.new_session();
    ok_in(
        &session,
        "browser_navigate",
        json!({"url": site.url("/counter.html")}),
    )
    .await;
    let snap = ok_in(&session, "browser_snapshot", json!({})).await;
    let add = common::ref_of(&snap.text, "button \"Add one\"");
    ok_in(&session, "browser_click", json!({"ref": add})).await;
    let trace = session.trace_dir().expect("traced");
    session
        .end(
            engine::events::EndReason::ClientClosed,
            &engine::Budget::with_timeout(Duration::from_secs(5)),
        )
        .await;
    let read = engine::trace::read::read(&trace).unwrap();
    let tools: Vec<&str> = read.steps.iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(tools, ["browser_navigate", "browser_snapshot", "browser_click"]);
    assert!(read.steps[2].shot.is_some(), "{:?}", read.steps[2]);
    assert_eq!(read.end.map(|e| e.reason).as_deref(), Some("session_ended"));
    engine.shutdown().await;
    let _ = std::fs::remove_dir_all(&traces);
}
