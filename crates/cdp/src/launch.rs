//! Finding and starting Chromium, and making sure it never outlives us.
//!
//! Chromium runs under a tiny `sh` guard whose stdin is a pipe from this
//! process. The guard blocks reading that pipe; the pipe reaches EOF however
//! cdpilot ends (clean exit, panic, SIGTERM, even SIGKILL), and the guard
//! then kills Chromium's process group and removes the temporary profile.
//! Chromium itself also gets `PR_SET_PDEATHSIG` (through `setpriv`) tied to
//! the guard, so killing the guard alone cannot orphan it either.
//!
//! Killing is the last resort: a clean stop asks Chromium to quit
//! (`Browser.close`, sent by the caller) and waits for it to exit by itself
//! ([`BrowserProcess::exited`]), because only a normal quit writes out what
//! Chromium batches in memory (cookies, localStorage) to a persistent
//! profile. Chromium's exit is seen as the end of its stderr pipe, which
//! the guard does not hold open.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::task::JoinHandle;

use crate::CdpError;

/// Flags every launch gets: headless-friendly, quiet on a closed network.
pub const BASE_FLAGS: &[&str] = &[
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    // Crashpad's handlers detach from Chromium's process group and would
    // outlive it; an automation browser has no use for crash uploads.
    "--disable-breakpad",
    "--disable-crash-reporter",
    "--remote-debugging-port=0",
    // A desktop-sized viewport (headless defaults to 800x600); a later
    // --window-size in the configured args wins.
    "--window-size=1280,720",
    // Back/forward restores from the cache fire no load event; agents want
    // every history step to be an ordinary, awaitable navigation.
    "--disable-features=BackForwardCache",
];

#[derive(Debug, Clone, Default)]
pub struct LaunchOptions {
    /// Chromium binary; when `None`, [`find_executable`] decides.
    pub executable: Option<PathBuf>,
    pub headless: bool,
    /// Extra flags, appended after the base flags.
    pub args: Vec<String>,
    /// A persistent profile; `None` makes a fresh temporary one that is
    /// removed when the browser goes away.
    pub user_data_dir: Option<PathBuf>,
}

/// A running Chromium we launched. Dropping it closes the guard's pipe,
/// which kills Chromium and removes its run directory (and so a temporary
/// profile).
pub struct BrowserProcess {
    /// The guard shell; Chromium is its child.
    guard: Child,
    /// Write end of the guard's stdin: closing it is the shutdown signal.
    lifeline: Option<ChildStdin>,
    /// The task draining Chromium's stderr. It ends when every Chromium
    /// process has closed the pipe, which is the event that says Chromium
    /// exited (`None` until DevTools is up, and once awaited to the end).
    stderr_drain: Option<JoinHandle<()>>,
    ws_url: String,
    user_data_dir: PathBuf,
}

impl BrowserProcess {
    pub fn ws_url(&self) -> &str {
        &self.ws_url
    }

    pub fn user_data_dir(&self) -> &Path {
        &self.user_data_dir
    }

    /// Process id of the guard (Chromium's parent).
    pub fn guard_pid(&self) -> Option<u32> {
        self.guard.id()
    }

    /// Waits (up to `wait`) for Chromium to exit by itself, as it does after
    /// `Browser.close` once it has written out its profile. True if it did;
    /// the guard still has to clean up ([`BrowserProcess::shutdown`]).
    pub async fn exited(&mut self, wait: Duration) -> bool {
        let Some(drain) = self.stderr_drain.as_mut() else {
            return false;
        };
        if tokio::time::timeout(wait, drain).await.is_err() {
            return false;
        }
        self.stderr_drain = None;
        true
    }

    /// Ends Chromium (killing what is left of it) and waits (up to `wait`)
    /// until the guard has cleaned up.
    pub async fn shutdown(mut self, wait: Duration) {
        self.lifeline.take();
        let _ = tokio::time::timeout(wait, self.guard.wait()).await;
    }
}

/// Candidates in order: `$CDPILOT_CHROME`, then `chromium`,
/// `chromium-browser`, `google-chrome` on `PATH`.
pub fn find_executable() -> Result<PathBuf, CdpError> {
    if let Some(path) = std::env::var_os("CDPILOT_CHROME").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if is_executable(&candidate) {
                return Ok(candidate);
            }
        }
    }
    Err(CdpError::Connect(
        "no Chromium found: install it (apt-get install chromium), set browser.executable \
         in cdpilot.toml, pass --executable, or set $CDPILOT_CHROME"
            .into(),
    ))
}

