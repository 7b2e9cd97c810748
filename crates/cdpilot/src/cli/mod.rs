//! The CLI for shells and shell-driven agents: `cdpilot open URL`,
//! `cdpilot snapshot`, `cdpilot click e3`, … Each call is a thin client of a
//! background `cdpilot serve` (started on first use, see [`server`]) over the
//! WebSocket API, in a session the server keeps under a name (`--session`,
//! default `default`), so refs and tabs carry over from one call to the
//! next. No action is implemented here: every one is a tool of the one
//! dispatch.
//!
//! Owns the mapping from subcommands to tools ([`verbs`]), what is printed
//! (the result's text, or `--json` the structured result) and the exit
//! codes ([`exit_code`]).

pub mod pair;
pub mod replay;
pub mod server;
pub mod trace;
pub mod verbs;
pub mod words;

use std::io::{IsTerminal, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches};
use serde_json::{json, Value};

use server::Unreachable;

/// Exit code when no server could be reached or started.
pub const EXIT_UNREACHABLE: u8 = 15;

/// The exit code of a tool error code: one per class (docs/src/cli.md).
pub fn exit_code(code: &str) -> u8 {
    match code {
        "invalid_argument" => 3,
        "element_stale" => 4,
        "element_not_found" | "ref_unknown" => 5,
        "element_not_interactable" => 6,
        "tab_not_found" | "frame_not_found" => 7,
        "navigation_failed" => 8,
        "permission_denied" | "domain_blocked" => 9,
        "dialog_pending" | "no_dialog" => 10,
        "timeout" => 11,
        "canceled" => 12,
        "evaluate_error" => 13,
        "browser_disconnected" => 14,
        // 15 is EXIT_UNREACHABLE.
        "busy" => 16,
        "tab_crashed" => 17,
        "handoff_declined" | "handoff_pending" | "tab_in_handoff" => 18,
        "ref_changed" => 19,
        _ => 1,
    }
}

/// The options every CLI subcommand takes.
pub fn global_args() -> Vec<Arg> {
    vec![
        Arg::new("session")
            .long("session")
            .value_name("NAME")
            .help("The session to act in, kept by the background server between calls (default: $CDPILOT_SESSION, else default)"),
        Arg::new("json")
            .long("json")
            .action(ArgAction::SetTrue)
            .help("Print the structured result as JSON"),
        Arg::new("timeout")
            .long("timeout")
            .value_name("MS")
            .help("The call's budget in milliseconds"),
        Arg::new("tab")
            .long("tab")
            .value_name("TAB")
            .help("Act in this tab (t2) instead of the active one"),
    ]
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
pub fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}").and_then(|()| stdout.flush());
}

/// The value of a CLI option given after the subcommand or before it.
fn option(sub: &ArgMatches, root: &ArgMatches, name: &str) -> Option<String> {
    sub.get_one::<String>(name)
        .or_else(|| root.get_one::<String>(name))
        .cloned()
}

/// Runs subcommand `name` (its matches `matches`; `root`: the options given
/// before it); returns the process's exit code.
pub fn run(name: &str, matches: &ArgMatches, root: &ArgMatches) -> ExitCode {
    let Some(verb) = verbs::find(name) else {
        eprintln!("cdpilot: unknown subcommand {name:?}; `cdpilot` lists them");
        return ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cdpilot: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let json = matches.get_flag("json") || root.get_flag("json");
    let tab = option(matches, root, "tab");
    let timeout = option(matches, root, "timeout");
    let session = option(matches, root, "session")
        .or_else(|| std::env::var("CDPILOT_SESSION").ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "default".into());
    let outcome = runtime.block_on(async {
        match verb.name {
            "sessions" => sessions(json).await,
            "stop" => stop(&session, matches.get_flag("all"), json).await,
            _ => call(verb, matches, &session, json, tab, timeout).await,
        }
    });
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(Unreachable(why)) => {
            eprintln!("cdpilot: {why}");
            ExitCode::from(EXIT_UNREACHABLE)
        }
    }
}

