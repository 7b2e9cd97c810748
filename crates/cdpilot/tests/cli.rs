//! The CLI as a shell (or a shell-driven agent) uses it: each `cdpilot
//! <command>` a separate process, the first one starting a background
//! `cdpilot serve` in a private runtime directory, later ones reusing it and
//! its kept session; `--json` output; exit codes per error class; nothing
//! left running after `stop --all`.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use serde_json::Value;
use testkit::TestSite;

/// A private runtime directory and TMPDIR: the background server's command
/// line names the first, its Chromium's the second, both under `root`.
struct Cli {
    root: tempfile::TempDir,
    /// More environment for every command (and so for the background
    /// server the first one starts).
    env: Vec<(&'static str, String)>,
    /// What every command without --json printed (stdout and stderr), for
    /// [`Cli::assert_speaks_cli`].
    answers: std::sync::Mutex<Vec<String>>,
}

impl Cli {
    fn new() -> Cli {
        let root = tempfile::Builder::new()
            .prefix("cdpilot-cli-test-")
            .tempdir()
            .expect("tempdir");
        std::fs::create_dir(root.path().join("tmp")).unwrap();
        Cli {
            root,
            env: Vec::new(),
            answers: Default::default(),
        }
    }

    fn runtime_dir(&self) -> PathBuf {
        self.root.path().join("run")
    }

    fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"));
        command
            .args(args)
            .env("CDPILOT_RUNTIME_DIR", self.runtime_dir())
            .env("TMPDIR", self.root.path().join("tmp"))
            .env("CDPILOT_CHROME", testkit::chromium::executable())
            .env("CDPILOT_CONFIG", "")
            .env("CDPILOT_FILES_OUTPUT_DIR", self.root.path().join("out"))
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env_remove("CDPILOT_SESSION")
            .env_remove("CDPILOT_SERVE_TOKEN")
            .kill_on_drop(true);
        command
    }

