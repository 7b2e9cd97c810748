//! The one door into a session: [`Session::call`] runs a [`ToolCall`] (a
//! tool's name and JSON arguments, or a typed [`Action`]) the way every
//! transport does: find the tool once → refuse it if the configuration
//! turns it off → parse and check its arguments → make its budget →
//! perform it → redact every secret from what leaves → write its one audit
//! record, whatever the outcome.
//!
//! Above both the registry (`tools`) and the session: the session
//! performs a parsed call of a declared tool and knows nothing of the
//! registry; this door finds the tool and parses the call for it.
//!
//! Owns nothing: the audit trail and the secrets are the engine's, the
//! call's notes are the call's.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::audit::{self, Record};
use crate::calls::Action;
use crate::session::{Notes, Session};
use crate::tools::{self, ToolSpec};
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
        self.audit().record(Record {
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
            outcome: result
                .as_ref()
                .map_or_else(|e| e.code.as_str(), |_| "ok")
                .to_owned(),
            ms: started.elapsed().as_millis() as u64,
        });
        result
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
