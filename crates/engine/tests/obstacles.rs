//! Obstacle detection on pages of the test site: a bot check, a login wall,
//! HTTP 403 and 429, and ordinary pages left alone.

mod common;

use common::{engine, ok};
use serde_json::json;
use testkit::TestSite;

#[tokio::test]
async fn captcha_login_wall_and_statuses_are_flagged() {
    let site = TestSite::start().await;
    let engine = engine();

    let nav = ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/captcha.html")}),
    )
    .await;
    assert_eq!(nav.data["obstacle"]["type"], "captcha", "{}", nav.text);
    assert_eq!(nav.data["obstacle"]["confidence"], "high");
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    assert_eq!(snap.data["obstacle"]["type"], "captcha");
    assert!(
        snap.text.contains("obstacle: captcha (high confidence)"),
        "{}",
        snap.text
    );

    let nav = ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/login.html")}),
    )
    .await;
    assert_eq!(nav.data["obstacle"]["type"], "login_required", "{}", nav.text);
    let extract = ok(&engine, "browser_extract", json!({})).await;
    assert_eq!(extract.data["obstacle"]["type"], "login_required");

    let nav = ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/status/429")}),
    )
    .await;
    assert_eq!(nav.data["obstacle"]["type"], "rate_limited");
    let nav = ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/status/403")}),
    )
    .await;
    assert_eq!(nav.data["obstacle"]["type"], "access_denied");
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    assert_eq!(
        snap.data["obstacle"]["type"], "access_denied",
        "the current document's status is remembered"
    );

    for path in ["/", "/form.html", "/article.html"] {
        let nav = ok(&engine, "browser_navigate", json!({"url": site.url(path)})).await;
        assert!(nav.data.get("obstacle").is_none(), "{path}: {}", nav.text);
    }
    engine.shutdown().await;
}
