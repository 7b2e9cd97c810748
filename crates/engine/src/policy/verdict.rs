//! A verdict: what the policy decided about one URL and which rule decided
//! it, in the words a model reads (`permission_denied` naming both).

use serde_json::{json, Value};

use super::rules::Decision;
use crate::{ActionError, ErrorCode};

/// What the policy decided about one URL, and which rule decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The URL judged.
    pub url: String,
    /// The decision.
    pub decision: Decision,
    /// The rule that decided (`policy.rules[2] (deny "…")`, `--deny "…"`),
    /// or `policy.default = "deny"` when none matched.
    pub rule: String,
}

impl Verdict {
    /// Whether the URL may be opened.
    pub fn allowed(&self) -> bool {
        self.decision == Decision::Allow
    }

    /// For results and the audit: `{url, action, rule}`.
    pub fn to_json(&self) -> Value {
        json!({ "url": self.url, "action": self.decision.as_str(), "rule": self.rule })
    }

    /// The error for acting on a URL that is not allowed. An `ask` that
    /// reaches here could not be asked (the client cannot ask the user).
    pub fn denied_error(&self, what: &str) -> ActionError {
        let (why, next) = match self.decision {
            Decision::Ask => (
                "needs the user's consent, and this client cannot ask the user (an ask rule needs a client that can ask: MCP elicitation, or the WebSocket API's ask/decide)",
                "Ask the user to allow this URL in cdpilot's configuration, or work on another site.",
            ),
            _ => (
                "is denied",
                "The user's configuration does not let the browser go there; do not retry it. Work on an allowed site instead.",
            ),
        };
        ActionError::new(
            ErrorCode::PermissionDenied,
            format!("{what} {} {why} by {}", self.url, self.rule),
            next,
        )
    }

    /// The error for a URL the user refused when asked.
    pub fn refused_error(&self, what: &str) -> ActionError {
        ActionError::new(
            ErrorCode::PermissionDenied,
            format!(
                "{what} {} was refused by the user (asked by {})",
                self.url, self.rule
            ),
            "The user said no: do not retry it. Work on another site, or ask the user what to do.",
        )
    }

    /// The error for an `ask` whose question got no answer (`why`).
    pub fn unanswered_error(&self, what: &str, why: &str) -> ActionError {
        ActionError::new(
            ErrorCode::PermissionDenied,
            format!(
                "{what} {} needs the user's consent ({}), and asking failed: {why}",
                self.url, self.rule
            ),
            "Nothing was sent there. Retry once the user can answer, or work on another site.",
        )
    }
}
