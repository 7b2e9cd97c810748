//! Finding and starting Chromium, and making sure it never outlives us.
//!
//! Chromium runs under a tiny `sh` guard whose stdin is a pipe from this
//! process. The guard blocks reading that pipe; the pipe reaches EOF however
//! cdpilot ends (clean exit, panic, SIGTERM, even SIGKILL), and the guard
//! then kills Chromium's process group and removes the temporary profile.
//! Chromium itself also gets `PR_SET_PDEATHSIG` (through `setpriv`) tied to
//! the guard, so killing the guard alone cannot orphan it either.
//!
//! cdpilot drives what it launches over the DevTools pipe
//! (`--remote-debugging-pipe`, see [`crate::pipe`]): no TCP port is opened,
//! so no other local user can list the tabs or run script in them.
//! [`Debugging::Port`] (a `ws://` endpoint on loopback) exists for tests and
//! tools that want a browser to attach to by URL.
//!
//! Killing is the last resort: a clean stop asks Chromium to quit
//! (`Browser.close`, sent by the caller) and waits for it to exit by itself
//! ([`BrowserProcess::exited`]), because only a normal quit writes out what
//! Chromium batches in memory (cookies, localStorage) to a persistent
//! profile. Chromium's exit is seen as the end of its stderr pipe, which
//! the guard does not hold open.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::task::JoinHandle;

use crate::pipe::Pipe;
use crate::{CdpError, Transport, WebSocket};

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
    // A desktop-sized viewport (headless defaults to 800x600); a later
    // --window-size in the configured args wins.
    "--window-size=1280,720",
];

/// Features every launch turns off, in one `--disable-features` with the
/// ones the configured flags name ([`command_flags`]).
pub const DISABLED_FEATURES: &[&str] = &[
    // Back/forward restores from the cache fire no load event; agents want
    // every history step to be an ordinary, awaitable navigation.
    "BackForwardCache",
    // Each browser context gets a (headless) window whose omnibox preloads
    // its popup as WebUI pages (chrome://omnibox-popup.top-chrome/ and its
    // AI-mode page): two renderer processes per context that nobody ever
    // sees, about 40 MiB of memory per session (issue 24; the figure is in
    // docs/src/scaling.md). With them off the omnibox uses its views popup.
    "WebUIOmniboxPopup",
    "WebUIOmniboxAimPopup",
    "WebUIOmniboxFullPopup",
];

/// Blink features every launch turns off, in one
/// `--disable-blink-features` with the ones the configured flags name.
/// `AutomationControlled`: `navigator.webdriver` is false through Chrome's
/// own getter, as in a person's browser (the pipe would make it true).
pub const DISABLED_BLINK_FEATURES: &[&str] = &["AutomationControlled"];

/// The flags after the program: [`BASE_FLAGS`], then `args` with their
/// `--disable-features` and `--disable-blink-features` lists taken out and
/// joined to [`DISABLED_FEATURES`] and [`DISABLED_BLINK_FEATURES`] in one
/// flag each at the end (Chromium reads only the last of a repeated switch,
/// so a configured list would otherwise undo ours, and ours the configured
/// one); last, unless `args` name one, the screen headless Chrome reports
/// (`--screen-info`, 800x600 otherwise) made the window's size, so the
/// window is never bigger than its screen.
pub fn command_flags(args: &[String]) -> Vec<String> {
    let mut disabled: Vec<String> = DISABLED_FEATURES.iter().map(|f| f.to_string()).collect();
    let mut blink: Vec<String> = DISABLED_BLINK_FEATURES.iter().map(|f| f.to_string()).collect();
    let mut flags: Vec<String> = BASE_FLAGS.iter().map(|f| f.to_string()).collect();
    let join = |list: &str, into: &mut Vec<String>| {
        for feature in list.split(',').map(str::trim).filter(|f| !f.is_empty()) {
            if !into.iter().any(|d| d == feature) {
                into.push(feature.to_owned());
            }
        }
    };
    for arg in args {
        if let Some(list) = arg.strip_prefix("--disable-features=") {
            join(list, &mut disabled);
        } else if let Some(list) = arg.strip_prefix("--disable-blink-features=") {
            join(list, &mut blink);
        } else {
            flags.push(arg.clone());
        }
    }
    let window = flags
        .iter()
        .rev()
        .find_map(|f| f.strip_prefix("--window-size="))
        .and_then(|size| size.split_once(','))
        .map(|(w, h)| (w.trim().to_owned(), h.trim().to_owned()));
    let screen_given = flags.iter().any(|f| f.starts_with("--screen-info"));
    flags.push(format!("--disable-features={}", disabled.join(",")));
    flags.push(format!("--disable-blink-features={}", blink.join(",")));
    if let (Some((w, h)), false) = (window, screen_given) {
        flags.push(format!("--screen-info={{{w}x{h}}}"));
    }
    flags
}

