//! `cdpilot trace har DIR` (the trace's requests as HAR 1.2, on stdout),
//! `cdpilot trace export DIR --cli` (its run as a shell script of
//! `cdpilot` commands), `cdpilot trace video DIR` (a WebM of its
//! screenshots: `engine::trace::video`) and `cdpilot trace view DIR` (its
//! timeline, served on loopback behind the dashboard's guard:
//! `server::serve::dashboard::timeline`). All read the trace only (the
//! video writes its one file); a trace that cannot be read is named by
//! file and line, exit code 2.

use std::path::PathBuf;
use std::process::ExitCode;

use engine::trace::read::read;
use engine::trace::{RequestRecord, Step};
use serde_json::{Map, Value};

/// What `cdpilot trace` does.
#[derive(clap::Subcommand)]
pub enum TraceCommand {
    /// Print the trace's requests as HAR 1.2 (Chrome DevTools' Network panel imports it).
    Har {
        /// The trace directory.
        dir: PathBuf,
    },
    /// Print the trace's run as a shell script of cdpilot commands.
    Export {
        /// The trace directory.
        dir: PathBuf,
        /// As `cdpilot` CLI commands (the one form so far).
        #[arg(long, required = true)]
        cli: bool,
    },
    /// Make a video of the trace (VP9 in WebM, with ffmpeg): its screencast frames ([trace] video), else each acting step's screenshot; captioned, the target outlined.
    Video {
        /// The trace directory.
        dir: PathBuf,
        /// Where to write it (default DIR/video.webm).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Frames a second (1 to 60).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=60), default_value_t = engine::trace::video::DEFAULT_FPS)]
        fps: u32,
        /// Keep ffmpeg's inputs (the filter script, the captions) and print where they are.
        #[arg(long)]
        keep_work: bool,
        /// Made of the steps' screenshots even when the trace kept its screencast's frames.
        #[arg(long)]
        steps: bool,
    },
    /// Serve the trace's timeline (steps, screenshots, snapshots, console, requests) on loopback; prints its link.
    View {
        /// A trace directory, or a directory of them ([trace] dir).
        dir: PathBuf,
        /// Where to listen (loopback only).
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: String,
    },
}

/// Runs `command`; its exit code.
pub fn run(command: TraceCommand) -> ExitCode {
    let dir = match &command {
        TraceCommand::Har { dir } | TraceCommand::Export { dir, .. } => dir,
        TraceCommand::View { dir, listen } => return view(dir.clone(), listen),
        TraceCommand::Video {
            dir,
            out,
            fps,
            keep_work,
            steps,
        } => {
            let options = engine::trace::video::Options {
                out: out.clone(),
                fps: *fps,
                keep_work: *keep_work,
                steps_only: *steps,
            };
            return video(dir, &options);
        }
    };
    let trace = match read(dir) {
        Ok(trace) => trace,
        Err(e) => {
            eprintln!("cdpilot trace: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(cut) = &trace.cut {
        eprintln!("cdpilot trace: {cut}; reading the steps before it");
    }
    match command {
        TraceCommand::Har { .. } => {
            let requests: Vec<RequestRecord> = trace.steps.into_iter().flat_map(|s| s.requests).collect();
            let har = engine::trace::har::log(&requests);
            super::out(&serde_json::to_string_pretty(&har).unwrap_or_default());
        }
        TraceCommand::Export { .. } => super::out(&script(&trace.steps, &dir.display().to_string())),
        TraceCommand::View { .. } | TraceCommand::Video { .. } => unreachable!("done above"),
    }
    ExitCode::SUCCESS
}

/// `cdpilot trace video DIR`: the video's path and length on stdout; an
/// error as `code: message` and its next step on stderr, exit code 2 for
/// a trace that cannot be made into one, 1 for what the machine lacks.
fn video(dir: &std::path::Path, options: &engine::trace::video::Options) -> ExitCode {
    use engine::trace::video::{make, VideoError};
    match make(dir, options) {
        Ok(made) => {
            super::out(&format!("{} (VP9, WebM)", made.summary()));
            if let Some(work) = made.work {
                eprintln!("cdpilot trace video: ffmpeg's inputs kept in {}", work.display());
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!(
                "cdpilot trace video: {}: {error}
{}",
                error.code(),
                error.next_step()
            );
            let trace = matches!(
                error,
                VideoError::Trace(_) | VideoError::NoShots { .. } | VideoError::Shot { .. }
            );
            ExitCode::from(if trace { 2 } else { 1 })
        }
    }
}

/// `cdpilot trace view DIR`: serves until Ctrl-C (or SIGTERM).
fn view(dir: PathBuf, listen: &str) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cdpilot trace view: {e}");
            return ExitCode::from(2);
        }
    };
    let stop = async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {}
        }
    };
    let served = runtime.block_on(server::serve::dashboard::timeline::view(
        dir,
        listen,
        stop,
        super::out,
    ));
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cdpilot trace view: {e}");
            ExitCode::from(2)
        }
    }
}

/// The steps as a script: a `cdpilot` command per step, in a session of
/// its own. Refs are the recorded run's numbers (the script cannot re-find
/// them as `cdpilot replay` does, so a snapshot step stays in).
pub fn script(steps: &[Step], dir: &str) -> String {
    let mut out = format!(
        "#!/bin/sh\n# The run traced in {}, as cdpilot commands (cdpilot trace export --cli).\n\
         # Refs are the recorded ones: `cdpilot replay` re-finds each by its role and name instead.\n\
         set -e\nexport CDPILOT_SESSION=\"${{CDPILOT_SESSION:-replay-$$}}\"\n",
        quote(dir)
    );
    for step in steps {
        if step.tool == "browser_trace" {
            continue;
        }
        out += &format!("# step {}: {}\n", step.step, step.tool);
        match command(step) {
            Some(line) => out += &format!("{line}\n"),
            None => out += &format!("# (no CLI verb for {})\n", step.tool),
        }
    }
    out
}

