//! A persistent profile (`--user-data-dir`) keeps what a session wrote,
//! however soon after the write the client goes away.

mod support;

use std::time::Duration;

use serde_json::json;
use support::{spawn_cdpilot_with, text_of};
use testkit::TestSite;

// Issue 8: a clean stop killed Chromium right after `Browser.close`, before
// it had written out cookies and localStorage (Chromium batches those
// writes for up to ~30 s), so a second session on the same profile found
// neither.
#[tokio::test]
async fn a_clean_stop_right_after_a_write_keeps_cookies_and_local_storage() {
    let site = TestSite::start().await;
    let profile = tempfile::Builder::new()
        .prefix("cdpilot-profile-")
        .tempdir()
        .expect("tempdir");
    let dir = profile.path().to_str().unwrap();

    let (mut first, _tmp) = spawn_cdpilot_with(&["--user-data-dir", dir]);
    first.initialize().await;
    let nav = first
        .call("browser_navigate", json!({"url": site.url("/")}))
        .await;
    assert_eq!(nav["isError"], false, "{nav}");
    let wrote = first
        .call(
            "browser_evaluate",
            json!({"expression": "localStorage.setItem('kept', 'stored'); \
                    document.cookie = 'kept=baked; max-age=86400; path=/'; \
                    localStorage.getItem('kept') + ' ' + document.cookie"}),
        )
        .await;
    assert_eq!(
        wrote["structuredContent"]["value"], "stored kept=baked",
        "{wrote}"
    );
    first.close_stdin();
    // A clean stop may take as long as Chromium's quit (its own budget is
    // 10 s) plus the guard's cleanup.
    tokio::time::timeout(Duration::from_secs(30), first.child.wait())
        .await
        .expect("the first cdpilot exited after its client closed stdin")
        .expect("wait");

    let (mut second, _tmp2) = spawn_cdpilot_with(&["--user-data-dir", dir]);
    second.initialize().await;
    let nav = second
        .call("browser_navigate", json!({"url": site.url("/")}))
        .await;
    assert_eq!(nav["isError"], false, "{nav}");
    let read = second
        .call(
            "browser_evaluate",
            json!({"expression": "localStorage.getItem('kept') + ' ' + document.cookie"}),
        )
        .await;
    assert_eq!(
        read["structuredContent"]["value"],
        "stored kept=baked",
        "the second session on the profile: {}",
        text_of(&read)
    );
    second.close_stdin();
    tokio::time::timeout(Duration::from_secs(30), second.child.wait())
        .await
        .expect("the second cdpilot exited")
        .expect("wait");
    assert!(profile.path().exists(), "the user's profile was not removed");
}
