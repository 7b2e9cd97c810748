//! What `cdpilot serve` counts: `/metrics` as Prometheus text, the calls
//! made over MCP, the WebSocket API and the dashboard counted once; stop
//! all ending a call in flight.

use std::time::Duration;

use serde_json::{json, Value};
use testkit::http_mcp::http;

use crate::support::serve::Serve;

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
