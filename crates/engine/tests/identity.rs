//! One browser identity, the same wherever a page looks (issue 45): the
//! user agent and its client hints (request headers and
//! `navigator.userAgentData`) in the page, a cross-origin iframe, each
//! kind of worker and a popup; `navigator.webdriver` false (Chrome's own
//! getter on a browser cdpilot launched); a screen at least as big as the
//! window; the page focused, as a focus-gated shortcut sees it. For the
//! launched browser and an attached one (started as a user would, not
//! through `cdp::launch`).

mod common;

use common::{engine_with, ok};
use engine::Engine;
use serde_json::{json, Value};
use testkit::TestSite;

/// Reads every signal `identity.html` gathers, and the headers its
/// requests carried.
async fn signals(engine: &Engine, site: &TestSite) -> Value {
    ok(
        engine,
        "browser_navigate",
        json!({"url": site.url("/identity.html")}),
    )
    .await;
    // The focus as the page has it before any input (an input tool may
    // bring a tab forward), then a key pressed as a person would: the
    // shortcut acts only when the page has the focus.
    let focused = ok(
        engine,
        "browser_evaluate",
        json!({"expression": "document.hasFocus()"}),
    )
    .await;
    ok(engine, "browser_press_key", json!({"key": "k"})).await;
    let read = ok(
        engine,
        "browser_evaluate",
        json!({"expression": "identity().then(seen => ({...seen, shortcuts}))", "timeout_ms": 20000}),
    )
    .await;
    let mut seen = read.data["value"].clone();
    seen["focused_first"] = focused.data["value"].clone();
    // The signal table (issue 45's note), with --nocapture.
    for place in ["page", "frame", "dedicated", "shared", "service", "popup"] {
        let s = &seen[place];
        eprintln!(
            "{place:9} ua={} brands={} webdriver={} native={} screen={} outer={} inner={} focus={}",
            s["ua"]
                .as_str()
                .unwrap_or("-")
                .split(' ')
                .rev()
                .nth(1)
                .unwrap_or("-"),
            s["brands"],
            s["webdriver"],
            s["native"],
            s["screen"],
            s["outer"],
            s["inner"],
            s["focus"]
        );
    }
    let received = site.received();
    for r in received.iter().filter(|r| r.path.starts_with("/identity")) {
        eprintln!(
            "request {} {}: sec-ch-ua={:?}",
            r.origin,
            r.path,
            r.header("sec-ch-ua")
        );
    }
    seen
}

/// What holds on every source: one user agent and one set of client
/// hints everywhere a page reads them, sent in the headers too; no
/// webdriver; the window within its screen.
fn assert_one_identity(seen: &Value, site: &TestSite) {
    let page = &seen["page"];
    let ua = page["ua"].as_str().expect("a user agent");
    assert!(!ua.contains("Headless"), "{seen:#}");
    let brands = page["brands"].as_str().unwrap_or_default();
    assert!(
        brands.contains("Chromium/"),
        "the page has no client hints: {seen:#}"
    );
    assert!(!page["full"].as_str().unwrap_or_default().is_empty(), "{seen:#}");
    assert_eq!(page["mobile"], false, "{seen:#}");
    for place in ["frame", "dedicated", "popup"] {
        let there = &seen[place];
        assert_eq!(there["ua"], page["ua"], "{place}: {seen:#}");
        for key in ["brands", "full", "platform", "mobile"] {
            assert_eq!(there[key], page[key], "{place}'s {key}: {seen:#}");
        }
    }
    // A shared or service worker's navigator.userAgent is made in the
    // browser process: the launch's switch on a launched browser, the
    // worker's script on an attached one (docs/src/identity.md).
    for place in ["shared", "service"] {
        let there = &seen[place];
        assert_eq!(there["ua"], page["ua"], "{place}: {seen:#}");
        for key in ["brands", "full", "platform", "mobile"] {
            assert_eq!(there[key], page[key], "{place}'s {key}: {seen:#}");
        }
    }
    // Workers have no navigator.webdriver (Chrome's WorkerNavigator).
    for place in ["page", "frame", "popup"] {
        assert_eq!(seen[place]["webdriver"], false, "{place}: {seen:#}");
    }
    // The headers of the page's request and the cross-origin frame's.
    for (origin, path) in [(&site.a, "/identity.html"), (&site.b, "/identity.html?frame")] {
        let received = site.received();
        let request = received
            .iter()
            .rev()
            .find(|r| &r.origin == origin && r.path == path)
            .unwrap_or_else(|| panic!("no request for {path}: {received:?}"));
        assert_eq!(request.header("user-agent"), Some(ua), "{request:?}");
        let hint = request.header("sec-ch-ua").unwrap_or_default();
        for brand in brands.split(", ") {
            let (name, version) = brand.split_once('/').unwrap();
            assert!(
                hint.contains(&format!("\"{name}\";v=\"{version}\"")),
                "sec-ch-ua {hint:?} lacks {brand}: {request:?}"
            );
        }
        assert_eq!(request.header("sec-ch-ua-mobile"), Some("?0"), "{request:?}");
    }
    let size = |key: &str| (page[key][0].as_u64().unwrap(), page[key][1].as_u64().unwrap());
    let (screen, outer) = (size("screen"), size("outer"));
    assert!(
        outer.0 <= screen.0 && outer.1 <= screen.1,
        "a {outer:?} window on a {screen:?} screen: {seen:#}"
    );
    // The agent's tab is in front and has the focus (activated, not
    // emulated: a tab behind another still reads hidden, tabs.rs).
    assert_eq!(seen["focused_first"], true, "the page had no focus: {seen:#}");
    assert_eq!(page["focus"], true, "the page has no focus: {seen:#}");
    assert_eq!(
        seen["shortcuts"],
        json!([true]),
        "the shortcut saw no focus: {seen:#}"
    );
}

