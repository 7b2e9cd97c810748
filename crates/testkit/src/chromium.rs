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

/// A Chromium started the way a user starts one with remote debugging on
/// (`--remote-debugging-port=0`), NOT through `cdp::launch`: its profile
/// keeps Chromium's defaults (network prediction on, so speculation rules
/// prefetch and prerender), as the user's own Chrome or an endpoint someone
/// else runs would. Headless, [`TEST_FLAGS`], no sandbox (tests run as
/// root). It leads a process group of its own; dropping it kills the group.
pub struct UsersChrome {
    child: std::process::Child,
    /// `ws://127.0.0.1:PORT/devtools/browser/…`, from its
    /// `DevToolsActivePort`.
    ws_url: String,
    /// Its profile (holds `DevToolsActivePort`).
    pub profile: PathBuf,
    _temporary: Option<TempProfile>,
}

/// A profile directory of the test's own, removed when dropped.
struct TempProfile(PathBuf);

impl Drop for TempProfile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl UsersChrome {
    /// Starts it on a fresh profile and waits (bounded) for its port.
    pub async fn start() -> UsersChrome {
        UsersChrome::start_on("about:blank").await
    }

    /// [`UsersChrome::start`] with its first tab opened on `url`, as a
    /// user's browser already on a page.
    pub async fn start_on(url: &str) -> UsersChrome {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let profile = std::env::temp_dir().join(format!(
            "cdpilot-users-chrome-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&profile);
        std::fs::create_dir_all(&profile).expect("a profile directory");
        use std::os::unix::process::CommandExt;
        let child = std::process::Command::new(executable())
            .args([
                "--headless=new",
                "--no-sandbox",
                "--no-first-run",
                "--disable-gpu",
            ])
            .args(TEST_FLAGS)
            .arg("--remote-debugging-port=0")
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .expect("start Chromium");
        let written = profile.join("DevToolsActivePort");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let ws_url = loop {
            let text = std::fs::read_to_string(&written).unwrap_or_default();
            let mut lines = text.lines();
            if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                break format!("ws://127.0.0.1:{port}{path}");
            }
            assert!(
                std::time::Instant::now() < deadline,
                "Chromium wrote no DevToolsActivePort in {}",
                profile.display()
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        };
        UsersChrome {
            child,
            ws_url,
            profile: profile.clone(),
            _temporary: Some(TempProfile(profile)),
        }
    }

    /// Its browser endpoint.
    pub fn ws_url(&self) -> &str {
        &self.ws_url
    }
}

impl Drop for UsersChrome {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
