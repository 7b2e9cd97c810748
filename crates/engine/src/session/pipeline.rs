//! One call's way through its session, after the door: `perform` times
//! it and reports it; `run` admits it, judges its destination, finds its
//! context and tab and runs it there under the page's rules
//! (`supervised`: the dialog rules; `in_tab`: the handler, ended by a
//! crash); `Notes` is what the call saw, for its audit record.

use tracing::Instrument;

use super::call::{Call, SessionCall};
use super::{policy, refusals, Context, Session};
use crate::dialogs;
use crate::events::SessionEvent;
use crate::policy::{Decision, Verdict};
use crate::tab::{DialogPolicy, Tab};
use crate::tool::{Declaration, Scope, TabCall};
use crate::{ActionError, ActionOutput, Budget, Failure};

impl Session {
    /// Runs one parsed call of `spec` to completion, failure, timeout or
    /// cancellation, as one tracing span; records it in the metrics and
    /// notes for the audit what it saw (the tab's URL before and after, the
    /// policy's verdicts). Reached only through [`Session::call`].
    pub(crate) async fn perform(
        &self,
        spec: &Declaration,
        action: &impl Call,
        budget: &Budget,
        notes: &mut Notes,
    ) -> Result<ActionOutput, ActionError> {
        let tool = spec.name;
        let span = tracing::info_span!("tool", tool);
        let _running = self.consent.call_running();
        let (_in_flight, expired) =
            crate::timing::timed("session.idle", self.idle.begin(&self.context)).await;
        let mut result = self
            .run(spec, action, budget, notes)
            .instrument(span.clone())
            .await;
        if expired {
            session_restarted(&mut result, self.config.session.idle_timeout_s);
        }
        let elapsed = budget.elapsed();
        let _entered = span.enter();
        match &result {
            Ok(_) => tracing::info!(elapsed_ms = elapsed.as_millis() as u64, "ok"),
            Err(e) => tracing::info!(
                elapsed_ms = elapsed.as_millis() as u64,
                code = e.code.as_str(),
                "{e}"
            ),
        }
        let outcome = result.as_ref().map(|_| ()).map_err(|e| e.code);
        self.metrics.record(tool, elapsed, outcome);
        self.report(action, &result, notes);
        // Page text leaves enclosed in the session's markers.
        self.markers.render_result(result)
    }

    /// Counts the call's URL verdicts and tells the event stream what the
    /// call saw: URLs the policy refused, an obstacle.
    fn report(&self, action: &impl Call, result: &Result<ActionOutput, ActionError>, notes: &Notes) {
        for verdict in &notes.verdicts {
            self.metrics.verdict(verdict.decision.as_str());
            // A destination the user allowed shows as `ask`; one refused
            // ends the call with permission_denied.
            let refused = verdict.decision == Decision::Deny
                || (verdict.decision == Decision::Ask
                    && matches!(result, Err(e) if e.code == crate::ErrorCode::PermissionDenied));
            if refused {
                self.events().emit(SessionEvent::PermissionDenied {
                    url: verdict.url.clone(),
                    rule: verdict.rule.clone(),
                });
            }
        }
        if let Ok(ActionOutput {
            obstacle: Some(obstacle),
            ..
        }) = result
        {
            self.events().emit(SessionEvent::Obstacle {
                tab: action.common().tab.clone(),
                obstacle: serde_json::json!(obstacle),
            });
        }
    }

