//! `cdpilot replay DIR`: runs a trace's calls again in a fresh session of
//! this process's own engine, without the model, through the one door (so
//! under the URL rules, roots and tools in force now, whatever the trace
//! says). Before a step that names a ref, the ref is re-found in the tab's
//! latest snapshot by the role, name and ordinal it was recorded with
//! (`engine::trace::target`), never by its number; an element missing, or
//! a count of look-alikes other than recorded, stops the replay at that
//! step with what was expected, what was found and the snapshot there.
//!
//! Owns the report and its exit codes: 0 replayed to the end (or
//! `--until`), 1 stopped at a step, 2 the trace could not be read.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use engine::trace::read::{read, ReadError};
use engine::trace::target::Found;
use engine::trace::{Step, Target};
use engine::{Config, Engine, ToolCall};
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
    #[command(flatten)]
    pub browser: crate::BrowserArgs,
}

/// Where and why a replay stopped.
struct Stop {
    step: u64,
    tool: String,
    reason: &'static str,
    message: String,
    detail: Value,
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
    let session = engine.session();
    let started = Instant::now();
    let mut steps = Vec::new();
    let mut stop = None;
    let mut differences = Vec::new();
    for recorded in &trace.steps {
        if args.until.is_some_and(|until| recorded.step > until) {
            break;
        }
        // A trace's own switch is the recorded session's; this run's is
        // `--trace`.
        if recorded.tool == "browser_trace" {
            steps.push(json!({"step": recorded.step, "tool": recorded.tool, "outcome": "skipped"}));
            continue;
        }
        let mut arguments = recorded.arguments.clone();
        let tab = arguments.get("tab").and_then(Value::as_str).map(str::to_owned);
        let mut refound = serde_json::Map::new();
        for (pointer, target) in &recorded.targets {
            let found = session.refind(tab.as_deref(), target);
            let reference = match found {
                Some(Found::One(reference)) => reference,
                other => {
                    stop = Some(not_refound(recorded, target, other));
                    break;
                }
            };
            refound.insert(
                pointer.clone(),
                json!({"was": target.reference, "now": reference}),
            );
            if let Some(slot) = arguments.pointer_mut(pointer) {
                *slot = reference.into();
            }
        }
        if stop.is_some() {
            break;
        }
        let at = Instant::now();
        let result = session
            .call(ToolCall::new(recorded.tool.clone(), arguments))
            .await;
        let ms = at.elapsed().as_millis() as u64;
        let mut line =
            json!({"step": recorded.step, "tool": recorded.tool, "ms": ms, "recorded_ms": recorded.ms});
        if !refound.is_empty() {
            line["refs"] = refound.into();
        }
        match (&result, recorded.outcome.as_str()) {
            (Ok(output), "ok") => {
                line["outcome"] = "ok".into();
                if reads(&recorded.tool) {
                    let same = recorded.text.as_deref().map(unmarked) == Some(unmarked(&output.text));
                    line["same_answer"] = same.into();
                    if !same {
                        differences.push(recorded.step);
                        line["answer"] = output.text.chars().take(4000).collect::<String>().into();
                    }
                }
            }
            (Ok(_), code) => line["outcome"] = format!("ok (recorded: {code})").into(),
            (Err(e), code) if e.code.as_str() == code => {
                line["outcome"] = format!("{code} (as recorded)").into()
            }
            (Err(e), _) => {
                let reason = match e.code.as_str() {
                    "permission_denied" | "domain_blocked" | "invalid_argument" => "refused",
                    _ => "failed",
                };
                line["outcome"] = e.code.as_str().into();
                stop = Some(Stop {
                    step: recorded.step,
                    tool: recorded.tool.clone(),
                    reason,
                    message: format!("{}: {} ({})", e.code.as_str(), e.message, e.next_step),
                    detail: json!({"error": {"code": e.code.as_str(), "message": e.message, "next_step": e.next_step}, "recorded": recorded.outcome}),
                });
            }
        }
        steps.push(line);
        if stop.is_some() {
            break;
        }
    }
    if stop.is_none() && args.until.is_none() {
        if let Some(cut) = &trace.cut {
            stop = Some(Stop {
                step: trace.steps.len() as u64 + 1,
                tool: String::new(),
                reason: "trace_cut",
                message: cut.to_string(),
                detail: Value::Null,
            });
        }
    }
    let mut report = json!({
        "dir": args.dir.display().to_string(),
        "recorded_steps": trace.steps.len(),
        "steps": steps,
        "ms": started.elapsed().as_millis() as u64,
        "recorded_ms": trace.steps.iter().map(|s| s.ms).sum::<u64>(),
        "answers_differ": differences,
        "stopped": null,
    });
    if let Some(stop) = &stop {
        // The page as it is where the replay stopped.
        let snapshot = session
            .call(ToolCall::new("browser_snapshot", json!({})))
            .await
            .map(|o| o.text)
            .unwrap_or_else(|e| format!("(no snapshot: {e})"));
        report["stopped"] = json!({
            "step": stop.step,
            "tool": stop.tool,
            "reason": stop.reason,
            "message": stop.message,
            "detail": stop.detail,
            "snapshot": snapshot,
        });
    }
    engine.shutdown().await;
    print(&report, args.json);
    match stop {
        None => ExitCode::SUCCESS,
        Some(stop) if stop.reason == "trace_cut" => ExitCode::from(2),
        Some(_) => ExitCode::from(1),
    }
}

