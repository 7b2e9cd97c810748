//! The contract's error codes and the error every action returns.
//!
//! Every error that reaches a model says what happened and what to do next:
//! its text is `"<code>: <what happened>. <what to do next>"`.

use std::fmt;

use cdp::{CdpError, ProtocolErrorKind};
use serde::Serialize;

/// The error codes of `shared/spec/TOOLS.md`. Callers branch on these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    InvalidArgument,
    ElementStale,
    ElementNotFound,
    ElementNotInteractable,
    TabNotFound,
    FrameNotFound,
    NavigationFailed,
    PermissionDenied,
    DomainBlocked,
    DialogPending,
    NoDialog,
    Timeout,
    Canceled,
    EvaluateError,
    BrowserDisconnected,
    InternalError,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArgument => "invalid_argument",
            ErrorCode::ElementStale => "element_stale",
            ErrorCode::ElementNotFound => "element_not_found",
            ErrorCode::ElementNotInteractable => "element_not_interactable",
            ErrorCode::TabNotFound => "tab_not_found",
            ErrorCode::FrameNotFound => "frame_not_found",
            ErrorCode::NavigationFailed => "navigation_failed",
            ErrorCode::PermissionDenied => "permission_denied",
            ErrorCode::DomainBlocked => "domain_blocked",
            ErrorCode::DialogPending => "dialog_pending",
            ErrorCode::NoDialog => "no_dialog",
            ErrorCode::Timeout => "timeout",
            ErrorCode::Canceled => "canceled",
            ErrorCode::EvaluateError => "evaluate_error",
            ErrorCode::BrowserDisconnected => "browser_disconnected",
            ErrorCode::InternalError => "internal_error",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An action's failure: a code, what happened, and the model's next step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionError {
    pub code: ErrorCode,
    /// What happened, without a trailing period.
    pub message: String,
    /// What to do next, a full sentence.
    pub next_step: String,
}

impl ActionError {
    pub fn new(code: ErrorCode, message: impl Into<String>, next_step: impl Into<String>) -> Self {
        ActionError {
            code,
            message: message.into(),
            next_step: next_step.into(),
        }
    }

    pub fn invalid(message: impl Into<String>, next_step: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArgument, message, next_step)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(
            ErrorCode::InternalError,
            message,
            "Retry once; if it fails again, take a browser_snapshot and try another way.",
        )
    }

    pub fn stale(reference: &str) -> Self {
        Self::new(
            ErrorCode::ElementStale,
            format!("ref {reference} is from a page that has since navigated away"),
            "Take a new browser_snapshot and use a ref from it.",
        )
    }

    pub fn disconnected() -> Self {
        Self::new(
            ErrorCode::BrowserDisconnected,
            "the connection to the browser was lost",
            "Retry the call: the browser is restarted or reconnected on the next call (tabs and refs from before are gone).",
        )
    }

    /// Maps a CDP failure in the middle of an action. `step` says what the
    /// action was doing, for the message.
    pub fn from_cdp(step: &str, error: CdpError) -> Self {
        match (&error, error.kind()) {
            (CdpError::Disconnected, _) => Self::disconnected(),
            (CdpError::Timeout { after, .. }, _) => Self::new(
                ErrorCode::Timeout,
                format!(
                    "{step} got no answer from the browser within {}ms",
                    after.as_millis()
                ),
                "The page may be busy; take a browser_snapshot, then retry with a larger timeout_ms.",
            ),
            (_, ProtocolErrorKind::TargetGone) => Self::new(
                ErrorCode::TabNotFound,
                format!("the tab went away during {step}"),
                "List tabs with browser_tabs and pick another one.",
            ),
            (_, ProtocolErrorKind::NodeGone) => Self::new(
                ErrorCode::ElementNotFound,
                format!("the element left the page during {step}"),
                "Take a new browser_snapshot and use a fresh ref.",
            ),
            (_, ProtocolErrorKind::ContextGone) => Self::new(
                ErrorCode::ElementStale,
                format!("the page navigated during {step}"),
                "Take a new browser_snapshot and use a fresh ref.",
            ),
            (_, ProtocolErrorKind::NoLayout) => Self::new(
                ErrorCode::ElementNotInteractable,
                format!("the element has no visible box ({step})"),
                "It may be hidden or collapsed; take a browser_snapshot and pick a visible element.",
            ),
            _ => Self::internal(format!("{step}: {error}")),
        }
    }
}

impl fmt::Display for ActionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}. {}", self.code, self.message, self.next_step)
    }
}

impl std::error::Error for ActionError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_follows_the_contract_shape() {
        let e = ActionError::stale("e3");
        assert_eq!(
            e.to_string(),
            "element_stale: ref e3 is from a page that has since navigated away. Take a new browser_snapshot and use a ref from it."
        );
    }

    #[test]
    fn cdp_failures_map_to_codes() {
        assert_eq!(
            ActionError::from_cdp("x", CdpError::Disconnected).code,
            ErrorCode::BrowserDisconnected
        );
        let gone = CdpError::Protocol {
            method: "DOM.getContentQuads".into(),
            code: -32000,
            message: "No node with given id found".into(),
        };
        assert_eq!(ActionError::from_cdp("x", gone).code, ErrorCode::ElementNotFound);
        let other = CdpError::Protocol {
            method: "X".into(),
            code: -32000,
            message: "weird".into(),
        };
        assert_eq!(ActionError::from_cdp("x", other).code, ErrorCode::InternalError);
    }
}