async fn call(
    verb: &verbs::Verb,
    matches: &ArgMatches,
    session: &str,
    json: bool,
    tab: Option<String>,
    timeout: Option<String>,
) -> Result<u8, Unreachable> {
    let tool = verb.tool.expect("a verb without a tool is handled apart");
    let mut arguments = match verb.arguments(matches) {
        Ok(arguments) => arguments,
        Err(why) => {
            eprintln!("cdpilot {}: {why}", verb.name);
            return Ok(2);
        }
    };
    if let Some(tab) = tab {
        if tool != "browser_tabs" {
            arguments["tab"] = tab.into();
        }
    }
    if let Some(ms) = timeout {
        match ms.parse::<u64>() {
            Ok(ms) => arguments["timeout_ms"] = ms.into(),
            Err(_) => {
                eprintln!("cdpilot: --timeout wants milliseconds, not {ms:?}");
                return Ok(2);
            }
        }
    }
    let server = server::find_or_start().await?;
    let mut progress = Progress::new(tool);
    let outcome = server
        .call(session, tool, arguments, |elapsed| progress.tick(elapsed))
        .await;
    progress.clear();
    match outcome? {
        Ok(mut result) => {
            let saved = match verb.name {
                "screenshot" => save_image(matches, &mut result),
                "pdf" => move_pdf(matches, &mut result),
                _ => Ok(None),
            };
            let saved = match saved {
                Ok(saved) => saved,
                Err(why) => {
                    eprintln!("cdpilot {}: {why}", verb.name);
                    return Ok(1);
                }
            };
            if json {
                result.as_object_mut().map(|o| o.remove("text"));
                out(&serde_json::to_string(&result).unwrap_or_default());
            } else {
                let text = words::in_cli_words(result["text"].as_str().unwrap_or("").trim_end());
                let text = text.as_str();
                match saved {
                    Some(line) if text.is_empty() => out(&line),
                    Some(line) => out(&format!("{line}\n{text}")),
                    None => out(text),
                }
            }
            Ok(0)
        }
        Err(mut error) => {
            for field in ["message", "next_step"] {
                if let Some(said) = error[field].as_str() {
                    error[field] = words::in_cli_words(said).into();
                }
            }
            let code = error["code"].as_str().unwrap_or("internal_error");
            if json {
                out(&json!({ "error": error }).to_string());
            } else {
                let message = error["message"].as_str().unwrap_or("");
                match message.starts_with(code) {
                    true => eprintln!("{message}"),
                    false => eprintln!("{code}: {message}"),
                }
            }
            Ok(exit_code(code))
        }
    }
}

/// Writes a screenshot's image to its file; replaces the base64 in the
/// result by the path. Returns the line to print.
fn save_image(matches: &ArgMatches, result: &mut Value) -> Result<Option<String>, String> {
    use base64::Engine as _;
    let file = matches
        .get_one::<String>("file")
        .cloned()
        .unwrap_or_else(|| "screenshot.png".into());
    let Some(data) = result["images"][0]["data"].as_str() else {
        return Ok(None);
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| format!("the image is not base64: {e}"))?;
    // 0600, as every file cdpilot writes: a page's picture is the user's.
    std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(&file)
        .and_then(|mut f| f.write_all(&bytes))
        .map_err(|e| format!("writing {file}: {e}"))?;
    result["images"][0]["data"] = Value::Null;
    result["images"][0]["saved_to"] = file.clone().into();
    result["saved_to"] = file.clone().into();
    Ok(Some(format!("saved {file} ({} bytes)", bytes.len())))
}

/// Moves the PDF the server wrote (under its `[files] output_dir`) to the
/// file the user named; the result then names that file.
fn move_pdf(matches: &ArgMatches, result: &mut Value) -> Result<Option<String>, String> {
    let (Some(file), Some(written)) = (
        matches.get_one::<String>("file"),
        result["path"].as_str().map(str::to_owned),
    ) else {
        return Ok(None);
    };
    if std::fs::rename(&written, file).is_err() {
        // Another file system: copy, then remove the server's copy.
        std::fs::copy(&written, file).map_err(|e| format!("writing {file}: {e}"))?;
        let _ = std::fs::remove_file(&written);
    }
    result["path"] = file.clone().into();
    let pages = result["pages"].as_u64().unwrap_or(0);
    let bytes = result["bytes"].as_u64().unwrap_or(0);
    result["text"] = format!("saved {file} ({bytes} bytes, {pages} pages)").into();
    Ok(None)
}