    async fn run(
        &self,
        spec: &Declaration,
        action: &impl Call,
        budget: &Budget,
        notes: &mut Notes,
    ) -> Result<ActionOutput, ActionError> {
        // Some calls (a snapshot while a dialog blocks the page, a tab list)
        // finish without waiting on anything; taking part in tokio's
        // cooperative budget keeps a caller that loops on them from
        // starving the tab's own tasks (the dialog watchdog) on its thread.
        tokio::task::consume_budget().await;
        action.admit(&self.config)?;
        let destination = action.destination();
        if let Some(url) = destination {
            crate::validate::url(url, &self.config.policy.schemes)?;
        }
        let rules = self.browsers.policy();
        // Judged once: the verdict goes to the audit and decides the call. A
        // "once" answer is held until the call ends.
        let destination = destination.map(|url| rules.judge(url));
        let _once = match &destination {
            Some(verdict) => {
                notes.verdicts.push(verdict.clone());
                self.consent.settle(verdict, "navigating to", budget).await?
            }
            None => None,
        };
        // From here on, a refusal of the destination's host is this call's.
        let settled = std::time::Instant::now();
        let (context, restarted) = self.context(budget).await?;
        context
            .save_downloads_in(&self.config.files.output_dir(), budget)
            .await?;
        let result = match spec.scope {
            Scope::Session => {
                let call = SessionCall {
                    context: &context,
                    consent: &self.consent,
                    config: &self.config,
                    session: self,
                    budget,
                };
                action.in_session(&call).await
            }
            Scope::Tab => match context.tab(action.common().tab.as_deref(), budget).await {
                Ok(tab) if tab.crash.is_crashed() && !spec.escapes_crash() => {
                    Err(crate::tab::crash::Crash::error())
                }
                Ok(tab) => {
                    // A navigation loads the page in a new renderer.
                    tab.crash.clear();
                    notes.url_before = Some(tab.state(|s| s.url().to_owned()));
                    tab.gate().serve(&self.consent);
                    tab.gate().route_by(&self.routes);
                    tab.arm_routes(budget).await?;
                    let judging = policy::current_page(spec, &tab, rules, &self.consent, budget);
                    let _once = crate::timing::timed("session.policy", judging).await?;
                    let mark = tab.gate().mark();
                    let acting = self.supervised(spec, &tab, action, budget);
                    let result = crate::timing::timed("session.action", acting).await;
                    let result = result.map_err(|e| issued_elsewhere(e, &context, &tab));
                    let (result, blocked) = policy::after(result, tab.gate().since(mark), &tab);
                    notes.verdicts.extend(blocked);
                    notes.routed = tab.gate().take_routed();
                    notes.url_after = Some(tab.state(|s| s.url().to_owned()));
                    if spec.effect == crate::tool::Effect::Leaves && result.is_ok() {
                        // The first snapshot's listener scan, while the
                        // model reads the answer (issue 46).
                        crate::snapshot::prime(tab.clone());
                    }
                    result
                }
                Err(e) => Err(e),
            },
        };
        // What the egress gate refused (connections by host and port).
        let (result, refused) = refusals::after(spec, action, result, context.take_refusals(), settled);
        notes.verdicts.extend(refused);
        let result = self.after_obstacle(&context, spec, action, result, budget).await;
        result.map(|mut output| {
            if restarted {
                output.text = format!(
                    "Note: the browser had closed or crashed, so cdpilot started a new one; earlier pages and refs are gone.\n{}",
                    output.text
                );
                output.data["browser_restarted"] = true.into();
            }
            output
        })
    }

