//! The first trusted input into a freshly loaded cross-origin frame (an
//! OOPIF on its own session) lands, once: a click, a wheel turn, keys. Chromium drops every input but a mouse move that
//! reaches a frame whose renderer defers its main frame updates (it has
//! not drawn yet: render-blocking resources, a loaded machine, a frame
//! just scrolled into view) and still acknowledges it; the engine waits
//! for the frame to draw before the input. `input-log.html` counts every
//! trusted event its window saw; `?block=MS` holds its first paint back
//! with a render-blocking stylesheet that answers after MS.

mod common;

use std::time::{Duration, Instant};

use common::{engine, ok};
use engine::Engine;
use serde_json::{json, Value};

/// Opens `path` without waiting for its frames to load, then takes
/// snapshots until both frames' buttons are in one: the frames' documents
/// exist, but (with `?block`) have not drawn.
async fn open_fresh(engine: &Engine, url: String) -> String {
    ok(
        engine,
        "browser_navigate",
        json!({"url": url, "wait_until": "domcontentloaded"}),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let snap = ok(engine, "browser_snapshot", json!({})).await.text;
        if snap.matches("button \"Count me\"").count() == 2 {
            return snap;
        }
        assert!(Instant::now() < deadline, "the frames never showed:\n{snap}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The ref on the first line with `needle` after the line with `frame_title`.
fn ref_in(snapshot: &str, frame_title: &str, needle: &str) -> String {
    let mut lines = snapshot.lines().skip_while(|l| !l.contains(frame_title)).skip(1);
    let line = lines
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no {needle} under {frame_title}:\n{snapshot}"));
    testkit::snapshot::ref_of(line, needle)
}

/// The counts of trusted events the frame holding `reference` saw.
async fn seen(engine: &Engine, reference: &str) -> Value {
    ok(
        engine,
        "browser_evaluate",
        json!({"function": "el => el.ownerDocument.defaultView.inputSeen", "ref": reference}),
    )
    .await
    .data["value"]
        .clone()
}

#[tokio::test]
async fn the_first_click_wheel_and_typing_into_a_frame_that_has_not_drawn_land_once() {
    let site = testkit::TestSite::start().await;
    let engine = engine();
    // A click into the far frame (below the fold: throttled, never drawn;
    // the click scrolls it into view).
    let snap = open_fresh(&engine, site.url("/oopif-input.html?block=2000")).await;
    let far = ref_in(&snap, "Far frame", "button \"Count me\"");
    assert!(far.starts_with('f'), "a cross-origin frame's ref: {far}");
    ok(&engine, "browser_click", json!({"ref": far})).await;
    let counts = seen(&engine, &far).await;
    assert_eq!(counts["click"], 1, "the click landed once: {counts}");
    assert_eq!(counts["mousedown"], 1, "{counts}");

    // A wheel turn into the far frame (below the fold, never drawn yet).
    let snap = open_fresh(&engine, site.url("/oopif-input.html?block=2000&wheel")).await;
    let region = ref_in(&snap, "Far frame", "region \"Box\"");
    let scrolled = ok(
        &engine,
        "browser_scroll",
        json!({"ref": region, "direction": "down", "amount": 60}),
    )
    .await;
    assert_eq!(scrolled.data["scroll_y"], json!(60.0), "{}", scrolled.text);
    let counts = seen(&engine, &region).await;
    assert_eq!(counts["wheel"], 1, "one wheel turn reached the frame: {counts}");

    // Typing (the field is focused from script; every key is input).
    let snap = open_fresh(&engine, site.url("/oopif-input.html?block=2000&type")).await;
    let field = ref_in(&snap, "Far frame", "textbox \"Field\"");
    let typed = ok(
        &engine,
        "browser_type",
        json!({"ref": field, "text": "abc", "slowly": true}),
    )
    .await;
    assert_eq!(typed.data["value"], "abc", "{}", typed.text);
    let counts = seen(&engine, &field).await;
    assert_eq!(counts["keydown"], 3, "every key reached the frame: {counts}");
    engine.shutdown().await;
}

/// The natural case, many times: a click into each of two frames at once
/// after they load (no stylesheet holding them back), on a fresh page each
/// round. On a loaded machine the far frame (scrolled into view by the
/// click) used to lose it now and then. `CDPILOT_OOPIF_ROUNDS` sets the
/// rounds (default 5).
#[tokio::test]
async fn a_click_right_after_a_frame_loads_lands_once_every_time() {
    let site = testkit::TestSite::start().await;
    let engine = engine();
    let rounds: usize = std::env::var("CDPILOT_OOPIF_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let mut lost = Vec::new();
    for round in 0..rounds {
        let snap = open_fresh(&engine, site.url(&format!("/oopif-input.html?round={round}"))).await;
        for frame in ["Near frame", "Far frame"] {
            let button = ref_in(&snap, frame, "button \"Count me\"");
            ok(&engine, "browser_click", json!({"ref": button})).await;
            let counts = seen(&engine, &button).await;
            if counts["click"] != 1 {
                lost.push(format!("round {round}, {frame}: {counts}"));
            }
        }
    }
    eprintln!("{} of {} clicks did not land once", lost.len(), rounds * 2);
    assert!(lost.is_empty(), "{lost:#?}");
    engine.shutdown().await;
}

/// Measures a click's time on a button of the page itself, of a
/// same-origin frame and of a cross-origin frame (`frames.html`), 40 each,
/// interleaved so that a shared machine's load falls on all alike, then 20
/// more on the cross-origin frame's button where the pointer already
/// rests; prints the medians and p90s. The wait for the frame to draw is paid by the
/// cross-origin frame's clicks only. Run with `-- --ignored --nocapture
/// input_cost`.
#[tokio::test]
#[ignore]
async fn input_cost() {
    let site = testkit::TestSite::start().await;
    let engine = engine();
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/frames.html")}),
    )
    .await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await.text;
    let targets = [
        (
            "the page",
            testkit::snapshot::ref_of(&snap, "button \"Parent button\""),
        ),
        (
            "same-origin frame",
            ref_in(&snap, "Same-origin frame", "button \"Child button\""),
        ),
        (
            "cross-origin frame",
            ref_in(&snap, "Cross-origin frame", "button \"Child button\""),
        ),
    ];
    let mut samples = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..40 {
        for (i, (_, reference)) in targets.iter().enumerate() {
            let start = Instant::now();
            ok(&engine, "browser_click", json!({"ref": reference})).await;
            samples[i].push(start.elapsed());
        }
    }
    // The same button again at once: the pointer already rests there.
    let mut again = Vec::new();
    for _ in 0..20 {
        let start = Instant::now();
        ok(&engine, "browser_click", json!({"ref": targets[2].1})).await;
        again.push(start.elapsed());
    }
    let names = [
        "the page",
        "same-origin frame",
        "cross-origin frame",
        "cross-origin frame, again",
    ];
    let samples = samples.into_iter().chain([again]);
    for (name, mut times) in names.iter().zip(samples) {
        times.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        eprintln!(
            "click in {name}: median {:.1} ms, p90 {:.1} ms",
            ms(times[times.len() / 2]),
            ms(times[times.len() * 9 / 10])
        );
    }
    engine.shutdown().await;
}

/// Issue 42: the hover trap inside a cross-origin frame (its button's
/// `mouseover` raises an overlay in the frame): the click is refused
/// naming the overlay, and the frame saw no press.
#[tokio::test]
async fn a_hover_trap_inside_a_cross_origin_frame_is_named_and_nothing_is_pressed() {
    let site = testkit::TestSite::start().await;
    let engine = engine();
    let url = site.url("/hover-trap-outer.html");
    ok(&engine, "browser_navigate", json!({"url": url})).await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await.text;
    let save = ref_in(&snap, "Trap frame", "button \"Save draft\"");
    assert!(save.starts_with('f'), "{snap}");
    let e = common::call(&engine, "browser_click", json!({"ref": save}))
        .await
        .unwrap_err();
    assert_eq!(e.code, engine::ErrorCode::ElementNotInteractable, "{e}");
    assert!(e.message.contains("button \"Delete account\""), "{e}");
    let log = ok(
        &engine,
        "browser_evaluate",
        json!({"function": "el => el.ownerDocument.getElementById('log').textContent", "ref": save}),
    )
    .await;
    assert_eq!(log.data["value"], "pressed: nothing");
    engine.shutdown().await;
}
