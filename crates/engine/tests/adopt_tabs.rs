//! `[browser] adopt_tabs` (issue 45, item 6): attached to a Chromium whose
//! tab is already on a page, the session takes that tab (the snapshot shows
//! the page, the first navigate reuses it, no second tab) and its request
//! stage still refuses what the rules deny, a page's own navigation
//! included; a blank first tab is reused too; without the option, the
//! session gets a blank tab of a browser context of its own and never sees
//! the user's.

mod common;

use common::{blocked_soon, call, engine_with, ok};
use engine::config::Rule;
use engine::ErrorCode;
use serde_json::json;
use testkit::TestSite;

#[tokio::test]
async fn adopted_tabs_are_the_users_own_and_still_gated() {
    let site = TestSite::start().await;
    let chrome = testkit::chromium::UsersChrome::start_on(&site.url("/index.html")).await;
    let ws = chrome.ws_url().to_owned();
    let denied = format!("{}/*", site.b);

    // The default: a context of the session's own, blank; the user's tab
    // is not listed.
    let apart = engine_with({
        let ws = ws.clone();
        move |c| c.browser.cdp_url = ws
    });
    let snap = ok(&apart, "browser_snapshot", json!({})).await;
    assert!(!snap.text.contains("Test home"), "{}", snap.text);
    let tabs = ok(&apart, "browser_tabs", json!({"action": "list"})).await;
    assert_eq!(
        tabs.data["tabs"].as_array().map(Vec::len),
        Some(1),
        "{}",
        tabs.text
    );
    assert!(!tabs.text.contains("/index.html"), "{}", tabs.text);
    apart.shutdown().await;

    let engine = engine_with(move |c| {
        c.browser.cdp_url = ws;
        c.browser.adopt_tabs = true;
        c.policy.rules.push(Rule {
            pattern: denied,
            action: "deny".into(),
            origin: None,
        });
    });
    // The page that is there (loaded by the time its text shows).
    ok(&engine, "browser_wait", json!({"text": "Test home"})).await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    assert!(snap.text.contains("Trusted click"), "{}", snap.text);
    let tabs = ok(&engine, "browser_tabs", json!({"action": "list"})).await;
    assert_eq!(
        tabs.data["tabs"].as_array().map(Vec::len),
        Some(1),
        "{}",
        tabs.text
    );
    assert!(tabs.text.contains("/index.html"), "{}", tabs.text);

    // The first navigate reuses it: still one tab, now on the form.
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/form.html")}),
    )
    .await;
    let tabs = ok(&engine, "browser_tabs", json!({"action": "list"})).await;
    assert_eq!(
        tabs.data["tabs"].as_array().map(Vec::len),
        Some(1),
        "{}",
        tabs.text
    );
    assert!(tabs.text.contains("/form.html"), "{}", tabs.text);

    // A denied URL: refused by the tool, and by the request stage when the
    // page itself goes there.
    let e = call(
        &engine,
        "browser_navigate",
        json!({"url": site.url_b("/index.html")}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::PermissionDenied, "{e}");
    let went = json!({"expression": format!("location.href = {:?}; 1", site.url_b("/index.html?by-page"))});
    let evaluated = ok(&engine, "browser_evaluate", went).await;
    let blocked = blocked_soon(&engine, &evaluated).await;
    assert_eq!(blocked, vec![site.url_b("/index.html?by-page")]);
    assert_eq!(site.received_by_b(), vec![], "the denied origin received nothing");
    engine.shutdown().await;

    // A browser whose one tab is blank: the first navigate goes there.
    let blank = testkit::chromium::UsersChrome::start().await;
    let ws = blank.ws_url().to_owned();
    let engine = engine_with(move |c| {
        c.browser.cdp_url = ws;
        c.browser.adopt_tabs = true;
    });
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/index.html")}),
    )
    .await;
    // The browser's own view: its one page is there now, no blank beside.
    let conn = cdp::Connection::open(std::sync::Arc::new(cdp::WebSocket::new(
        blank.ws_url().to_owned(),
    )))
    .await
    .unwrap();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    let listed = conn
        .browser()
        .call(cdp::protocol::target::GetTargets {}, deadline)
        .await
        .unwrap();
    let pages: Vec<&str> = listed
        .target_infos
        .iter()
        .filter(|t| t.kind == "page")
        .map(|t| t.url.as_str())
        .collect();
    assert_eq!(pages, [site.url("/index.html")], "{pages:?}");
    engine.shutdown().await;
}
