//! browser_tabs and the `tab` argument against real Chromium: tabs the page
//! opens are listed and selectable; acting in a tab does not activate it.

mod common;

use std::time::{Duration, Instant};

use cdp::launch::{launch, Debugging, LaunchOptions};
use cdp::Connection;
use common::{call, engine, engine_with, ok, open, ref_of};
use engine::ErrorCode;
use serde_json::json;
use testkit::TestSite;

#[tokio::test]
async fn a_tab_opened_by_the_page_is_listed_and_selectable() {
    let (_site, engine) = open("/").await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let link = ref_of(&snap.text, "link \"Form in a new tab\"");
    let click = ok(&engine, "browser_click", json!({"ref": link})).await;
    assert_eq!(click.data["navigated"], false, "the opener stays where it is");

    let list = ok(&engine, "browser_tabs", json!({"action": "list"})).await;
    let tabs = list.data["tabs"].as_array().unwrap().clone();
    assert_eq!(tabs.len(), 2, "{}", list.text);
    assert_eq!(tabs[0]["active"], true);
    let popup = tabs[1]["id"].as_str().unwrap().to_owned();
    ok(
        &engine,
        "browser_wait",
        json!({"tab": popup, "url": "*/form.html"}),
    )
    .await;

    // Acting in a tab by id does not make it active.
    let other = ok(&engine, "browser_snapshot", json!({"tab": popup})).await;
    assert_eq!(other.data["title"], "Form", "{}", other.text);
    let active = ok(&engine, "browser_snapshot", json!({})).await;
    assert_eq!(active.data["title"], "cdpilot test home");

    ok(&engine, "browser_tabs", json!({"action": "select", "tab": popup})).await;
    let now = ok(&engine, "browser_snapshot", json!({})).await;
    assert_eq!(now.data["title"], "Form");

    let closed = ok(&engine, "browser_tabs", json!({"action": "close", "tab": popup})).await;
    let tabs = closed.data["tabs"].as_array().unwrap();
    assert_eq!(tabs.len(), 1, "{}", closed.text);
    assert_eq!(tabs[0]["active"], true, "the remaining tab becomes active");
    let back = ok(&engine, "browser_snapshot", json!({})).await;
    assert_eq!(back.data["title"], "cdpilot test home");
    engine.shutdown().await;
}

