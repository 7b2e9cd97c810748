//! The connection's tests: routing, subscriptions (one session, its tree,
//! all), the events held, and a socket dropped mid-command.

use super::*;

#[tokio::test]
async fn a_dropped_socket_fails_every_pending_command_at_once() {
    let url = fake_peer::dropping_peer(3).await;
    let conn = Connection::connect(&url).await.unwrap();
    let browser = conn.browser();
    let started = Instant::now();
    let deadline = Instant::now() + std::time::Duration::from_secs(30);
    let calls = (0..3).map(|_| browser.send("Browser.getVersion", Value::Null, deadline));
    let results = futures_util::future::join_all(calls).await;
    for result in results {
        assert!(matches!(result, Err(CdpError::Disconnected)), "{result:?}");
    }
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "commands waited for their deadline"
    );
    assert!(conn.is_closed());
    // A command sent after the drop fails immediately too.
    let late = browser.send("Browser.getVersion", Value::Null, deadline).await;
    assert!(matches!(late, Err(CdpError::Disconnected)));
}

#[tokio::test]
async fn a_command_without_answer_times_out_and_leaves_no_entry() {
    let url = fake_peer::dropping_peer(usize::MAX).await;
    let conn = Connection::connect(&url).await.unwrap();
    let result = conn
        .browser()
        .send(
            "Browser.getVersion",
            Value::Null,
            Instant::now() + std::time::Duration::from_millis(50),
        )
        .await;
    assert!(matches!(result, Err(CdpError::Timeout { .. })), "{result:?}");
    assert!(conn.inner.pending.lock().unwrap().by_id.is_empty());
}

fn attached(on: &str, child: &str, kind: &str) -> String {
    let mut message = serde_json::json!({
        "method": "Target.attachedToTarget",
        "params": {"sessionId": child, "targetInfo": {"targetId": child, "type": kind}, "waitingForDebugger": false},
    });
    if !on.is_empty() {
        message["sessionId"] = on.into();
    }
    message.to_string()
}

fn detached(on: &str, child: &str) -> String {
    serde_json::json!({"method": "Target.detachedFromTarget", "sessionId": on, "params": {"sessionId": child}})
        .to_string()
}

/// A numbered event on a session.
#[derive(Deserialize)]
struct Numbered {
    n: u64,
}

impl EventKind for Numbered {
    const METHOD: &'static str = "Test.numbered";
}

fn numbered(on: &str, n: u64) -> String {
    serde_json::json!({"method": "Test.numbered", "sessionId": on, "params": {"n": n}}).to_string()
}

/// What a stream holds now: (session, method, number of a numbered event).
fn drain(stream: &mut EventStream) -> Vec<(String, String, Option<u64>)> {
    let mut seen = Vec::new();
    while let Ok(event) = stream.try_recv() {
        let n = event.decode::<Numbered>().map(|e| e.n);
        seen.push((event.session_id.clone(), event.method.clone(), n));
    }
    seen
}

/// The numbered events of `seen`: (session, number).
fn numbers(seen: &[(String, String, Option<u64>)]) -> Vec<(&str, u64)> {
    seen.iter()
        .filter_map(|(s, _, n)| n.map(|n| (s.as_str(), n)))
        .collect()
}

/// An event whose params are optional.
#[derive(Deserialize)]
struct Optional {
    #[serde(default)]
    n: Option<u64>,
}

impl EventKind for Optional {
    const METHOD: &'static str = "Test.optional";
}

