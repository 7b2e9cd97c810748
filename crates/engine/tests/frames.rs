//! Snapshots and refs across frames, against real Chromium with
//! `--site-per-process`: a same-origin iframe (same process) and a
//! cross-origin one (an OOPIF on its own session) in one tree, frame-scoped
//! refs (`f1e2`) routed to the right session, trusted input inside them.

mod common;

use common::{call, ok, open, open_with, ref_of};
use engine::config::CdpAccess;
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
    let (site, engine) = open_with("/frames.html", |c| c.tools.cdp = CdpAccess::Unrestricted).await;
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

/// Navigates the `#cross` iframe of frames.html to `url` and waits for its
/// load event. Sent on the tab's own session (`browser_cdp`), so the answer
/// comes after the frame's target events on the same connection.
async fn navigate_cross_frame(engine: &engine::Engine, url: &str) {
    let expression = format!(
        "new Promise(r => {{ const f = document.getElementById('cross'); f.onload = () => r(f.src); f.src = {url:?}; }})"
    );
    ok(
        engine,
        "browser_cdp",
        json!({"method": "Runtime.evaluate", "params": {"expression": expression, "awaitPromise": true, "returnByValue": true}}),
    )
    .await;
}

/// The cross-origin frame's entry in a snapshot's frame_tree, found by
/// its frame id, or (`None`) the first OOPIF's.
fn cross_frame(snap: &engine::ActionOutput, id: Option<&serde_json::Value>) -> serde_json::Value {
    let children = snap.data["frame_tree"]["children"].as_array().unwrap();
    children
        .iter()
        .find(|f| match id {
            Some(id) => &f["frame_id"] == id,
            None => f["is_oopif"] == true,
        })
        .cloned()
        .unwrap_or_else(|| panic!("no such frame in:\n{}", snap.text))
}

/// Issue 8: a cross-origin frame's session was copied at snapshot time (and
/// its isolated world kept without the session it belongs to). After the
/// frame left its process and came back on a new target, snapshots showed
/// the parent page inside the frame, then "frame content unavailable", and
/// its refs went to the dead session.
#[tokio::test]
async fn a_cross_origin_frame_that_re_attached_is_reached_on_its_new_session() {
    let (site, engine) = open_with("/frames.html", |c| c.tools.cdp = CdpAccess::Fenced).await;
    let first = ok(&engine, "browser_snapshot", json!({})).await;
    let old = cross_frame(&first, None);
    assert!(old["session"].is_string(), "{}", first.text);

    // Into the parent's process (same site as the page)…
    navigate_cross_frame(&engine, &site.url("/child.html?home")).await;
    let home = ok(&engine, "browser_snapshot", json!({})).await;
    assert_eq!(
        home.text.matches("button \"Parent button\"").count(),
        1,
        "the frame shows its own document, not the page's:\n{}",
        home.text
    );
    let button = child_ref(&home.text, "Cross-origin frame", "button \"Child button\"");
    ok(&engine, "browser_click", json!({"ref": button})).await;

    // …and out again: Chrome gives it a new target and session.
    navigate_cross_frame(&engine, &site.url_b("/child.html?away")).await;
    let away = ok(&engine, "browser_snapshot", json!({})).await;
    let new = cross_frame(&away, Some(&old["frame_id"]));
    assert!(
        new["session"].is_string() && new["session"] != old["session"],
        "the frame re-attached on a new session: {}",
        away.text
    );
    let button = child_ref(&away.text, "Cross-origin frame", "button \"Child button\"");
    ok(&engine, "browser_click", json!({"ref": button})).await;
    let read = ok(
        &engine,
        "browser_evaluate",
        json!({"function": "el => [el.textContent, location.href]", "ref": button}),
    )
    .await;
    assert_eq!(
        read.data["value"],
        json!(["Child clicked true", site.url_b("/child.html?away")])
    );
    engine.shutdown().await;
}

/// Issue 8: a ref into a frame whose session went away was reported as
/// "the tab went away" (tab_not_found). A ref from the frame's old document
/// is not on the page any more; a ref into a removed frame names the frame.
#[tokio::test]
async fn a_ref_into_a_frame_whose_session_went_away_is_not_the_tab_going_away() {
    let (site, engine) = open_with("/frames.html", |c| c.tools.cdp = CdpAccess::Fenced).await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let button = child_ref(&snap.text, "Cross-origin frame", "button \"Child button\"");
    let frame = button.split('e').next().unwrap().to_owned();

    // The frame re-attaches (out of its process and back) with no snapshot since.
    navigate_cross_frame(&engine, &site.url("/child.html?home")).await;
    navigate_cross_frame(&engine, &site.url_b("/child.html?away")).await;
    let e = call(&engine, "browser_click", json!({"ref": button}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ElementNotFound, "{e}");

    // The frame is removed: its refs name the frame as gone.
    ok(
        &engine,
        "browser_cdp",
        json!({"method": "Runtime.evaluate", "params": {"expression": "document.getElementById('cross').remove()"}}),
    )
    .await;
    let e = call(&engine, "browser_click", json!({"ref": button}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::FrameNotFound, "{e}");
    assert!(e.message.contains(&format!("frame {frame}")), "{e}");
    let e = call(&engine, "browser_snapshot", json!({"frame": frame}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::FrameNotFound, "{e}");
    engine.shutdown().await;
}

/// The URLs of the console messages `tab` kept.
async fn console_urls(engine: &engine::Engine, tab: &str) -> Vec<String> {
    let console = ok(engine, "browser_console", json!({"tab": tab})).await;
    console.data["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["url"].as_str().map(str::to_owned))
        .collect()
}

// Issue 24: each tab's reader now hears only its own session's tree
// (`Connection::tree_events`), not every session's events filtered.
#[tokio::test]
async fn a_tabs_reader_hears_its_own_cross_origin_frames_at_any_depth_and_not_another_tabs() {
    let (site, engine) = open("/frames.html").await;
    // t2: A → an OOPIF on B → a nested OOPIF back on A (`?deep`).
    ok(
        &engine,
        "browser_tabs",
        json!({"action": "new", "url": site.url("/outer.html")}),
    )
    .await;
    let oopif = format!("{}/child.html", site.b);
    let deep = format!("{}/child.html?deep", site.a);
    let one = console_urls(&engine, "t1").await;
    let two = console_urls(&engine, "t2").await;
    assert!(one.contains(&oopif), "t1 heard its OOPIF: {one:?}");
    assert!(!one.contains(&deep), "t1 heard t2's nested frame: {one:?}");
    assert!(two.contains(&deep), "t2 heard its nested OOPIF: {two:?}");
    assert!(!two.contains(&oopif), "t2 heard t1's frame: {two:?}");
    engine.shutdown().await;
}
