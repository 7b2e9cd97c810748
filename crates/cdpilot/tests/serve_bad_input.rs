//! Bad input to `cdpilot serve` (issue 24), each bounded without another
//! session noticing: a client that sends calls faster than they are served
//! (its session's line: a few run, a few wait in order, the rest are `busy`
//! at once), a client that says hello and never calls (its session ends
//! at the idle timeout and gives its slot back), and a session whose page
//! never finishes loading or never stops running a script (no other
//! session's call waits for it). Asserted by order and events, never by
//! time.

mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use server::serve::turns::{RUNNING, WAITING};
use support::serve::{Client, Serve, Ws};
use testkit::TestSite;

/// The next response on `ws` (events skipped).
async fn response(ws: &mut Ws) -> Value {
    loop {
        let message = ws.next().await.expect("socket open");
        if message["type"] == "response" {
            return message;
        }
        assert_eq!(message["type"], "event", "{message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_sent_faster_than_served_wait_in_line_in_order_the_rest_are_busy_at_once_and_another_session_is_served(
) {
    let site = TestSite::start().await;
    let serve = Serve::start("", &[]).await;
    let url = site.url("index.html");
    let mut a = serve.ws().await;
    a.open(&serve.token).await;
    let nav = a.call("nav", "browser_navigate", json!({"url": url})).await;
    assert!(nav["result"].is_object(), "{nav}");
    let mut b = serve.ws().await;
    b.open(&serve.token).await;
    let nav = b.call("nav", "browser_navigate", json!({"url": url})).await;
    assert!(nav["result"].is_object(), "{nav}");

    // Twenty calls without waiting: the first RUNNING never finish on their
    // own (a promise that never settles), the rest record their turn in the
    // page and answer at once, when they get to run.
    let total = 20;
    assert!(RUNNING + WAITING < total);
    for i in 1..=total {
        let expression = if i <= RUNNING {
            "new Promise(() => {})".to_owned()
        } else {
            format!("(window.order = window.order || []).push({i}), {i}")
        };
        a.send(
            json!({"type": "request", "id": i.to_string(), "tool": "browser_evaluate",
            "arguments": {"expression": expression, "timeout_ms": 120_000}}),
        )
        .await;
    }
    // Those beyond the line are refused `busy` at once, in order, before
    // anything else is answered (nothing else can finish: every slot is
    // held by a call that never settles).
    for i in RUNNING + WAITING + 1..=total {
        let busy = response(&mut a).await;
        assert_eq!(busy["id"], i.to_string(), "{busy}");
        assert_eq!(busy["error"]["code"], "busy", "{busy}");
        let message = busy["error"]["message"].as_str().unwrap();
        assert!(message.contains("Wait for an answer"), "{message}");
    }

    // Another session is served meanwhile.
    let other = b
        .call("x", "browser_evaluate", json!({"expression": "6 * 7"}))
        .await;
    assert_eq!(other["result"]["value"], 42, "{other}");

    // One slot frees (the client cancels a call that never settles): the
    // waiting calls run one after another, first come first served.
    a.send(json!({"type": "cancel", "id": "1"})).await;
    let mut answered = Vec::new();
    let mut canceled = false;
    for _ in 0..=WAITING {
        let message = response(&mut a).await;
        let id = message["id"].as_str().unwrap().to_owned();
        if id == "1" {
            assert_eq!(message["error"]["code"], "canceled", "{message}");
            canceled = true;
            continue;
        }
        let i: usize = id.parse().unwrap();
        assert_eq!(message["result"]["value"], i, "{message}");
        answered.push(i);
    }
    assert!(canceled, "the canceled call was answered");
    let expected: Vec<usize> = (RUNNING + 1..=RUNNING + WAITING).collect();
    assert_eq!(
        answered, expected,
        "the waiting calls were answered in the order sent"
    );
    for i in 2..=RUNNING {
        a.send(json!({"type": "cancel", "id": i.to_string()})).await;
    }
    for _ in 2..=RUNNING {
        let canceled = response(&mut a).await;
        assert_eq!(canceled["error"]["code"], "canceled", "{canceled}");
    }
    let order = a
        .call("order", "browser_evaluate", json!({"expression": "window.order"}))
        .await;
    assert_eq!(order["result"]["value"], json!(expected), "{order}");
}

#[tokio::test]
async fn a_client_that_says_hello_and_never_calls_gives_its_seat_back_at_the_idle_timeout() {
    let site = TestSite::start().await;
    let serve = Serve::start("[session]\nidle_timeout_s = 4\n[serve]\nmax_sessions = 1\n", &[]).await;
    let mut idle = Client::open(&serve).await;
    // Its seat is taken: the server is full.
    let mut other = serve.ws().await;
    let refused = other.hello(&serve.token).await;
    assert_eq!(refused["reason"], "too_many_sessions", "{refused}");

    // It never calls: at the idle timeout its session ends (said as for any
    // idle session) and its seat is free for another client.
    let ended = idle.event("session_ended").await;
    assert_eq!(ended["data"]["reason"], "idle", "{ended}");
    let mut other = Client::open(&serve).await;
    let nav = other
        .ok("1", "browser_navigate", json!({"url": site.url("index.html")}))
        .await;
    assert!(nav["url"].is_string(), "{nav}");

    // Its id stays usable: a call takes a seat again, `busy` while the
    // server is full, served once the other client has gone.
    let busy = idle
        .call("1", "browser_evaluate", json!({"expression": "1 + 1"}))
        .await;
    assert_eq!(busy["error"]["code"], "busy", "{busy}");
    drop(other);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut n = 1;
    let served = loop {
        n += 1;
        let answer = idle
            .call(&n.to_string(), "browser_evaluate", json!({"expression": "1 + 1"}))
            .await;
        if answer["error"]["code"] != "busy" || Instant::now() > deadline {
            break answer;
        }
        // (No event tells a client that another one left.)
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(served["result"]["value"], 2, "{served}");
}

/// What the dashboard says of session `id`: its calls running now.
async fn running(serve: &Serve, id: &str) -> Option<u64> {
    let state = serve.get("/v1/dashboard/state").await;
    let state: Value = serde_json::from_str(&state).ok()?;
    let sessions = state["sessions"].as_array()?;
    let session = sessions.iter().find(|s| s["id"] == id)?;
    session["running"].as_u64()
}

/// Issue 24: one session's slow page never delays another's call. Session
/// A navigates to a document that never ends (its load never comes) and
/// session C runs a script that never yields; while both calls still run,
/// session B opens (its browser context, its tab) and navigates, reads
/// and clicks. Asserted by events: A's and C's calls are still running
/// when B's last call has answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_whose_page_never_loads_or_never_yields_delays_no_other_sessions_calls() {
    let site = TestSite::start().await;
    let serve = Serve::start("", &[]).await;
    let mut a = serve.ws().await;
    let a_id = a.open(&serve.token).await;
    a.send(
        json!({"type": "request", "id": "never", "tool": "browser_navigate",
        "arguments": {"url": site.url("never"), "timeout_ms": 120_000}}),
    )
    .await;
    let mut c = serve.ws().await;
    let c_id = c.open(&serve.token).await;
    let nav = c
        .call("nav", "browser_navigate", json!({"url": site.url("index.html")}))
        .await;
    assert!(nav["result"].is_object(), "{nav}");
    c.send(
        json!({"type": "request", "id": "spin", "tool": "browser_evaluate",
        "arguments": {"expression": "while (true) {}", "timeout_ms": 120_000}}),
    )
    .await;
    let both_running = || async {
        site.a_received("/never")
            && running(&serve, &a_id).await == Some(1)
            && running(&serve, &c_id).await == Some(1)
    };
    assert!(
        support::eventually(Duration::from_secs(60), both_running).await,
        "A's load or C's script never started"
    );

    let mut b = serve.ws().await;
    b.open(&serve.token).await;
    let nav = b
        .call("nav", "browser_navigate", json!({"url": site.url("index.html")}))
        .await;
    assert!(nav["result"].is_object(), "{nav}");
    let snap = b.snapshot("snap").await;
    let button = testkit::snapshot::find_ref(&snap, "button \"Trusted click\"").expect("the button's ref");
    let click = b.call("click", "browser_click", json!({"ref": button})).await;
    assert!(click["result"].is_object(), "{click}");

    assert_eq!(
        running(&serve, &a_id).await,
        Some(1),
        "A's navigate still waits for its load"
    );
    assert_eq!(running(&serve, &c_id).await, Some(1), "C's script still runs");
}