/// How the launched browser is driven.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Debugging {
    /// `--remote-debugging-pipe`: only cdpilot holds the pipe; no port.
    #[default]
    Pipe,
    /// `--remote-debugging-port=0`: a DevTools WebSocket on loopback, which
    /// any local user can reach. For a browser meant to be attached to by
    /// URL (tests, benchmarks), never for the engine's own.
    Port,
}

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
    /// The pipe (the default) or a DevTools port.
    pub debugging: Debugging,
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
    /// The DevTools WebSocket of a [`Debugging::Port`] launch (empty for a
    /// pipe).
    ws_url: String,
    /// cdpilot's ends of a [`Debugging::Pipe`] launch's pipe.
    pipe: Option<Arc<Pipe>>,
    user_data_dir: PathBuf,
    /// The `--user-agent` this launch gave a headless browser
    /// ([`crate::agent`]); `None`: the browser's own.
    user_agent: Option<String>,
}

impl BrowserProcess {
    /// The DevTools WebSocket of a [`Debugging::Port`] launch; empty when
    /// the browser is driven over the pipe.
    pub fn ws_url(&self) -> &str {
        &self.ws_url
    }

    /// The user agent this launch gave the browser as a switch (a headless
    /// one, unless the configured flags name their own): every realm,
    /// workers included, announces it.
    pub fn user_agent(&self) -> Option<&str> {
        self.user_agent.as_deref()
    }