/// The stop for a ref that could not be re-found (or no snapshot to find
/// it in).
fn not_refound(step: &Step, target: &Target, found: Option<Found>) -> Stop {
    let expected = json!(target);
    let (reason, message, found) = match found {
        None => (
            "no_snapshot",
            format!(
                "the tab has no snapshot of its page to find {} in",
                target.describe()
            ),
            json!([]),
        ),
        Some(Found::Missing) => (
            "not_found",
            format!(
                "expected {}; the page has no {} by that name now",
                target.describe(),
                target.role
            ),
            json!([]),
        ),
        Some(Found::Ambiguous(refs)) => (
            "ambiguous",
            format!(
                "expected {} ({} of them); the page has {} now, so which one is meant cannot be told",
                target.describe(),
                target.of,
                refs.len()
            ),
            json!(refs),
        ),
        Some(Found::One(_)) => unreachable!("a found ref does not stop the replay"),
    };
    Stop {
        step: step.step,
        tool: step.tool.clone(),
        reason,
        message,
        detail: json!({"expected": expected, "found": found}),
    }
}

/// Whether `tool` only reads the page (its answer is compared).
fn reads(tool: &str) -> bool {
    engine::tools::find(tool).is_some_and(|t| t.effect == engine::tool::Effect::Reads)
}

/// `text` with its markers' nonce taken out (each session has its own),
/// and the times it states.
fn unmarked(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("nonce=") {
        out.push_str(&rest[..at + 6]);
        rest = rest[at + 6..].trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    }
    out.push_str(rest);
    // Times the answer states ("appeared after 11 ms") are the run's own.
    let words: Vec<&str> = out.split(' ').collect();
    words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let timed = words.get(i + 1).is_some_and(|next| next.starts_with("ms"));
            if timed && !w.is_empty() && w.chars().all(|c| c.is_ascii_digit()) {
                "N"
            } else {
                w
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_markers_nonce_and_the_times_are_not_an_answer() {
        assert_eq!(
            super::unmarked("<<page-content nonce=ab12>> hi <</page-content nonce=ab12>>"),
            super::unmarked("<<page-content nonce=zz99>> hi <</page-content nonce=zz99>>")
        );
        assert_eq!(
            super::unmarked("appeared after 11 ms."),
            super::unmarked("appeared after 51 ms.")
        );
        assert_ne!(
            super::unmarked("Clicked 1 times"),
            super::unmarked("Clicked 2 times")
        );
    }
}