#[test]
fn an_event_decodes_as_its_own_kind_only_with_or_without_params() {
    let with = Event::new("S", "Test.numbered", &serde_json::json!({"n": 7, "more": [1, 2]}));
    assert_eq!(with.decode::<Numbered>().map(|e| e.n), Some(7));
    assert_eq!(with.params(), r#"{"more":[1,2],"n":7}"#);
    assert!(with.is::<Numbered>() && !with.is::<Optional>());
    // Same shape, another method: not this kind.
    let other = Event::new("S", "Test.optional", &serde_json::json!({"n": 7}));
    assert!(other.decode::<Numbered>().is_none());
    assert_eq!(other.decode::<Optional>().and_then(|e| e.n), Some(7));
    // Without params: an event with none, so only a kind whose fields
    // all have defaults decodes.
    let bare = Event::new("S", "Test.optional", &Value::Null);
    assert_eq!(bare.params(), "{}");
    assert!(bare.decode::<Optional>().is_some_and(|e| e.n.is_none()));
    let bare = Event::new("S", "Test.numbered", &Value::Null);
    assert!(bare.decode::<Numbered>().is_none(), "n is required");
    // Params of the wrong shape decode as nothing, not a panic.
    let wrong = Event::new("S", "Test.numbered", &serde_json::json!({"n": "seven"}));
    assert!(wrong.decode::<Numbered>().is_none());
}

#[test]
fn the_events_held_are_counted_until_dropped_and_their_peak_kept() {
    // Process-wide counters other tests move too: only what a large
    // event alone decides is asserted.
    let big = "x".repeat(8 << 20);
    let event = Event::new("S", "Test.big", &serde_json::json!({ "text": big }));
    let held = held_events();
    assert!(held.now >= 1 && held.now_bytes >= 8 << 20, "{held:?}");
    drop(event);
    let after = held_events();
    assert!(after.now_bytes < 8 << 20, "given back when dropped: {after:?}");
    assert!(after.peak_bytes >= 8 << 20, "the peak stays: {after:?}");
}

#[tokio::test]
async fn events_from_the_wire_keep_their_params_as_text_until_decoded() {
    let script = vec![
        r#"{"method":"Test.optional","sessionId":"S"}"#.to_owned(),
        r#"{"method":"Test.optional","sessionId":"S","params":null}"#.to_owned(),
        r#"{"method":"Test.optional","sessionId":"S","params":{"n": 3, "text": "a\"b"}}"#.to_owned(),
    ];
    let url = fake_peer::scripted_peer(script).await;
    let conn = Connection::connect(&url).await.unwrap();
    let mut all = conn.events(None);
    conn.post_raw("", "Test.start", Value::Null).unwrap();
    let mut got = Vec::new();
    for _ in 0..3 {
        got.push(all.recv().await.expect("an event"));
    }
    assert_eq!(got[0].params(), "{}");
    assert_eq!(got[1].params(), "{}");
    // The text as Chrome sent it, spacing and escapes included.
    assert_eq!(got[2].params(), r#"{"n": 3, "text": "a\"b"}"#);
    let n: Vec<Option<u64>> = got
        .iter()
        .map(|e| e.decode::<Optional>().and_then(|e| e.n))
        .collect();
    assert_eq!(n, [None, None, Some(3)]);
}

// Issue 24: every tab's reader subscribed to all sessions' events, so
// with 16 tabs on one connection each event was queued 16 times.
#[tokio::test]
async fn a_tree_subscription_hears_its_session_and_those_beneath_it_and_no_other() {
    let script = vec![
        attached("", "A", "page"),
        attached("", "B", "page"),
        attached("A", "A1", "iframe"),
        attached("A1", "A11", "iframe"),
        attached("A11", "A11w", "worker"),
        attached("B", "B1", "iframe"),
        numbered("A", 1),
        numbered("A1", 2),
        numbered("A11w", 3),
        numbered("B", 4),
        numbered("B1", 5),
        // The middle frame goes before its worker: the worker stays in
        // the trees it was in.
        detached("A1", "A11"),
        numbered("A11w", 6),
        r#"{"method":"Test.end","params":{}}"#.to_owned(),
    ];
    let url = fake_peer::scripted_peer(script).await;
    let conn = Connection::connect(&url).await.unwrap();
    let mut a = conn.tree_events("A");
    let mut a1 = conn.tree_events("A1");
    let mut b = conn.tree_events("B");
    let mut everything = conn.tree_events("");
    let mut browser = conn.events(Some(""));
    conn.post_raw("", "Test.start", Value::Null).unwrap();
    // The reader routes each message before reading the next, so when
    // the browser session's `Test.end` is heard every stream holds all
    // it will get.
    loop {
        let event = browser.recv().await.expect("the script's end");
        if event.method == "Test.end" {
            break;
        }
    }
    assert_eq!(conn.parent_of("A1").as_deref(), Some("A"));
    assert_eq!(conn.parent_of("A11"), None, "detached");
    assert_eq!(
        conn.parent_of("A11w").as_deref(),
        Some("A1"),
        "its parent's parent"
    );

    let a_seen = drain(&mut a);
    assert_eq!(
        numbers(&a_seen),
        [("A", 1), ("A1", 2), ("A11w", 3), ("A11w", 6)],
        "{a_seen:?}"
    );
    // It heard its frames' and worker's attaches and the detach, each
    // on the session it arrived on.
    let targets: Vec<&str> = a_seen
        .iter()
        .filter(|(_, m, _)| m.starts_with("Target."))
        .map(|(s, _, _)| s.as_str())
        .collect();
    assert_eq!(targets, ["A", "A1", "A11", "A1"], "{a_seen:?}");
    let b_seen = drain(&mut b);
    assert_eq!(numbers(&b_seen), [("B", 4), ("B1", 5)], "{b_seen:?}");
    assert_eq!(
        b_seen.len(),
        3,
        "its frame's attach and its two events: {b_seen:?}"
    );
    let a1_seen = drain(&mut a1);
    assert_eq!(
        numbers(&a1_seen),
        [("A1", 2), ("A11w", 3), ("A11w", 6)],
        "{a1_seen:?}"
    );
    // The browser session's tree is every session's.
    assert_eq!(numbers(&drain(&mut everything)).len(), 6);
}

#[tokio::test]
async fn a_command_on_an_unknown_session_fails_at_once() {
    let url = fake_peer::dropping_peer(usize::MAX).await;
    let conn = Connection::connect(&url).await.unwrap();
    let deadline = Instant::now() + std::time::Duration::from_secs(30);
    let result = conn
        .session("nope")
        .send("Runtime.evaluate", Value::Null, deadline)
        .await;
    assert!(matches!(result, Err(CdpError::TargetClosed { .. })), "{result:?}");
}