    /// Runs an action in a tab under the dialog rules: while a dialog blocks
    /// the page, actions that need the page get `dialog_pending`; under
    /// must_respond, `dialogs::during` ends an action at the first dialog
    /// that opens (`dialog_opened`) instead of letting it hang on the blocked
    /// page, and reports every dialog that opened during it.
    async fn supervised(
        &self,
        spec: &Declaration,
        tab: &Tab,
        action: &impl Call,
        budget: &Budget,
    ) -> Result<ActionOutput, ActionError> {
        self.refuse_in_handoff(tab, spec)?;
        if !spec.runs_during_dialog {
            if let Some(dialog) = tab.dialogs().blocking() {
                // Leaving the page is the way out of a dialog nobody can answer.
                let escape = dialog.orphaned && spec.escapes_orphaned_dialog();
                if !escape {
                    return Err(dialogs::pending_error(&dialog));
                }
            }
        }
        // A call that may change the page ends the serializer's reuse of
        // the last snapshot, as it starts and as it ends.
        let acts = spec.effect != crate::tool::Effect::Reads;
        if acts {
            tab.state(|s| s.acted());
        }
        let result = if crate::browser::slot::dialog_rules(&self.config).policy != DialogPolicy::MustRespond {
            // The supervisor answers dialogs at once; the action goes on.
            self.in_tab(tab, action, budget).await
        } else {
            // Boxed: the action's future is large, and moving it by value
            // into another future overflowed the stack of debug builds.
            let run = Box::pin(self.in_tab(tab, action, budget));
            dialogs::during(&tab.dialogs(), spec.answers_dialogs(), run).await
        };
        if acts {
            tab.state(|s| s.acted());
        }
        result
    }

    /// Runs a tab-scoped tool's handler (the dispatch generated from the
    /// list of tools) in `tab`.
    async fn in_tab(
        &self,
        tab: &Tab,
        action: &impl Call,
        budget: &Budget,
    ) -> Result<ActionOutput, ActionError> {
        let call = TabCall {
            tab,
            budget,
            config: &self.config,
            secrets: &self.secrets,
            metrics: &self.metrics,
        };
        // A renderer that crashes never answers: the call ends at once.
        tokio::select! {
            biased;
            result = action.in_tab(&call) => result,
            () = tab.crash.happened() => Err(crate::tab::crash::Crash::error()),
        }
    }
}

/// Says in a call's result (or error) that the session had expired for
/// idleness before it, so the model knows its tabs and refs are gone.
fn session_restarted(result: &mut Result<ActionOutput, ActionError>, timeout_s: u64) {
    let note = format!(
        "Note: this session had no call for {timeout_s}s ([session] idle_timeout_s), so it was ended and a new one started; earlier tabs, pages and refs are gone."
    );
    match result {
        Ok(output) => {
            output.text = format!("{note}\n{}", output.text);
            output.data["session_restarted"] = true.into();
        }
        Err(error) => error.next_step = format!("{} {note}", error.next_step),
    }
}

/// What one call saw, for its audit record and the metrics: typed as the
/// call goes, never read back from its result's JSON.
#[derive(Debug, Default)]
pub(crate) struct Notes {
    pub url_before: Option<String>,
    pub url_after: Option<String>,
    /// The call's budget in milliseconds, once made.
    pub budget_ms: Option<u64>,
    /// Each URL the policy judged: the destination, what the request
    /// stage blocked, what the egress gate refused.
    pub verdicts: Vec<Verdict>,
    /// What the session's routes answered in the call's tab since its
    /// previous call (the rules having let each through).
    pub routed: Vec<crate::policy::gate::RoutedRequest>,
}

/// A `ref_unknown` names the session's tab that issued the ref, if one did
/// (a ref a model carried over from another tab).
fn issued_elsewhere(error: ActionError, context: &Context, tab: &Tab) -> ActionError {
    let Failure::RefUnknown { reference } = &error.failure else {
        return error;
    };
    match context.tab_issuing(reference, tab) {
        Some(other) => ActionError {
            message: format!("ref {reference} was issued in tab {other}, not in this one"),
            next_step: format!(
                "Pass tab: \"{other}\" to act there, or take a browser_snapshot of this tab and use a ref from it."
            ),
            ..error
        },
        // Its tab part names a tab, and that tab has no such ref now (it
        // was closed, or navigated since).
        None => match crate::tab::refs::split_tab(reference).0 {
            Some(other) if other != tab.state(|s| s.refs_tab()) => ActionError {
                message: format!(
                    "ref {reference} was issued in tab {other} (closed, or on another page since), not in this one"
                ),
                next_step: "Take a browser_snapshot of this tab and use a ref from it.".into(),
                ..error
            },
            _ => error,
        },
    }
}