/// One step as a `cdpilot` command line.
fn command(step: &Step) -> Option<String> {
    let spec = engine::tools::find(&step.tool)?;
    let mut args = step.arguments.as_object().cloned().unwrap_or_default();
    let mut words = vec!["cdpilot".to_owned(), spec.verb.to_owned()];
    // Options every verb takes.
    if let Some(tab) = args.remove("tab").and_then(|t| t.as_str().map(str::to_owned)) {
        words.push(format!("--tab {}", quote(&tab)));
    }
    if let Some(ms) = args.remove("timeout_ms").and_then(|t| t.as_u64()) {
        words.push(format!("--timeout {ms}"));
    }
    let spelled = if super::verbs::takes_json(spec.name) {
        Some(json_words(&args))
    } else {
        own_words(spec.name, &mut args)
    };
    // A mapped verb with no word for one of the arguments: the step
    // stays a comment.
    words.extend(spelled?);
    Some(words.join(" "))
}

fn json_words(args: &Map<String, Value>) -> Vec<String> {
    if args.is_empty() {
        Vec::new()
    } else {
        vec![quote(&Value::Object(args.clone()).to_string())]
    }
}

/// The words of a mapped verb for `args`, if every argument has one.
fn own_words(tool: &str, args: &mut Map<String, Value>) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut take = |key: &str| args.remove(key);
    let text = |v: Value| v.as_str().map(quote);
    match tool {
        "browser_navigate" => {
            words.push(text(take("url")?)?);
            if let Some(w) = take("wait_until") {
                words.push(format!("--wait-until {}", text(w)?));
            }
        }
        "browser_snapshot" => {
            if take("diff") == Some(Value::Bool(true)) {
                words.push("--diff".into());
            }
            for (key, flag) in [("find", "find"), ("selector", "selector"), ("frame", "frame")] {
                if let Some(v) = take(key) {
                    words.push(format!("--{flag} {}", text(v)?));
                }
            }
            if let Some(v) = take("max_elements") {
                words.push(format!("--max {}", v.as_u64()?));
            }
        }
        "browser_click" | "browser_hover" => {
            words.push(target(&mut take)?);
            if tool == "browser_click" {
                if take("click_count").and_then(|c| c.as_u64()) == Some(2) {
                    words.push("--double".into());
                }
                if let Some(b) = take("button") {
                    (b == "right").then_some(())?;
                    words.push("--right".into());
                }
            }
        }
        "browser_type" => {
            words.push(target(&mut take)?);
            words.push(text(take("text")?)?);
            if take("submit") == Some(Value::Bool(true)) {
                words.push("--submit".into());
            }
            if take("clear") == Some(Value::Bool(false)) {
                words.push("--append".into());
            }
        }
        "browser_press_key" => words.push(text(take("key")?)?),
        "browser_select_option" => {
            words.push(text(take("ref")?)?);
            for v in take("values")?.as_array()? {
                words.push(text(v.clone())?);
            }
        }
        "browser_fill_form" => {
            for field in take("fields")?.as_array()? {
                let r = field.get("ref")?.as_str()?;
                let value = match field.get("value")? {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                words.push(quote(&format!("{r}={value}")));
            }
        }
        _ => return None,
    }
    // An argument the verb has no word for: the step is not spelled.
    args.is_empty().then_some(words)
}

/// `e3` or `--selector CSS`, taken from the arguments.
fn target(take: &mut impl FnMut(&str) -> Option<Value>) -> Option<String> {
    if let Some(r) = take("ref") {
        return r.as_str().map(quote);
    }
    let selector = take("selector")?;
    Some(format!("--selector {}", quote(selector.as_str()?)))
}

/// `text` as one shell word.
fn quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+".contains(c))
    {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn step(n: u64, tool: &str, arguments: Value) -> Step {
        Step {
            step: n,
            tool: tool.into(),
            arguments,
            outcome: "ok".into(),
            ..Step::default()
        }
    }

    #[test]
    fn a_run_reads_as_cdpilot_commands() {
        let steps = [
            step(
                1,
                "browser_navigate",
                json!({"url": "http://127.0.0.1:1/a?b=c&d"}),
            ),
            step(2, "browser_snapshot", json!({})),
            step(
                3,
                "browser_type",
                json!({"ref": "e2", "text": "it's {{secret:PW}}", "submit": true}),
            ),
            step(4, "browser_click", json!({"ref": "e3", "tab": "t2"})),
            step(5, "browser_network", json!({"action": "list"})),
            step(6, "browser_click", json!({"ref": "e3", "modifiers": ["Shift"]})),
        ];
        let script = script(&steps, "/tmp/t");
        assert!(
            script.contains("\ncdpilot open 'http://127.0.0.1:1/a?b=c&d'\n"),
            "{script}"
        );
        assert!(script.contains("\ncdpilot snapshot\n"), "{script}");
        assert!(
            script.contains("\ncdpilot type e2 'it'\\''s {{secret:PW}}' --submit\n"),
            "{script}"
        );
        assert!(script.contains("\ncdpilot click --tab t2 e3\n"), "{script}");
        assert!(
            script.contains("\ncdpilot network '{\"action\":\"list\"}'\n"),
            "{script}"
        );
        assert!(script.contains("# (no CLI verb for browser_click)"), "{script}");
    }
}
