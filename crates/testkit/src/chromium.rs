//! Where the test browser is, and the flags tests launch it with.

use std::path::PathBuf;

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
