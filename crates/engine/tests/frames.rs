//! Snapshots and refs across frames, against real Chromium with
//! `--site-per-process`: a same-origin iframe (same process) and a
//! cross-origin one (an OOPIF on its own session) in one tree, frame-scoped
//! refs (`f1e2`) routed to the right session, trusted input inside them.

mod common;

use common::{call, ok, open, ref_of};
use engine::ErrorCode;
use serde_json::json;

#[tokio::test]
async fn both_frames_appear_in_one_snapshot_with_frame_refs() {
    let (_site, engine) = open("/frames.html").await;
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
    let (site, engine) = open("/frames.html").await;
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
    let (site, engine) = open("/frames.html").await;
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

#[tokio::test]
async fn evaluate_and_raw_cdp_route_to_a_frame() {
    let (site, engine) = open("/frames.html").await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let tree = snap.data["frame_tree"]["children"].as_array().unwrap().clone();
    let oopif = tree
        .iter()
        .find(|f| f["is_oopif"] == true)
        .unwrap_or_else(|| panic!("{}", snap.text));
    let same = tree.iter().find(|f| f["is_oopif"] == false).unwrap();

    // By frame_tree id: the cross-origin iframe's own document.
    let out = ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "[document.title, location.origin]", "frame": oopif["frame_id"]}),
    )
    .await;
    assert_eq!(out.data["value"], json!(["Child", site.b]));
    // The same-origin frame runs through its own script context.
    let out = ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "location.search", "frame": same["frame_id"]}),
    )
    .await;
    assert_eq!(out.data["value"], "?same");
    // By snapshot number, as in refs.
    let button = child_ref(&snap.text, "Cross-origin frame", "button \"Child button\"");
    let number = button.split('e').next().unwrap();
    let out = ok(
        &engine,
        "browser_evaluate",
        json!({"function": "() => location.origin", "frame": number}),
    )
    .await;
    assert_eq!(out.data["value"], site.b);

    let raw = ok(
        &engine,
        "browser_cdp",
        json!({"method": "Runtime.evaluate", "params": {"expression": "location.origin", "returnByValue": true}, "frame": oopif["frame_id"]}),
    )
    .await;
    assert_eq!(raw.data["result"]["result"]["value"], site.b);
    let main = ok(&engine, "browser_cdp", json!({"method": "Page.getLayoutMetrics"})).await;
    assert!(
        main.data["result"]["cssVisualViewport"]["clientWidth"]
            .as_f64()
            .unwrap()
            > 100.0
    );

    let e = call(
        &engine,
        "browser_evaluate",
        json!({"expression": "1", "frame": "NOPE"}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::FrameNotFound);
    let e = call(&engine, "browser_cdp", json!({"method": "Page.noSuchThing"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
    let e = call(&engine, "browser_cdp", json!({"method": "javascript:alert(1)"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    engine.shutdown().await;
}

#[tokio::test]
async fn an_element_inside_a_cross_origin_frame_can_be_screenshotted() {
    let (_site, engine) = open("/frames.html").await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let button = child_ref(&snap.text, "Cross-origin frame", "button \"Child button\"");
    let shot = ok(&engine, "browser_screenshot", json!({"ref": button})).await;
    let (w, h) = (
        shot.data["width"].as_u64().unwrap(),
        shot.data["height"].as_u64().unwrap(),
    );
    assert!(
        w > 20 && w < 200 && h > 5 && h < 60,
        "a button-sized clip, got {w}x{h}"
    );
    engine.shutdown().await;
}
