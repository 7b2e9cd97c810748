//! The session's side of `browser_handoff`: opening a hand-off of one of
//! its tabs, saying so (the `handoff` event, the transport's offer, a log
//! line), waiting for the person (Done, Give up), the `until` condition,
//! the tab's end or the budget, and refusing other acting tools on a tab a
//! person holds (`tab_in_handoff`). Obstacles suggest it.
//!
//! Owns the transport's [`Offer`] (installed like the asker). The open
//! hand-offs themselves are the engine's (`crate::handoff`).

use std::sync::Arc;

use cdp::protocol::target::{DetachedFromTarget, TargetDestroyed};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Call, Context, Session, SessionCall, SessionTool};
use crate::args::Common;
use crate::events::SessionEvent;
use crate::handoff::{Answer, Offer, Offered};
use crate::tab::Tab;
use crate::tab_tools::wait::WaitArgs;
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, Tool};
use crate::{tab_tools, validate, ActionError, ActionOutput, Budget, ErrorCode};

/// Arguments of `browser_handoff`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct HandoffArgs {
    /// Shown to the person.
    pub reason: String,
    /// As in browser_wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Until>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

// browser_handoff's `until`: one condition of browser_wait's.
#[allow(missing_docs)] // schema-visible: see `crate::tool`
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Until {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}

/// `browser_handoff`: its declaration and checks (see `crate::tool`).
impl Tool for HandoffArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_handoff",
        verb: "handoff",
        group: Group::Core,
        description: "Hand the tab to a person (captcha, login, 2FA) via a link; waits until they press Done, until holds, or they give up.",
        scope: Scope::Session,
        runs_during_dialog: false,
        budget: DefaultBudget::Handoff,
        changes_page: true,
        switch: None,
        effect: Effect::Acts,
    };

    /// A reason; at most one `until` condition, not empty.
    fn check(&self) -> Result<(), ActionError> {
        if self.reason.trim().is_empty() {
            return Err(ActionError::invalid(
                "browser_handoff needs a reason (shown to the person)",
                "Say what the person should do, e.g. {\"reason\": \"Solve the captcha\"}.",
            ));
        }
        if let Some(until) = &self.until {
            let given = [&until.url, &until.text, &until.selector];
            if given.iter().filter(|g| g.is_some()).count() != 1 {
                return Err(ActionError::invalid(
                    "until takes exactly one of url, text, selector",
                    "Pass one condition, e.g. {\"until\": {\"text\": \"Welcome\"}}.",
                ));
            }
            for (name, value) in [
                ("until.url", &until.url),
                ("until.text", &until.text),
                ("until.selector", &until.selector),
            ] {
                if let Some(v) = value {
                    validate::non_empty(name, v)?;
                }
            }
        }
        Ok(())
    }
}

impl SessionTool for HandoffArgs {
    /// Runs the tool in the session: its tab is picked here.
    async fn perform(&self, call: &SessionCall<'_>) -> Result<ActionOutput, ActionError> {
        call.session.hand_off(call.context, self, call.budget).await
    }
}

/// Every declared tool, from the list of tools (for the next step that
/// names the ones still allowed).
macro_rules! declared {
    ([] $( $scope:ident $variant:ident($args:ident) = $module:ident $(, $other:ident)* ;)*) => {
        const DECLARED: &[Declaration] = &[$(declared!(@ $scope $module $args)),*];
    };
    (@ tab $module:ident $args:ident) => { <crate::tab_tools::$module::$args as Tool>::TOOL };
    (@ session $module:ident $args:ident) => { <crate::session::$module::$args as Tool>::TOOL };
}
crate::list::tool_list!(declared);

/// Whether a call of the tool `spec` declares may run in a tab a person
/// holds (`held`): `tab_in_handoff` unless it only reads the page.
fn may_run(spec: &Declaration, held: bool) -> Result<(), ActionError> {
    if spec.runs_in_handoff() || !held {
        return Ok(());
    }
    let readers: Vec<&str> = DECLARED
        .iter()
        .filter(|t| t.runs_in_handoff())
        .map(|t| t.name)
        .collect();
    Err(ActionError::new(
        ErrorCode::TabInHandoff,
        format!(
            "a person holds this tab (browser_handoff); {} would act on it",
            spec.name
        ),
        format!(
            "Wait for browser_handoff to return (if its link came back to you, call browser_handoff again on this tab to wait for the person); {} still read the tab.",
            readers.join(", ")
        ),
    ))
}

