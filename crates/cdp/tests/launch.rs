//! A launched Chromium asked to quit is seen exiting by itself, and the
//! guard then removes the run directory.

use std::time::Duration;

use cdp::launch::{launch, LaunchOptions};
use cdp::protocol::browser;
use cdp::Connection;

// Issue 8: a clean stop killed Chromium before it had written out its
// profile; the stop now waits for this exit, so it must be observable.
#[tokio::test]
async fn a_browser_asked_to_close_is_seen_exiting_by_itself() {
    let options = LaunchOptions {
        args: Vec::new(),
        ..testkit::chromium::launch_options(cdp::launch::Debugging::Pipe)
    };
    let mut chromium = launch(&options, Duration::from_secs(30)).await.expect("launch");
    let profile = chromium.user_data_dir().to_owned();
    let conn = Connection::open(chromium.transport()).await.expect("connect");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let _ = conn.browser().call(browser::Close {}, deadline).await;
    // Generous: Chromium's quit takes well under a second when idle.
    assert!(
        chromium.exited(Duration::from_secs(20)).await,
        "Chromium's exit after Browser.close was not observed"
    );
    chromium.shutdown(Duration::from_secs(10)).await;
    assert!(!profile.exists(), "the temporary profile was removed");
}

#[tokio::test]
async fn a_running_browser_is_not_taken_for_exited() {
    let options = LaunchOptions {
        args: Vec::new(),
        ..testkit::chromium::launch_options(cdp::launch::Debugging::Pipe)
    };
    let mut chromium = launch(&options, Duration::from_secs(30)).await.expect("launch");
    assert!(!chromium.exited(Duration::from_millis(300)).await);
    chromium.shutdown(Duration::from_secs(10)).await;
}

// Issue 20: a DevTools port in the configured flags would undo the pipe.
#[tokio::test]
async fn a_devtools_port_in_the_configured_flags_is_refused() {
    let options = LaunchOptions {
        args: vec!["--remote-debugging-port=9222".into()],
        ..testkit::chromium::launch_options(cdp::launch::Debugging::Pipe)
    };
    let error = launch(&options, Duration::from_secs(30))
        .await
        .err()
        .expect("refused");
    let message = error.to_string();
    assert!(
        message.contains("browser.args") && message.contains("--remote-debugging-port=9222"),
        "{message}"
    );
}
