//! The one door into a session: [`Session::call`] runs a [`ToolCall`] (a
//! tool's name and JSON arguments, or a typed [`Action`]) the way every
//! transport does: find the tool once → refuse it if the configuration
//! turns it off → parse and check its arguments → make its budget →
//! perform it → redact every secret from what leaves → write its one audit
//! record, whatever the outcome → and, when the session is traced, its
//! trace line (what the agent read, after redaction and the markers).
//!
//! Above both the registry (`tools`) and the session: the session
//! performs a parsed call of a declared tool and knows nothing of the
//! registry; this door finds the tool and parses the call for it.
//!
//! Owns nothing: the audit trail and the secrets are the engine's, the
//! call's notes are the call's.

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::audit::{self, Record};
use crate::calls::Action;
use crate::events::SessionEvent;
use crate::session::{Notes, Session};
use crate::tool::Effect;
use crate::tools::{self, ToolSpec};
use crate::trace::{Shot, Step, StepError, Trace};
use crate::{ActionError, ActionOutput};

/// One call of one tool: its name, its arguments as JSON, and the token
/// that cancels it.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The tool's name (`browser_click`).
    pub tool: String,
    /// Its arguments: a JSON object (`null` reads as no arguments).
    pub arguments: Value,
    /// Cancels the call: it then answers `canceled` at once.
    pub cancel: CancellationToken,
}

impl ToolCall {
    /// A call of `tool` with `arguments`, cancelled by nothing.
    pub fn new(tool: impl Into<String>, arguments: Value) -> ToolCall {
        ToolCall {
            tool: tool.into(),
            arguments,
            cancel: CancellationToken::new(),
        }
    }

    /// The same call, cancelled by `cancel`.
    pub fn cancelled_by(self, cancel: CancellationToken) -> ToolCall {
        ToolCall { cancel, ..self }
    }
}

impl From<Action> for ToolCall {
    /// A typed call: the same JSON a transport would send, so it is
    /// checked, audited and redacted like theirs.
    fn from(action: Action) -> ToolCall {
        ToolCall::new(action.tool_name(), action.arguments())
    }
}

/// The events a traced call heard that its step keeps: dialogs, hand-offs
/// and refusals (navigations are its URLs already; the rest say nothing of
/// the call).
fn traced_events(heard: &mut tokio::sync::broadcast::Receiver<SessionEvent>) -> Vec<Value> {
    let mut kept = Vec::new();
    while let Ok(event) = heard.try_recv() {
        let name = event.name();
        let keep = matches!(
            name,
            "dialog_opened" | "dialog_closed" | "handoff" | "handoff_ended" | "permission_denied"
        );
        if keep {
            let mut value = serde_json::json!({"event": name});
            if let (Some(into), Value::Object(data)) = (value.as_object_mut(), event.data()) {
                into.extend(data);
            }
            kept.push(value);
        }
    }
    kept
}

