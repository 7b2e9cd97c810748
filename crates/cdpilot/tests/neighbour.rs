//! The local neighbour as attacker (issue 41, findings 1 and 6): another
//! user of the machine (uid 65534, `setpriv`: this binary runs itself as
//! the impostor, which logs every connection and byte it receives) binds
//! a port a file of cdpilot's names: serve's `serve.json` after a `kill
//! -9`, `mcp --extension`'s `extension-mcp.json` that `cdpilot pair` reads,
//! Chrome's `DevToolsActivePort` that `--auto-connect` reads. Each must get
//! nothing, not even the TCP connect (the owner is checked before), and
//! stall nothing: the CLI says which file it refused and why, and starts
//! its own serve. A program of this user answering a pairing link for
//! another server is refused by `pair`. The extension asks before it pairs
//! with another server, and a peer that stalls its handshake (silent, or
//! out of turn and never closing) holds the relay up only until its
//! deadline. Credentials in `cdp_url` and `endpoints` never reach doctor's
//! output, a tool error or `/metrics`; the audit and timings files are
//! created 0600.
//!
//! The tests that need another uid run only as root (CI); elsewhere they
//! say so and pass.

mod support;

use std::io::{BufRead, Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{json, Value};
use support::extension::{pair_link, paired, status, UserChrome, EXTENSION_ID};
use support::serve::Serve;

const IMPOSTOR: &str = "CDPILOT_NEIGHBOUR_PORT";
const IMPOSTOR_ANSWERS_FOR: &str = "CDPILOT_NEIGHBOUR_LINK_PORT";

/// What a listener heard: connections accepted, bytes received.
#[derive(Debug, Default)]
struct Heard {
    connections: usize,
    received: String,
}

/// Accepts on `listener` until the process ends, recording every byte, and
/// answers any HTTP request with 200 and a pairing link naming
/// `ws://127.0.0.1:link_port` (what a forger would say to `/healthz`,
/// `/v1/extension/status` and `/v1/extension/pair` alike).
fn record(listener: std::net::TcpListener, link_port: u16, heard: Arc<Mutex<Heard>>) {
    for stream in listener.incoming().flatten() {
        heard.lock().unwrap().connections += 1;
        let heard = heard.clone();
        std::thread::spawn(move || {
            let mut stream = stream;
            let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = stream.read(&mut buf) {
                heard.lock().unwrap().received += &String::from_utf8_lossy(&buf[..n]);
                let body = json!({
                    "link": format!("chrome-extension://{EXTENSION_ID}/pair.html#server=ws://127.0.0.1:{link_port}&code=forged"),
                    "extension_id": EXTENSION_ID,
                    "expires_in_s": 300,
                })
                .to_string();
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
            }
        });
    }
}

/// The impostor's process (this binary, run as uid 65534): binds the port
/// in `$CDPILOT_NEIGHBOUR_PORT` (0: any), says which, records until its
/// stdin closes, then prints what it heard.
#[test]
fn neighbour_impostor() {
    let Ok(port) = std::env::var(IMPOSTOR) else { return };
    let link_port = std::env::var(IMPOSTOR_ANSWERS_FOR)
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let listener = std::net::TcpListener::bind(("127.0.0.1", port.parse::<u16>().unwrap()))
        .expect("the neighbour binds the port");
    println!("NEIGHBOUR_PORT={}", listener.local_addr().unwrap().port());
    let heard = Arc::new(Mutex::new(Heard::default()));
    let recording = heard.clone();
    std::thread::spawn(move || record(listener, link_port, recording));
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    let heard = heard.lock().unwrap();
    println!(
        "NEIGHBOUR_HEARD={}",
        json!({"connections": heard.connections, "received": heard.received})
    );
}

/// Another user's listener, run by [`neighbour_impostor`].
struct Neighbour {
    child: std::process::Child,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    port: u16,
}

/// Whether this test can become another user (root can; CI runs as root).
fn can_be_another_user() -> bool {
    let root = std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(1) == 0;
    if !root {
        eprintln!("skipped: only root can run the neighbour as uid 65534");
    }
    root
}

impl Neighbour {
    /// Uid 65534 binds `port` (0: any free one).
    fn bind(port: u16) -> Neighbour {
        let mut child = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(std::env::current_exe().unwrap())
            .args(["--exact", "neighbour_impostor", "--nocapture", "--test-threads=1"])
            .env(IMPOSTOR, port.to_string())
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("setpriv (util-linux)");
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let port = loop {
            let mut line = String::new();
            assert!(
                stdout.read_line(&mut line).unwrap() > 0,
                "the neighbour did not bind"
            );
            // The harness writes `test neighbour_impostor ... ` first.
            if let Some((_, port)) = line.trim().split_once("NEIGHBOUR_PORT=") {
                break port.parse().unwrap();
            }
        };
        Neighbour { child, stdout, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Ends the neighbour: what it heard.
    fn heard(mut self) -> Heard {
        drop(self.child.stdin.take());
        let mut rest = String::new();
        self.stdout.read_to_string(&mut rest).unwrap();
        let _ = self.child.wait();
        let line = rest
            .lines()
            .find_map(|l| l.split_once("NEIGHBOUR_HEARD=").map(|(_, v)| v))
            .expect("the neighbour says what it heard");
        let value: Value = serde_json::from_str(line).unwrap();
        Heard {
            connections: value["connections"].as_u64().unwrap() as usize,
            received: value["received"].as_str().unwrap().to_owned(),
        }
    }
}

/// A private runtime directory (0700) for the CLI.
struct Runtime {
    root: tempfile::TempDir,
}

impl Runtime {
    fn new() -> Runtime {
        let root = tempfile::Builder::new()
            .prefix("cdpilot-neighbour-")
            .tempdir()
            .unwrap();
        std::fs::create_dir(root.path().join("run")).unwrap();
        std::fs::set_permissions(root.path().join("run"), std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::create_dir(root.path().join("tmp")).unwrap();
        Runtime { root }
    }

    fn dir(&self) -> PathBuf {
        self.root.path().join("run")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_cdpilot"));
        command
            .args(args)
            .env("CDPILOT_RUNTIME_DIR", self.dir())
            .env("TMPDIR", self.root.path().join("tmp"))
            .env("CDPILOT_CHROME", testkit::chromium::executable())
            .env("CDPILOT_CONFIG", "")
            .env_remove("CDPILOT_SESSION")
            .env_remove("CDPILOT_SERVE_TOKEN");
        command
    }

    /// Runs the CLI (bounded: nothing it meets may stall it).
    async fn run(&self, args: &[&str]) -> (Output, String) {
        let mut command = tokio::process::Command::from(self.command(args));
        command.kill_on_drop(true);
        let output = tokio::time::timeout(Duration::from_secs(60), command.output())
            .await
            .expect("a CLI call stalled over 60 s")
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        eprintln!(
            "$ cdpilot {}\n{said}[exit {:?}]",
            args.join(" "),
            output.status.code()
        );
        (output, said)
    }

    fn write(&self, name: &str, value: Value) {
        let path = self.dir().join(name);
        std::fs::write(&path, value.to_string()).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
}

/// A live process of this user, whose pid a forged file may name.
fn live_process() -> std::process::Child {
    Command::new("sleep").arg("120").spawn().unwrap()
}

fn url_and_pid(path: &Path) -> Option<(String, u32)> {
    let value: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    Some((value["url"].as_str()?.to_owned(), value["pid"].as_u64()? as u32))
}

#[tokio::test]
async fn a_neighbour_on_serves_freed_port_gets_nothing_and_the_cli_starts_its_own() {
    if !can_be_another_user() {
        return;
    }
    let runtime = Runtime::new();
    let state = runtime.dir().join("serve.json");
    // The CLI's background serve, as the CLI starts it, killed -9: its
    // state file stays behind.
    let token = "0123456789abcdef0123456789abcdef0123456789abcdef";
    std::fs::write(runtime.dir().join("token"), token).unwrap();
    let mut serve = runtime
        .command(&[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--caps",
            "all",
            "--idle-exit",
            "--state-file",
        ])
        .arg(&state)
        .env("CDPILOT_SERVE_TOKEN", token)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let (url, old_pid) = loop {
        if let Some(found) = url_and_pid(&state) {
            break found;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "serve never listened"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    serve.kill().unwrap();
    serve.wait().unwrap();
    assert!(state.exists(), "kill -9 leaves serve.json behind");
    let port: u16 = url.rsplit(':').next().unwrap().parse().unwrap();
    let neighbour = Neighbour::bind(port);

    // The next CLI call: the file is refused (its process is dead), the
    // neighbour gets nothing, the call runs in a serve of the CLI's own.
    let (output, said) = runtime.run(&["tabs"]).await;
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(
        said.contains(&state.display().to_string()) && said.contains("not running"),
        "{said}"
    );
    let (_, new_pid) = url_and_pid(&state).expect("the CLI's own serve");
    assert_ne!(new_pid, old_pid);
    runtime.run(&["stop", "--all"]).await;

    // A file naming a live process of this user and the neighbour's port:
    // refused by the owner found, said with the file's name.
    let mut alive = live_process();
    runtime.write("serve.json", json!({"url": neighbour.url(), "pid": alive.id()}));
    let (output, said) = runtime.run(&["sessions"]).await;
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(
        said.contains("serve.json") && said.contains("uid 65534"),
        "{said}"
    );
    assert!(said.contains("No background cdpilot serve"), "{said}");
    assert!(!state.exists(), "the refused file is removed");
    let _ = alive.kill();
    let _ = alive.wait();

    let heard = neighbour.heard();
    assert_eq!(heard.connections, 0, "the neighbour was connected to: {heard:?}");
    assert!(!heard.received.contains(token), "{heard:?}");
}

#[tokio::test]
async fn pair_trusts_only_this_users_listener_and_the_address_it_asked() {
    if !can_be_another_user() {
        return;
    }
    let runtime = Runtime::new();
    let neighbour = Neighbour::bind(0);
    // `mcp --extension`'s file, naming a live process of this user and the
    // neighbour's port (the listener died, a neighbour took its port).
    let mut alive = live_process();
    runtime.write(
        "extension-mcp.json",
        json!({"url": neighbour.url(), "token": "the-listeners-token", "pid": alive.id()}),
    );
    let (output, said) = runtime.run(&["pair"]).await;
    assert_ne!(output.status.code(), Some(0), "{said}");
    assert!(
        said.contains("extension-mcp.json") && said.contains("uid 65534"),
        "{said}"
    );
    assert!(
        !String::from_utf8_lossy(&output.stdout).contains("chrome-extension://"),
        "{said}"
    );
    let _ = alive.kill();
    let _ = alive.wait();
    let heard = neighbour.heard();
    assert_eq!(heard.connections, 0, "the neighbour was connected to: {heard:?}");

    // A listener of this user that answers a link for another server.
    let forger = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let forger_port = forger.local_addr().unwrap().port();
    let heard = Arc::new(Mutex::new(Heard::default()));
    let recording = heard.clone();
    std::thread::spawn(move || record(forger, 1, recording));
    let server = format!("http://127.0.0.1:{forger_port}");
    let (output, said) = runtime.run(&["pair", "--server", &server, "--token", "t"]).await;
    assert_ne!(output.status.code(), Some(0), "{said}");
    assert!(said.contains("another server"), "{said}");
    assert!(
        !String::from_utf8_lossy(&output.stdout).contains("chrome-extension://"),
        "{said}"
    );
    assert_eq!(
        heard.lock().unwrap().connections,
        1,
        "this user's own listener is asked"
    );
}

#[tokio::test]
async fn a_devtools_port_a_neighbour_holds_is_a_start_up_error_naming_the_file() {
    if !can_be_another_user() {
        return;
    }
    let runtime = Runtime::new();
    let neighbour = Neighbour::bind(0);
    // Chrome quit, its file stayed; another user's forwarder has the port.
    let profile = tempfile::tempdir().unwrap();
    let file = profile.path().join("DevToolsActivePort");
    std::fs::write(
        &file,
        format!("{}\n/devtools/browser/left-behind\n", neighbour.port),
    )
    .unwrap();
    let (output, said) = runtime
        .run(&[
            "doctor",
            "--auto-connect",
            "--user-data-dir",
            profile.path().to_str().unwrap(),
        ])
        .await;
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&file.display().to_string()) && said.contains("uid 65534"),
        "{said}"
    );
    let heard = neighbour.heard();
    assert_eq!(heard.connections, 0, "the neighbour was connected to: {heard:?}");
}

#[tokio::test]
async fn credentials_in_cdp_url_and_endpoints_are_masked_and_written_files_are_0600() {
    let runtime = Runtime::new();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let url = format!("ws://me:hunter22@127.0.0.1:{port}/devtools/browser/x?token=s3cret-token");
    let leaks = |text: &str| text.contains("hunter22") || text.contains("s3cret-token");

    // doctor, with the audit and timings files it writes.
    let out = runtime.root.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let config = out.join("cdpilot.toml");
    std::fs::write(
        &config,
        format!("[audit]\nfile = {:?}\n", out.join("audit.jsonl")),
    )
    .unwrap();
    let mut doctor = runtime.command(&["doctor", "--cdp-url", &url]);
    doctor.env("CDPILOT_CONFIG", &config);
    let output = tokio::process::Command::from(doctor).output().await.unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!leaks(&said), "{said}");
    assert!(said.contains("me:***@127.0.0.1"), "{said}");

    // A tool error the model reads.
    let (mut mcp, _tmp) = support::spawn_cdpilot_with(&["--cdp-url", &url]);
    mcp.initialize().await;
    let error = mcp.call("browser_navigate", json!({"url": "about:blank"})).await;
    let text = support::text_of(&error);
    assert!(!text.is_empty() && !leaks(&text), "{error}");

    // `/metrics`' endpoint labels.
    let timings = out.join("timings.jsonl");
    let serve = Serve::start_with_env(
        "",
        &["--endpoint", &url],
        &[("CDPILOT_TIMINGS", timings.to_str().unwrap())],
    )
    .await;
    let metrics = serve.get("/metrics").await;
    assert!(metrics.contains("cdpilot_browser_endpoints_up"), "{metrics}");
    assert!(!leaks(&metrics), "{metrics}");
    // A call placed on that endpoint: its error and serve's log.
    let mut client = serve.mcp_client();
    client.initialize().await;
    let error = client
        .call("browser_navigate", json!({"url": "about:blank"}))
        .await;
    assert!(!leaks(&error.to_string()), "{error}");
    let log = serve.log.lock().unwrap().join("\n");
    assert!(!leaks(&log), "{log}");

    // What they wrote, readable by this user only (the process umask
    // would have made them 0644).
    for file in [out.join("audit.jsonl"), timings] {
        let mode = std::fs::metadata(&file).expect("written").permissions().mode();
        assert_eq!(mode & 0o077, 0, "{} is {mode:o}", file.display());
    }
}

/// The page of a pairing link: what its status says once settled.
async fn pairing_page_says(chrome: &UserChrome, link: &str) -> String {
    let page = chrome.open(link).await;
    let page = chrome.session(&page).await;
    let said = "new Promise(r => { const go = () => { const s = document.getElementById('status'); s && s.className ? r(s.className + ': ' + s.textContent) : setTimeout(go, 50); }; go(); })";
    UserChrome::eval(&page, said).await.as_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_extension_asks_before_another_pairing_and_no_peer_stalls_its_relay() {
    let (mut first, chrome) = paired("").await;
    // A link from another server (which a program of this user printed):
    // the person is asked; nothing changes until they answer.
    let other = Serve::start("", &["--extension"]).await;
    let said = pairing_page_says(&chrome, &pair_link(&other)).await;
    assert!(
        said.starts_with("error") && said.contains(&format!("paired with ws://{}", first.authority)),
        "{said}"
    );
    assert_eq!(status(&other).await["connected"], false);
    assert_eq!(status(&first).await["connected"], true);
    drop(other);

    // The paired server dies; a peer takes its port. Its first connection
    // it accepts and never answers, its second it answers out of turn and
    // never closes: each must end (the deadline, the socket forgotten at
    // once) and the relay dial again.
    let _ = first.child.kill().await;
    let _ = first.child.wait().await;
    let staller = tokio::net::TcpListener::bind(&first.authority).await.unwrap();
    let mut held = Vec::new();
    let third = tokio::time::timeout(Duration::from_secs(40), async {
        for n in 1.. {
            let (stream, _) = staller.accept().await.unwrap();
            let Ok(mut socket) = tokio_tungstenite::accept_async(stream).await else {
                continue;
            };
            if n == 2 {
                let hello = socket.next().await;
                assert!(format!("{hello:?}").contains("hello"), "{hello:?}");
                use futures_util::SinkExt;
                let ack = json!({"type": "ack"}).to_string();
                let _ = socket
                    .send(tokio_tungstenite::tungstenite::Message::text(ack))
                    .await;
            }
            // Held open, never read again: a close frame is never answered.
            held.push(socket);
            if held.len() == 3 {
                return;
            }
        }
    })
    .await;
    assert!(
        third.is_ok(),
        "the relay stalled after {} connection(s) to a peer that never answers",
        held.len()
    );
}