#[tokio::test]
async fn a_launched_browser_has_one_identity_everywhere() {
    let site = TestSite::start().await;
    let engine = engine_with(|_| {});
    let seen = signals(&engine, &site).await;
    assert_one_identity(&seen, &site);
    // Chrome's own switch, not a script: the getter is native.
    for place in ["page", "frame", "popup"] {
        assert_eq!(seen[place]["native"], true, "{place}: {seen:#}");
    }
    // The window is the screen, as a maximised window on a person's.
    assert_eq!(seen["page"]["screen"], seen["page"]["outer"], "{seen:#}");
    engine.shutdown().await;
}

#[tokio::test]
async fn an_attached_browser_has_one_identity_everywhere() {
    let site = TestSite::start().await;
    let chrome = testkit::chromium::UsersChrome::start().await;
    let ws = chrome.ws_url().to_owned();
    let engine = engine_with(|c| c.browser.cdp_url = ws);
    let seen = signals(&engine, &site).await;
    assert_one_identity(&seen, &site);
    engine.shutdown().await;
}

/// `browser_emulate`: a viewport larger than the screen grows the screen;
/// a phone's screen is its viewport, touched; a user agent naming a
/// Chrome version gets client hints derived from it, another browser's
/// none, and the answer says which.
#[tokio::test]
async fn emulate_keeps_screen_touch_and_hints_consistent() {
    let site = TestSite::start().await;
    let engine = engine_with(|c| c.tools.caps = vec!["emulation".into()]);
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/identity.html")}),
    )
    .await;
    let read = |expression: &'static str| {
        let engine = &engine;
        async move {
            ok(engine, "browser_evaluate", json!({"expression": expression}))
                .await
                .data["value"]
                .clone()
        }
    };
    ok(&engine, "browser_emulate", json!({"width": 1920, "height": 1080})).await;
    let sizes = read("[screen.width, screen.height, innerWidth, innerHeight]").await;
    assert_eq!(sizes, json!([1920, 1080, 1920, 1080]));

    ok(
        &engine,
        "browser_emulate",
        json!({"width": 390, "height": 844, "device_scale_factor": 3, "mobile": true}),
    )
    .await;
    let phone = read("[screen.width, screen.height, devicePixelRatio, navigator.maxTouchPoints]").await;
    assert_eq!(phone, json!([390, 844, 3, 5]));

    let android = "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Mobile Safari/537.36";
    let set = ok(&engine, "browser_emulate", json!({"user_agent": android})).await;
    assert_eq!(set.data["client_hints"], true, "{}", set.text);
    assert!(
        set.text.contains("derived from its Chrome version"),
        "{}",
        set.text
    );
    let hints = read("[navigator.userAgentData.brands.map(b => b.brand + '/' + b.version).join(), navigator.userAgentData.platform, navigator.userAgentData.mobile]").await;
    assert_eq!(hints, json!(["Chromium/130", "Android", true]));

    let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
    let set = ok(&engine, "browser_emulate", json!({"user_agent": firefox})).await;
    assert_eq!(set.data["client_hints"], false, "{}", set.text);
    assert!(set.text.contains("no client hints"), "{}", set.text);
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/identity.html?firefox")}),
    )
    .await;
    let request = site
        .received()
        .into_iter()
        .find(|r| r.path == "/identity.html?firefox")
        .expect("the request");
    assert_eq!(request.header("user-agent"), Some(firefox), "{request:?}");
    assert_eq!(request.header("sec-ch-ua"), None, "{request:?}");
    engine.shutdown().await;
}
