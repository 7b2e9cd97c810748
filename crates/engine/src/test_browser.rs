//! A real headless Chromium for the engine's unit tests that need one
//! inside the crate (private types such as `Tab` and `TargetManager`):
//! launched with the tests' flags, a connection open to it.

use std::time::Duration;

use cdp::launch::{launch as launch_process, BrowserProcess, LaunchOptions};
use cdp::Connection;

/// A fresh headless Chromium (its own profile, `testkit`'s test flags) and
/// a browser-level connection to it. Close the connection and shut the
/// process down at the end of the test.
pub(crate) async fn launch() -> (BrowserProcess, Connection) {
    let options = LaunchOptions {
        executable: Some(testkit::chromium::executable()),
        headless: true,
        args: testkit::chromium::TEST_FLAGS
            .iter()
            .map(|s| s.to_string())
            .collect(),
        ..Default::default()
    };
    let process = launch_process(&options, Duration::from_secs(30))
        .await
        .expect("headless Chromium starts");
    let conn = Connection::open(process.transport())
        .await
        .expect("its DevTools connection opens");
    (process, conn)
}