impl Session {
    /// Runs `call` in this session and writes its one audit record,
    /// whatever the outcome. The only way to run a tool: every transport
    /// (through [`crate::dispatch::call`]) and every library user comes
    /// here. Never panics on bad input: every failure is an
    /// [`ActionError`] with a contract code and a next step.
    pub async fn call(&self, call: ToolCall) -> Result<ActionOutput, ActionError> {
        let at = std::time::SystemTime::now();
        let started = std::time::Instant::now();
        let _timed = crate::timing::span("dispatch");
        let ToolCall {
            tool,
            arguments,
            cancel,
        } = call;
        let mut notes = Notes::default();
        // The step an earlier call is still writing (its screenshot) is
        // written first: it shows the page that call left, not this one's.
        self.settle_trace().await;
        let trace = match self.trace().for_call(&self.config().trace, self.id()) {
            // The trace's own switch is not a step of it.
            Ok(_) if tool == "browser_trace" => None,
            Ok(trace) => trace,
            Err(reason) => {
                self.trace_stopped(String::new(), reason);
                None
            }
        };
        // What the call's refs were shown as, before it changes the page.
        let targets = trace
            .as_ref()
            .map(|_| self.trace_targets(&arguments))
            .unwrap_or_default();
        // The session's events during the call (dialogs, hand-offs), for
        // its step.
        let mut heard = trace.as_ref().map(|_| self.events().subscribe());
        // The call's tab, and a box an earlier untraced call left there
        // cleared: the step's box is the one this call aims at.
        let traced_tab = arguments.get("tab").and_then(Value::as_str).map(str::to_owned);
        if trace.is_some() {
            self.trace_aimed(traced_tab.as_deref());
        }
        let result = self
            .parse_and_perform(&tool, arguments.clone(), cancel, &mut notes)
            .await;
        // Secrets leave only as their placeholders, whatever echoed them: a
        // field's value in a snapshot, an evaluate, a console line, an error.
        let secrets = self.secrets();
        let redacting = crate::timing::span("dispatch.redact");
        let result = secrets.redact_result(result);
        drop(redacting);
        let redact = |url: Option<String>| url.map(|u| secrets.redact(&u));
        let record = Record {
            at: audit::rfc3339(at),
            session: self.id().to_owned(),
            tool,
            arguments: secrets.redact_value(arguments),
            url_before: redact(notes.url_before),
            url_after: redact(notes.url_after),
            verdicts: notes
                .verdicts
                .iter()
                .map(|v| secrets.redact_value(v.to_json()))
                .collect(),
            routed: crate::policy::gate::summarize(&notes.routed)
                .into_iter()
                .map(|r| secrets.redact_value(r))
                .collect(),
            outcome: result
                .as_ref()
                .map_or_else(|e| e.code.as_str(), |_| "ok")
                .to_owned(),
            ms: started.elapsed().as_millis() as u64,
        };
        if let Some(trace) = trace {
            let spec = tools::find(&record.tool);
            let step = Step {
                at: record.at.clone(),
                ms: record.ms,
                budget_ms: notes.budget_ms,
                tool: record.tool.clone(),
                arguments: record.arguments.clone(),
                outcome: record.outcome.clone(),
                text: result.as_ref().ok().map(|o| o.text.clone()),
                data: result.as_ref().map(|o| o.data.clone()).unwrap_or_default(),
                error: result.as_ref().err().map(|e| StepError {
                    code: e.code.as_str().to_owned(),
                    message: e.message.clone(),
                    next_step: e.next_step.clone(),
                }),
                url_before: record.url_before.clone(),
                url_after: record.url_after.clone(),
                verdicts: record.verdicts.clone(),
                routed: record.routed.clone(),
                targets,
                target_box: self.trace_aimed(traced_tab.as_deref()),
                events: heard.as_mut().map(traced_events).unwrap_or_default(),
                ..Step::default()
            };
            let _timed = crate::timing::span("dispatch.trace");
            let acts = spec.is_some_and(|s| s.effect != Effect::Reads);
            self.trace_step(trace, step, acts && self.config().trace.screenshots)
                .await;
        }
        self.audit().record(record);
        result
    }

    /// Writes `step` to `trace` with what happened around it: the console
    /// and the requests since the step before, and (for a call that acts)
    /// a screenshot of the page it left. A step with a screenshot is
    /// written after the call has answered (the picture is most of a traced
    /// call's cost): the session's next call waits for it
    /// ([`Session::settle_trace`]).
    async fn trace_step(&self, trace: Arc<Trace>, mut step: Step, acts: bool) {
        step.console = self.trace_console(trace.console_until());
        let mut requests = self.trace_requests(|tab, id| trace.has_request(tab, id));
        self.trace_bodies(&mut requests, trace.keeps_bodies()).await;
        step.requests = requests.into_iter().map(|(record, _)| record).collect();
        let refused = acts
            .then(|| trace.refuses_shot(&step.arguments, step.url_after.as_deref()))
            .flatten();
        // The screencast's frames since the step before (`[trace] video`),
        // judged after the call's arguments were (a secret typed).
        let tab = step.arguments.get("tab").and_then(Value::as_str);
        self.reel_step(
            &trace,
            &[step.url_before.as_deref(), step.url_after.as_deref()],
            tab,
        );
        if !acts || refused.is_some() {
            let shot = refused.map_or(Shot::None, Shot::Dropped);
            if let Some(stopped) = trace.record(step, shot) {
                self.stopped_by_itself(stopped);
            }
            return;
        }
        let shot = self.trace_shot(tab);
        self.trace().defer(async move {
            let shot = match shot.await {
                Some((jpeg, viewport)) => {
                    step.viewport = Some(viewport);
                    Shot::Jpeg(jpeg)
                }
                None => Shot::Dropped("no_page"),
            };
            trace.record(step, shot)
        });
    }

