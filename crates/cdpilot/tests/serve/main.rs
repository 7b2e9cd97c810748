//! `cdpilot serve` end to end (issue 10), over real HTTP and WebSockets on
//! loopback against real Chromium: isolated sessions over MCP's streamable
//! HTTP, the WebSocket action API (PROTOCOL.md) and shutdown here; the
//! guards (`guards`), what is counted (`metrics`), the idle browser's
//! close (`idle`) and the allocator's thread caches (`thread_caches`)
//! beside.

mod doors;
mod guards;
mod idle;
mod metrics;
#[path = "../support/mod.rs"]
mod support;
mod thread_caches;

use std::time::Duration;

use serde_json::{json, Value};
use support::serve::Serve;
use support::{chromium_processes, ref_on_line, wait_until};
use testkit::TestSite;

/// The active tab's URLs as `browser_tabs list` reports them.
fn tab_urls(result: &Value) -> Vec<String> {
    result["structuredContent"]["tabs"]
        .as_array()
        .unwrap_or_else(|| panic!("no tabs in {result}"))
        .iter()
        .map(|t| t["url"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn two_mcp_clients_over_http_each_see_only_their_own_tabs_and_cookies() {
    let site = TestSite::start().await;
    let serve = Serve::start("", &[]).await;
    let (mut a, mut b) = (serve.mcp_client(), serve.mcp_client());
    assert_eq!(a.initialize().await.status, 200);
    assert_eq!(b.initialize().await.status, 200);
    assert_ne!(a.session, b.session);

    let (nav_a, nav_b) = tokio::join!(
        a.call("browser_navigate", json!({"url": site.url("/index.html")})),
        b.call("browser_navigate", json!({"url": site.url("/form.html")})),
    );
    assert_eq!(nav_a["isError"], false, "{nav_a}");
    assert_eq!(nav_b["isError"], false, "{nav_b}");
    let set = a
        .call(
            "browser_evaluate",
            json!({"expression": "document.cookie = 'owner=a; path=/'; document.cookie"}),
        )
        .await;
    assert_eq!(set["structuredContent"]["value"], "owner=a", "{set}");
    let opened = a
        .call(
            "browser_tabs",
            json!({"action": "new", "url": site.url("/article.html")}),
        )
        .await;
    assert_eq!(opened["isError"], false, "{opened}");

    let tabs_a = tab_urls(&a.call("browser_tabs", json!({"action": "list"})).await);
    let tabs_b = tab_urls(&b.call("browser_tabs", json!({"action": "list"})).await);
    assert_eq!(tabs_a.len(), 2, "{tabs_a:?}");
    assert_eq!(tabs_b, vec![site.url("/form.html")]);
    let cookie_b = b
        .call("browser_evaluate", json!({"expression": "document.cookie"}))
        .await;
    assert_eq!(cookie_b["structuredContent"]["value"], "", "{cookie_b}");

    // Ending one MCP session leaves the other working.
    assert_eq!(a.end().await, 204);
    let snap_b = b.call("browser_snapshot", json!({})).await;
    assert_eq!(snap_b["isError"], false, "{snap_b}");
}

#[tokio::test]
async fn a_websocket_client_runs_navigate_snapshot_click_through_the_envelope() {
    let site = TestSite::start().await;
    let serve = Serve::start("", &[]).await;
    let mut ws = serve.ws().await;
    let ack = ws.hello(&serve.token).await;
    assert_eq!(ack["type"], "ack", "{ack}");
    assert_eq!(ack["protocol_version"], 1);
    assert!(ack["session"].as_str().unwrap().starts_with("s-"), "{ack}");
    let tools: Vec<&str> = ack["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(tools.contains(&"browser_click"), "{tools:?}");
    let started = ws.next().await.unwrap();
    assert_eq!(started["type"], "event");
    assert_eq!(started["event"], "session_started");
    assert_eq!(started["session"], ack["session"]);

    let nav = ws
        .call("1", "browser_navigate", json!({"url": site.url("/index.html")}))
        .await;
    assert_eq!(nav["result"]["title"], "cdpilot test home", "{nav}");
    assert!(nav["result"]["text"].is_string(), "{nav}");
    let text = ws.snapshot("2").await;
    let button = ref_on_line(&text, "button \"Trusted click\"");
    let click = ws.call("3", "browser_click", json!({"ref": button})).await;
    assert!(click.get("error").is_none(), "{click}");
    let after = ws.snapshot("4").await;
    assert!(after.contains("clicked 1 trusted=true"), "{after}");
    // A tool error comes back as the contract's code, the socket still open.
    let stale = ws.call("5", "browser_click", json!({"ref": "e9999"})).await;
    assert!(stale["error"]["code"].is_string(), "{stale}");
    let shot = ws.call("6", "browser_screenshot", json!({})).await;
    assert_eq!(
        shot["result"]["images"][0]["mime"], "image/png",
        "{}",
        shot["result"]["text"]
    );
}

#[tokio::test]
async fn a_cancelled_websocket_request_gets_its_cancel_response_and_nothing_after() {
    let site = TestSite::start().await;
    let serve = Serve::start("", &[]).await;
    let mut ws = serve.ws().await;
    ws.open(&serve.token).await;
    ws.call("nav", "browser_navigate", json!({"url": site.url("/index.html")}))
        .await;

    // Two overlapping requests, each with its own budget: the cancelled
    // one stops, the other still runs to its own end.
    ws.send(
        json!({"type": "request", "id": "spin", "tool": "browser_evaluate",
        "arguments": {"expression": "while(true){}"}, "timeout_ms": 20000}),
    )
    .await;
    ws.send(json!({"type": "request", "id": "wait", "tool": "browser_wait",
        "arguments": {"time_ms": 300}}))
        .await;
    ws.send(json!({"type": "cancel", "id": "spin"})).await;
    ws.send(json!({"type": "cancel", "id": "never-sent"})).await;
    let mut answers = Vec::new();
    while answers.len() < 2 {
        let message = ws.next().await.expect("socket open");
        assert_eq!(message["type"], "response", "{message}");
        answers.push(message);
    }
    let spin = answers.iter().find(|m| m["id"] == "spin").expect("spin answered");
    assert_eq!(spin["error"]["code"], "canceled", "{spin}");
    let wait = answers.iter().find(|m| m["id"] == "wait").expect("wait answered");
    assert!(wait.get("error").is_none(), "{wait}");

    // The page is usable again (the script was terminated), and the next
    // message is that answer: no late response for "spin".
    let eval = ws
        .call("after", "browser_evaluate", json!({"expression": "1 + 1"}))
        .await;
    assert_eq!(eval["result"]["value"], 2, "{eval}");
}

#[tokio::test]
async fn malformed_websocket_messages_get_protocol_errors_and_the_connection_survives() {
    let serve = Serve::start("", &[]).await;
    let mut ws = serve.ws().await;
    // Anything but hello first is refused; the connection stays.
    ws.send(
        json!({"type": "request", "id": "early", "tool": "browser_tabs", "arguments": {"action": "list"}}),
    )
    .await;
    let early = ws.next().await.unwrap();
    assert_eq!(early["type"], "error", "{early}");
    assert_eq!(early["id"], "early", "{early}");
    ws.open(&serve.token).await;

    ws.send_text("this is not json").await;
    let not_json = ws.next().await.unwrap();
    assert_eq!(not_json["type"], "error", "{not_json}");
    assert_eq!(not_json["id"], Value::Null, "{not_json}");
    assert_eq!(not_json["error"]["code"], "invalid_argument", "{not_json}");

    ws.send(json!({"type": "teleport", "id": "t1"})).await;
    let unknown = ws.next().await.unwrap();
    assert_eq!(unknown["type"], "error", "{unknown}");
    assert_eq!(unknown["id"], "t1", "{unknown}");

    ws.send(json!({"type": "request", "id": "r1"})).await;
    let missing = ws.next().await.unwrap();
    assert_eq!(missing["type"], "error", "{missing}");
    assert_eq!(missing["id"], "r1", "{missing}");
    assert!(
        missing["error"]["message"].as_str().unwrap().contains("tool"),
        "{missing}"
    );

    let unknown_tool = ws.call("r2", "browser_teleport", json!({})).await;
    assert_eq!(
        unknown_tool["error"]["code"], "invalid_argument",
        "{unknown_tool}"
    );

    let tabs = ws.call("r3", "browser_tabs", json!({"action": "list"})).await;
    assert!(tabs["result"]["tabs"].is_array(), "{tabs}");
}

#[tokio::test]
async fn a_websocket_message_over_16_mib_closes_the_connection_with_1009() {
    let serve = Serve::start("", &[]).await;
    let mut ws = serve.ws().await;
    ws.open(&serve.token).await;
    let huge = format!(
        "{{\"type\":\"request\",\"id\":\"big\",\"tool\":\"browser_evaluate\",\"arguments\":{{\"expression\":\"'{}'\"}}}}",
        "x".repeat(17 << 20)
    );
    let _ = futures_util::SinkExt::send(
        &mut ws.socket,
        tokio_tungstenite::tungstenite::Message::text(huge),
    )
    .await;
    assert_eq!(ws.close_code().await, Some(1009));
    // Nothing else is affected.
    let mut other = serve.ws().await;
    other.open(&serve.token).await;
}

#[tokio::test]
async fn sessions_past_max_sessions_get_a_clear_error() {
    let serve = Serve::start("[serve]\nmax_sessions = 1\n", &[]).await;
    let mut first = serve.ws().await;
    first.open(&serve.token).await;
    let mut second = serve.ws().await;
    let reject = second.hello(&serve.token).await;
    assert_eq!(reject["reason"], "too_many_sessions", "{reject}");
    assert!(
        reject["message"].as_str().unwrap().contains("max_sessions"),
        "{reject}"
    );
    let mut mcp = serve.mcp_client();
    let refused = mcp.initialize().await;
    assert_eq!(refused.status, 503, "{refused:?}");
    assert!(refused.body.contains("too_many_sessions"), "{refused:?}");

    // A session that ends frees its place.
    first.socket.close(None).await.unwrap();
    let mut third = serve.ws().await;
    let mut answer = third.hello(&serve.token).await;
    // The server may still be ending the first session: try until it has.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while answer["type"] == "reject" && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        third = serve.ws().await;
        answer = third.hello(&serve.token).await;
    }
    assert_eq!(answer["type"], "ack", "{answer}");
}

#[tokio::test]
async fn sigterm_with_sessions_open_exits_0_and_leaves_no_chromium() {
    let site = TestSite::start().await;
    let mut serve = Serve::start("", &[]).await;
    let mut mcp = serve.mcp_client();
    mcp.initialize().await;
    let nav = mcp
        .call("browser_navigate", json!({"url": site.url("/index.html")}))
        .await;
    assert_eq!(nav["isError"], false, "{nav}");
    let mut ws = serve.ws().await;
    ws.open(&serve.token).await;
    ws.call("nav", "browser_navigate", json!({"url": site.url("/form.html")}))
        .await;
    // A call in flight at the signal is cancelled, not waited for.
    ws.send(
        json!({"type": "request", "id": "spin", "tool": "browser_wait", "arguments": {"time_ms": 25000}}),
    )
    .await;
    assert!(
        !chromium_processes(serve.tmp.path()).is_empty(),
        "no Chromium found"
    );

    let status = serve.terminate().await;
    assert!(status.success(), "exit status {status}");
    let mut ends = 0;
    while let Some(message) = ws.next_within(Duration::from_secs(5)).await.flatten() {
        ends += usize::from(message["event"] == "session_ended");
        assert_ne!(
            message["id"], "spin",
            "the cancelled call answered late: {message}"
        );
    }
    assert_eq!(ends, 1, "session_ended said once");
    let gone = wait_until(Duration::from_secs(10), || {
        chromium_processes(serve.tmp.path()).is_empty()
    })
    .await;
    assert!(
        gone,
        "Chromium left behind: {:?}",
        chromium_processes(serve.tmp.path())
    );
}

#[tokio::test]
async fn a_websocket_that_never_sends_hello_is_closed() {
    let serve = Serve::start("", &[]).await;
    let mut silent = serve.ws().await;
    // Closed with 1008 (policy) after the 10 s hello timeout.
    assert_eq!(silent.close_code().await, Some(1008));
}