#[tokio::test]
async fn new_tabs_unknown_tabs_and_closing_the_last_one() {
    let site = TestSite::start().await;
    let engine = engine();
    let opened = ok(
        &engine,
        "browser_tabs",
        json!({"action": "new", "url": site.url("/form.html")}),
    )
    .await;
    let tabs = opened.data["tabs"].as_array().unwrap().clone();
    assert_eq!(tabs.len(), 2);
    assert_eq!(tabs[1]["active"], true, "{}", opened.text);
    assert_eq!(tabs[1]["title"], "Form");

    let e = call(&engine, "browser_snapshot", json!({"tab": "t99"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::TabNotFound);
    let e = call(&engine, "browser_tabs", json!({"action": "select", "tab": "t99"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::TabNotFound);
    let e = call(&engine, "browser_tabs", json!({"action": "close"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = call(
        &engine,
        "browser_tabs",
        json!({"action": "new", "url": "file:///etc/passwd"}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);

    for tab in tabs {
        ok(
            &engine,
            "browser_tabs",
            json!({"action": "close", "tab": tab["id"]}),
        )
        .await;
    }
    let list = ok(&engine, "browser_tabs", json!({"action": "list"})).await;
    assert_eq!(
        list.data["tabs"].as_array().unwrap().len(),
        1,
        "a blank tab replaces the last one closed"
    );
    ok(&engine, "browser_navigate", json!({"url": site.url("/")})).await;
    engine.shutdown().await;
}

#[tokio::test]
async fn a_tab_attached_after_it_loaded_still_has_its_frame_tree() {
    let (_site, engine) = open("/").await;
    // The opener waits for the popup's load event, so cdpilot first sees
    // the tab (and attaches) only after its frames were created.
    let opened = "new Promise((resolve) => { const w = window.open('/frames.html'); w.addEventListener('load', () => resolve(true)); })";
    ok(&engine, "browser_evaluate", json!({"expression": opened})).await;
    let list = ok(&engine, "browser_tabs", json!({"action": "list"})).await;
    let popup = list.data["tabs"][1]["id"].as_str().unwrap().to_owned();
    let snap = ok(&engine, "browser_snapshot", json!({"tab": popup})).await;
    assert!(
        snap.data["frame_tree"]["top"]["url"]
            .as_str()
            .unwrap()
            .ends_with("/frames.html"),
        "{}",
        snap.text
    );
    assert_eq!(
        snap.data["frame_tree"]["children"].as_array().unwrap().len(),
        2,
        "{}",
        snap.text
    );
    engine.shutdown().await;
}

/// The ref on the first line with `needle` after the line with `frame_title`.
fn ref_under(snapshot: &str, frame_title: &str, needle: &str) -> String {
    let mut lines = snapshot.lines().skip_while(|l| !l.contains(frame_title)).skip(1);
    let line = lines
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no {needle} under {frame_title}:\n{snapshot}"));
    ref_of(line, needle)
}

/// `document.visibilityState` of `tab` (read without acting in it), from
/// `Document.prototype`'s getter: the page may shadow it on `document`.
async fn visibility(engine: &engine::Engine, tab: &str) -> String {
    let real = "Object.getOwnPropertyDescriptor(Document.prototype, 'visibilityState').get.call(document)";
    let read = json!({"tab": tab, "expression": real});
    let out = ok(engine, "browser_evaluate", read).await;
    out.data["value"].as_str().unwrap_or_default().to_owned()
}

/// A tab behind another tab of its window is hidden: it draws no frames,
/// and Chromium acknowledges no mouse move for it and delivers no input to
/// its cross-origin frames, so a click there used to wait out its whole
/// budget. Input into it (a click on the page, a click and typing in its
/// cross-origin frame) brings it to the front and lands, within a budget
/// of 10 s, also when the page claims to be visible; the session's active
/// tab stays the one it was.
#[tokio::test]
async fn input_into_a_tab_hidden_behind_another_brings_it_to_the_front_and_lands() {
    let (site, engine) = open("/frames.html").await;
    let list = ok(&engine, "browser_tabs", json!({"action": "list"})).await;
    let first = list.data["tabs"][0]["id"].as_str().unwrap().to_owned();
    let snap = ok(&engine, "browser_snapshot", json!({})).await.text;
    let parent = ref_of(&snap, "button \"Parent button\"");
    let child = ref_under(&snap, "Cross-origin frame", "button \"Child button\"");
    let field = ref_under(&snap, "Cross-origin frame", "textbox \"Child field\"");
    let opened = json!({"action": "new", "url": site.url("/form.html")});
    let opened = ok(&engine, "browser_tabs", opened).await;
    let second = opened.data["tabs"][1]["id"].as_str().unwrap().to_owned();
    // Input into the second tab puts it in front again.
    let hide_first = || async {
        let key = json!({"tab": second, "key": "Shift"});
        ok(&engine, "browser_press_key", key).await;
        assert_eq!(visibility(&engine, &first).await, "hidden");
    };

    hide_first().await;
    let click = json!({"tab": first, "ref": parent, "timeout_ms": 10_000});
    ok(&engine, "browser_click", click).await;
    let title = json!({"tab": first, "expression": "document.title"});
    let title = ok(&engine, "browser_evaluate", title).await;
    assert_eq!(title.data["value"], "parent clicked true");
    assert_eq!(visibility(&engine, &first).await, "visible");

    hide_first().await;
    let click = json!({"tab": first, "ref": child, "timeout_ms": 10_000});
    ok(&engine, "browser_click", click).await;
    let text = json!({"tab": first, "ref": child, "function": "el => el.textContent"});
    let text = ok(&engine, "browser_evaluate", text).await;
    assert_eq!(text.data["value"], "Child clicked true");

    hide_first().await;
    let typed = json!({"tab": first, "ref": field, "text": "abc", "timeout_ms": 10_000});
    let typed = ok(&engine, "browser_type", typed).await;
    assert_eq!(typed.data["value"], "abc", "{}", typed.text);

    // A page that says it is visible when it is not does not fool it (the
    // visibility is read in cdpilot's world).
    let lie = "Object.defineProperty(document, 'visibilityState', { get: () => 'visible' }); 0";
    let lie = json!({"tab": first, "expression": lie});
    ok(&engine, "browser_evaluate", lie).await;
    // Back to the label the snapshot showed the ref with (a ref whose
    // element reads otherwise is refused: ref_changed, issue 35).
    let reset = "el => { el.textContent = 'Child button'; }";
    let reset = json!({"tab": first, "ref": child, "function": reset});
    ok(&engine, "browser_evaluate", reset).await;
    hide_first().await;
    let click = json!({"tab": first, "ref": child, "timeout_ms": 10_000});
    ok(&engine, "browser_click", click).await;
    let text = json!({"tab": first, "ref": child, "function": "el => el.textContent"});
    let text = ok(&engine, "browser_evaluate", text).await;
    assert_eq!(text.data["value"], "Child clicked true");

    let list = ok(&engine, "browser_tabs", json!({"action": "list"})).await;
    assert_eq!(list.data["tabs"][1]["active"], true, "{}", list.text);
    engine.shutdown().await;
}

/// A tab in a minimized window stays hidden when brought to the front,
/// and Chromium delivers it no reliable input: a click there answers
/// `element_not_interactable` at once, saying to restore the window, and
/// works again once it is restored. (The test drives a Chromium it
/// started, over its own DevTools connection, as a user's window would be
/// minimized.)
#[tokio::test]
async fn input_into_a_tab_of_a_minimized_window_answers_at_once_what_to_do() {
    let site = TestSite::start().await;
    let options = LaunchOptions {
        args: Vec::new(),
        ..testkit::chromium::launch_options(Debugging::Port)
    };
    let chromium = launch(&options, Duration::from_secs(30)).await.expect("launch");
    let engine = engine_with(|c| c.browser.cdp_url = chromium.ws_url().to_owned());
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/frames.html")}),
    )
    .await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await.text;
    let parent = ref_of(&snap, "button \"Parent button\"");

    let conn = Connection::open(chromium.transport()).await.unwrap();
    let browser = conn.browser();
    let soon = || tokio::time::Instant::now() + Duration::from_secs(10);
    let targets = browser
        .send("Target.getTargets", json!({}), soon())
        .await
        .unwrap();
    let target = targets["targetInfos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["url"] == site.url("/frames.html"))
        .unwrap_or_else(|| panic!("{targets}"))["targetId"]
        .clone();
    let window = browser
        .send("Browser.getWindowForTarget", json!({"targetId": target}), soon())
        .await
        .unwrap()["windowId"]
        .clone();
    let state = |state: &str| json!({"windowId": window, "bounds": {"windowState": state}});
    browser
        .send("Browser.setWindowBounds", state("minimized"), soon())
        .await
        .unwrap();
    let read = json!({"expression": "document.visibilityState"});
    assert_eq!(
        ok(&engine, "browser_evaluate", read.clone()).await.data["value"],
        "hidden"
    );

    let started = Instant::now();
    let click = json!({"ref": parent, "timeout_ms": 10_000});
    let e = call(&engine, "browser_click", click.clone()).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::ElementNotInteractable, "{e}");
    assert!(e.message.contains("minimized"), "{e}");
    assert!(e.next_step.contains("Restore the browser window"), "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "answered within its budget"
    );
    let title = json!({"expression": "document.title"});
    assert_eq!(
        ok(&engine, "browser_evaluate", title.clone()).await.data["value"],
        "Frames"
    );

    browser
        .send("Browser.setWindowBounds", state("normal"), soon())
        .await
        .unwrap();
    ok(&engine, "browser_click", click).await;
    let clicked = ok(&engine, "browser_evaluate", title).await;
    assert_eq!(clicked.data["value"], "parent clicked true");
    engine.shutdown().await;
    chromium.shutdown(Duration::from_secs(5)).await;
}
