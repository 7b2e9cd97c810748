//! Issue 20, finding 9: `browser_cdp` crossed every boundary (the URL gate,
//! upload roots, the output directory, other sessions, the browser
//! itself). Off by default; fenced (`[tools] cdp = true`) it passes only
//! methods that stay inside the caller's tab. Real Chromium.

mod common;

use common::{call, call_in, engine_with, ok, ok_in};
use engine::config::{CdpAccess, Rule};
use engine::ErrorCode;
use serde_json::json;
use testkit::{DeniedServer, TestSite};

/// By default `browser_cdp` is not offered: `Fetch.disable` (which turned
/// the URL gate off) is refused naming the setting.
#[tokio::test]
async fn browser_cdp_is_off_by_default() {
    let (_site, engine) = common::open("/index.html").await;
    let e = call(&engine, "browser_cdp", json!({"method": "Fetch.disable"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
    assert!(e.message.contains("[tools] cdp"), "{e}");
    let listed: Vec<_> = engine::tools::offered(engine.config()).map(|t| t.name).collect();
    assert!(!listed.contains(&"browser_cdp"), "{listed:?}");
}

/// Finding 9's attacks, each refused by a fenced `browser_cdp` with
/// `permission_denied` naming the method and the setting, and the gate,
/// the browser and the tab still working afterwards.
#[tokio::test]
async fn a_fenced_browser_cdp_refuses_every_method_that_leaves_the_tab() {
    let site = TestSite::start().await;
    let denied = DeniedServer::start().await;
    let rule = format!("http://{}/*", denied.host());
    let engine = engine_with(move |c| {
        c.tools.cdp = CdpAccess::Fenced;
        c.policy.rules.push(Rule {
            pattern: rule,
            action: "deny".into(),
            origin: None,
        });
    });
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/forms.html")}),
    )
    .await;
    let attacks = [
        json!({"method": "Fetch.disable"}),
        json!({"method": "Fetch.enable", "params": {"patterns": []}}),
        json!({"method": "DOM.setFileInputFiles", "params": {"files": ["/etc/passwd"], "backendNodeId": 1}}),
        json!({"method": "Page.setDownloadBehavior", "params": {"behavior": "allow", "downloadPath": "/tmp"}}),
        json!({"method": "Browser.setDownloadBehavior", "params": {"behavior": "allow", "downloadPath": "/tmp"}}),
        json!({"method": "Target.getTargets"}),
        json!({"method": "Target.attachToTarget", "params": {"targetId": "X", "flatten": true}}),
        json!({"method": "Target.sendMessageToTarget", "params": {"message": "{}"}}),
        json!({"method": "Storage.getCookies"}),
        json!({"method": "Network.getAllCookies"}),
        json!({"method": "Network.setBypassServiceWorker", "params": {"bypass": true}}),
        json!({"method": "Page.setBypassCSP", "params": {"enabled": true}}),
        json!({"method": "Security.setIgnoreCertificateErrors", "params": {"ignore": true}}),
        json!({"method": "SystemInfo.getProcessInfo"}),
        json!({"method": "Runtime.disable"}),
        json!({"method": "Browser.crash"}),
    ];
    for attack in attacks {
        let method = attack["method"].as_str().unwrap().to_owned();
        let e = call(&engine, "browser_cdp", attack).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::PermissionDenied, "{method}: {e}");
        assert!(
            e.message.contains(&method) && e.message.contains("[tools] cdp = true"),
            "{method}: {e}"
        );
    }
    // The gate still holds: the page's own navigation to the denied server
    // is blocked.
    let set = format!("location.href = {:?}; 1", denied.url("/after-fetch-disable"));
    let mut out = ok(
        &engine,
        "browser_cdp",
        json!({"method": "Runtime.evaluate", "params": {"expression": set}}),
    )
    .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while out.data["blocked"].is_null() && std::time::Instant::now() < deadline {
        out = ok(&engine, "browser_evaluate", json!({"expression": "1"})).await;
    }
    assert!(
        out.data["blocked"][0]["url"]
            .as_str()
            .unwrap_or("")
            .contains("after-fetch-disable"),
        "{}",
        out.text
    );
    assert!(denied.seen().requests.is_empty(), "{:?}", denied.seen());
    // Methods that stay in the tab work, and the browser is alive.
    let tree = ok(&engine, "browser_cdp", json!({"method": "Page.getFrameTree"})).await;
    assert_eq!(
        tree.data["result"]["frameTree"]["frame"]["url"],
        site.url("/forms.html")
    );
    let doc = ok(
        &engine,
        "browser_cdp",
        json!({"method": "DOM.getDocument", "params": {"depth": 1}}),
    )
    .await;
    assert!(doc.data["result"]["root"]["nodeId"].is_number(), "{}", doc.text);
    ok(&engine, "browser_cdp", json!({"method": "Emulation.setDeviceMetricsOverride", "params": {"width": 500, "height": 400, "deviceScaleFactor": 1, "mobile": false}})).await;
    let width = ok(&engine, "browser_evaluate", json!({"expression": "innerWidth"})).await;
    assert_eq!(width.data["value"], 500);
}

/// Finding 9: one session read another's cookies through `Target.*`. With
/// a fenced `browser_cdp`, no tool of session B shows session A's cookie:
/// the raw ways are refused, and B's own storage, script and raw reads see
/// only B's context.
#[tokio::test]
async fn one_session_cannot_read_another_sessions_cookies_by_any_tool() {
    let site = TestSite::start().await;
    let engine = engine_with(|c| {
        c.tools.cdp = CdpAccess::Fenced;
        c.tools.caps = vec!["all".into()];
    });
    let (a, b) = (engine.new_session(), engine.new_session());
    let secret = "a-session-cookie-7f3e";
    ok_in(&a, "browser_navigate", json!({"url": site.url("/index.html")})).await;
    ok_in(
        &a,
        "browser_storage",
        json!({"action": "set_cookie", "cookie": {"name": "sid", "value": secret, "url": site.url("")}}),
    )
    .await;
    let mine = ok_in(&a, "browser_evaluate", json!({"expression": "document.cookie"})).await;
    assert!(mine.text.contains(secret), "A sees its own cookie: {}", mine.text);

    ok_in(&b, "browser_navigate", json!({"url": site.url("/index.html")})).await;
    let mut seen = String::new();
    for (tool, args) in [
        ("browser_storage", json!({"action": "cookies"})),
        (
            "browser_storage",
            json!({"action": "cookies", "url": site.url("/index.html")}),
        ),
        ("browser_evaluate", json!({"expression": "document.cookie"})),
        (
            "browser_cdp",
            json!({"method": "Runtime.evaluate", "params": {"expression": "document.cookie", "returnByValue": true}}),
        ),
        ("browser_cdp", json!({"method": "Target.getTargets"})),
        (
            "browser_cdp",
            json!({"method": "Target.attachToTarget", "params": {"targetId": "X", "flatten": true}}),
        ),
        ("browser_cdp", json!({"method": "Storage.getCookies"})),
        ("browser_cdp", json!({"method": "Network.getAllCookies"})),
        (
            "browser_cdp",
            json!({"method": "Network.getCookies", "params": {"urls": [site.url("")]}}),
        ),
        ("browser_tabs", json!({"action": "list"})),
        ("browser_network", json!({"action": "list"})),
    ] {
        match call_in(&b, tool, args.clone()).await {
            Ok(out) => seen += &format!("{} {}\n", out.text, out.data),
            Err(e) => seen += &format!("{e}\n"),
        }
    }
    assert!(!seen.contains(secret), "session B saw A's cookie:\n{seen}");
}
