//! The URL policy around one action in a session: the destinations an
//! action names and the page it is about to act on are judged before
//! anything is sent; what the request stage blocked while it ran
//! (`crate::policy::gate`) is reported in its result, and a navigation the
//! request stage stopped becomes `permission_denied` naming the URL and the
//! rule.
//!
//! Owns no state: the rules are the browser slot's, the blocked record the
//! tab's gate.

use serde_json::Value;

use crate::policy::consent::OnceGrant;
use crate::policy::gate::Blocked;
use crate::policy::{Answer, Consent, Decision, Policy, Verdict};
use crate::tab::Tab;
use crate::tool::Declaration;
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

/// The page the action is about to act on: it may have moved by itself
/// (or been opened by the page, out of the request stage's sight), so it
/// is judged again. Leaving it (navigate) and answering its dialog are
/// always allowed; so are pages that are not http(s) (`about:blank`). If
/// the page moved while the user was being asked, the new URL is judged
/// (and asked about) again.
pub async fn current_page(
    spec: &Declaration,
    tab: &Tab,
    policy: &Policy,
    consent: &Consent,
    budget: &Budget,
) -> Result<Vec<OnceGrant>, ActionError> {
    let mut grants = Vec::new();
    if !spec.judges_current_page() {
        return Ok(grants);
    }
    loop {
        let url = tab.state(|s| s.url().to_owned());
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Ok(grants);
        }
        let verdict = policy.judge(&url);
        let asks = verdict.decision == Decision::Ask && !consent.granted(&verdict);
        match consent.settle(&verdict, "the tab is on", budget).await {
            Ok(grant) => grants.extend(grant),
            Err(mut error) => {
                error.next_step =
                    "Navigate the tab to an allowed page (browser_navigate) or use another tab.".into();
                return Err(error);
            }
        }
        if !asks || tab.state(|s| s.url() == url) {
            return Ok(grants);
        }
        tracing::info!(from = %url, "the page moved while the user was asked; judging it again");
    }
}

/// The action's result, given what the request stage blocked: a failed
/// navigation whose main-frame document (or a redirect hop of it) was
/// blocked while it ran (`during`) is `permission_denied` naming the URL
/// and the rule; an action that went on says what was blocked since the
/// previous result (`blocked: [{url, rule}]`: it may have started it, or
/// the page did in between), and those are returned as `deny` verdicts for
/// the audit and the event stream.
pub fn after(
    result: Result<ActionOutput, ActionError>,
    during: Vec<Blocked>,
    tab: &Tab,
) -> (Result<ActionOutput, ActionError>, Vec<Verdict>) {
    let blocked = tab.gate().take_unreported();
    let result = match result {
        Err(e) if e.code == ErrorCode::NavigationFailed => match during.iter().find(|b| b.main_frame) {
            Some(hop) => {
                let what = if hop.redirect {
                    "redirected to"
                } else {
                    "navigating to"
                };
                let mut error = match &hop.asked {
                    Some(Answer::Failed(why)) => hop.verdict.unanswered_error(what, why),
                    Some(_) => hop.verdict.refused_error(what),
                    None => hop.verdict.denied_error(what),
                };
                let url = tab.state(|s| s.url().to_owned());
                error.message += &format!("; nothing was sent there, and the tab stays on {url}");
                Err(error)
            }
            None => Err(e),
        },
        Err(e) => Err(e),
        Ok(output) if blocked.is_empty() => Ok(output),
        Ok(mut output) => {
            let list: Vec<Value> = blocked
                .iter()
                .map(|b| match &b.resource {
                    Some(kind) => {
                        serde_json::json!({ "url": b.verdict.url, "rule": b.verdict.rule, "resource": kind })
                    }
                    None => serde_json::json!({ "url": b.verdict.url, "rule": b.verdict.rule }),
                })
                .collect();
            output.text += "\nBlocked by the URL policy (nothing was sent):";
            for b in &blocked {
                let place = match &b.resource {
                    Some(kind) => kind.to_lowercase(),
                    None if b.main_frame => "page".into(),
                    None => "frame".into(),
                };
                output.text += &format!("\n- {place} {} ({})", b.verdict.url, b.verdict.rule);
            }
            output.data["blocked"] = Value::Array(list);
            Ok(output)
        }
    };
    let verdicts = match &result {
        Ok(_) => blocked
            .into_iter()
            .map(|b| Verdict {
                decision: Decision::Deny,
                ..b.verdict
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    (result, verdicts)
}
