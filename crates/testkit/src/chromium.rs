//! Where the test browser is, the flags tests launch it with, and the
//! launch options of a browser a test starts itself.

use std::path::PathBuf;

use cdp::launch::{Debugging, LaunchOptions};

/// Flags tests add to the launch: `--site-per-process` makes every
/// cross-origin iframe of the two-origin site an out-of-process iframe.
pub const TEST_FLAGS: &[&str] = &["--site-per-process"];

/// The Chromium to test against: `$CDPILOT_CHROME`, else `/usr/bin/chromium`.
/// Panics with the install command when there is none, so a missing browser
/// is a loud failure, never a silent skip.
pub fn executable() -> PathBuf {
    let path = std::env::var_os("CDPILOT_CHROME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        path.exists(),
        "Chromium not found at {}: run `apt-get install -y chromium` or set CDPILOT_CHROME",
        path.display()
    );
    path
}

/// A headless test browser driven as `debugging` says (a DevTools port for
/// one attached to by URL), with [`TEST_FLAGS`] and a fresh profile. A test
/// that needs other flags sets `args` on the result.
pub fn launch_options(debugging: Debugging) -> LaunchOptions {
    LaunchOptions {
        executable: Some(executable()),
        headless: true,
        args: TEST_FLAGS.iter().map(|s| s.to_string()).collect(),
        user_data_dir: None,
        debugging,
    }
}
