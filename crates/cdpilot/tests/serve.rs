//! `cdpilot serve` end to end (issue 10), over real HTTP and WebSockets on
//! loopback against real Chromium: isolated sessions over MCP's streamable
//! HTTP, the WebSocket action API (PROTOCOL.md), the guards, and shutdown.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::serve::Serve;
use support::{chromium_processes, ref_on_line, text_of, wait_until};
use testkit::http_mcp::http;
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
    let snap = ws.call("2", "browser_snapshot", json!({})).await;
    let text = snap["result"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{snap}"));
    let button = ref_on_line(text, "button \"Trusted click\"");
    let click = ws.call("3", "browser_click", json!({"ref": button})).await;
    assert!(click.get("error").is_none(), "{click}");
    let after = ws.call("4", "browser_snapshot", json!({})).await;
    assert!(
        after["result"]["text"]
            .as_str()
            .unwrap()
            .contains("clicked 1 trusted=true"),
        "{after}"
    );
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
async fn bad_tokens_are_rejected_on_every_endpoint() {
    let serve = Serve::start("", &["--token", "right-token"]).await;
    for (path, method) in [("/mcp", "POST"), ("/v1/schema", "GET"), ("/v1/ws", "GET")] {
        let reply = http(
            &serve.authority,
            method,
            path,
            &[("Authorization", "Bearer wrong-token")],
            "",
        )
        .await;
        assert_eq!(reply.status, 401, "{path}: {reply:?}");
    }
    let missing = http(&serve.authority, "GET", "/v1/schema", &[], "").await;
    assert_eq!(missing.status, 401, "{missing:?}");
    let schema = http(
        &serve.authority,
        "GET",
        "/v1/schema",
        &[("Authorization", "Bearer right-token")],
        "",
    )
    .await;
    assert_eq!(schema.status, 200, "{schema:?}");
    let schema: Value = serde_json::from_str(&schema.body).unwrap();
    assert!(schema["client_to_server"]["oneOf"].is_array(), "{schema}");

    // The WebSocket upgrade with a wrong header is refused before the upgrade…
    assert!(serve.ws_with_header(Some("wrong-token")).await.is_err());
    // …and a wrong token in hello is a reject, then the socket closes.
    let mut ws = serve.ws().await;
    let reject = ws.hello("wrong-token").await;
    assert_eq!(reject["type"], "reject", "{reject}");
    assert_eq!(reject["reason"], "bad_token", "{reject}");
    assert!(ws.next().await.is_none(), "socket left open after a reject");
    // A right header needs no token in hello.
    let mut ws = serve.ws_with_header(Some("right-token")).await.unwrap();
    ws.send(json!({"type": "hello", "protocol_version": 1})).await;
    assert_eq!(ws.next().await.unwrap()["type"], "ack");

    // DNS rebinding: a page on another name that resolves here is refused.
    let rebound = http(
        &serve.authority,
        "GET",
        "/v1/schema",
        &[("Host", "evil.example"), ("Authorization", "Bearer right-token")],
        "",
    )
    .await;
    assert_eq!(rebound.status, 403, "{rebound:?}");
    let origin = http(
        &serve.authority,
        "GET",
        "/v1/schema",
        &[
            ("Origin", "http://evil.example"),
            ("Authorization", "Bearer right-token"),
        ],
        "",
    )
    .await;
    assert_eq!(origin.status, 403, "{origin:?}");
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
    let _ = text_of;
}

/// The samples of a Prometheus text exposition, `name{labels}` → value;
/// panics on a line that is not the format.
fn prometheus_samples(text: &str) -> std::collections::HashMap<String, f64> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|line| {
            let (series, value) = line
                .rsplit_once(' ')
                .unwrap_or_else(|| panic!("not a sample: {line}"));
            let value: f64 = value.parse().unwrap_or_else(|_| panic!("bad value: {line}"));
            (series.to_owned(), value)
        })
        .collect()
}