/// The line a result with an obstacle adds.
pub(super) const SUGGESTION: &str = "A person can take over with browser_handoff.";

impl Session {
    /// Offers hand-off links through `offer` (MCP elicitation) from now on.
    pub fn offer_handoffs_through(&self, offer: Arc<dyn Offer>) {
        *self.offer.lock().unwrap() = Some(offer);
    }

    /// `tab_in_handoff` for a tool that acts on a tab a person holds;
    /// tools that declare they only read the page go on.
    pub(super) fn refuse_in_handoff(&self, tab: &Tab, spec: &Declaration) -> Result<(), ActionError> {
        may_run(spec, self.handoffs.holding(&tab.target_id))
    }

    /// `browser_handoff`: hands tab `args.common.tab` (default the active
    /// one) to a person and waits for them. Where the hand-off's link went
    /// to the caller (its client cannot show it to a person), waits for
    /// that hand-off instead of opening another.
    pub(crate) async fn hand_off(
        &self,
        context: &Context,
        args: &HandoffArgs,
        budget: &Budget,
    ) -> Result<ActionOutput, ActionError> {
        let tab = context.tab(args.common.tab.as_deref(), budget).await?;
        // A tab behind another sends no frame to the person's view.
        tab_tools::front::bring(&tab, budget).await?;
        let name = context
            .tabs_now()
            .into_iter()
            .find(|(_, t, _)| Arc::ptr_eq(t, &tab))
            .map(|(id, _, _)| id)
            .unwrap_or_default();
        if let Some(parked) = self.handoffs.unpark(&tab.target_id) {
            let (opened, mut answered) = (parked.opened, parked.answered);
            let id = opened.handoff.id.clone();
            let outcome = self
                .wait_for_person(&tab, &name, args, budget, &mut answered, std::future::pending())
                .await;
            return self.finish(&tab, name, id, opened, outcome, budget).await;
        }
        let (opened, mut answered) = self.handoffs.open(
            name.clone(),
            tab.clone(),
            args.reason.clone(),
            self.id.clone(),
            self.audit.clone(),
            self.secrets.clone(),
        )?;
        let id = opened.handoff.id.clone();
        let link = budget
            .run("starting the hand-off page", async {
                self.handoffs.link(&opened.handoff).await.map_err(|why| {
                    ActionError::new(
                        ErrorCode::InternalError,
                        format!("cannot show a hand-off page: {why}"),
                        "Ask the user to do it in the browser themselves, then continue.",
                    )
                })
            })
            .await?;
        self.events().emit(SessionEvent::Handoff {
            tab: name.clone(),
            id: id.clone(),
            url: link.clone(),
            reason: args.reason.clone(),
        });
        let offer = self.offer.lock().unwrap().clone();
        // Whoever runs the server sees that a person is needed; the link's
        // token goes only where the person is reached (the offer, the
        // event, the CLI), never into a log.
        let page = link.split('#').next().unwrap_or_default();
        tracing::warn!(handoff = %id, "a person is needed ({}): the link to {page} went to the client", args.reason);
        let message = format!("The browser agent needs you: {}. Open the browser:", args.reason);
        let offered = async {
            match offer {
                Some(offer) => offer.offer(&message, &link, &id).await,
                None => std::future::pending().await,
            }
        };
        let outcome = self
            .wait_for_person(&tab, &name, args, budget, &mut answered, offered)
            .await;
        if matches!(outcome, Ok("caller")) {
            return Ok(self.give_to_caller(&name, link, opened, answered, budget));
        }
        self.finish(&tab, name, id, opened, outcome, budget).await
    }

