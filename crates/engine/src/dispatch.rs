//! The one path from a tool call to its result, for every transport (MCP
//! over stdio or HTTP, the WebSocket API, the CLI, the library): find the
//! tool → parse its arguments → make the call's budget → perform it in the
//! session → a serializable result or error → one audit record.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::audit::{self, Record};
use crate::session::{Notes, Session};
use crate::{tools, ActionError, ActionOutput, Budget, Config};

/// Runs tool `name` with `arguments` in `session`, cancelled by `cancel`,
/// and writes its one audit record, whatever the outcome. Never panics on
/// bad input: every failure is an [`ActionError`] with a contract code and
/// a next step.
pub async fn call(
    session: &Session,
    name: &str,
    arguments: Value,
    cancel: CancellationToken,
) -> Result<ActionOutput, ActionError> {
    let at = std::time::SystemTime::now();
    let started = std::time::Instant::now();
    let _timed = crate::timing::span("dispatch");
    let mut notes = Notes::default();
    let result = parse_and_perform(session, name, arguments.clone(), cancel, &mut notes).await;
    // Secrets leave only as their placeholders, whatever echoed them: a
    // field's value in a snapshot, an evaluate, a console line, an error.
    let secrets = session.secrets();
    let redacting = crate::timing::span("dispatch.redact");
    let result = secrets.redact_result(result);
    drop(redacting);
    let redact = |url: Option<String>| url.map(|u| secrets.redact(&u));
    session.audit().record(Record {
        at: audit::rfc3339(at),
        session: session.id().to_owned(),
        tool: name.to_owned(),
        arguments: secrets.redact_value(arguments),
        url_before: redact(notes.url_before),
        url_after: redact(notes.url_after),
        verdicts: notes
            .verdicts
            .into_iter()
            .map(|v| secrets.redact_value(v))
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
    session: &Session,
    name: &str,
    arguments: Value,
    cancel: CancellationToken,
    notes: &mut Notes,
) -> Result<ActionOutput, ActionError> {
    let config = session.config();
    // A tool that is off is refused before its arguments are parsed (the
    // same check `Session::perform` makes for library callers).
    let Some(spec) = tools::find(name) else {
        return Err(ActionError::invalid(
            format!("there is no tool named \"{name}\""),
            tools::use_one_of(config),
        ));
    };
    session.refuse_if_off(spec)?;
    let action = spec.parse(arguments)?;
    let budget = budget_for(config, &action, cancel);
    session.perform_noted(&action, &budget, notes).await
}

/// A budget for one call of `action`: its `timeout_ms` or the configured
/// default, cancelled by `cancel`.
pub fn budget_for(config: &Config, action: &crate::Action, cancel: CancellationToken) -> Budget {
    let limits = &config.limits;
    let default = match action {
        crate::Action::Evaluate(_) => limits.evaluate_timeout_ms,
        crate::Action::Wait(_) => limits.wait_timeout_ms,
        crate::Action::Handoff(_) => config.handoff.timeout_s.saturating_mul(1000),
        _ => limits.timeout_ms,
    };
    let ms = action.timeout_ms().unwrap_or(default);
    Budget::new(std::time::Duration::from_millis(ms), cancel)
}
