//! `cdpilot serve`'s session events over a real WebSocket (PROTOCOL.md:
//! dialog_opened/closed, navigated, permission_denied, obstacle,
//! session_ended), the v2 metric names counting, `/healthz` without a
//! token, an exact `max_sessions` under concurrent initializes, and a
//! fleet of two Chromium endpoints (issue 10).

mod support;

use std::collections::HashMap;
use std::time::Duration;

use cdp::launch::{launch, BrowserProcess, Debugging};
use serde_json::json;
use support::ref_on_line;
use support::serve::{Client, Serve};
use testkit::http_mcp::http;
use testkit::TestSite;

fn samples(text: &str) -> HashMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (name, value) = l.rsplit_once(' ').expect("name value");
            (name.to_owned(), value.parse().expect("a number"))
        })
        .collect()
}

async fn metrics(serve: &Serve) -> HashMap<String, f64> {
    let bearer = format!("Bearer {}", serve.token);
    let reply = http(
        &serve.authority,
        "GET",
        "/metrics",
        &[("Authorization", &bearer)],
        "",
    )
    .await;
    assert_eq!(reply.status, 200, "{reply:?}");
    samples(&reply.body)
}

#[tokio::test]
async fn a_websocket_client_hears_navigations_dialogs_refusals_and_obstacles() {
    let site = TestSite::start().await;
    let config = "[[policy.rules]]\npattern = \"http://127.0.0.1:*/form.html\"\naction = \"deny\"\n";
    let serve = Serve::start(config, &[]).await;
    let mut c = Client::open(&serve).await;

    let nav = c
        .call("1", "browser_navigate", json!({"url": site.url("/index.html")}))
        .await;
    assert!(nav["result"].is_object(), "{nav}");
    let navigated = loop {
        let event = c.event("navigated").await;
        if event["data"]["url"] == site.url("/index.html") {
            break event;
        }
    };
    assert_eq!(navigated["data"]["tab"], "t1", "{navigated}");

    // A dialog the agent answers: opened, then closed by the agent.
    let snap = c.call("2", "browser_snapshot", json!({})).await;
    let ask = ref_on_line(snap["result"]["text"].as_str().unwrap(), "button \"Ask\"");
    let click = c.call("3", "browser_click", json!({"ref": ask})).await;
    assert_eq!(click["result"]["dialog_opened"]["message"], "Proceed?", "{click}");
    let opened = c.event("dialog_opened").await;
    assert_eq!(opened["data"]["message"], "Proceed?", "{opened}");
    assert_eq!(opened["data"]["type"], "confirm", "{opened}");
    assert_eq!(opened["data"]["tab"], "t1", "{opened}");
    let answered = c.call("4", "browser_dialog", json!({"action": "accept"})).await;
    assert!(answered["result"].is_object(), "{answered}");
    let closed = c.event("dialog_closed").await;
    assert_eq!(closed["data"]["id"], opened["data"]["id"], "{closed}");
    assert_eq!(closed["data"]["closed_by"], "agent", "{closed}");

    // A URL the policy refuses.
    let refused = c
        .call("5", "browser_navigate", json!({"url": site.url("/form.html")}))
        .await;
    assert_eq!(refused["error"]["code"], "permission_denied", "{refused}");
    let denied = c.event("permission_denied").await;
    assert_eq!(denied["data"]["url"], site.url("/form.html"), "{denied}");
    assert!(
        denied["data"]["rule"].as_str().unwrap().contains("form.html"),
        "{denied}"
    );

    // A page with a bot check.
    let captcha = c
        .call("6", "browser_navigate", json!({"url": site.url("/captcha.html")}))
        .await;
    assert_eq!(captcha["result"]["obstacle"]["type"], "captcha", "{captcha}");
    let obstacle = c.event("obstacle").await;
    assert_eq!(obstacle["data"]["obstacle"]["type"], "captcha", "{obstacle}");

    // The same calls, counted under the CONFIG.md names.
    let spin = c
        .call(
            "7",
            "browser_evaluate",
            json!({"expression": "while(true){}", "timeout_ms": 1500}),
        )
        .await;
    assert_eq!(spin["error"]["code"], "timeout", "{spin}");
    let m = metrics(&serve).await;
    let count = |name: &str| {
        m.get(name)
            .copied()
            .unwrap_or_else(|| panic!("no {name} in {m:?}"))
    };
    assert_eq!(count(r#"cdpilot_policy_verdicts_total{action="deny"}"#), 1.0);
    assert!(count(r#"cdpilot_policy_verdicts_total{action="allow"}"#) >= 2.0);
    assert_eq!(count("cdpilot_evaluate_terminations_total"), 1.0);
    assert_eq!(count("cdpilot_timeouts_total"), 1.0);
    assert_eq!(
        count(r#"cdpilot_calls_total{outcome="permission_denied",tool="browser_navigate"}"#),
        1.0
    );
    assert_eq!(count("cdpilot_sessions_open"), 1.0);
    assert_eq!(count("cdpilot_sessions_started_total"), 1.0);
    assert_eq!(count("cdpilot_browser_reconnects_total"), 0.0);
    assert_eq!(count("cdpilot_browser_endpoints_up"), 1.0);
}

#[tokio::test]
async fn an_idle_session_ends_with_reason_idle_and_is_counted() {
    let site = TestSite::start().await;
    let serve = Serve::start("[session]\nidle_timeout_s = 2\n", &[]).await;
    let mut c = Client::open(&serve).await;
    let nav = c
        .call("1", "browser_navigate", json!({"url": site.url("/index.html")}))
        .await;
    assert!(nav["result"].is_object(), "{nav}");
    let ended = c.event("session_ended").await;
    assert_eq!(ended["data"]["reason"], "idle", "{ended}");
    let m = metrics(&serve).await;
    assert_eq!(m[r#"cdpilot_sessions_ended_total{reason="idle"}"#], 1.0, "{m:?}");
    // The session goes on: its next call starts afresh and says so.
    let again = c
        .call("2", "browser_navigate", json!({"url": site.url("/index.html")}))
        .await;
    assert_eq!(again["result"]["session_restarted"], true, "{again}");
}

#[tokio::test]
async fn sessions_their_clients_end_count_as_client_closed_and_shutdown_says_stopped() {
    let mut serve = Serve::start("", &[]).await;
    let closing = Client::open(&serve).await;
    let mut mcp = serve.mcp_client();
    assert_eq!(mcp.initialize().await.status, 200);
    let mut staying = Client::open(&serve).await;

    let mut ws = closing.ws;
    ws.socket.close(None).await.unwrap();
    assert!((200..300).contains(&mcp.end().await));
    // Sessions end in the background once their last holder let go.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let ended = loop {
        let m = metrics(&serve).await;
        let ended = m
            .get(r#"cdpilot_sessions_ended_total{reason="client_closed"}"#)
            .copied();
        if ended == Some(2.0) || tokio::time::Instant::now() > deadline {
            break ended;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(ended, Some(2.0));

    let stopping = tokio::spawn(async move {
        let status = serve.terminate().await;
        (serve, status)
    });
    let ended = staying.event("session_ended").await;
    assert_eq!(ended["data"]["reason"], "stopped", "{ended}");
    let (_serve, status) = stopping.await.unwrap();
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn healthz_answers_without_a_token_and_a_wrong_one_is_still_refused() {
    let serve = Serve::start("", &["--token", "t"]).await;
    let bare = http(&serve.authority, "GET", "/healthz", &[], "").await;
    assert_eq!((bare.status, bare.body.as_str()), (200, "ok\n"), "{bare:?}");
    let wrong = http(
        &serve.authority,
        "GET",
        "/healthz",
        &[("Authorization", "Bearer nope")],
        "",
    )
    .await;
    assert_eq!(wrong.status, 401, "{wrong:?}");
    let metrics = http(&serve.authority, "GET", "/metrics", &[], "").await;
    assert_eq!(metrics.status, 401, "/metrics still wants the token: {metrics:?}");
}

#[tokio::test]
async fn concurrent_mcp_initializes_never_pass_max_sessions() {
    let serve = Serve::start("[serve]\nmax_sessions = 2\n", &[]).await;
    let mut clients: Vec<_> = (0..8).map(|_| serve.mcp_client()).collect();
    let replies =
        futures_util::future::join_all(clients.iter_mut().map(|c| async move { c.initialize().await })).await;
    let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 2, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 503).count(), 6, "{statuses:?}");
    for refused in replies.iter().filter(|r| r.status == 503) {
        assert!(refused.body.contains("too_many_sessions"), "{refused:?}");
    }
    let m = metrics(&serve).await;
    assert_eq!(m["cdpilot_sessions_open"], 2.0, "{m:?}");
}

/// A Chromium of the test's own, as a fleet endpoint.
async fn endpoint() -> BrowserProcess {
    let options = testkit::chromium::launch_options(Debugging::Port);
    launch(&options, Duration::from_secs(30)).await.expect("launch")
}

/// The page URLs Chromium at `ws_url` has open (every browser context),
/// asked over a connection of the test's own.
async fn pages_of(ws_url: &str) -> Vec<String> {
    let conn = cdp::Connection::connect(ws_url).await.expect("connect");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let targets = conn
        .browser()
        .call(cdp::protocol::target::GetTargets {}, deadline)
        .await
        .expect("Target.getTargets");
    conn.close();
    targets
        .target_infos
        .into_iter()
        .filter(|t| t.kind == "page")
        .map(|t| t.url)
        .collect()
}

#[tokio::test]
async fn sessions_spread_over_two_endpoints_and_move_off_one_that_dies() {
    let site = TestSite::start().await;
    let (a, b) = tokio::join!(endpoint(), endpoint());
    let (a_url, b_url) = (a.ws_url().to_owned(), b.ws_url().to_owned());
    let serve = Serve::start("", &["--endpoint", &a_url, "--endpoint", &b_url]).await;

    let mut clients = Vec::new();
    for _ in 0..4 {
        clients.push(Client::open(&serve).await);
    }
    let urls: Vec<String> = (0..4).map(|n| site.url(&format!("/index.html?s={n}"))).collect();
    let navigations = clients.iter_mut().zip(&urls).map(|(c, url)| async move {
        let nav = c.call("1", "browser_navigate", json!({"url": url})).await;
        assert!(nav["result"].is_object(), "{nav}");
    });
    futures_util::future::join_all(navigations).await;

    let (on_a, on_b) = (pages_of(&a_url).await, pages_of(&b_url).await);
    let placed_on_a: Vec<usize> = (0..4).filter(|n| on_a.contains(&urls[*n])).collect();
    let placed_on_b: Vec<usize> = (0..4).filter(|n| on_b.contains(&urls[*n])).collect();
    assert_eq!(placed_on_a.len(), 2, "A has {on_a:?}, B has {on_b:?}");
    assert_eq!(placed_on_b.len(), 2, "A has {on_a:?}, B has {on_b:?}");
    let m = metrics(&serve).await;
    assert_eq!(m["cdpilot_browser_endpoints_up"], 2.0, "{m:?}");

    // A dies: its sessions hear browser_lost; B's sessions do not.
    a.shutdown(Duration::from_secs(10)).await;
    for n in &placed_on_a {
        let ended = clients[*n].event("session_ended").await;
        assert_eq!(ended["data"]["reason"], "browser_lost", "{ended}");
    }
    let health = http(&serve.authority, "GET", "/healthz", &[], "").await;
    assert_eq!(health.status, 200, "B is still up: {health:?}");
    let m = metrics(&serve).await;
    assert_eq!(m["cdpilot_browser_endpoints_up"], 1.0, "{m:?}");
    assert_eq!(
        m[r#"cdpilot_sessions_ended_total{reason="browser_lost"}"#], 2.0,
        "{m:?}"
    );

    // A new session goes to B, and so does a lost one's next call.
    let mut fresh = Client::open(&serve).await;
    let fresh_url = site.url("/index.html?s=fresh");
    let nav = fresh
        .call("1", "browser_navigate", json!({"url": fresh_url}))
        .await;
    assert!(nav["result"].is_object(), "{nav}");
    let lost = placed_on_a[0];
    let moved_url = site.url("/index.html?s=moved");
    let moved = clients[lost]
        .call("2", "browser_navigate", json!({"url": moved_url}))
        .await;
    assert_eq!(moved["result"]["browser_restarted"], true, "{moved}");
    let on_b = pages_of(&b_url).await;
    assert!(on_b.contains(&fresh_url), "{on_b:?}");
    assert!(on_b.contains(&moved_url), "{on_b:?}");
    for n in &placed_on_b {
        let still = clients[*n]
            .call("3", "browser_tabs", json!({"action": "list"}))
            .await;
        assert!(still["result"].is_object(), "{still}");
        assert!(!clients[*n].saw("session_ended"), "B's session {n} ended");
    }
    b.shutdown(Duration::from_secs(10)).await;
}
