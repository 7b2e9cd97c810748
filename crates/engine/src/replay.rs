//! Replaying a trace (issue 43; `docs/src/spec/trace.md#replay`): its
//! calls run again in a session, without the model, through the one door
//! (so under the URL rules, roots, tools and secrets in force now,
//! whatever the trace says). Before a step that names a ref, the ref is
//! re-found in the tab's latest snapshot by the role, name and ordinal it
//! was recorded with (`trace::target`), never by its number; an element
//! missing, or a count of look-alikes other than recorded, stops the
//! replay at that step with what was expected, what was found and the
//! snapshot there (or, under `continue_on_change`, passes over a step that
//! only reads). Reading steps' answers are compared with the recorded ones.
//!
//! One function for every way in: `cdpilot replay` (a fresh session of its
//! own engine), the library ([`replay`] on any [`Session`]) and the
//! WebSocket API (`{"type": "replay"}`, in the connection's session,
//! through its lease). Owns the report; the calls are the [`Caller`]'s.

use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use serde_json::{json, Value};

use crate::tool::Effect;
use crate::trace::read::Read;
use crate::trace::target::Found;
use crate::trace::{Step, Target};
use crate::{ActionError, ActionOutput, Session, ToolCall};

/// What a replay is told.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Stop after this step.
    pub until: Option<u64>,
    /// A step that only reads (its tool's effect is `reads`) whose element
    /// is gone or changed, or that now fails, is passed over and said so
    /// (`changed`), instead of stopping the replay.
    pub continue_on_change: bool,
}

/// How a replay's calls reach the session: straight through its door
/// (the library, the CLI), or through a serve session's lease (its turns
/// and stop).
pub trait Caller: Sync {
    /// The session the calls run in (where refs are re-found).
    fn session(&self) -> &Session;
    /// Runs one call.
    fn call(
        &self,
        call: ToolCall,
    ) -> Pin<Box<dyn Future<Output = Result<ActionOutput, ActionError>> + Send + '_>>;
}

impl Caller for Session {
    fn session(&self) -> &Session {
        self
    }

    fn call(
        &self,
        call: ToolCall,
    ) -> Pin<Box<dyn Future<Output = Result<ActionOutput, ActionError>> + Send + '_>> {
        Box::pin(Session::call(self, call))
    }
}

/// What a replay came to.
#[derive(Debug, Clone)]
pub struct Report {
    /// The report as the contract states it (`cdpilot replay --json`).
    pub json: Value,
    /// Where it stopped: `None` replayed to the end (or `until`).
    pub stopped: Option<&'static str>,
}

/// Where and why a replay stopped.
struct Stop {
    step: u64,
    tool: String,
    reason: &'static str,
    message: String,
    detail: Value,
}