    /// How to reach this browser: its pipe (which opens once), or its
    /// WebSocket.
    pub fn transport(&self) -> Arc<dyn Transport> {
        match &self.pipe {
            Some(pipe) => pipe.clone(),
            None => Arc::new(WebSocket::new(self.ws_url.clone())),
        }
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
# The DevTools pipe (fds 3 and 4) is Chromium's alone: were the guard to
# keep a copy, cdpilot would never see the pipe end when Chromium exits.
exec 3<&- 4>&-
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

/// Starts Chromium and waits (up to `timeout`) until DevTools answers (its
/// endpoint printed, or a command answered on the pipe).
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
    // The configured flags must not undo the pipe: a port they open would be
    // reachable by every local user.
    if let Some(flag) = options.args.iter().find(|a| a.starts_with("--remote-debugging-")) {
        return Err(CdpError::Connect(format!(
            "browser.args must not contain {flag}: cdpilot drives the browser it launches over \
             a pipe and opens no DevTools port; remove it (to share a browser, run it yourself \
             and set browser.cdp_url)"
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

    no_network_prediction(&user_data_dir)?;

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
    let mut flags = command_flags(&options.args).into_iter();
    command.args(flags.by_ref().take(BASE_FLAGS.len()));
    if options.headless {
        command.arg("--headless");
    }
    command.arg(format!("--user-data-dir={}", user_data_dir.display()));
    command.arg(match options.debugging {
        Debugging::Pipe => "--remote-debugging-pipe",
        Debugging::Port => "--remote-debugging-port=0",
    });
    command.args(flags);
    // Headless Chrome announces `HeadlessChrome/N` everywhere, shared and
    // service workers included, where no DevTools override reaches: the
    // switch makes it a person's `Chrome/N` in every realm.
    let user_agent = match options.headless && !options.args.iter().any(|a| a.starts_with("--user-agent")) {
        true => crate::agent::major_version(&executable)
            .await
            .and_then(crate::agent::person_user_agent),
        false => None,
    };
    if let Some(ua) = &user_agent {
        command.arg(format!("--user-agent={ua}"));
    }
    command.arg("about:blank");
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(false);
    let browser_ends = match options.debugging {
        Debugging::Pipe => Some(give_pipe(&mut command)?),
        Debugging::Port => None,
    };

    let spawned = command
        .spawn()
        .map_err(|e| CdpError::Connect(format!("cannot start {}: {e}", executable.display())));
    // The child has its copies; ours must go, or the pipe Chromium writes
    // would never end when it exits.
    let pipe = match browser_ends {
        Some(ends) => Some(Arc::new(Pipe::new(ends.to_browser, ends.from_browser)?)),
        None => None,
    };
    let mut guard = spawned?;
    let lifeline = guard.stdin.take();
    let stderr = guard.stderr.take().expect("stderr is piped");
    let mut lines = BufReader::new(stderr).lines();

    let endpoint = tokio::time::timeout(timeout, async {
        let mut tail = Vec::new();
        let exited = async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    if pipe.is_none() {
                        return Some(url.trim().to_owned());
                    }
                }
                tail.push(line);
                if tail.len() > 20 {
                    tail.remove(0);
                }
            }
            None
        };
        let up = match &pipe {
            // The pipe prints nothing when it is ready: a command answered
            // on it is the proof (an exit ends the stderr first).
            Some(pipe) => tokio::select! {
                handshake = pipe.handshake() => handshake.ok().map(|()| String::new()),
                url = exited => url,
            },
            None => exited.await,
        };
        up.ok_or_else(|| {
            CdpError::Connect(format!(
                "{} exited before opening DevTools: {}",
                executable.display(),
                tail.join(" | ")
            ))
        })
    })
    .await;

    let process = BrowserProcess {
        guard,
        lifeline,
        stderr_drain: None,
        ws_url: String::new(),
        pipe,
        user_data_dir,
        user_agent,
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

/// Turns Chromium's network prediction off in the profile before it
/// starts: `net.network_prediction_options = 2` ("never") makes every
/// preloading ineligible (speculation rules' prefetch and prerender, link
/// preconnects and DNS prefetching by prediction), so a page cannot have
/// the browser fetch a document no request-stage gate sees. A persistent
/// profile's Preferences keep their other keys; one that does not parse is
/// an error (cdpilot will not start a browser it cannot make safe).
fn no_network_prediction(user_data_dir: &Path) -> Result<(), CdpError> {
    let failed = |e: String| CdpError::Connect(format!("cannot turn network prediction off: {e}"));
    let dir = user_data_dir.join("Default");
    std::fs::create_dir_all(&dir).map_err(|e| failed(format!("{}: {e}", dir.display())))?;
    let path = dir.join("Preferences");
    let mut preferences = match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .filter(|v| v.is_object())
            .ok_or_else(|| failed(format!("{} is not a JSON object", path.display())))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => serde_json::json!({}),
        Err(e) => return Err(failed(format!("{}: {e}", path.display()))),
    };
    if !preferences["net"].is_object() {
        preferences["net"] = serde_json::json!({});
    }
    preferences["net"]["network_prediction_options"] = serde_json::json!(2);
    std::fs::write(&path, preferences.to_string()).map_err(|e| failed(format!("{}: {e}", path.display())))
}

/// Chromium's ends of the DevTools pipe, kept until the spawn has copied
/// them into the child (then dropped).
struct BrowserEnds {
    /// Ours: we write, Chromium reads (its fd 3).
    to_browser: OwnedFd,
    /// Ours: Chromium writes (its fd 4), we read.
    from_browser: OwnedFd,
    /// Chromium's: dropped after the spawn.
    _browser_reads: std::io::PipeReader,
    _browser_writes: std::io::PipeWriter,
}

/// Makes two pipes and has the child find Chromium's ends at fds 3
/// (commands in) and 4 (messages out), the places `--remote-debugging-pipe`
/// reads and writes; they survive the guard's `exec`s (setsid, setpriv).
fn give_pipe(command: &mut Command) -> Result<BrowserEnds, CdpError> {
    let failed = |e: std::io::Error| CdpError::Connect(format!("cannot make the DevTools pipe: {e}"));
    let (browser_reads, to_browser) = std::io::pipe().map_err(failed)?;
    let (from_browser, browser_writes) = std::io::pipe().map_err(failed)?;
    let (reads, writes) = (browser_reads.as_raw_fd(), browser_writes.as_raw_fd());
    // SAFETY: between fork and exec the closure calls only fcntl and dup2,
    // which are async-signal-safe, and touches no memory but two integers.
    unsafe {
        command.pre_exec(move || {
            // Both are first moved above 4 (close-on-exec), so placing one
            // at 3 or 4 cannot overwrite the other.
            let reads = libc::fcntl(reads, libc::F_DUPFD_CLOEXEC, 10);
            let writes = libc::fcntl(writes, libc::F_DUPFD_CLOEXEC, 10);
            // dup2 clears close-on-exec on the copies at 3 and 4.
            if reads < 0 || writes < 0 || libc::dup2(reads, 3) < 0 || libc::dup2(writes, 4) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(BrowserEnds {
        to_browser: OwnedFd::from(to_browser),
        from_browser: OwnedFd::from(from_browser),
        _browser_reads: browser_reads,
        _browser_writes: browser_writes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configured_disabled_features_join_ours_in_one_last_flag() {
        let args = [
            "--mute-audio".to_owned(),
            "--disable-features=Translate, BackForwardCache".to_owned(),
            "--disable-features=MediaRouter".to_owned(),
        ];
        let flags = command_flags(&args);
        assert_eq!(&flags[..BASE_FLAGS.len()], BASE_FLAGS);
        assert_eq!(flags[BASE_FLAGS.len()], "--mute-audio");
        let disable: Vec<&String> = flags
            .iter()
            .filter(|f| f.starts_with("--disable-features="))
            .collect();
        assert_eq!(disable.len(), 1, "{flags:?}");
        assert_eq!(
            disable[0],
            &format!(
                "--disable-features={},Translate,MediaRouter",
                DISABLED_FEATURES.join(",")
            )
        );
    }

    #[test]
    fn webdriver_is_off_by_chromes_switch_and_the_screen_is_the_window() {
        let flags = command_flags(&["--disable-blink-features=Foo".to_owned()]);
        let blink: Vec<&String> = flags
            .iter()
            .filter(|f| f.starts_with("--disable-blink-features="))
            .collect();
        assert_eq!(blink, ["--disable-blink-features=AutomationControlled,Foo"]);
        assert!(
            flags.contains(&"--screen-info={1280x720}".to_owned()),
            "{flags:?}"
        );
        let flags = command_flags(&["--window-size=1920,1080".to_owned()]);
        assert!(
            flags.contains(&"--screen-info={1920x1080}".to_owned()),
            "{flags:?}"
        );
        let flags = command_flags(&["--screen-info={2560x1440}".to_owned()]);
        assert_eq!(flags.iter().filter(|f| f.starts_with("--screen-info")).count(), 1);
    }
}
