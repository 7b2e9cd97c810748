//! browser_tabs and the `tab` argument against real Chromium: tabs the page
//! opens are listed and selectable; acting in a tab does not activate it.

mod common;

use common::{call, engine, ok, open, ref_of};
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
