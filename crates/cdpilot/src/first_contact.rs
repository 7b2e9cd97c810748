//! First contact: what `cdpilot` alone prints (every subcommand, one line
//! each), what `cdpilot mcp` says when a person runs it from a terminal,
//! and `cdpilot doctor` (is the browser there, which version, does it
//! launch headless and load a page; what to fix when not).

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use engine::{Config, Engine};

use crate::cli::{self, out};

/// `cdpilot` with no arguments: every subcommand with one line.
pub fn list_subcommands() {
    out("cdpilot: drive a real Chromium safely and fast over CDP, for AI agents.\n");
    out("Servers:");
    for (name, what) in [
        (
            "mcp",
            "Serve MCP over stdio (add this command to your MCP client).",
        ),
        (
            "serve",
            "Serve many sessions over HTTP: MCP at /mcp, the WebSocket API at /v1/ws, a dashboard at /.",
        ),
        (
            "tools",
            "Print the tool definitions (name, description, argument schema).",
        ),
        (
            "doctor",
            "Check the browser: found, its version, launches headless, loads a page.",
        ),
    ] {
        out(&format!("  {name:<11}{what}"));
    }
    out("\nTraces (`--trace DIR` on mcp or serve records every session):");
    for (name, what) in [
        (
            "replay",
            "Run a trace's calls again without the model, each ref re-found by its role and name.",
        ),
        (
            "trace",
            "Read a trace: `trace har DIR` (HAR 1.2), `trace export DIR --cli` (a shell script).",
        ),
    ] {
        out(&format!("  {name:<11}{what}"));
    }
    out("\nBrowser commands (each one tool call in a background `cdpilot serve`, started on first use):");
    for verb in cli::verbs::all() {
        let about = verb
            .command()
            .get_about()
            .map(|a| a.to_string())
            .unwrap_or_default();
        out(&format!("  {:<11}{about}", verb.name));
    }
    out("\n`cdpilot <command> --help` says more; --session NAME keeps sessions apart, --json prints structured results.");
}

/// `cdpilot mcp` from a terminal: a person, not an MCP client, started it.
pub fn mcp_banner() {
    if !std::io::stdin().is_terminal() {
        return;
    }
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "cdpilot".into());
    eprintln!(
        "cdpilot mcp: an MCP server on stdio (JSON-RPC on stdin/stdout) that drives a real Chromium.\n\
         It is meant to be started by an MCP client, not typed at. Add this to your client's configuration:\n\n{}\n\n\
         To drive a browser from a shell instead, run `cdpilot` for the list of commands. Ctrl-D or Ctrl-C ends this.",
        mcp_snippet(&exe)
    );
}

/// The `mcpServers` entry, `command` before `args` as every client's docs
/// show it (serde_json's maps sort their keys).
fn mcp_snippet(exe: &str) -> String {
    let exe = serde_json::Value::from(exe);
    format!(
        "{{\n  \"mcpServers\": {{\n    \"cdpilot\": {{\n      \"command\": {exe},\n      \"args\": [\"mcp\"]\n    }}\n  }}\n}}"
    )
}

/// One check's outcome, printed as it is known.
fn report(ok: bool, what: &str, detail: &str) {
    let mark = if ok { "ok " } else { "FAIL" };
    out(&format!("[{mark}] {what}: {detail}"));
}

/// What holds on a browser cdpilot did not start (`cdp_url`, endpoints,
/// auto-connect): the same lines as the book's threat model.
const NOT_STARTED_HOLDS: &[&str] = &[
    "every session in a browser context of its own, whose connections go through cdpilot's egress gate: host-level URL rules hold for every connection (every spelling of a host, every address its name resolves to)",
    "path rules at the request stage for documents, iframes and popups, and for every worker's requests (its blocklist); over plain http the gate judges every request's whole URL, in every spelling",
    "no WebRTC peer connections in the agent's pages (taken away before the page's own scripts run, in new frames and popups too, and in every realm a page reaches in a popup before its session exists): no STUN over UDP around the gate",
];
const NOT_STARTED_DOES_NOT_HOLD: &[&str] = &[
    "the browser's own WebRTC IP policy is not cdpilot's to set: WebRTC is held by a script in the agent's pages, not by the browser (a popup's frame navigated to a new document before the popup's own session installed the script is a race it does not prove closed); start Chrome with --webrtc-ip-handling-policy=disable_non_proxied_udp to have the browser hold it",
    "over https, a worker's request is judged by path only as its rules are written (Chrome's blocklist); the gate sees only host:port there",
    "with auto-connect, each new page and shared or service worker of yours is attached for a moment to see that it is not the agent's, then let go, nothing enabled in it",
];

