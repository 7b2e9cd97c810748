//! `browser_storage` cookies through the extension relay. The agent's tabs
//! share the user's own cookie jar, so the extension answers for the sites
//! the session's tabs show and nothing else: listing gives the cookies
//! those pages are sent (not the user's cookies of other sites), setting
//! is allowed for those sites only, and clearing (the whole jar) is
//! refused, the user's cookies left as they were.

mod support;

use serde_json::json;
use support::extension::{paired, soon};
use testkit::TestSite;

#[tokio::test]
async fn cookies_through_the_relay_reach_only_the_sites_the_agents_tabs_show() {
    let site = TestSite::start().await;
    let (serve, chrome) = paired("[tools]\ncaps = [\"storage\"]\n").await;
    // The user's own cookie, on the other origin's host.
    chrome
        .conn
        .browser()
        .send(
            "Storage.setCookies",
            json!({"cookies": [{"name": "users_own", "value": "do-not-read", "url": site.url_b("/")}]}),
            soon(),
        )
        .await
        .unwrap();

    let mut ws = serve.ws().await;
    ws.open(&serve.token).await;
    let nav = ws
        .call("1", "browser_navigate", json!({"url": site.url("/index.html")}))
        .await;
    assert!(nav.get("result").is_some(), "{nav}");
    let set = ws
        .call(
            "2",
            "browser_storage",
            json!({"action": "set_cookie", "cookie": {"name": "agents", "value": "v1", "url": site.url("/")}}),
        )
        .await;
    assert!(set.get("result").is_some(), "{set}");
    let listed = ws
        .call("3", "browser_storage", json!({"action": "cookies"}))
        .await;
    let names: Vec<&str> = listed["result"]["cookies"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(
        names,
        ["agents"],
        "only the cookies the agent's page is sent: {listed}"
    );
    assert!(!listed.to_string().contains("do-not-read"), "{listed}");

    // Another site's cookie, and clearing the jar, are refused.
    let elsewhere = ws
        .call(
            "4",
            "browser_storage",
            json!({"action": "set_cookie", "cookie": {"name": "x", "value": "y", "url": site.url_b("/")}}),
        )
        .await;
    let message = elsewhere["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{elsewhere}"));
    assert!(
        message.contains("only for the sites the agent's tabs show (127.0.0.1)"),
        "{elsewhere}"
    );
    let cleared = ws
        .call("5", "browser_storage", json!({"action": "clear_cookies"}))
        .await;
    let message = cleared["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{cleared}"));
    assert!(message.contains("would sign you out"), "{cleared}");

    let jar = chrome
        .conn
        .browser()
        .send("Storage.getCookies", json!({}), soon())
        .await
        .unwrap();
    let jar: Vec<&str> = jar["cookies"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert!(
        jar.contains(&"users_own") && jar.contains(&"agents") && !jar.contains(&"x"),
        "{jar:?}"
    );
}
