//! The dashboard at `/` of `cdpilot serve`, loaded in a second real
//! headless Chromium that the test drives (through the engine as a
//! library): it shows a session driven by another client, answers a
//! pending prompt (the page under test sees the answer), shows the live
//! view and audit thumbnails, and its Stop all ends a running 20 s
//! `browser_wait` at once. Its token stays in its tab (no cookie: issue 34).

mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::person::{dashboard_screencast, next_frame, PersonsBrowser};
use support::serve::Serve;
use testkit::TestSite;

/// Runs `tool` on a WebSocket session and returns its result (panics on an error).
async fn ws_ok(ws: &mut support::serve::Ws, id: &str, tool: &str, arguments: Value) -> Value {
    let response = ws.call(id, tool, arguments).await;
    assert!(response.get("error").is_none(), "{tool}: {response}");
    response["result"].clone()
}

/// Any text message of a live view: a frame.
fn any(_: &str) -> bool {
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_shows_answers_and_stops_sessions() {
    let site = TestSite::start().await;
    let serve = Serve::start(
        "[dialogs]\ntimeout_s = 120\n",
        &["--ask", &format!("{}/*", site.b)],
    )
    .await;

    // Two sessions driven by other clients.
    let mut agent = serve.ws().await;
    let session = agent.open(&serve.token).await;
    ws_ok(
        &mut agent,
        "1",
        "browser_navigate",
        json!({"url": site.url("/ask.html")}),
    )
    .await;
    let mut other = serve.ws().await;
    other.open(&serve.token).await;
    ws_ok(
        &mut other,
        "1",
        "browser_navigate",
        json!({"url": site.url("/index.html")}),
    )
    .await;

    // The token goes in once; the page keeps it in its tab and leaves the address bar.
    let viewer = PersonsBrowser::new("dashboard", |_| {});
    let opened = viewer
        .ok(
            "browser_navigate",
            json!({"url": format!("http://{}/?token={}", serve.authority, serve.token)}),
        )
        .await;
    assert_eq!(
        opened.data["url"],
        format!("http://{}/", serve.authority),
        "{}",
        opened.text
    );
    viewer.wait_text(&site.url("/ask.html")).await;
    viewer.wait_text(&site.url("/index.html")).await;
    viewer.wait_text(&session).await;

    // Issue 34, finding 8: the token is kept in this tab's sessionStorage
    // (this port's alone), in no cookie; a wrong cookie set by a page on
    // another port of the host (cookies ignore ports) locks nobody out.
    let kept = viewer
        .value("[sessionStorage.getItem('cdpilot_token'), document.cookie]")
        .await;
    assert_eq!(kept, json!([serve.token, ""]), "where the token is kept");
    viewer
        .ok("browser_navigate", json!({"url": site.url("/index.html")}))
        .await;
    let planted = viewer
        .value("document.cookie = 'cdpilot_token=planted-by-another-port; path=/'; document.cookie")
        .await;
    assert_eq!(planted, "cdpilot_token=planted-by-another-port");
    viewer
        .ok(
            "browser_navigate",
            json!({"url": format!("http://{}/", serve.authority)}),
        )
        .await;
    viewer.wait_text(&session).await;

    // The live view shows frames of the selected session's tab.
    viewer
        .ok(
            "browser_wait",
            json!({"selector": "#live[src^='data:image/jpeg']", "timeout_ms": 20000}),
        )
        .await;

    // The other client's page action gets its thumbnail in the audit.
    ws_ok(&mut other, "2", "browser_hover", json!({"selector": "a"})).await;
    viewer
        .ok(
            "browser_wait",
            json!({"selector": "#audit img[alt='after browser_hover']", "timeout_ms": 20000}),
        )
        .await;

    // A prompt opened by the agent's click waits in the dashboard, which answers it.
    let clicked = ws_ok(&mut agent, "2", "browser_click", json!({"selector": "#ask"})).await;
    assert_eq!(clicked["dialog_opened"]["type"], "prompt", "{clicked}");
    viewer.wait_text("What is your name?").await;
    if let Ok(path) = std::env::var("CDPILOT_DASHBOARD_PNG") {
        let shot = viewer.ok("browser_screenshot", json!({})).await;
        use base64::Engine as _;
        let png = base64::engine::general_purpose::STANDARD
            .decode(&shot.image.as_ref().expect("an image").base64)
            .unwrap();
        std::fs::write(&path, png).unwrap();
    }
    viewer
        .ok(
            "browser_type",
            json!({"selector": "#dialogs input.prompt", "text": "Ada"}),
        )
        .await;
    viewer
        .ok("browser_click", json!({"selector": "#dialogs .accept"}))
        .await;
    viewer.wait_text("No dialog is waiting.").await;
    let answered = ws_ok(
        &mut agent,
        "3",
        "browser_wait",
        json!({"text": "hello Ada", "timeout_ms": 10000}),
    )
    .await;
    assert_eq!(answered["ok"], true, "{answered}");

    // Page actions have thumbnails in the audit while the dashboard watches.
    ws_ok(&mut agent, "hover", "browser_hover", json!({"selector": "#ask"})).await;
    viewer
        .ok(
            "browser_wait",
            json!({"selector": "#audit img[alt='after browser_hover']", "timeout_ms": 20000}),
        )
        .await;
    let thumbnail = viewer
        .ok(
            "browser_evaluate",
            json!({"expression": "fetch(document.querySelector('#audit img').src).then(r => r.headers.get('content-type'))"}),
        )
        .await;
    assert_eq!(thumbnail.data["value"], "image/jpeg", "{}", thumbnail.text);

    // Two more viewers of the same tab (WebSockets of the test's own) share
    // its screencast: one joining gets the latest frame at once, one
    // leaving does not stop the others' frames.
    let mut first = dashboard_screencast(&serve, &session).await;
    let mut second = dashboard_screencast(&serve, &session).await;
    assert!(
        next_frame(&mut first, any).await.is_some(),
        "no frame for the first extra viewer"
    );
    assert!(
        next_frame(&mut second, any).await.is_some(),
        "no latest frame for a viewer who joined"
    );
    second.close(None).await.unwrap();
    drop(second);
    ws_ok(
        &mut agent,
        "repaint",
        "browser_navigate",
        json!({"url": site.url("/form.html")}),
    )
    .await;
    // Chrome sends a frame only when the page repaints, and a loaded
    // machine may let one repaint go by without a frame: repaint again
    // (a cast that stopped sends nothing however often the page paints).
    let mut frame = None;
    for round in 0..3 {
        frame = next_frame(&mut first, any).await;
        if frame.is_some() {
            break;
        }
        let script = format!("document.body.style.background = '#{:02x}0000'", 64 * (round + 1));
        ws_ok(
            &mut agent,
            &format!("repaint-{round}"),
            "browser_evaluate",
            json!({ "expression": script }),
        )
        .await;
    }
    assert!(frame.is_some(), "frames stopped when a viewer left");
    drop(first);

    // A URL the policy asks about, from a client that cannot ask: the
    // dashboard asks the person, who allows it once.
    let asked_url = site.url_b("/index.html");
    agent
        .send(json!({"type": "request", "id": "ask", "tool": "browser_navigate", "arguments": {"url": asked_url}}))
        .await;
    viewer.wait_text(&asked_url).await;
    viewer
        .ok("browser_click", json!({"selector": "#asks .once"}))
        .await;
    let allowed = loop {
        let message = agent.next().await.expect("an answer");
        if message["type"] == "response" {
            break message;
        }
    };
    assert!(allowed.get("error").is_none(), "{allowed}");
    assert_eq!(allowed["result"]["url"], asked_url);
    // The row said "(1 running)" while the ask waited; it must say it again
    // for the wait below, not still for the ask (a stale row let Stop all
    // come before the wait reached the server: CI, stop 53).
    viewer
        .ok(
            "browser_wait",
            json!({"text_gone": "(1 running)", "timeout_ms": 20000}),
        )
        .await;

    // Stop all ends a running 20 s wait at once, and the sessions with it.
    agent
        .send(json!({"type": "request", "id": "4", "tool": "browser_wait", "arguments": {"time_ms": 20000, "timeout_ms": 30000}}))
        .await;
    viewer.wait_text("(1 running)").await;
    let clicked_at = Instant::now();
    viewer.ok("browser_click", json!({"selector": "#stop-all"})).await;
    let mut ended = 0;
    let response = loop {
        let message = agent
            .next()
            .await
            .expect("the socket stays open until the answer");
        ended += usize::from(message["event"] == "session_ended" && message["data"]["reason"] == "stopped");
        if message["type"] == "response" {
            break message;
        }
    };
    let took = clicked_at.elapsed();
    eprintln!("Stop all: the 20 s wait answered canceled {took:?} after the click");
    assert_eq!(response["id"], "4");
    assert_eq!(response["error"]["code"], "canceled", "{response}");
    // Budget: 1 s; slack for two browsers and a busy 2-core machine.
    assert!(took < Duration::from_secs(4), "Stop all took {took:?}");
    while let Some(message) = agent.next().await {
        ended += usize::from(message["event"] == "session_ended" && message["data"]["reason"] == "stopped");
    }
    assert_eq!(ended, 1, "the agent was told once that its session was stopped");
    viewer.wait_text("No session is open.").await;

    viewer.engine.shutdown().await;
}

/// Issue 20: a page must not frame the dashboard (clickjacking its Stop,
/// Allow and dialog buttons): every answer, the page and the 401 alike,
/// says `X-Frame-Options: DENY` and CSP `frame-ancestors 'none'`.
#[tokio::test]
async fn the_dashboard_may_not_be_framed() {
    let serve = Serve::start("", &[]).await;
    let bearer = format!("Bearer {}", serve.token);
    for (path, auth) in [
        ("/", true),
        ("/dashboard/app.js", true),
        ("/v1/dashboard/state", true),
        // The page is a static file now (issue 34); the state asks the token.
        ("/v1/dashboard/state", false),
    ] {
        let headers: Vec<(&str, &str)> = if auth {
            vec![("Authorization", bearer.as_str())]
        } else {
            vec![]
        };
        let reply = testkit::http_mcp::http(&serve.authority, "GET", path, &headers, "").await;
        assert_eq!(reply.status, if auth { 200 } else { 401 }, "{path}: {reply:?}");
        assert_eq!(reply.header("x-frame-options"), Some("DENY"), "{path}: {reply:?}");
        assert_eq!(
            reply.header("content-security-policy"),
            Some("frame-ancestors 'none'"),
            "{path}: {reply:?}"
        );
    }
}
