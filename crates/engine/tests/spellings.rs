//! Issue 20, findings 4 and 5: a host or a path spelled another way names
//! the same server, and a deny written for one spelling holds for every
//! spelling the browser would send. Real Chromium; the denied server logs
//! every connection and request line it receives.

mod common;

use common::{blocked_soon, call, engine_with, ok};
use engine::config::Rule;
use engine::{Engine, ErrorCode};
use serde_json::json;
use testkit::{DeniedServer, TestSite};

fn denying(patterns: Vec<String>) -> Engine {
    engine_with(move |c| {
        for pattern in patterns {
            c.policy.rules.push(Rule {
                pattern,
                action: "deny".into(),
                origin: None,
            })
        }
    })
}

/// Finding 4: `localhost.` (a trailing dot) and `[::ffff:127.0.0.1]` (an
/// IPv4-mapped IPv6 address) reach the host a rule denies as `localhost`
/// and `127.0.0.1`; navigating there is refused and the server receives no
/// request.
#[tokio::test]
async fn a_host_denied_in_one_spelling_is_denied_in_every_spelling() {
    let site = TestSite::start().await;
    let denied = DeniedServer::start().await;
    let port = denied.port;
    let engine = denying(vec![
        format!("http://localhost:{port}/*"),
        format!("http://127.0.0.1:{port}/*"),
    ]);
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/index.html")}),
    )
    .await;
    for url in [
        format!("http://localhost.:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://LocalHost.:{port}/x"),
        format!("http://2130706433:{port}/"),
    ] {
        let e = call(&engine, "browser_navigate", json!({"url": url}))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::PermissionDenied, "{url}: {e}");
        assert!(e.message.contains("policy.rules["), "{url}: {e}");
    }
    // The page's own navigations are judged at the request stage the same way.
    for target in [
        format!("http://[::ffff:127.0.0.1]:{port}/by-page"),
        format!("http://localhost.:{port}/by-page-too"),
    ] {
        let blocked = blocked_after(&engine, &target).await;
        assert!(
            blocked.iter().any(|u| u.contains("by-page")),
            "{target}: {blocked:?}"
        );
    }
    // No request: the request stage refused every one. (The browser may
    // still open a bare connection ahead of a navigation, finding 14: the
    // egress gate, not the URL judge, closes that door.)
    let seen = denied.seen();
    assert_eq!(seen.requests, Vec::<String>::new(), "host spellings: {seen:?}");
}

/// Finding 5: `//secret/x`, `\secret\x` and `%73ecret/x` reach a path a
/// rule denies as `/secret/*` (servers merge slashes and decode
/// unreserved escapes); navigating there is refused and the server never
/// receives the request. Other paths on the server stay allowed.
#[tokio::test]
async fn a_path_denied_in_one_spelling_is_denied_in_every_spelling() {
    let site = TestSite::start().await;
    let denied = DeniedServer::start().await;
    let engine = denying(vec![format!("http://{}/secret/*", denied.host())]);
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/index.html")}),
    )
    .await;
    let base = format!("http://{}", denied.host());
    for path in [
        "//secret/x",
        "/\\secret\\x",
        "/%73ecret/x",
        "/public/%2e%2e//%73ecret/x",
    ] {
        let url = format!("{base}{path}");
        let e = call(&engine, "browser_navigate", json!({"url": url}))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::PermissionDenied, "{url}: {e}");
    }
    let blocked = blocked_after(&engine, &format!("{base}//secret/by-page")).await;
    assert!(blocked.iter().any(|u| u.contains("by-page")), "{blocked:?}");
    ok(
        &engine,
        "browser_navigate",
        json!({"url": format!("{base}/public/x")}),
    )
    .await;
    let seen = denied.seen();
    assert!(
        seen.requests.iter().any(|r| r == "GET /public/x HTTP/1.1"),
        "{seen:?}"
    );
    assert!(
        !seen
            .requests
            .iter()
            .any(|r| r.to_ascii_lowercase().contains("ecret")),
        "a denied path was requested: {seen:?}"
    );
}

/// Sets `location.href` to `target` from the page and returns the URLs
/// the request stage reported blocked, from that call's result or the
/// next calls' (the navigation may be blocked just after it returns).
async fn blocked_after(engine: &Engine, target: &str) -> Vec<String> {
    let set = format!("location.href = {}; 1", serde_json::to_string(target).unwrap());
    let first = ok(engine, "browser_evaluate", json!({"expression": set})).await;
    blocked_soon(engine, &first).await
}
