//! The extension's stops that headless Chromium cannot produce itself: the
//! screen locked, the user idle for 30 minutes, the debugger bar's Cancel.
//! Their listeners call handler functions (`globalThis.cdpilot` in the
//! service worker); the tests call those same functions over CDP with the
//! state Chrome would pass. The session TTL is seen end to end: a short TTL
//! set through `ttl_minutes` in chrome.storage.local (the documented test
//! hook), and the real `chrome.alarms` ends the session. Each time the
//! client hears `session_ended` with its reason, and the session is gone
//! (resuming it answers `session_not_found`).

mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::extension::{paired, UserChrome};
use support::serve::{Serve, Ws};
use testkit::TestSite;

/// A WebSocket session with a page open in the user's Chrome: its socket and id.
async fn session(serve: &Serve, site: &TestSite) -> (Ws, String) {
    let mut ws = serve.ws().await;
    let id = ws.open(&serve.token).await;
    let nav = ws
        .call("1", "browser_navigate", json!({"url": site.url("/counter.html")}))
        .await;
    assert!(nav.get("result").is_some(), "{nav}");
    (ws, id)
}

/// The `session_ended` event `ws` hears within `limit`.
async fn ended(ws: &mut Ws, limit: Duration) -> Value {
    let until = Instant::now() + limit;
    while let Some(Some(message)) = ws
        .next_within(until.saturating_duration_since(Instant::now()))
        .await
    {
        if message["event"] == "session_ended" {
            return message;
        }
    }
    panic!("no session_ended within {limit:?}");
}

/// Resuming session `id` is refused: it is gone.
async fn gone(serve: &Serve, id: &str) {
    let mut again = serve.ws().await;
    again
        .send(json!({"type": "hello", "protocol_version": 1, "token": serve.token, "session": id}))
        .await;
    let answer = again.next().await.unwrap();
    assert_eq!(answer["reason"], "session_not_found", "{answer}");
}

#[tokio::test]
async fn the_screen_locked_and_the_user_idle_end_every_session() {
    let site = TestSite::start().await;
    let (serve, chrome) = paired("").await;
    let sw = chrome.worker().await;

    let (mut a, a_id) = session(&serve, &site).await;
    let (mut b, b_id) = session(&serve, &site).await;
    // An active state ends nothing.
    UserChrome::eval(&sw, "cdpilot.onIdleState('active').then(() => true)").await;
    let still = a.call("2", "browser_snapshot", json!({})).await;
    assert!(still.get("result").is_some(), "{still}");
    UserChrome::eval(&sw, "cdpilot.onIdleState('locked').then(() => true)").await;
    for (ws, id) in [(&mut a, &a_id), (&mut b, &b_id)] {
        let message = ended(ws, Duration::from_secs(10)).await;
        assert_eq!(message["data"]["reason"], "stopped_by_user", "{message}");
        gone(&serve, id).await;
    }

    let (mut c, c_id) = session(&serve, &site).await;
    UserChrome::eval(&sw, "cdpilot.onIdleState('idle').then(() => true)").await;
    let message = ended(&mut c, Duration::from_secs(10)).await;
    assert_eq!(message["data"]["reason"], "idle", "{message}");
    gone(&serve, &c_id).await;
    // The agent's tabs close right after the server was told.
    let until = Instant::now() + Duration::from_secs(10);
    while !chrome.agent_pages().await.is_empty() {
        assert!(Instant::now() < until, "the agent's tabs stayed open");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_debugger_bars_cancel_ends_that_tabs_session_and_only_that() {
    let site = TestSite::start().await;
    let (serve, chrome) = paired("").await;
    let sw = chrome.worker().await;
    let (mut a, a_id) = session(&serve, &site).await;
    let (mut b, _) = session(&serve, &site).await;
    // The first session's tab, as chrome.debugger.onDetach names it.
    let cancel = "(() => { const ctx = [...cdpilot.browser.contexts.keys()][0]; const tab = [...cdpilot.browser.tabs.values()].find(t => t.context === ctx); return cdpilot.onDebuggerDetach({tabId: tab.tabId}, 'canceled_by_user').then(() => ctx); })()";
    let context = UserChrome::eval(&sw, cancel).await;
    assert!(
        context.as_str().is_some_and(|c| c.starts_with("ext-")),
        "{context}"
    );
    let message = ended(&mut a, Duration::from_secs(10)).await;
    assert_eq!(message["data"]["reason"], "stopped_by_user", "{message}");
    gone(&serve, &a_id).await;
    let other = b.call("2", "browser_snapshot", json!({})).await;
    assert!(
        other.get("result").is_some(),
        "the other session goes on: {other}"
    );
}

#[tokio::test]
async fn a_sessions_ttl_ends_it_when_the_real_alarm_fires() {
    let site = TestSite::start().await;
    let (serve, chrome) = paired("").await;
    let sw = chrome.worker().await;
    // The test hook: a 3 s TTL (unpacked extensions' alarms may be shorter
    // than the 30 s packed ones are held to).
    UserChrome::eval(
        &sw,
        "chrome.storage.local.set({ttl_minutes: 0.05}).then(() => true)",
    )
    .await;
    let (mut ws, id) = session(&serve, &site).await;
    let opened = Instant::now();
    let alarm = UserChrome::eval(
        &sw,
        "chrome.alarms.getAll().then(all => all.filter(a => a.name.startsWith('ttl:')).map(a => a.scheduledTime - Date.now()))",
    )
    .await;
    assert_eq!(alarm.as_array().map(Vec::len), Some(1), "one TTL alarm: {alarm}");
    let due = alarm[0].as_f64().unwrap();
    assert!(due > 0.0 && due <= 3000.0, "due within the 3 s TTL: {due} ms");
    let message = ended(&mut ws, Duration::from_secs(40)).await;
    let after = opened.elapsed();
    eprintln!("the 3 s TTL alarm, due in {due:.0} ms, ended the session after {after:?}");
    assert_eq!(message["data"]["reason"], "idle", "{message}");
    assert!(
        after.as_millis() as f64 >= due - 250.0,
        "not before its alarm: {after:?}"
    );
    gone(&serve, &id).await;
}
