//! A browser serve launched gives all its memory back: closed once no
//! session has used it for `[serve] browser_idle_restart_s`, and launched
//! again by the next session (issue 24: Chromium keeps much of what its
//! closed sessions used until it exits).

use std::time::Duration;

use serde_json::json;
use testkit::TestSite;

use crate::support::serve::{Serve, Ws};
use crate::support::{browser_main_processes, chromium_processes, eventually, wait_until};

const IDLE_1S: &str = "[serve]\nbrowser_idle_restart_s = 1\n";

/// A session on `serve` whose tab has loaded the test site's index page.
pub(crate) async fn session_on(serve: &Serve, site: &TestSite) -> Ws {
    let mut ws = serve.ws().await;
    ws.open(&serve.token).await;
    let nav = ws
        .call("nav", "browser_navigate", json!({"url": site.url("/index.html")}))
        .await;
    assert!(nav.get("error").is_none(), "navigate: {nav}");
    ws
}

#[tokio::test]
async fn a_browser_no_session_used_for_the_idle_period_exits_and_the_next_session_launches_one() {
    let site = TestSite::start().await;
    let serve = Serve::start(IDLE_1S, &[]).await;
    let ws = session_on(&serve, &site).await;
    let first = browser_main_processes(serve.tmp.path());
    assert_eq!(first.len(), 1, "one browser: {first:?}");
    assert_eq!(serve.metric("cdpilot_browser_idle_closes_total").await, Some(0.0));

    drop(ws);
    let gone = wait_until(Duration::from_secs(30), || {
        chromium_processes(serve.tmp.path()).is_empty()
    })
    .await;
    assert!(
        gone,
        "Chromium still running a minute's fraction after its last session: {:?}",
        chromium_processes(serve.tmp.path())
    );
    assert_eq!(serve.metric("cdpilot_browser_idle_closes_total").await, Some(1.0));
    assert_eq!(serve.metric("cdpilot_browser_restarts_total").await, Some(0.0));

    let mut ws = session_on(&serve, &site).await;
    let snapshot = ws.snapshot("snap").await;
    assert!(snapshot.contains("link"), "a working page: {snapshot}");
    let second = browser_main_processes(serve.tmp.path());
    assert_eq!(second.len(), 1, "one browser again: {second:?}");
    assert_ne!(first, second, "a new browser process");
}

#[tokio::test]
async fn a_session_opening_as_the_idle_browser_closes_runs_on_the_next_one() {
    let site = TestSite::start().await;
    let serve = Serve::start(IDLE_1S, &[]).await;
    let first = session_on(&serve, &site).await;
    let old = browser_main_processes(serve.tmp.path());
    drop(first);
    // The moment serve starts closing the idle browser (it counts the
    // close first).
    let closing = eventually(Duration::from_secs(30), || async {
        serve.metric("cdpilot_browser_idle_closes_total").await == Some(1.0)
    })
    .await;
    assert!(closing, "serve never closed the idle browser");
    let mut next = session_on(&serve, &site).await;
    let snapshot = next.snapshot("snap").await;
    assert!(snapshot.contains("link"), "a working page: {snapshot}");
    let now = browser_main_processes(serve.tmp.path());
    assert!(
        !now.iter().any(|p| old.contains(p)),
        "not the closed one: {now:?}"
    );
    let old_gone = wait_until(Duration::from_secs(30), || {
        old.iter().all(|p| testkit::processes::exited(*p))
    })
    .await;
    assert!(old_gone, "the closed browser exited");
    assert_eq!(browser_main_processes(serve.tmp.path()).len(), 1, "one browser");
}
