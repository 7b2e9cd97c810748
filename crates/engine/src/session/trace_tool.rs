//! `browser_trace`: start, stop or mark (a named chapter) this session's
//! trace (`docs/src/spec/trace.md`). It writes only under `[trace] dir`,
//! else `<[files] output_dir>/traces`: the call names no path, so a model
//! cannot make cdpilot write anywhere else.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::args::Common;
use crate::session::{SessionCall, SessionTool};
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, Tool};
use crate::{ActionError, ActionOutput};

// What `browser_trace` does.
#[allow(missing_docs)] // schema-visible: see `crate::tool`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TraceAction {
    Start,
    Stop,
    Chapter,
}

/// Arguments of `browser_trace`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TraceArgs {
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    pub action: TraceAction,
    /// For chapter: what the steps after it do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_trace`: its declaration and checks (see `crate::tool`).
impl Tool for TraceArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_trace",
        verb: "tracing",
        group: Group::Trace,
        description: "Record this session (each call, what it read, screenshots, console, requests) to a trace directory a person can view or replay: start, stop, or chapter (name) to mark the steps that follow.",
        scope: Scope::Session,
        runs_during_dialog: true,
        budget: DefaultBudget::Action,
        changes_page: false,
        switch: None,
        effect: Effect::Reads,
    };

    /// A name only for chapter, and not empty there.
    fn check(&self) -> Result<(), ActionError> {
        match (self.action, &self.name) {
            (TraceAction::Chapter, Some(name)) => {
                crate::validate::non_empty("name", name)?;
                if name.len() > 200 {
                    return Err(ActionError::invalid(
                        "name is longer than 200 bytes",
                        "Give the chapter a short name.",
                    ));
                }
                Ok(())
            }
            (TraceAction::Chapter, None) => Err(ActionError::invalid(
                "chapter needs name",
                "Pass name, e.g. {\"action\": \"chapter\", \"name\": \"log in\"}.",
            )),
            (_, Some(_)) => Err(ActionError::invalid(
                "name is only for action chapter",
                "Leave name out, or use action chapter.",
            )),
            (_, None) => Ok(()),
        }
    }
}

impl SessionTool for TraceArgs {
    /// Runs the tool on the session's trace.
    async fn perform(&self, call: &SessionCall<'_>) -> Result<ActionOutput, ActionError> {
        let session = call.session;
        let slot = session.trace();
        match self.action {
            TraceAction::Start => {
                let config = call.config;
                let base = match config.trace.dir.as_str() {
                    "" => config.files.output_dir().join("traces"),
                    dir => std::path::PathBuf::from(dir),
                };
                let (trace, started) = slot
                    .start(&base, session.id(), config.trace.max_bytes())
                    .map_err(|e| {
                        ActionError::internal(format!(
                            "cannot start a trace in {}: {e} (is it writable? [trace] dir, [files] output_dir)",
                            base.display()
                        ))
                    })?;
                let dir = trace.dir().display().to_string();
                let text = match started {
                    true => format!("Tracing this session to {dir}."),
                    false => format!("This session is already traced, to {dir}."),
                };
                Ok(ActionOutput::new(text, json!({"dir": dir, "started": started})))
            }
            TraceAction::Stop => {
                // The frames since the last step first: then the stop.
                session.reel_flush();
                match slot.stop("stopped") {
                    Some(trace) => {
                        let dir = trace.dir().display().to_string();
                        let mut text = format!("Stopped the trace after {} steps: {dir}.", trace.steps());
                        let mut data = json!({"dir": dir, "steps": trace.steps()});
                        if call.config.trace.video {
                            match session.trace_video(trace.dir()).await {
                                Ok(made) => {
                                    let out = made.out.display().to_string();
                                    text.push_str(&format!(" Its video: {out}."));
                                    data["video"] = out.into();
                                }
                                Err(e) => {
                                    text.push_str(&format!(" No video: {e} ({}).", e.next_step()));
                                    data["video_error"] = json!({"code": e.code(), "message": e.to_string(), "next_step": e.next_step()});
                                }
                            }
                        }
                        Ok(ActionOutput::new(text, data))
                    }
                    None => Ok(ActionOutput::new(
                        "This session was not traced.",
                        json!({"dir": null}),
                    )),
                }
            }
            TraceAction::Chapter => {
                let name = self.name.as_deref().unwrap_or_default();
                let Some(trace) = slot.current() else {
                    return Err(ActionError::invalid(
                        "this session is not traced",
                        "Start a trace first: browser_trace with action start.",
                    ));
                };
                if let Some(stopped) = trace.chapter(&session.secrets().redact(name)) {
                    session.stopped_by_itself(stopped);
                }
                Ok(ActionOutput::new(
                    format!("Chapter {name:?} begins after step {}.", trace.steps()),
                    json!({"after_step": trace.steps()}),
                ))
            }
        }
    }
}