    /// Waits for the person (Done, Give up), the `until` condition, the
    /// tab's end, the budget, or what the offer said (`offered`): Ok("person"),
    /// Ok("condition"), Ok("caller") (the link is the caller's to pass on).
    async fn wait_for_person(
        &self,
        tab: &Arc<Tab>,
        name: &str,
        args: &HandoffArgs,
        budget: &Budget,
        answered: &mut tokio::sync::oneshot::Receiver<Answer>,
        offered: impl std::future::Future<Output = Offered>,
    ) -> Result<&'static str, ActionError> {
        let offered = async {
            match offered.await {
                Offered::Shown => std::future::pending().await,
                other => other,
            }
        };
        let until = async {
            match &args.until {
                Some(until) => {
                    let wait = WaitArgs {
                        url: until.url.clone(),
                        text: until.text.clone(),
                        selector: until.selector.clone(),
                        ..Default::default()
                    };
                    tab_tools::wait::run(tab, &wait, budget).await
                }
                None => std::future::pending().await,
            }
        };
        let waiting = async {
            tokio::select! {
                answer = answered => match answer {
                    Ok(Answer::Done) => Ok("person"),
                    Ok(Answer::GiveUp) => Err(declined_error("the person gave up")),
                    Err(_) => Err(ActionError::internal("the hand-off ended without an answer")),
                },
                offered = offered => match offered {
                    Offered::ToCaller => Ok("caller"),
                    _ => Err(declined_error("the user declined to open the hand-off page")),
                },
                held = until => held.map(|_| "condition"),
                () = closed(tab) => Err(ActionError::new(
                    ErrorCode::TabNotFound,
                    format!("tab {name} closed during the hand-off"),
                    "List the tabs with browser_tabs and go on in another one.",
                )),
            }
        };
        budget.run("waiting for the person", waiting).await
    }

    /// The client cannot show the link to a person: the caller gets it at
    /// once, with how to wait for the person; the hand-off stays open
    /// (parked) for what is left of this call's budget.
    fn give_to_caller(
        &self,
        name: &str,
        link: String,
        opened: crate::handoff::Opened,
        answered: tokio::sync::oneshot::Receiver<Answer>,
        budget: &Budget,
    ) -> ActionOutput {
        let id = opened.handoff.id.clone();
        let open_for = budget.remaining();
        tracing::warn!(handoff = %id, "the client cannot show a link to a person: the link went to the caller in the result");
        self.handoffs.park(crate::handoff::Parked { opened, answered });
        // Its time runs out unless a call waits for it.
        let (handoffs, events, tab, expiring) = (
            self.handoffs.clone(),
            self.events().clone(),
            name.to_owned(),
            id.clone(),
        );
        tokio::spawn(async move {
            tokio::time::sleep(open_for).await;
            if handoffs.expire(&expiring) {
                events.emit(SessionEvent::HandoffEnded {
                    tab,
                    id: expiring,
                    by: "timeout",
                });
            }
        });
        let seconds = open_for.as_secs();
        ActionOutput::new(
            format!(
                "This client cannot show a link to a person, so it is yours to pass on: ask the user to open {link} in their browser (whoever opens it sees and drives tab {name} until the hand-off ends; share it with no one else). Then call browser_handoff again on tab {name} to wait for them (they press Done or Give up there). The link stays open {seconds} s."
            ),
            json!({"ok": false, "by": "caller", "handoff": id, "link": link, "tab": name, "open_for_s": seconds}),
        )
    }

    /// Ends an opened hand-off after its wait: the event, then the result.
    async fn finish(
        &self,
        tab: &Arc<Tab>,
        name: String,
        id: String,
        opened: crate::handoff::Opened,
        outcome: Result<&'static str, ActionError>,
        budget: &Budget,
    ) -> Result<ActionOutput, ActionError> {
        // How it ended, for the `handoff_ended` event.
        let by = match &outcome {
            Ok(by) => by,
            Err(e) => match e.code {
                ErrorCode::HandoffDeclined => "declined",
                ErrorCode::TabNotFound => "tab_closed",
                ErrorCode::Canceled => "canceled",
                ErrorCode::Timeout => "timeout",
                _ => "error",
            },
        };
        opened.end().await;
        self.events().emit(SessionEvent::HandoffEnded {
            tab: name,
            id: id.clone(),
            by,
        });
        let by = outcome.map_err(|e| match e.code {
            ErrorCode::Timeout => ActionError::new(
                ErrorCode::Timeout,
                format!(
                    "no one finished the hand-off within {:.0}s",
                    budget.elapsed().as_secs_f64()
                ),
                "Call browser_handoff again with a longer timeout_ms, or go on without the person.",
            ),
            _ => e,
        })?;
        let (url, title) = tab_tools::navigate::location(tab, budget).await?;
        let said = match by {
            "person" => "The person pressed Done",
            _ => "The until condition holds",
        };
        Ok(ActionOutput::new(
            format!("{said}. Now at {url} ({title}); take a browser_snapshot to see the page."),
            json!({"ok": true, "by": by, "url": url, "title": title, "handoff": id}),
        ))
    }
}

