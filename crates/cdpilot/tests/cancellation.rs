//! Cancellation as a real MCP client sends it (`notifications/cancelled`):
//! a long wait and a runaway script both stop, the session answers the next
//! call at once, and `cdpilot://metrics` counts what happened.

mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{spawn_cdpilot, text_of};
use testkit::TestSite;

/// The contract's scenario: the client gives up one second into the call.
const CANCEL_AFTER: Duration = Duration::from_secs(1);

async fn cancel_mid_call(client: &mut testkit::McpClient, tool: &str, args: Value) {
    let id = client
        .send_request("tools/call", json!({"name": tool, "arguments": args}))
        .await;
    tokio::time::sleep(CANCEL_AFTER).await;
    client
        .notify(
            "notifications/cancelled",
            json!({"requestId": id, "reason": "user gave up"}),
        )
        .await;
    let started = Instant::now();
    let next = client.call("browser_snapshot", json!({"max_elements": 5})).await;
    assert_eq!(next["isError"], false, "{next}");
    // Had the cancel not freed the session, the next call would wait out
    // what the cancelled one had left (19 s of its 20 s); anything well
    // short of that is "at once" (issue 8: no tighter wall-clock bound).
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the call after cancelling {tool} took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn cancelled_wait_and_evaluate_free_the_session_and_are_counted() {
    let site = TestSite::start().await;
    let (mut client, _tmp) = spawn_cdpilot();
    client.initialize().await;
    client
        .call("browser_navigate", json!({"url": site.url("/")}))
        .await;

    cancel_mid_call(&mut client, "browser_wait", json!({"time_ms": 20000})).await;
    cancel_mid_call(
        &mut client,
        "browser_evaluate",
        json!({"expression": "while(true){}", "timeout_ms": 20000}),
    )
    .await;

    // The tab still takes input after the terminated script.
    let snap = text_of(&client.call("browser_snapshot", json!({})).await);
    let button = support::ref_on_line(&snap, "button \"Trusted click\"");
    let click = client.call("browser_click", json!({"ref": button})).await;
    assert_eq!(click["isError"], false, "{click}");

    let read = client
        .request("resources/read", json!({"uri": "cdpilot://metrics"}))
        .await
        .expect("metrics");
    let metrics: Value = serde_json::from_str(read["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(metrics["cancellations"], 2, "{metrics}");
    assert_eq!(metrics["terminate_execution"], 1, "{metrics}");
    assert_eq!(
        metrics["tools"]["browser_wait"]["errors"]["canceled"], 1,
        "{metrics}"
    );
    assert_eq!(
        metrics["tools"]["browser_evaluate"]["errors"]["canceled"], 1,
        "{metrics}"
    );
    assert_eq!(metrics["tools"]["browser_click"]["ok"], 1, "{metrics}");
    assert!(
        metrics["tools"]["browser_snapshot"]["calls"].as_u64().unwrap() >= 3,
        "{metrics}"
    );
}

#[tokio::test]
async fn the_metrics_resource_is_listed() {
    let (mut client, _tmp) = spawn_cdpilot();
    let init = client.initialize().await;
    assert!(init["capabilities"]["resources"].is_object(), "{init}");
    let list = client.request("resources/list", json!({})).await.expect("list");
    assert_eq!(list["resources"][0]["uri"], "cdpilot://metrics", "{list}");
    let missing = client
        .request("resources/read", json!({"uri": "cdpilot://nope"}))
        .await;
    assert!(missing.is_err(), "{missing:?}");
}