async fn sessions(json: bool) -> Result<u8, Unreachable> {
    let Some(server) = server::find().await? else {
        match json {
            true => out("{\"sessions\":[]}"),
            false => out("No background cdpilot serve is running (the next command starts one)."),
        }
        return Ok(0);
    };
    let (status, body) = server.http("GET", "/v1/dashboard/state", None).await?;
    if status != 200 {
        eprintln!("cdpilot: the server answered {status}: {body}");
        return Ok(1);
    }
    let state: Value = serde_json::from_str(&body).unwrap_or_default();
    if json {
        out(&json!({"sessions": state["sessions"]}).to_string());
        return Ok(0);
    }
    let sessions = state["sessions"].as_array().cloned().unwrap_or_default();
    if sessions.is_empty() {
        out("No session is open.");
    }
    for s in sessions {
        let name = s["kept_as"].as_str().unwrap_or("");
        let url = s["tabs"]
            .as_array()
            .and_then(|tabs| tabs.iter().find(|t| t["active"] == true))
            .and_then(|t| t["url"].as_str())
            .unwrap_or("-");
        let last = match &s["last_call"] {
            Value::Null => "no call yet".to_owned(),
            last => words::in_cli_words(&format!(
                "{} → {}",
                last["tool"].as_str().unwrap_or(""),
                last["outcome"].as_str().unwrap_or("")
            )),
        };
        out(&format!(
            "{} {}  client {}  tabs {}  {}  age {}s  last: {}{}",
            s["id"].as_str().unwrap_or(""),
            if name.is_empty() {
                String::new()
            } else {
                format!("({name})")
            },
            s["client"].as_str().unwrap_or("-"),
            s["tabs"].as_array().map_or(0, Vec::len),
            url,
            s["age_s"],
            last,
            match s["dialogs"].as_array().map_or(0, Vec::len) {
                0 => String::new(),
                n => format!("  {n} dialog(s) pending"),
            }
        ));
    }
    out(&format!("Dashboard: {}/#token={}", server.url, server.token));
    Ok(0)
}

async fn stop(session: &str, all: bool, json: bool) -> Result<u8, Unreachable> {
    let Some(server) = server::find().await? else {
        if !json {
            out("No background cdpilot serve is running.");
        }
        return Ok(0);
    };
    let body = match all {
        true => json!({"all": true}),
        false => json!({"session": session}),
    };
    let (status, text) = server.http("POST", "/v1/dashboard/stop", Some(&body)).await?;
    if all {
        if let Some(pid) = server::background_pid() {
            // SIGTERM: the server ends its sessions and the browser, then exits.
            let _ = std::process::Command::new("kill").arg(pid.to_string()).status();
            let gone = wait_gone(pid, Duration::from_secs(15)).await;
            if !gone {
                eprintln!("cdpilot: the background server (pid {pid}) has not exited yet");
                return Ok(1);
            }
        }
    }
    match (status, json) {
        (200, true) => out(&text),
        (200, false) if all => out("Stopped every session and the background server."),
        (200, false) => out(&format!("Stopped session {session}.")),
        (404, _) => {
            eprintln!("cdpilot: there is no session {session:?} to stop");
            return Ok(3);
        }
        _ => {
            eprintln!("cdpilot: the server answered {status}: {text}");
            return Ok(1);
        }
    }
    Ok(0)
}

async fn wait_gone(pid: u32, within: Duration) -> bool {
    let deadline = std::time::Instant::now() + within;
    while std::time::Instant::now() < deadline {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Gone, or a zombie nobody reaps (its parent was an earlier CLI call).
        if state.is_empty() || state.split(") ").nth(1).is_some_and(|s| s.starts_with('Z')) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// A progress line on stderr for calls past a second, only on a terminal.
struct Progress {
    tool: &'static str,
    terminal: bool,
    shown: bool,
}

impl Progress {
    fn new(tool: &'static str) -> Progress {
        Progress {
            tool,
            terminal: std::io::stderr().is_terminal(),
            shown: false,
        }
    }

    fn tick(&mut self, elapsed: Duration) {
        if self.terminal && elapsed >= Duration::from_secs(1) {
            eprint!("\r{} … {:.1} s ", self.tool, elapsed.as_secs_f64());
            self.shown = true;
        }
    }

    fn clear(&mut self) {
        if self.shown {
            eprint!("\r\x1b[K");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_code_has_a_nonzero_exit_code_of_its_class() {
        let codes = [
            "invalid_argument",
            "element_stale",
            "element_not_found",
            "element_not_interactable",
            "tab_not_found",
            "frame_not_found",
            "navigation_failed",
            "permission_denied",
            "domain_blocked",
            "dialog_pending",
            "no_dialog",
            "timeout",
            "canceled",
            "evaluate_error",
            "browser_disconnected",
            "internal_error",
            "busy",
            "tab_crashed",
            "handoff_declined",
            "handoff_pending",
            "tab_in_handoff",
            "ref_unknown",
            "ref_changed",
        ];
        for code in codes {
            let exit = exit_code(code);
            assert!(
                exit != 0 && exit != 2 && exit != EXIT_UNREACHABLE,
                "{code} → {exit}"
            );
        }
        assert_ne!(exit_code("element_stale"), exit_code("timeout"));
        let classes: std::collections::HashSet<u8> = codes.iter().map(|c| exit_code(c)).collect();
        assert_eq!(classes.len(), 17, "one exit code per class");
    }
}
