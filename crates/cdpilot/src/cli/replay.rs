//! `cdpilot replay DIR`: runs a trace's calls again in a fresh session of
//! this process's own engine, without the model: `engine::replay` (the
//! one replay the library and the WebSocket API run too) through the one
//! door, so under the URL rules, roots and tools in force now, whatever
//! the trace says.
//!
//! Owns printing the report and its exit codes: 0 replayed to the end (or
//! `--until`), 1 stopped at a step, 2 the trace could not be read.

use std::path::PathBuf;
use std::process::ExitCode;

use engine::replay::{replay, Options};
use engine::trace::read::{read, ReadError};
use engine::{Config, Engine};
use serde_json::{json, Value};

/// `cdpilot replay`'s arguments.
#[derive(clap::Args)]
pub struct ReplayArgs {
    /// The trace directory (holding trace.jsonl).
    pub dir: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Stop after this step.
    #[arg(long, value_name = "STEP")]
    pub until: Option<u64>,
    /// Pass over a step that only reads whose element changed or went (said in the report), instead of stopping.
    #[arg(long)]
    pub continue_on_change: bool,
    #[command(flatten)]
    pub browser: crate::BrowserArgs,
}

/// Replays `args.dir` under `config`; prints the report.
pub async fn run(config: Config, args: &ReplayArgs) -> ExitCode {
    let trace = match read(&args.dir) {
        Ok(trace) => trace,
        Err(e) => return bad_trace(&e, args.json),
    };
    let engine = match Engine::start(config) {
        Ok(engine) => engine,
        Err(e) => {
            eprintln!("cdpilot replay: {e}");
            return ExitCode::from(2);
        }
    };
    let options = Options {
        until: args.until,
        continue_on_change: args.continue_on_change,
    };
    let report = replay(
        engine.session(),
        &args.dir.display().to_string(),
        &trace,
        &options,
    )
    .await;
    engine.shutdown().await;
    print(&report.json, args.json);
    match report.stopped {
        None => ExitCode::SUCCESS,
        Some("trace_cut") => ExitCode::from(2),
        Some(_) => ExitCode::from(1),
    }
}

fn bad_trace(error: &ReadError, json: bool) -> ExitCode {
    if json {
        let report = json!({"error": {
            "file": error.file.display().to_string(),
            "line": error.line,
            "message": error.message,
        }});
        super::out(&report.to_string());
    } else {
        eprintln!("cdpilot replay: {error}");
    }
    ExitCode::from(2)
}

fn print(report: &Value, json: bool) {
    if json {
        super::out(&report.to_string());
        return;
    }
    for step in report["steps"].as_array().into_iter().flatten() {
        let mut line = format!(
            "step {} {}: {}",
            step["step"],
            step["tool"].as_str().unwrap_or(""),
            step["outcome"].as_str().unwrap_or("")
        );
        for (_, r) in step["refs"].as_object().into_iter().flatten() {
            line += &format!(
                " [{} → {}]",
                r["was"].as_str().unwrap_or(""),
                r["now"].as_str().unwrap_or("")
            );
        }
        if step["same_answer"] == false {
            line += " (answer differs from the recorded one)";
        }
        super::out(&line);
    }
    match report["stopped"].as_object() {
        None => super::out(&format!(
            "replayed {} steps in {} ms (recorded: {} ms)",
            report["steps"].as_array().map_or(0, Vec::len),
            report["ms"],
            report["recorded_ms"]
        )),
        Some(stop) => {
            super::out(&format!(
                "stopped at step {} ({}): {}: {}",
                stop["step"],
                stop["tool"].as_str().unwrap_or(""),
                stop["reason"].as_str().unwrap_or(""),
                stop["message"].as_str().unwrap_or("")
            ));
            super::out(&format!(
                "the page there:\n{}",
                stop["snapshot"].as_str().unwrap_or("")
            ));
        }
    }
}