/// What changes under `[browser] adopt_tabs = true` (the first session
/// takes the browser's own tabs, in its default context).
const ADOPTED_HOLDS: &[&str] = &[
    "adopt_tabs: the first session takes this browser's own tabs (its default context; one session at a time, others get contexts of their own); in them the request stage judges every document, iframe and popup by the URL rules, the WebRTC and no-webdriver scripts run (in the page already there too), and every worker's requests are judged by path",
];
const ADOPTED_DOES_NOT_HOLD: &[&str] = &[
    "adopt_tabs: the adopted tabs' connections do not go through the egress gate (a default context takes no proxy): a sub-resource, WebSocket or worker connection to a denied host is refused only where the request stage sees it (documents always, sub-resources with [policy] resources = true); the tabs' cookies and storage are the user's, and what they did before the session attached is not judged",
];

/// Prints what holds on a browser cdpilot did not start, and what does not.
fn not_started_promises(adopt_tabs: bool) {
    out("
What holds on a browser cdpilot did not start:");
    let adopted = |lines: &'static [&'static str]| if adopt_tabs { lines } else { &[] };
    for line in NOT_STARTED_HOLDS.iter().chain(adopted(ADOPTED_HOLDS)) {
        out(&format!("  - {line}"));
    }
    out("What does not:");
    for line in NOT_STARTED_DOES_NOT_HOLD
        .iter()
        .chain(adopted(ADOPTED_DOES_NOT_HOLD))
    {
        out(&format!("  - {line}"));
    }
    out("");
}

/// `cdpilot doctor --extension`: the user's Chrome is reached only through
/// a running server, so this says whether a pairing is kept, and exactly
/// what holds for that source and what does not.
fn extension_doctor() -> ExitCode {
    use server::serve::extension::{WHAT_DOES_NOT_HOLD, WHAT_HOLDS};
    report(
        true,
        "browser",
        "your own Chrome through the cdpilot extension (relay protocol 2)",
    );
    let dir = server::serve::extension_store::state_dir();
    let file = dir.as_ref().map(|d| d.join("extension-tokens"));
    let kept = file
        .as_ref()
        .and_then(|f| std::fs::read_to_string(f).ok())
        .map(|t| t.lines().filter(|l| l.trim().len() == 64).count())
        .unwrap_or(0);
    let paired = kept > 0;
    match &file {
        Some(file) if paired => report(
            true,
            "paired",
            &format!("{kept} pairing(s) kept in {}", file.display()),
        ),
        _ => report(
            false,
            "paired",
            "no pairing kept yet. Fix: run `cdpilot serve --extension` (or `cdpilot mcp --extension`), then `cdpilot pair` and open the link in your Chrome",
        ),
    }
    out("\nWhat holds with the extension:");
    for line in WHAT_HOLDS {
        out(&format!("  - {line}"));
    }
    out("What does not:");
    for line in WHAT_DOES_NOT_HOLD {
        out(&format!("  - {line}"));
    }
    match paired {
        true => ExitCode::SUCCESS,
        false => ExitCode::FAILURE,
    }
}

