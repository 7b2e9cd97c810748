//! What the egress gate (`crate::egress`) refused while a call ran, or
//! since the previous result, in the call's result: each refused host once
//! in `blocked` (`{url, rule, resource: "connection"}`), beside what the
//! request stage blocked; a worker's request its own request gate or its
//! blocklist refused (`egress/workers.rs`, `tab/pump.rs`, recorded in the
//! same door) as `{url, rule, resource, source}` (`source`: the worker's
//! kind); and a navigate whose
//! own destination the gate refused (`[policy] block_private_networks`, a
//! deny on the address a name resolves to) is `permission_denied` naming
//! the rule.
//!
//! Owns no state: the refusals are the context's door's.

use serde_json::{json, Value};

use super::Call;
use crate::egress::{Blocked, Refusal};
use crate::policy::connection::canonical_host;
use crate::policy::{Decision, Verdict};
use crate::tool::{Declaration, Effect};
use crate::{ActionError, ActionOutput, ErrorCode};

/// The call's result with the gate's `refusals` in it; the refusals are
/// also returned as `deny` verdicts for the audit and the event stream (a
/// failed call has no result to carry them, but its events say them).
/// Only a refusal of the destination's host since `settled` (when the call
/// was let through, a grant the user gave for it in place) ends a navigate:
/// an earlier one (the previous page's late request, refused between calls)
/// is reported in `blocked` like any other.
pub fn after(
    spec: &Declaration,
    action: &impl Call,
    result: Result<ActionOutput, ActionError>,
    refusals: Vec<Refusal>,
    settled: std::time::Instant,
) -> (Result<ActionOutput, ActionError>, Vec<Verdict>) {
    if refusals.is_empty() {
        return (result, Vec::new());
    }
    let verdicts = refusals
        .iter()
        .map(|r| Verdict {
            url: r.url.clone(),
            decision: Decision::Deny,
            rule: r.rule.clone(),
        })
        .collect();
    let connection = |r: &&Refusal| r.blocked == Blocked::Connection && r.at >= settled;
    if let Some(refused) =
        destination(spec, action).and_then(|d| refusals.iter().filter(connection).find(|r| r.host == d))
    {
        let url = leaves_to(spec, action).unwrap_or(&refused.url).to_owned();
        let error = ActionError::new(
            ErrorCode::PermissionDenied,
            format!(
                "navigating to {url} is refused by {}: cdpilot's egress gate opened no connection to {}",
                refused.rule, refused.host
            ),
            "The user's configuration does not let the browser connect there; do not retry it. Work on an allowed site instead.",
        );
        return (Err(error), verdicts);
    }
    let Ok(mut output) = result else {
        return (result, verdicts);
    };
    if !output
        .text
        .contains("\nBlocked by the URL policy (nothing was sent):")
    {
        output.text += "\nBlocked by the URL policy (nothing was sent):";
    }
    let mut list = match output.data["blocked"].take() {
        Value::Array(list) => list,
        _ => Vec::new(),
    };
    for refused in &refusals {
        match &refused.blocked {
            Blocked::Connection => {
                output.text += &format!("\n- connection {} ({})", refused.url, refused.rule);
                list.push(json!({ "url": refused.url, "rule": refused.rule, "resource": "connection" }));
            }
            Blocked::Request { resource, worker } => {
                output.text += &format!(
                    "\n- {} {} from a {} ({})",
                    resource.to_lowercase(),
                    refused.url,
                    worker.replace('_', " "),
                    refused.rule
                );
                list.push(json!({ "url": refused.url, "rule": refused.rule, "resource": resource, "source": worker }));
            }
        }
    }
    output.data["blocked"] = Value::Array(list);
    (Ok(output), verdicts)
}

/// The document a call that leaves the page loads, as the gate counts
/// hosts (`host:port`).
fn destination(spec: &Declaration, action: &impl Call) -> Option<String> {
    let url = url::Url::parse(leaves_to(spec, action)?).ok()?;
    Some(format!(
        "{}:{}",
        canonical_host(url.host_str()?),
        url.port_or_known_default()?
    ))
}

/// The document a call of a tool that leaves the page loads in the tab
/// (the egress gate's refusal of its host ends the call).
fn leaves_to<'a>(spec: &Declaration, action: &'a impl Call) -> Option<&'a str> {
    (spec.effect == Effect::Leaves)
        .then(|| action.destination())
        .flatten()
}