/// util-linux's `setsid`/`setpriv`, where installed (Debian always has them).
fn find_tool(name: &str) -> Option<String> {
    ["/usr/bin", "/bin"]
        .iter()
        .map(|dir| format!("{dir}/{name}"))
        .find(|p| Path::new(p).exists())
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The guard: `$1` is the run directory to remove, the rest is the
/// Chromium command, run through `setsid` so Chromium leads a process group
/// of its own that the guard can kill whole (helpers included).
const GUARD_SCRIPT: &str = r#"
run_dir=$1; shift
# Ctrl-C in a terminal reaches the whole foreground group: cdpilot shuts
# down on it, and the guard must live on to clean up after it.
trap '' INT HUP
"$@" </dev/null &
browser=$!
# Chromium's stderr reaches EOF when Chromium has exited only if the guard
# lets go of its own copy.
exec 2>/dev/null
while read -r _; do :; done
kill -TERM -"$browser" 2>/dev/null || kill -TERM "$browser" 2>/dev/null
i=0
while kill -0 "$browser" 2>/dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done
kill -KILL -"$browser" 2>/dev/null || kill -KILL "$browser" 2>/dev/null
wait "$browser" 2>/dev/null
rm -rf "$run_dir"
exit 0
"#;

/// Starts Chromium and waits (up to `timeout`) for its DevTools endpoint.
pub async fn launch(options: &LaunchOptions, timeout: Duration) -> Result<BrowserProcess, CdpError> {
    let executable = match &options.executable {
        Some(path) => path.clone(),
        None => find_executable()?,
    };
    if !is_executable(&executable) {
        return Err(CdpError::Connect(format!(
            "browser executable {} does not exist or is not executable",
            executable.display()
        )));
    }
    // Everything this launch writes outside a persistent profile lives in
    // one run directory that the guard removes: the temporary profile, and
    // Chromium's own temp files (it leaves `org.chromium.Chromium.*` behind
    // in $TMPDIR when killed).
    let run_dir = tempfile::Builder::new()
        .prefix("cdpilot-run-")
        .tempdir()
        .map_err(|e| CdpError::Connect(format!("cannot create a run directory: {e}")))?
        .keep();
    let chromium_tmp = run_dir.join("tmp");
    std::fs::create_dir(&chromium_tmp)
        .map_err(|e| CdpError::Connect(format!("cannot create {}: {e}", chromium_tmp.display())))?;
    let user_data_dir = match &options.user_data_dir {
        Some(dir) => dir.clone(),
        None => run_dir.join("profile"),
    };

    let mut command = Command::new("/bin/sh");
    command.arg("-c").arg(GUARD_SCRIPT).arg("cdpilot-guard");
    command.arg(&run_dir);
    command.env("TMPDIR", &chromium_tmp);
    if let Some(setsid) = find_tool("setsid") {
        command.arg(setsid);
    }
    if let Some(setpriv) = find_tool("setpriv") {
        command.args([setpriv.as_str(), "--pdeathsig", "KILL", "--"]);
    }
    command.arg(&executable);
    command.args(BASE_FLAGS);
    if options.headless {
        command.arg("--headless");
    }
    command.arg(format!("--user-data-dir={}", user_data_dir.display()));
    command.args(&options.args);
    command.arg("about:blank");
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(false);

    let mut guard = command
        .spawn()
        .map_err(|e| CdpError::Connect(format!("cannot start {}: {e}", executable.display())))?;
    let lifeline = guard.stdin.take();
    let stderr = guard.stderr.take().expect("stderr is piped");
    let mut lines = BufReader::new(stderr).lines();

    let endpoint = tokio::time::timeout(timeout, async {
        let mut tail = Vec::new();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(url) = line.strip_prefix("DevTools listening on ") {
                return Ok(url.trim().to_owned());
            }
            tail.push(line);
            if tail.len() > 20 {
                tail.remove(0);
            }
        }
        Err(CdpError::Connect(format!(
            "{} exited before opening DevTools: {}",
            executable.display(),
            tail.join(" | ")
        )))
    })
    .await;

    let process = BrowserProcess {
        guard,
        lifeline,
        stderr_drain: None,
        ws_url: String::new(),
        user_data_dir,
    };
    let ws_url = match endpoint {
        Ok(Ok(url)) => url,
        Ok(Err(e)) => {
            process.shutdown(Duration::from_secs(3)).await;
            return Err(e);
        }
        Err(_) => {
            process.shutdown(Duration::from_secs(3)).await;
            return Err(CdpError::Connect(format!(
                "{} did not open DevTools within {}s",
                executable.display(),
                timeout.as_secs()
            )));
        }
    };
    // Keep draining Chromium's stderr so it never blocks on a full pipe.
    // Bytes, not `lines`: a line that is not UTF-8 must not end the drain,
    // whose end means that Chromium exited.
    let mut stderr = lines.into_inner();
    let stderr_drain = tokio::spawn(async move {
        let mut line = Vec::new();
        while stderr.read_until(b'\n', &mut line).await.is_ok_and(|n| n > 0) {
            let text = String::from_utf8_lossy(&line);
            tracing::trace!(target: "chromium", "{}", text.trim_end());
            line.clear();
        }
    });
    Ok(BrowserProcess {
        ws_url,
        stderr_drain: Some(stderr_drain),
        ..process
    })
}