/// `cdpilot doctor`: exit 0 when the browser works, 1 with what to fix.
pub async fn doctor(mut config: Config) -> ExitCode {
    // The runtime directory's state files, as the one rule for local peers
    // judges them (a refused one is not the browser's failure: the CLI
    // removes it and starts a serve of its own).
    for (ok, line) in cli::server::state_report() {
        report(ok, "state file", &line);
    }
    if config.browser.source == engine::config::Source::Extension {
        return extension_doctor();
    }
    let attach = !config.browser.cdp_url.is_empty();
    if config.browser.source == engine::config::Source::AutoConnect {
        report(
            true,
            "browser",
            "auto-connecting to your running Chrome (its DevToolsActivePort)",
        );
        not_started_promises(false);
    } else if attach {
        report(
            true,
            "browser",
            &format!(
                "attaching to {} (browser.cdp_url)",
                engine::masked::url(&config.browser.cdp_url)
            ),
        );
        not_started_promises(config.browser.adopt_tabs);
    } else {
        let executable = match config.browser.executable.as_str() {
            "" => cdp::launch::find_executable().map_err(|e| e.to_string()),
            path => Ok(std::path::PathBuf::from(path)),
        };
        let executable = match executable {
            Ok(path) if path.exists() => path,
            Ok(path) => {
                report(false, "browser found", &format!("{} does not exist. Fix: install Chromium (apt-get install chromium) or point browser.executable / $CDPILOT_CHROME at it.", path.display()));
                return ExitCode::FAILURE;
            }
            Err(why) => {
                report(false, "browser found", &why);
                return ExitCode::FAILURE;
            }
        };
        report(true, "browser found", &executable.display().to_string());
        match std::process::Command::new(&executable).arg("--version").output() {
            Ok(output) if output.status.success() => {
                report(true, "version", String::from_utf8_lossy(&output.stdout).trim())
            }
            Ok(output) => {
                report(
                    false,
                    "version",
                    &format!(
                        "`{} --version` failed: {}. Fix: reinstall the browser.",
                        executable.display(),
                        String::from_utf8_lossy(&output.stderr).trim()
                    ),
                );
                return ExitCode::FAILURE;
            }
            Err(e) => {
                report(
                    false,
                    "version",
                    &format!(
                        "cannot run {}: {e}. Fix: check its permissions.",
                        executable.display()
                    ),
                );
                return ExitCode::FAILURE;
            }
        }
        config.browser.executable = executable.display().to_string();
        config.browser.headless = true;
    }
    let (url, site) = match one_page_site() {
        Ok(site) => site,
        Err(e) => {
            report(false, "test page", &format!("cannot listen on loopback: {e}"));
            return ExitCode::FAILURE;
        }
    };
    let engine = match Engine::start(config) {
        Ok(engine) => Arc::new(engine),
        Err(why) => {
            report(false, "configuration", &why);
            return ExitCode::FAILURE;
        }
    };
    // Attached (cdp_url, auto-connect): nothing is launched, and the
    // error's own next step is the fix.
    let launching = !attach && config_source_is_launch(&engine);
    let started = std::time::Instant::now();
    let call = engine::dispatch::call(
        engine.session(),
        "browser_navigate",
        serde_json::json!({"url": url, "timeout_ms": 30000}),
        Default::default(),
    )
    .await;
    let code = match call {
        Ok(output) if output.data["title"] == "cdpilot doctor" => {
            let (what, detail) = match launching {
                true => ("launches headless", "launch included"),
                false => ("attaches", "attach included"),
            };
            report(
                true,
                what,
                &format!("and answers CDP ({} ms, {detail})", started.elapsed().as_millis()),
            );
            report(true, "a page loads", &format!("{url} → title \"cdpilot doctor\""));
            out("\nAll good: `cdpilot open https://example.com` or add `cdpilot mcp` to your MCP client.");
            ExitCode::SUCCESS
        }
        Ok(output) => {
            report(false, "a page loads", &format!("the test page loaded with title {} instead. Fix: check proxy settings and browser flags.", output.data["title"]));
            ExitCode::FAILURE
        }
        Err(error) => {
            let fix = match error.code.as_str() {
                _ if !launching => format!("Fix: {}", error.next_step),
                "browser_disconnected" | "internal_error" => "Fix: run the browser by hand with --headless --remote-debugging-port=0 to see why it fails (missing libraries, a sandbox that needs --no-sandbox as root, no /dev/shm); set [browser] args in cdpilot.toml.".to_string(),
                "timeout" => "Fix: the browser started too slowly or not at all; try again, or check the machine's load and the browser's flags.".to_string(),
                _ => "Fix: see the message above.".to_string(),
            };
            report(
                false,
                match launching {
                    true => "launches headless and loads a page",
                    false => "attaches and loads a page",
                },
                &format!("{}: {}\n       {fix}", error.code, error.message),
            );
            ExitCode::FAILURE
        }
    };
    engine.shutdown().await;
    drop(site);
    code
}

/// Whether the engine launches its browser (`[browser] source = "launch"`).
fn config_source_is_launch(engine: &Engine) -> bool {
    engine.config().browser.source == engine::config::Source::Launch
}

/// A loopback HTTP server answering every request with one small page;
/// runs on a thread until the process exits.
fn one_page_site() -> std::io::Result<(String, std::thread::JoinHandle<()>)> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}/", listener.local_addr()?);
    let thread = std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let body = "<!doctype html><title>cdpilot doctor</title><p>ok</p>";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    Ok((url, thread))
}

#[cfg(test)]
mod tests {
    // Issue 45: `args` came before `command` (the keys sorted).
    #[test]
    fn the_mcp_snippet_says_command_then_args_and_is_json() {
        let snippet = super::mcp_snippet("/opt/c d\"pilot");
        let command = snippet.find("\"command\"").unwrap();
        let args = snippet.find("\"args\"").unwrap();
        assert!(command < args, "{snippet}");
        let parsed: serde_json::Value = serde_json::from_str(&snippet).expect("JSON");
        assert_eq!(
            parsed,
            serde_json::json!({"mcpServers": {"cdpilot": {"command": "/opt/c d\"pilot", "args": ["mcp"]}}})
        );
    }
}