    /// Waits for the steps still being written after their calls answered
    /// (the next call, the session's close); says if one stopped the trace.
    pub(crate) async fn settle_trace(&self) {
        for stopped in self.trace().settle().await {
            self.stopped_by_itself(stopped);
        }
    }

    /// Makes the video of the stopped trace in `dir` (`[trace] video`),
    /// saying in the log what came of it.
    pub(crate) async fn trace_video(
        &self,
        dir: &std::path::Path,
    ) -> Result<crate::trace::video::Made, crate::trace::video::VideoError> {
        let made = crate::trace::video::make_in_background(dir.to_owned()).await;
        match &made {
            Ok(made) => tracing::info!("session {}: the trace's video: {}", self.id(), made.summary()),
            Err(e) => tracing::warn!(
                "session {}: no video of the trace {}: {e} ({})",
                self.id(),
                dir.display(),
                e.next_step()
            ),
        }
        made
    }

    /// The trace stopped on its own (its budget, a write error).
    pub(crate) fn stopped_by_itself(&self, stopped: crate::trace::Stopped) {
        self.trace().stop(&stopped.reason);
        self.trace_stopped(stopped.dir.display().to_string(), stopped.reason);
    }

    /// Says that the session's trace stopped by itself (or could not
    /// start): in its events, its metrics and the log.
    pub(crate) fn trace_stopped(&self, dir: String, reason: String) {
        tracing::warn!("session {}: the trace stopped: {reason}", self.id());
        self.metrics().trace_stopped();
        self.events().emit(SessionEvent::TraceStopped { dir, reason });
    }

    async fn parse_and_perform(
        &self,
        name: &str,
        arguments: Value,
        cancel: CancellationToken,
        notes: &mut Notes,
    ) -> Result<ActionOutput, ActionError> {
        let config = self.config();
        // A call refused before it runs is counted here (`perform` counts
        // those that run), so each call is counted once.
        let refused = |tool: &'static str, error: ActionError| {
            self.metrics()
                .record(tool, std::time::Duration::ZERO, Err(error.code));
            error
        };
        // The tool is looked up once; one that is off is refused before its
        // arguments are parsed.
        let Some(spec) = tools::find(name) else {
            return Err(refused(
                "unknown",
                ActionError::invalid(
                    format!("there is no tool named \"{name}\""),
                    tools::use_one_of(config),
                ),
            ));
        };
        let action = refuse_if_off(spec, config)
            .and_then(|()| spec.parse(arguments))
            .map_err(|error| refused(spec.name, error))?;
        let budget = spec.budget(config, &action, cancel);
        notes.budget_ms = Some(budget.remaining().as_millis() as u64);
        self.perform(spec, &action, &budget, notes).await
    }
}

/// `invalid_argument` for a tool the configuration turns off, naming the
/// setting that would turn it on.
fn refuse_if_off(spec: &ToolSpec, config: &crate::Config) -> Result<(), ActionError> {
    match spec.why_off(config) {
        None => Ok(()),
        Some(why) => Err(ActionError::invalid(
            format!(
                "{} is turned off in this server's configuration: {why}",
                spec.name
            ),
            tools::use_one_of(config),
        )),
    }
}