#[tokio::test]
async fn metrics_parse_as_prometheus_text_and_count_the_calls_just_made() {
    let serve = Serve::start("", &["--token", "t"]).await;
    let mut ws = serve.ws().await;
    ws.open("t").await;
    for id in ["1", "2"] {
        ws.call(id, "browser_tabs", json!({"action": "list"})).await;
    }
    ws.call("3", "browser_click", json!({"ref": "not a ref"})).await;
    let mut mcp = serve.mcp_client();
    mcp.initialize().await;
    mcp.call("browser_tabs", json!({"action": "list"})).await;

    let auth = [("Authorization", "Bearer t")];
    let reply = http(&serve.authority, "GET", "/metrics", &auth, "").await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(
        reply.header("content-type").unwrap().starts_with("text/plain"),
        "{reply:?}"
    );
    let samples = prometheus_samples(&reply.body);
    assert_eq!(
        samples[r#"cdpilot_calls_total{outcome="ok",tool="browser_tabs"}"#], 3.0,
        "{}",
        reply.body
    );
    assert_eq!(
        samples[r#"cdpilot_calls_total{outcome="invalid_argument",tool="browser_click"}"#], 1.0,
        "{}",
        reply.body
    );
    assert_eq!(
        samples[r#"cdpilot_call_duration_seconds_count{tool="browser_tabs"}"#],
        3.0
    );
    assert_eq!(samples["cdpilot_sessions_open"], 2.0, "{}", reply.body);
    assert_eq!(samples["cdpilot_sessions_started_total"], 2.0, "{}", reply.body);

    let health = http(&serve.authority, "GET", "/healthz", &auth, "").await;
    assert_eq!((health.status, health.body.as_str()), (200, "ok\n"));
}

/// Issue 25: MCP over HTTP's calls go through the lease's one `call`,
/// which links the lease's stop token (a watcher task of its own did it
/// before): Stop all ends a call in flight at once.
#[tokio::test]
async fn stop_all_ends_an_mcp_over_http_call_in_flight() {
    let serve = Serve::start("", &["--token", "t"]).await;
    let mut mcp = serve.mcp_client();
    mcp.initialize().await;
    let started = std::time::Instant::now();
    let waiting = tokio::spawn(async move { mcp.call("browser_wait", json!({"time_ms": 20000})).await });
    let auth = [("Authorization", "Bearer t")];
    // Stop all once the session is listed as running its call (no event
    // says so: the dashboard's state is read until it does).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let state = http(&serve.authority, "GET", "/v1/dashboard/state", &auth, "").await;
        let state: Value = serde_json::from_str(&state.body).unwrap_or_default();
        if state["sessions"][0]["running"] == 1 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the call never ran: {state}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let stopped = http(
        &serve.authority,
        "POST",
        "/v1/dashboard/stop",
        &auth,
        r#"{"all": true}"#,
    )
    .await;
    assert_eq!(stopped.status, 200, "{stopped:?}");
    let result = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("the call ended soon after Stop")
        .unwrap();
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        result["structuredContent"]["error"]["code"], "canceled",
        "{result}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(19),
        "{:?}",
        started.elapsed()
    );
}

/// Issue 25: the dashboard's calls (a dialog answered from it) went
/// through the dispatch but never reached `/metrics`; every serve call is
/// now counted once, by the engine, whichever front end made it.
#[tokio::test]
async fn a_call_made_from_the_dashboard_shows_in_metrics() {
    let serve = Serve::start("", &["--token", "t"]).await;
    let mut ws = serve.ws().await;
    let session = ws.open("t").await;
    let auth = [("Authorization", "Bearer t")];
    let count = |body: &str, series: &str| prometheus_samples(body).get(series).copied();
    let before = http(&serve.authority, "GET", "/metrics", &auth, "").await;
    assert_eq!(
        count(
            &before.body,
            r#"cdpilot_call_duration_seconds_count{tool="browser_dialog"}"#
        ),
        None,
        "{}",
        before.body
    );

    // No dialog is open: the dashboard's answer is the dispatch's error.
    let body = json!({"session": session, "action": "accept"}).to_string();
    let answered = http(&serve.authority, "POST", "/v1/dashboard/dialog", &auth, &body).await;
    assert_eq!(answered.status, 409, "{answered:?}");
    let answer: Value = serde_json::from_str(&answered.body).unwrap();
    let code = answer["error"]["code"].as_str().expect("an error code");

    let after = http(&serve.authority, "GET", "/metrics", &auth, "").await;
    let series = format!(r#"cdpilot_calls_total{{outcome="{code}",tool="browser_dialog"}}"#);
    assert_eq!(count(&after.body, &series), Some(1.0), "{}", after.body);
    assert_eq!(
        count(
            &after.body,
            r#"cdpilot_call_duration_seconds_count{tool="browser_dialog"}"#
        ),
        Some(1.0),
        "counted once: {}",
        after.body
    );
}

#[tokio::test]
async fn a_websocket_that_never_sends_hello_is_closed() {
    let serve = Serve::start("", &[]).await;
    let mut silent = serve.ws().await;
    // Closed with 1008 (policy) after the 10 s hello timeout.
    assert_eq!(silent.close_code().await, Some(1008));
}

/// Sends a request and answers its `ask` event with `allow` (issue 9);
/// returns the ask event's data and the response.
async fn call_answering(
    ws: &mut support::serve::Ws,
    id: &str,
    tool: &str,
    arguments: Value,
    allow: &str,
) -> (Value, Value) {
    ws.send(json!({"type": "request", "id": id, "tool": tool, "arguments": arguments}))
        .await;
    let mut asked = Value::Null;
    loop {
        let message = ws.next().await.expect("socket open");
        if message["type"] == "event" && message["event"] == "ask" {
            asked = message["data"].clone();
            ws.send(json!({"type": "decide", "id": asked["id"], "allow": allow}))
                .await;
            continue;
        }
        if message["type"] == "response" && message["id"] == id {
            return (asked, message);
        }
    }
}

/// Issue 9: over the WebSocket API an `ask` rule is an `ask` event answered
/// by `decide`, including a redirect hop held at the request stage; a
/// client that did not say `ask: true` is refused with the message.
#[tokio::test]
async fn an_ask_rule_asks_a_websocket_client_through_an_event_and_decide() {
    let site = TestSite::start().await;
    let serve = Serve::start("", &["--ask", "http://localhost:*/*"]).await;
    let mut ws = serve.ws().await;
    ws.send(json!({"type": "hello", "protocol_version": 1, "token": serve.token, "ask": true}))
        .await;
    let ack = ws.next().await.unwrap();
    assert_eq!(ack["type"], "ack", "{ack}");
    let nav = ws
        .call("1", "browser_navigate", json!({"url": site.url("/index.html")}))
        .await;
    assert!(nav.get("error").is_none(), "{nav}");

    // A redirect hop to the asked origin, held paused while asking; refused.
    let hop = site.url_b("/index.html");
    let via = site.url(&format!("/redirect?to={hop}"));
    let (asked, refused) =
        call_answering(&mut ws, "2", "browser_navigate", json!({"url": via}), "deny").await;
    assert_eq!(asked["url"], hop, "{asked}");
    assert_eq!(refused["error"]["code"], "permission_denied", "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("refused by the user"), "{message}");
    assert!(site.received_by_b().is_empty(), "{:?}", site.received_by_b());

    // Always: allowed, and the origin is not asked again.
    let (asked, allowed) = call_answering(
        &mut ws,
        "3",
        "browser_navigate",
        json!({"url": site.url_b("/index.html")}),
        "always",
    )
    .await;
    assert!(asked["id"].is_string(), "not asked: {allowed}");
    assert!(allowed.get("error").is_none(), "{allowed}");
    let again = ws
        .call(
            "4",
            "browser_navigate",
            json!({"url": site.url_b("/index.html?again")}),
        )
        .await;
    assert!(again.get("error").is_none(), "{again}");

    // A decide nobody waits for is a protocol error.
    ws.send(json!({"type": "decide", "id": "nope", "allow": "once"}))
        .await;
    let error = ws.next().await.unwrap();
    assert_eq!(error["type"], "error", "{error}");
    assert_eq!(error["id"], "nope", "{error}");

    // A client that did not say it can ask.
    let mut mute = serve.ws().await;
    mute.open(&serve.token).await;
    let refused = mute
        .call("1", "browser_navigate", json!({"url": site.url_b("/index.html")}))
        .await;
    assert_eq!(refused["error"]["code"], "permission_denied", "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("an ask rule needs a client that can ask"),
        "{message}"
    );
}

/// Issue 20, finding 9: raw CDP without a fence reaches every session's
/// targets and cookies, so `cdpilot serve` refuses `[tools] cdp =
/// "unrestricted"` at start-up, naming the key (stdio may use it).
#[tokio::test]
async fn serve_refuses_an_unrestricted_browser_cdp_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("cdpilot.toml");
    std::fs::write(&config, "[tools]\ncdp = \"unrestricted\"\n").unwrap();
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&config)
        .env_remove("CDPILOT_SERVE_TOKEN")
        .stdin(std::process::Stdio::null())
        .output();
    let output = tokio::time::timeout(std::time::Duration::from_secs(30), output)
        .await
        .expect("serve exits at once")
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("tools.cdp = \"unrestricted\""), "{stderr}");
}

/// Issue 20, finding 8: serve's side channels carried a secret
/// unredacted. A secret with spaces, `&`, `"` and `\` typed into a GET form
/// (so it is URL-encoded in the tab's URL), echoed by a dialog, refused by
/// a rule and thrown in an error appears in no WebSocket message (results,
/// `navigated`, `dialog_opened`, `dialog_closed`, `permission_denied`), in
/// no `/v1/dashboard/state` and in no log line, in any spelling.
#[tokio::test]
async fn a_secret_appears_on_no_side_channel_of_serve() {
    use base64::Engine as _;
    const TRICKY: &str = "pa ss&w\"o\\rd 42";
    std::env::set_var("CDPILOT_TEST_SERVE_SECRET", TRICKY);
    std::env::set_var("CDPILOT_LOG", "info");
    let site = TestSite::start().await;
    let config = "[secrets]\nPW = { env = \"CDPILOT_TEST_SERVE_SECRET\" }\n[[policy.rules]]\npattern = \"http://127.0.0.1:*/denied*\"\naction = \"deny\"\n";
    let serve = Serve::start(config, &[]).await;
    let mut ws = serve.ws().await;
    ws.open(&serve.token).await;
    let mut heard: Vec<Value> = Vec::new();
    let mut n = 0;
    let mut call = |tool: &'static str, arguments: Value| {
        n += 1;
        (format!("r{n}"), tool, arguments)
    };
    let form = "document.body.insertAdjacentHTML('beforeend', `<form action='/index.html' method=get><input id=q name=q aria-label=Query></form>`); 1";
    let steps = [
        call("browser_navigate", json!({"url": site.url("/index.html")})),
        call("browser_evaluate", json!({"expression": form})),
        call(
            "browser_type",
            json!({"selector": "#q", "text": "{{secret:PW}}", "submit": true}),
        ),
        call("browser_wait", json!({"url": "**/index.html?q=*"})),
        call(
            "browser_evaluate",
            json!({"expression": "setTimeout(() => alert('v=' + new URLSearchParams(location.search).get('q')), 0); 1"}),
        ),
        call("browser_snapshot", json!({})),
    ];
    for (id, tool, arguments) in steps {
        ws.send(json!({"type": "request", "id": id, "tool": tool, "arguments": arguments}))
            .await;
        loop {
            let message = ws.next().await.expect("socket open");
            heard.push(message.clone());
            if message["type"] == "response" && message["id"] == id {
                break;
            }
        }
    }
    let state = http(
        &serve.authority,
        "GET",
        "/v1/dashboard/state",
        &[("Authorization", &format!("Bearer {}", serve.token))],
        "",
    )
    .await;
    assert_eq!(state.status, 200, "{state:?}");
    assert!(
        state.body.contains("{{secret:PW}}"),
        "the state shows the tab's URL: {}",
        state.body
    );
    let more = [
        ("d1", "browser_dialog", json!({"action": "accept"})),
        (
            "d2",
            "browser_evaluate",
            json!({"expression": "location.href = '/denied?' + location.search.slice(1); 1"}),
        ),
        (
            "d3",
            "browser_evaluate",
            json!({"expression": "throw new Error(new URLSearchParams(location.search).get('q'))"}),
        ),
    ];
    for (id, tool, arguments) in more {
        ws.send(json!({"type": "request", "id": id, "tool": tool, "arguments": arguments}))
            .await;
        loop {
            let message = ws.next().await.expect("socket open");
            heard.push(message.clone());
            if message["type"] == "response" && message["id"] == id {
                break;
            }
        }
    }
    let names: Vec<&str> = heard.iter().filter_map(|m| m["event"].as_str()).collect();
    for event in ["navigated", "dialog_opened", "dialog_closed"] {
        assert!(names.contains(&event), "{event} was heard: {names:?}");
    }
    let log = serve.log.lock().unwrap().join("\n");
    assert!(
        log.contains("{{secret:PW}}"),
        "the log names the blocked URL: {log}"
    );

    let pct = |keep: &dyn Fn(u8) -> bool, plus: bool| -> String {
        TRICKY
            .bytes()
            .map(|b| match b {
                b' ' if plus => "+".to_owned(),
                b if keep(b) => (b as char).to_string(),
                b => format!("%{b:02X}"),
            })
            .collect()
    };
    let json_of = |s: &str| serde_json::to_string(s).unwrap().trim_matches('"').to_owned();
    let mut spellings = vec![
        TRICKY.to_owned(),
        pct(&|b| b.is_ascii_alphanumeric() || b"*-._".contains(&b), true),
        pct(&|b| b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b), false),
        pct(&|b| b > 0x20 && b < 0x7f && !b"%&=+#?/;:@$,\\".contains(&b), true),
        base64::engine::general_purpose::STANDARD.encode(TRICKY),
        TRICKY.replace('&', "&amp;").replace('"', "&quot;"),
    ];
    for s in spellings.clone() {
        spellings.push(json_of(&s));
        spellings.push(json_of(&json_of(&s)));
        spellings.push(format!("{s:?}").trim_matches('"').to_owned());
    }
    let channels = [
        (
            "websocket",
            heard.iter().map(Value::to_string).collect::<Vec<_>>().join("\n"),
        ),
        ("dashboard state", state.body.clone()),
        ("log", log),
    ];
    for (channel, text) in &channels {
        for spelling in &spellings {
            assert!(
                !text.contains(spelling.as_str()),
                "{channel} carries {spelling}:\n{text}"
            );
        }
    }
}