    async fn run(&self, args: &[&str]) -> Output {
        let output = self.command(args).output();
        let output = tokio::time::timeout(Duration::from_secs(90), output)
            .await
            .expect("a CLI call took over 90 s")
            .expect("spawn cdpilot");
        eprintln!(
            "$ cdpilot {}\n{}{}[exit {:?}]",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
            output.status.code()
        );
        if !args.contains(&"--json") {
            self.answers.lock().unwrap().push(format!(
                "$ cdpilot {}\n{}{}",
                args.join(" "),
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        output
    }

    /// Issue 45: no answer the CLI printed names an MCP tool (`browser_…`)
    /// where a shell user types a verb (`cdpilot snapshot`); what a page
    /// said, inside its page-content fence, is the page's.
    fn assert_speaks_cli(&self) {
        let answers = self.answers.lock().unwrap();
        assert!(!answers.is_empty());
        for answer in answers.iter() {
            let ours: String = answer
                .split("<<page-content")
                .enumerate()
                .map(|(i, part)| match i {
                    0 => part,
                    _ => part
                        .split_once("<</page-content")
                        .map(|(_, after)| after)
                        .unwrap_or(""),
                })
                .collect();
            assert!(
                !ours.contains("browser_"),
                "a CLI answer names an MCP tool:\n{answer}"
            );
        }
    }

    /// Runs a command that must succeed; its stdout.
    async fn ok(&self, args: &[&str]) -> String {
        let output = self.run(args).await;
        assert_eq!(output.status.code(), Some(0), "cdpilot {args:?} failed");
        String::from_utf8(output.stdout).unwrap()
    }

    fn server_pid(&self) -> Option<u64> {
        let text = std::fs::read_to_string(self.runtime_dir().join("serve.json")).ok()?;
        serde_json::from_str::<Value>(&text).ok()?["pid"].as_u64()
    }
}

impl Drop for Cli {
    /// A test that failed half-way still leaves no server (and so no
    /// Chromium: its guard follows the server) behind.
    fn drop(&mut self) {
        if let Some(pid) = self.server_pid() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        // Let the browser's guard finish cleaning up before the directory
        // goes (it removes its own run directory inside it).
        let deadline = std::time::Instant::now() + Duration::from_secs(15);
        while !left_running(self.root.path()).is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The ref on the first snapshot line containing `needle`.
fn ref_on(snapshot: &str, needle: &str) -> String {
    support::ref_on_line(snapshot, needle)
}

fn left_running(dir: &Path) -> Vec<u32> {
    testkit::processes::mentioning(dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_drives_a_page_end_to_end_through_one_background_server() {
    let site = TestSite::start().await;
    let cli = Cli::new();
    assert!(cli.server_pid().is_none());

    // open → snapshot → click → (snapshot) → type --submit → extract
    let opened = cli.ok(&["open", &site.url("/index.html")]).await;
    assert!(opened.contains("cdpilot test home"), "{opened}");
    let first_pid = cli
        .server_pid()
        .expect("the first call started a background server");
    let meta = std::fs::metadata(cli.runtime_dir().join("token")).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
        0o600,
        "the token is the user's only"
    );

    let snapshot = cli.ok(&["snapshot"]).await;
    let link = ref_on(&snapshot, "Go to form");
    let clicked = cli.ok(&["click", &link]).await;
    assert!(clicked.contains(&format!("Clicked ref {link}")), "{clicked}");
    // The click may return before the navigation it started is seen.
    cli.ok(&["wait", "--url", "*/form.html"]).await;
    let form = cli.ok(&["snapshot"]).await;
    let email = ref_on(&form, "Email");
    cli.ok(&["type", &email, "new@example.com", "--submit"]).await;
    let extracted = cli.ok(&["extract"]).await;
    assert!(extracted.contains("submitted new@example.com"), "{extracted}");

    // Every call went to the same server and the same kept session.
    assert_eq!(cli.server_pid(), Some(first_pid));
    let sessions: Value =
        serde_json::from_str(&cli.ok(&["sessions", "--json"]).await).expect("--json is JSON");
    let sessions = sessions["sessions"].as_array().unwrap().clone();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(sessions[0]["kept_as"], "default");
    assert!(
        sessions[0]["tabs"][0]["url"]
            .as_str()
            .unwrap()
            .ends_with("/form.html"),
        "{sessions:?}"
    );

    // --json prints the structured result, before or after the subcommand.
    let value: Value =
        serde_json::from_str(&cli.ok(&["eval", "document.title", "--json"]).await).expect("JSON");
    assert_eq!(value["value"], "submitted new@example.com");
    let value: Value = serde_json::from_str(&cli.ok(&["--json", "eval", "1+1"]).await).expect("JSON");
    assert_eq!(value["value"], 2);

    // A stale ref and a timeout exit with different codes (README: exit codes):
    // the form's refs are stale once the tab has left the form.
    cli.ok(&["open", &site.url("/index.html")]).await;
    let stale = cli.run(&["click", &email]).await;
    assert_eq!(stale.status.code(), Some(4), "element_stale");
    assert!(String::from_utf8_lossy(&stale.stderr).starts_with("element_stale"));
    let timeout = cli
        .run(&["wait", "--text", "never on this page", "--timeout", "1000"])
        .await;
    assert_eq!(timeout.status.code(), Some(11), "timeout");
    let failed: Value =
        serde_json::from_str(&String::from_utf8(cli.run(&["--json", "click", &email]).await.stdout).unwrap())
            .expect("an error as JSON");
    assert_eq!(failed["error"]["code"], "element_stale");

    // The v2 tools through the CLI: find, fill, and a PDF moved where the
    // user asked (the server writes it under its output directory).
    cli.ok(&["open", &site.url("/forms.html")]).await;
    let found = cli.ok(&["snapshot", "--find", "colour"]).await;
    assert!(
        found.contains("Colour") && !found.contains("Gift wrap"),
        "{found}"
    );
    let form = cli.ok(&["snapshot"]).await;
    let (name, gift) = (ref_on(&form, "\"Name\""), ref_on(&form, "Gift wrap"));
    cli.ok(&["fill", &format!("{name}=Ada"), &format!("{gift}=true")])
        .await;
    let value: Value = serde_json::from_str(
        &cli.ok(&[
            "--json",
            "eval",
            "[document.getElementById('name').value, gift.checked].join()",
        ])
        .await,
    )
    .unwrap();
    assert_eq!(value["value"], "Ada,true");
    let pdf = cli.root.path().join("page.pdf");
    let printed = cli.ok(&["pdf", pdf.to_str().unwrap()]).await;
    assert!(printed.contains("page.pdf"), "{printed}");
    assert!(std::fs::read(&pdf).unwrap().starts_with(b"%PDF"));
    let unknown = cli.run(&["eval"]).await;
    assert_eq!(
        unknown.status.code(),
        Some(2),
        "a missing argument is a usage error"
    );

    // A second session stands beside the first.
    cli.ok(&["--session", "other", "open", &site.url("/dialogs.html")])
        .await;
    let listed = cli.ok(&["sessions"]).await;
    assert!(
        listed.contains("(default)") && listed.contains("(other)"),
        "{listed}"
    );
    assert_eq!(cli.server_pid(), Some(first_pid));

    // `stop` ends a session's call in flight at once (exit 12, canceled);
    // the other session goes on.
    let waiting = tokio::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
        .args(["--session", "other", "wait", "--ms", "20000"])
        .env("CDPILOT_RUNTIME_DIR", cli.runtime_dir())
        .kill_on_drop(true)
        .output();
    let waiting = tokio::spawn(waiting);
    let running = async {
        loop {
            let listed: Value = serde_json::from_str(&cli.ok(&["sessions", "--json"]).await).unwrap();
            let other = listed["sessions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["kept_as"] == "other")
                .cloned();
            if other.is_some_and(|s| s["running"] == 1) {
                return;
            }
            // Another process's state: polled, there is no event to await.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), running)
        .await
        .expect("the wait never ran");
    let stopped_at = std::time::Instant::now();
    cli.ok(&["--session", "other", "stop"]).await;
    let waited = waiting.await.unwrap().unwrap();
    assert_eq!(waited.status.code(), Some(12), "{waited:?}");
    assert!(
        String::from_utf8_lossy(&waited.stderr).contains("stopped"),
        "{waited:?}"
    );
    assert!(
        stopped_at.elapsed() < Duration::from_secs(10),
        "stop took {:?}",
        stopped_at.elapsed()
    );
    let listed = cli.ok(&["sessions"]).await;
    assert!(
        listed.contains("(default)") && !listed.contains("(other)"),
        "{listed}"
    );

    // stop --all ends the server and its browser: nothing is left running.
    cli.assert_speaks_cli();
    cli.ok(&["stop", "--all"]).await;
    // The server has exited; its browser's guard may take a moment more.
    let clean = testkit::processes::wait_until(Duration::from_secs(15), || {
        left_running(cli.root.path()).is_empty()
    })
    .await;
    assert!(clean, "left running: {:?}", left_running(cli.root.path()));
    assert!(!cli.runtime_dir().join("serve.json").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_background_server_stops_itself_after_the_idle_timeout() {
    let site = TestSite::start().await;
    let cli = Cli::new();
    let config = cli.root.path().join("cdpilot.toml");
    std::fs::write(&config, "[session]\nidle_timeout_s = 1\n").unwrap();
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
        .args(["open", &site.url("/index.html")])
        .env("CDPILOT_RUNTIME_DIR", cli.runtime_dir())
        .env("TMPDIR", cli.root.path().join("tmp"))
        .env("CDPILOT_CHROME", testkit::chromium::executable())
        .env("CDPILOT_CONFIG", &config)
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let pid = cli.server_pid().expect("a background server");
    // 1 s without a call ends the kept session, 1 s without a session the
    // server; polled (no event to await from outside the process).
    let gone = testkit::processes::wait_until(Duration::from_secs(30), || {
        !Path::new(&format!("/proc/{pid}")).exists() && left_running(cli.root.path()).is_empty()
    })
    .await;
    assert!(gone, "the idle background server is still running");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_piped_into_head_exits_cleanly() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
        .arg("tools")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read one line, then close the pipe as `head -1` does.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
    drop(stdout);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(0), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_arguments_lists_the_subcommands_from_the_registry() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    for verb in [
        "open",
        "snapshot",
        "click",
        "type",
        "fill",
        "wait",
        "screenshot",
        "stop",
        "doctor",
        "mcp",
    ] {
        assert!(
            text.lines().any(|l| l.trim_start().starts_with(verb)),
            "{verb} missing:\n{text}"
        );
    }
    // The help is the tool's own description (the registry MCP sends).
    let navigate = engine::tools::find("browser_navigate").unwrap().description;
    let first = navigate.split(". ").next().unwrap();
    assert!(text.contains(first), "{text}");
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
        .args(["click", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(
        help.contains(engine::tools::find("browser_click").unwrap().description),
        "{help}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_checks_the_browser_and_says_what_to_fix() {
    let cli = Cli::new();
    let healthy = cli.run(&["doctor"]).await;
    let text = String::from_utf8_lossy(&healthy.stdout).to_string();
    assert_eq!(healthy.status.code(), Some(0), "{text}");
    for check in [
        "browser found",
        "version: Chromium",
        "launches headless",
        "a page loads",
    ] {
        assert!(text.contains(check), "{check} missing:\n{text}");
    }
    let clean = testkit::processes::wait_until(Duration::from_secs(15), || {
        left_running(cli.root.path()).is_empty()
    })
    .await;
    assert!(clean, "doctor left its browser running");

    let missing = tokio::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
        .arg("doctor")
        .env("CDPILOT_CHROME", "/nonexistent/chromium")
        .env("CDPILOT_CONFIG", "")
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&missing.stdout);
    assert_eq!(missing.status.code(), Some(1), "{text}");
    assert!(
        text.contains("[FAIL] browser found") && text.contains("Fix:"),
        "{text}"
    );
}

/// Issue 34: on a browser cdpilot did not start, `cdpilot doctor` says
/// what holds there and what does not (WebRTC held by a script in the
/// agent's pages, not by the browser's policy), and still checks the page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_on_an_attached_browser_says_what_holds_and_what_does_not() {
    let chrome = testkit::chromium::UsersChrome::start().await;
    let cli = Cli::new();
    let config = cli.root.path().join("cdpilot.toml");
    std::fs::write(&config, format!("[browser]\ncdp_url = {:?}\n", chrome.ws_url())).unwrap();
    let output = cli
        .command(&["doctor"])
        .env("CDPILOT_CONFIG", &config)
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).to_string();
    assert_eq!(output.status.code(), Some(0), "{text}");
    for line in [
        "What holds on a browser cdpilot did not start:",
        "host-level URL rules hold for every connection",
        "every worker's requests",
        "no WebRTC peer connections in the agent's pages",
        "What does not:",
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
        "a page loads",
    ] {
        assert!(text.contains(line), "doctor says: {line}\n{text}");
    }
    assert!(!text.contains("adopt_tabs"), "{text}");
    // Issue 45: with `[browser] adopt_tabs` it says what the adopted tabs
    // keep and what they lose (the egress gate); on a launched browser the
    // option is a start-up error naming the key.
    let adopting = cli
        .command(&["doctor"])
        .env("CDPILOT_CONFIG", &config)
        .env("CDPILOT_BROWSER_ADOPT_TABS", "true")
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&adopting.stdout).to_string();
    assert_eq!(adopting.status.code(), Some(0), "{text}");
    for line in [
        "adopt_tabs: the first session takes this browser's own tabs",
        "adopt_tabs: the adopted tabs' connections do not go through the egress gate",
    ] {
        assert!(text.contains(line), "doctor says: {line}\n{text}");
    }
    let launched = cli
        .command(&["doctor"])
        .env("CDPILOT_CONFIG", "")
        .env("CDPILOT_BROWSER_ADOPT_TABS", "true")
        .output()
        .await
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&launched.stdout),
        String::from_utf8_lossy(&launched.stderr)
    );
    assert_ne!(launched.status.code(), Some(0), "{text}");
    assert!(
        text.contains("browser.adopt_tabs = true needs a browser cdpilot attaches to"),
        "{text}"
    );
}

/// Issue 34: `cdpilot doctor --extension` cannot reach the user's Chrome
/// (only a running server can), so it says whether a pairing is kept and
/// exactly what holds for that source and what does not: the same lines
/// as the book's "Your own Chrome" page.
#[tokio::test]
async fn doctor_with_the_extension_says_what_holds_and_what_does_not() {
    use server::serve::extension::{WHAT_DOES_NOT_HOLD, WHAT_HOLDS};
    let state = tempfile::tempdir().unwrap();
    let doctor = || {
        tokio::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
            .args(["doctor", "--extension"])
            .env("CDPILOT_STATE_DIR", state.path())
            .env("CDPILOT_CONFIG", "")
            .output()
    };
    let unpaired = doctor().await.unwrap();
    let text = String::from_utf8_lossy(&unpaired.stdout).to_string();
    assert_eq!(unpaired.status.code(), Some(1), "{text}");
    assert!(
        text.contains("[FAIL] paired") && text.contains("cdpilot pair"),
        "{text}"
    );
    let book = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/src/own-chrome.md"
    ))
    .unwrap();
    let book = book.split_whitespace().collect::<Vec<_>>().join(" ");
    for line in WHAT_HOLDS.iter().chain(WHAT_DOES_NOT_HOLD) {
        assert!(text.contains(line), "doctor says: {line}\n{text}");
        assert!(book.contains(line), "own-chrome.md says: {line}");
    }
    std::fs::write(
        state.path().join("extension-tokens"),
        format!("{}\n", "ab".repeat(32)),
    )
    .unwrap();
    let paired = doctor().await.unwrap();
    let text = String::from_utf8_lossy(&paired.stdout).to_string();
    assert_eq!(paired.status.code(), Some(0), "{text}");
    assert!(text.contains("[ok ] paired: 1 pairing(s) kept in"), "{text}");
}

/// Issue 26: `cdpilot handoff` prints the person's link on stderr while it
/// waits, and returns when the `until` condition holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handoff_prints_the_persons_link_and_waits() {
    let site = TestSite::start().await;
    let cli = Cli::new();
    cli.ok(&["open", &site.url("/handoff.html#later")]).await;
    let output = cli
        .run(&["handoff", "Let me in", "--until-text", "Welcome back"])
        .await;
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("A person is needed (Let me in): open http://127.0.0.1:"),
        "{stderr}"
    );
    // Issue 34: the id is `h` and 128 random bits, not a counter.
    let id = stderr
        .split("/handoff/")
        .nth(1)
        .and_then(|rest| rest.split('#').next())
        .unwrap_or_default();
    assert!(
        id.len() == 33 && id.starts_with('h') && id[1..].bytes().all(|b| b.is_ascii_hexdigit()),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("The until condition holds"), "{stdout}");
    // The link's token is on the CLI's stderr (for the person) and nowhere
    // else: not in the result, not in the background server's log.
    let token = stderr
        .split(&format!("/handoff/{id}#"))
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the link's token");
    assert!(token.len() >= 32, "{stderr}");
    assert!(!stdout.contains(token), "the token in the result: {stdout}");
    let log = std::fs::read_to_string(cli.runtime_dir().join("serve.log")).unwrap();
    assert!(log.contains("a person is needed (Let me in)"), "{log}");
    assert!(!log.contains(token), "the token in serve.log: {log}");
    cli.ok(&["stop", "--all"]).await;
}

/// Issue 24's bad input through the CLI: calls of one kept session beyond
/// the 12 it admits (4 running, 8 waiting their turn) answer `busy` at
/// once, with exit code 16 (a temporary failure: try again later). 16
/// calls that never end by themselves are sent at once, so exactly 12 are
/// admitted whatever order they arrive in, and 4 are refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_beyond_a_sessions_line_exit_busy_at_once() {
    use futures_util::stream::{FuturesUnordered, StreamExt};

    let site = TestSite::start().await;
    let cli = Cli::new();
    cli.ok(&["open", &site.url("/index.html")]).await;
    let held = ["eval", "new Promise(() => {})", "--timeout", "120000"];
    let mut calls: FuturesUnordered<_> = (0..16)
        .map(|_| {
            let mut command = cli.command(&held);
            command.stdout(std::process::Stdio::piped());
            command.stderr(std::process::Stdio::piped());
            command.spawn().expect("spawn cdpilot").wait_with_output()
        })
        .collect();
    for _ in 0..4 {
        let refused = tokio::time::timeout(Duration::from_secs(90), calls.next())
            .await
            .expect("a call beyond the line answers at once")
            .unwrap()
            .unwrap();
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(16), "{stderr}");
        assert!(stderr.starts_with("busy: "), "{stderr}");
    }
    // The 12 admitted are still held (none of them can end by itself).
    let early = tokio::time::timeout(Duration::from_millis(500), calls.next()).await;
    assert!(early.is_err(), "an admitted call ended: {early:?}");
    cli.ok(&["stop", "--all"]).await;
}

/// A page that allocates without end crashes its tab (the background
/// server's `[browser] tab_memory_mb` set small through its environment):
/// the call and every later one in that tab exit 17 (`tab_crashed`) until
/// `open` loads a page in it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_tab_exits_tab_crashed_until_opened_again() {
    let site = TestSite::start().await;
    let mut cli = Cli::new();
    cli.env.push(("CDPILOT_BROWSER_TAB_MEMORY_MB", "64".into()));
    let url = site.url("/index.html");
    cli.ok(&["open", &url]).await;
    let grow = "(() => { const kept = []; for (;;) kept.push('x'.repeat(1000) + Math.random()); })()";
    let crashed = cli.run(&["eval", grow, "--timeout", "600000"]).await;
    let stderr = String::from_utf8_lossy(&crashed.stderr);
    assert_eq!(crashed.status.code(), Some(17), "{stderr}");
    assert!(stderr.starts_with("tab_crashed: "), "{stderr}");
    let next = cli.run(&["snapshot"]).await;
    assert_eq!(next.status.code(), Some(17), "every call in the tab says so");
    cli.ok(&["open", &url]).await;
    let value = cli.ok(&["eval", "6 * 7"]).await;
    assert!(value.contains("\n42\n"), "{value}");
    cli.ok(&["stop", "--all"]).await;
}

// Issue 45: `cdpilot open` ended "Take a browser_snapshot to see the
// page", a dialog said "use browser_dialog", a stale ref's error "take a
// browser_snapshot": a shell user types `cdpilot snapshot`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_cli_answer_names_the_cli_verb_not_the_mcp_tool() {
    let site = TestSite::start().await;
    let cli = Cli::new();
    let opened = cli.ok(&["open", &site.url("/index.html")]).await;
    assert!(opened.contains("cdpilot snapshot"), "{opened}");
    let snapshot = cli.ok(&["snapshot"]).await;
    let link = ref_on(&snapshot, "link");
    cli.ok(&["open", &site.url("/dialogs.html")]).await;
    let stale = cli.run(&["click", &link]).await;
    assert_ne!(stale.status.code(), Some(0));
    let said = cli.run(&["eval", "alert('hello')"]).await;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&said.stdout),
        String::from_utf8_lossy(&said.stderr)
    );
    assert!(said.contains("cdpilot dialog"), "{said}");
    let blocked = cli.run(&["snapshot"]).await;
    let _ = blocked;
    cli.ok(&["dialog", "accept"]).await;
    let _ = cli.run(&["tabs", "select", "99"]).await;
    cli.assert_speaks_cli();
    cli.ok(&["stop", "--all"]).await;
}