/// Replays `trace` (read from `dir`, named in the report) through `caller`.
pub async fn replay(caller: &impl Caller, dir: &str, trace: &Read, options: &Options) -> Report {
    let session = caller.session();
    let started = Instant::now();
    let mut steps = Vec::new();
    let mut stop = None;
    let mut differences = Vec::new();
    let mut changed = Vec::new();
    for recorded in &trace.steps {
        if options.until.is_some_and(|until| recorded.step > until) {
            break;
        }
        // A trace's own switch is the recorded session's; this run's is
        // its own configuration's.
        if recorded.tool == "browser_trace" {
            steps.push(json!({"step": recorded.step, "tool": recorded.tool, "outcome": "skipped"}));
            continue;
        }
        let only_reads = reads(&recorded.tool);
        let mut arguments = recorded.arguments.clone();
        let tab = arguments.get("tab").and_then(Value::as_str).map(str::to_owned);
        let mut refound = serde_json::Map::new();
        let mut lost = None;
        for (pointer, target) in &recorded.targets {
            let reference = match session.refind(tab.as_deref(), target) {
                Some(Found::One(reference)) => reference,
                other => {
                    lost = Some(not_refound(recorded, target, other));
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
        if let Some(lost) = lost {
            if only_reads && options.continue_on_change {
                changed.push(recorded.step);
                steps.push(
                    json!({"step": recorded.step, "tool": recorded.tool, "outcome": "changed",
                    "reason": lost.reason, "message": lost.message, "detail": lost.detail}),
                );
                continue;
            }
            stop = Some(lost);
            break;
        }
        let at = Instant::now();
        let result = caller.call(ToolCall::new(recorded.tool.clone(), arguments)).await;
        let ms = at.elapsed().as_millis() as u64;
        let mut line =
            json!({"step": recorded.step, "tool": recorded.tool, "ms": ms, "recorded_ms": recorded.ms});
        if !refound.is_empty() {
            line["refs"] = refound.into();
        }
        match (&result, recorded.outcome.as_str()) {
            (Ok(output), "ok") => {
                line["outcome"] = "ok".into();
                if only_reads {
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
                let detail = json!({"error": {"code": e.code.as_str(), "message": e.message, "next_step": e.next_step}, "recorded": recorded.outcome});
                // A refusal always stops: the rules in force said no.
                if reason == "failed" && only_reads && options.continue_on_change {
                    changed.push(recorded.step);
                    line["outcome"] = "changed".into();
                    line["reason"] = "failed".into();
                    line["detail"] = detail;
                } else {
                    stop = Some(Stop {
                        step: recorded.step,
                        tool: recorded.tool.clone(),
                        reason,
                        message: format!("{}: {} ({})", e.code.as_str(), e.message, e.next_step),
                        detail,
                    });
                }
            }
        }
        steps.push(line);
        if stop.is_some() {
            break;
        }
    }
    if stop.is_none() && options.until.is_none() {
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
    // The replay's own trace holds every step it ran before it reports.
    session.settle_trace().await;
    let mut report = json!({
        "dir": dir,
        "recorded_steps": trace.steps.len(),
        "steps": steps,
        "ms": started.elapsed().as_millis() as u64,
        "recorded_ms": trace.steps.iter().map(|s| s.ms).sum::<u64>(),
        "answers_differ": differences,
        "changed": changed,
        "stopped": null,
    });
    if let Some(stop) = &stop {
        // The page as it is where the replay stopped.
        let snapshot = caller
            .call(ToolCall::new("browser_snapshot", json!({})))
            .await
            .map(|o| o.text)
            .unwrap_or_else(|e| format!("(no snapshot: {})", e.message));
        report["stopped"] = json!({
            "step": stop.step,
            "tool": stop.tool,
            "reason": stop.reason,
            "message": stop.message,
            "detail": stop.detail,
            "snapshot": snapshot,
        });
    }
    Report {
        json: report,
        stopped: stop.map(|s| s.reason),
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
    crate::tools::find(tool).is_some_and(|t| t.effect == Effect::Reads)
}

/// `text` with its markers' nonce taken out (each session has its own),
/// the browser's ids of its frames (a `frame_tree` line's 32 hex digits,
/// new in every browser) and the times it states.
fn unmarked(text: &str) -> String {
    let text = without_browser_ids(text);
    let text = text.as_str();
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

/// `text` with each word of exactly 32 uppercase hex digits (Chrome's
/// frame and target ids) as `ID`.
fn without_browser_ids(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let is_id = |w: &str| w.len() == 32 && w.chars().all(|c| c.is_ascii_digit() || ('A'..='F').contains(&c));
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_alphanumeric() {
            word.push(c);
            continue;
        }
        out.push_str(if is_id(&word) { "ID" } else { &word });
        word.clear();
        out.push(c);
    }
    out.pop();
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_frames_browser_id_is_not_an_answer() {
        let tree = |id: &str| format!("frame_tree:\n  {id} http://localhost:1/frame (cross-origin)");
        assert_eq!(
            super::unmarked(&tree("253B4A327CE33D2D7AB3FC2953D13282")),
            super::unmarked(&tree("9E1F0C5D2B7A4E3F8C6D1A0B2E4F6A8C"))
        );
        assert_ne!(
            super::unmarked("text: 253B4A327CE33D2D7AB3FC2953D13282"),
            super::unmarked("text: 253B4A327CE33D2D7AB3FC2953D1328")
        );
    }

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
