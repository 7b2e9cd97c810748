//! Snapshots and refs across frames, against real Chromium with
//! `--site-per-process`: a same-origin iframe (same process) and a
//! cross-origin one (an OOPIF on its own session) in one tree, frame-scoped
//! refs (`f1e2`) routed to the right session, trusted input inside them.

mod common;

use common::{call, engine, ok, ref_of};
use engine::ErrorCode;
use serde_json::json;
use testkit::TestSite;

#[tokio::test]
async fn both_frames_appear_in_one_snapshot_with_frame_refs() {
    let site = TestSite::start().await;
    let engine = engine();
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/frames.html")}),
    )
    .await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let t = &snap.text;
    assert!(t.contains("iframe \"Cross-origin frame\" [ref=e"), "{t}");
    assert!(t.contains("iframe \"Same-origin frame\" [ref=e"), "{t}");
    let children: Vec<&str> = t
        .lines()
        .filter(|l| l.contains("button \"Child button\""))
        .collect();
    assert_eq!(children.len(), 2, "{t}");
    for line in &children {
        assert!(
            line.starts_with("  "),
            "frame content is indented under its iframe: {line:?}"
        );
        assert!(line.contains("[ref=f"), "{line}");
    }
    // Refs are stable across snapshots, frames included.
    let again = ok(&engine, "browser_snapshot", json!({})).await;
    assert_eq!(again.text, snap.text);
    engine.shutdown().await;
}

/// The child-button ref inside the iframe whose line contains `frame_title`.
fn child_ref(snapshot: &str, frame_title: &str, needle: &str) -> String {
    let mut lines = snapshot.lines().skip_while(|l| !l.contains(frame_title)).skip(1);
    let line = lines
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no {needle} under {frame_title}:\n{snapshot}"));
    ref_of(line, needle)
}

#[tokio::test]
async fn clicking_and_typing_inside_a_cross_origin_frame_is_trusted() {
    let site = TestSite::start().await;
    let engine = engine();
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/frames.html")}),
    )
    .await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let button = child_ref(&snap.text, "Cross-origin frame", "button \"Child button\"");
    let field = child_ref(&snap.text, "Cross-origin frame", "textbox \"Child field\"");
    ok(&engine, "browser_click", json!({"ref": button})).await;
    let after = ok(&engine, "browser_snapshot", json!({})).await;
    assert!(
        after.text.contains("button \"Child clicked true\""),
        "{}",
        after.text
    );
    let typed = ok(
        &engine,
        "browser_type",
        json!({"ref": field, "text": "in the oopif"}),
    )
    .await;
    assert_eq!(typed.data["value"], "in the oopif");
    let read = ok(
        &engine,
        "browser_evaluate",
        json!({"function": "el => [el.value, navigator.webdriver, location.origin]", "ref": field}),
    )
    .await;
    assert_eq!(read.data["value"], json!(["in the oopif", false, site.b]));
    engine.shutdown().await;
}

#[tokio::test]
async fn clicking_inside_a_same_origin_frame_and_scoping_by_frame() {
    let site = TestSite::start().await;
    let engine = engine();
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/frames.html")}),
    )
    .await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let button = child_ref(&snap.text, "Same-origin frame", "button \"Child button\"");
    ok(&engine, "browser_click", json!({"ref": button})).await;
    let frame = button.split('e').next().unwrap().to_owned();
    let scoped = ok(&engine, "browser_snapshot", json!({"frame": frame})).await;
    assert!(
        scoped.text.contains("button \"Child clicked true\""),
        "{}",
        scoped.text
    );
    assert!(!scoped.text.contains("Parent button"), "{}", scoped.text);
    let e = call(&engine, "browser_snapshot", json!({"frame": "f99"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::FrameNotFound);

    // A navigation of the main page makes frame refs stale like any other.
    ok(&engine, "browser_navigate", json!({"url": site.url("/")})).await;
    let e = call(&engine, "browser_click", json!({"ref": button}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ElementStale, "{e}");
    engine.shutdown().await;
}