impl Session {
    /// A result with an `obstacle` says a person can take over; with
    /// `[handoff] auto`, an obstacle on navigate starts a hand-off by itself
    /// (its own budget: `[handoff] timeout_s`, cancelled with the call).
    pub(super) async fn after_obstacle(
        &self,
        context: &Context,
        spec: &Declaration,
        action: &impl Call,
        result: Result<ActionOutput, ActionError>,
        budget: &Budget,
    ) -> Result<ActionOutput, ActionError> {
        let Ok(mut output) = result else { return result };
        let Some(obstacle) = &output.obstacle else {
            return Ok(output);
        };
        let kind = obstacle.kind;
        if !(self.config.handoff.auto && spec.hands_off_obstacles()) {
            output.text = format!("{}\n{SUGGESTION}", output.text);
            return Ok(output);
        }
        let args = HandoffArgs {
            reason: format!("the page shows {} ([handoff] auto)", kind.replace('_', " ")),
            until: None,
            common: Common {
                tab: action.common().tab.clone(),
                timeout_ms: None,
            },
        };
        let own = std::time::Duration::from_secs(self.config.handoff.timeout_s);
        let budget = Budget::new(own, budget.cancel_token());
        match self.hand_off(context, &args, &budget).await {
            Ok(handed) => {
                let said = match handed.data["by"].as_str() {
                    Some("caller") => "A person is needed ([handoff] auto)",
                    _ => "A person took over ([handoff] auto)",
                };
                output.text = format!("{}\n{said}: {}", output.text, handed.text);
                output.data["handoff"] = handed.data;
            }
            Err(e) => {
                output.text = format!(
                    "{}\nA hand-off started by itself ended: {} ({}).",
                    output.text, e.message, e.code
                );
                output.data["handoff"] = json!({"ok": false, "code": e.code.as_str()});
            }
        }
        Ok(output)
    }
}

fn declined_error(why: &str) -> ActionError {
    ActionError::new(
        ErrorCode::HandoffDeclined,
        why,
        "Do not retry the hand-off; tell the user what was needed, or go another way.",
    )
}

/// Resolves when tab `tab` is gone (closed, crashed away, detached) or the
/// browser connection ended.
async fn closed(tab: &Tab) {
    let mut events = tab.session.connection().events(Some(""));
    let session_id = tab.session.id().to_owned();
    while let Some(event) = events.recv().await {
        if let Some(gone) = event.decode::<TargetDestroyed>() {
            if gone.target_id == tab.target_id {
                return;
            }
        } else if let Some(gone) = event.decode::<DetachedFromTarget>() {
            if gone.session_id == session_id {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tool declared here, in no list: what its declaration says is all
    /// the session asks.
    fn scratch(effect: Effect) -> Declaration {
        Declaration {
            name: "browser_scratch",
            verb: "scratch",
            group: Group::Core,
            description: "A tool no list names.",
            scope: Scope::Tab,
            runs_during_dialog: false,
            budget: DefaultBudget::Action,
            changes_page: false,
            switch: None,
            effect,
        }
    }

    #[test]
    fn a_new_reading_tool_runs_during_a_hand_off_without_editing_a_list() {
        assert!(may_run(&scratch(Effect::Reads), true).is_ok());
        for acting in [Effect::Acts, Effect::Leaves, Effect::AnswersDialog] {
            let refused = may_run(&scratch(acting), true).unwrap_err();
            assert_eq!(refused.code, ErrorCode::TabInHandoff, "{acting:?}");
            assert!(refused.message.contains("browser_scratch"), "{}", refused.message);
            // The next step names the declared readers.
            for reader in ["browser_snapshot", "browser_screenshot", "browser_wait"] {
                assert!(refused.next_step.contains(reader), "{}", refused.next_step);
            }
            assert!(may_run(&scratch(acting), false).is_ok());
        }
    }
}
