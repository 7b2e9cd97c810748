//! The error every action returns: inside the engine a [`Failure`] (what
//! went wrong, for control flow), at the edge the contract's [`ErrorCode`]
//! (mapped from the failure in ONE place, [`Failure::code`]) and the text a
//! model reads.
//!
//! Every error that reaches a model says what happened and what to do next:
//! its text is `"<code>: <what happened>. <what to do next>"`. Code in the
//! engine branches on `failure`, never on `code` (the model-facing wording).

use std::fmt;
use std::time::Duration;

use cdp::{CdpError, ProtocolErrorKind};
use serde::Serialize;

/// The error codes of `docs/src/spec/tools.md`. Callers branch on these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The arguments are wrong or name something that does not exist.
    InvalidArgument,
    /// A ref is from a page that has since navigated.
    ElementStale,
    /// No element matches the ref or selector.
    ElementNotFound,
    /// The tab never issued the ref (another tab's, another frame's, made up).
    RefUnknown,
    /// The ref's element no longer has the role or name it was shown with:
    /// an acting tool did nothing.
    RefChanged,
    /// The element is hidden, disabled or has no box.
    ElementNotInteractable,
    /// No such tab, or it closed.
    TabNotFound,
    /// No such frame, or it went away.
    FrameNotFound,
    /// The navigation failed (network error, bad status).
    NavigationFailed,
    /// The policy denied the URL.
    PermissionDenied,
    /// The domain is blocked.
    DomainBlocked,
    /// A dialog blocks the page; answer it first.
    DialogPending,
    /// There is no dialog to answer.
    NoDialog,
    /// The call's budget ran out.
    Timeout,
    /// The client cancelled the call.
    Canceled,
    /// The page's JavaScript threw.
    EvaluateError,
    /// The connection to the browser was lost.
    BrowserDisconnected,
    /// A bug or an unexpected browser answer.
    InternalError,
    /// The person a tab was handed to gave up (`browser_handoff`).
    HandoffDeclined,
    /// A hand-off is already open on that tab.
    HandoffPending,
    /// A person holds the tab (an open hand-off); only reading tools run.
    TabInHandoff,
    /// The session already has as many calls running and waiting as it
    /// may (serve's per-session queue); refused at once, nothing ran.
    Busy,
    /// The tab's renderer crashed (or was ended for going over its memory
    /// ceiling); the tab is gone.
    TabCrashed,
}

impl ErrorCode {
    /// The code as the contract spells it (`element_stale`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArgument => "invalid_argument",
            ErrorCode::ElementStale => "element_stale",
            ErrorCode::ElementNotFound => "element_not_found",
            ErrorCode::RefUnknown => "ref_unknown",
            ErrorCode::RefChanged => "ref_changed",
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
            ErrorCode::HandoffDeclined => "handoff_declined",
            ErrorCode::HandoffPending => "handoff_pending",
            ErrorCode::TabInHandoff => "tab_in_handoff",
            ErrorCode::Busy => "busy",
            ErrorCode::TabCrashed => "tab_crashed",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why an action failed, as the engine's own control flow sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The call's budget ran out during `step`, after `after`.
    Timeout {
        /// What the call was doing.
        step: String,
        /// How long the call had run.
        after: Duration,
    },
    /// The client cancelled the call during `step`.
    Canceled {
        /// What the call was doing.
        step: String,
    },
    /// The connection to the browser is gone.
    Disconnected,
    /// The tab's target (or the session an action used) went away.
    TargetClosed,
    /// A frame's session went away (the frame moved or was removed): the
    /// tab is still there.
    FrameGone,
    /// The document or script world the action used was replaced (the page
    /// navigated).
    ContextGone,
    /// The DOM node left the document.
    NodeGone,
    /// The node has no box (hidden, detached, zero size).
    NoLayout,
    /// A dialog blocks the page.
    DialogPending {
        /// The dialog, as a model reads it.
        dialog: String,
    },
    /// Reported straight with a contract code (bad input, not found, …).
    Reported(ErrorCode),
    /// The cdpilot extension in the user's Chrome refused it: `domain` is
    /// on the blocklist the user keeps there.
    BlockedByExtension {
        /// The domain refused.
        domain: String,
    },
    /// The tab's current document never issued `reference`.
    RefUnknown {
        /// The ref as the caller gave it.
        reference: String,
    },
    /// An acting tool's target no longer reads as it was shown.
    RefChanged(Box<RefChange>),
}

/// What a ref was shown as and what its element is now (`ref_changed`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefChange {
    /// The ref as the caller gave it.
    pub reference: String,
    /// The role and name the ref was shown with.
    pub was: (String, String),
    /// Its element's role and name now.
    pub now: (String, String),
    /// The ref of the one element that now has `was`'s role and name.
    pub fresh_ref: Option<String>,
}

impl Failure {
    /// The contract's code for this failure: the one mapping.
    pub fn code(&self) -> ErrorCode {
        match self {
            Failure::Timeout { .. } => ErrorCode::Timeout,
            Failure::Canceled { .. } => ErrorCode::Canceled,
            Failure::Disconnected => ErrorCode::BrowserDisconnected,
            Failure::TargetClosed => ErrorCode::TabNotFound,
            Failure::FrameGone => ErrorCode::FrameNotFound,
            Failure::ContextGone => ErrorCode::ElementStale,
            Failure::NodeGone => ErrorCode::ElementNotFound,
            Failure::NoLayout => ErrorCode::ElementNotInteractable,
            Failure::DialogPending { .. } => ErrorCode::DialogPending,
            Failure::Reported(code) => *code,
            Failure::BlockedByExtension { .. } => ErrorCode::PermissionDenied,
            Failure::RefUnknown { .. } => ErrorCode::RefUnknown,
            Failure::RefChanged(_) => ErrorCode::RefChanged,
        }
    }

    /// The call may not go on: its budget ran out or it was cancelled.
    pub fn ends_the_call(&self) -> bool {
        matches!(self, Failure::Timeout { .. } | Failure::Canceled { .. })
    }
}

/// An action's failure: what went wrong, its contract code, what happened,
/// and the model's next step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionError {
    /// The contract's code, always `failure.code()`.
    pub code: ErrorCode,
    /// What went wrong, for the engine's control flow.
    pub failure: Failure,
    /// What happened, without a trailing period.
    pub message: String,
    /// What to do next, a full sentence.
    pub next_step: String,
}

impl ActionError {
    /// An error reported straight with a contract code.
    pub fn new(code: ErrorCode, message: impl Into<String>, next_step: impl Into<String>) -> Self {
        Self::of(Failure::Reported(code), message, next_step)
    }

    /// An error for `failure`; its code comes from [`Failure::code`].
    pub fn of(failure: Failure, message: impl Into<String>, next_step: impl Into<String>) -> Self {
        ActionError {
            code: failure.code(),
            failure,
            message: message.into(),
            next_step: next_step.into(),
        }
    }

    /// Facts a client may branch on beyond the code (the error's `data`):
    /// `{blocked_in: "extension", domain}` for the extension's blocklist;
    /// `{ref, was: {role, name}, now: {role, name}, fresh_ref?}` for
    /// `ref_changed`; `{ref}` for `ref_unknown`.
    pub fn data(&self) -> Option<serde_json::Value> {
        match &self.failure {
            Failure::BlockedByExtension { domain } => {
                Some(serde_json::json!({"blocked_in": "extension", "domain": domain}))
            }
            Failure::RefUnknown { reference } => Some(serde_json::json!({ "ref": reference })),
            Failure::RefChanged(change) => {
                let mut data = serde_json::json!({
                    "ref": change.reference,
                    "was": {"role": change.was.0, "name": change.was.1},
                    "now": {"role": change.now.0, "name": change.now.1},
                });
                if let Some(fresh) = &change.fresh_ref {
                    data["fresh_ref"] = fresh.as_str().into();
                }
                Some(data)
            }
            _ => None,
        }
    }

    /// An `invalid_argument` error.
    pub fn invalid(message: impl Into<String>, next_step: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArgument, message, next_step)
    }

    /// An `internal_error`, with the generic next step.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(
            ErrorCode::InternalError,
            message,
            "Retry once; if it fails again, take a browser_snapshot and try another way.",
        )
    }

    /// `element_stale` for a ref from a page that navigated away.
    pub fn stale(reference: &str) -> Self {
        Self::of(
            Failure::ContextGone,
            format!("ref {reference} is from a page that has since navigated away"),
            "Take a new browser_snapshot and use a ref from it.",
        )
    }

    /// `browser_disconnected`: the browser's connection is gone.
    pub fn disconnected() -> Self {
        Self::of(
            Failure::Disconnected,
            "the connection to the browser was lost",
            "Retry the call: the browser is restarted or reconnected on the next call (tabs and refs from before are gone).",
        )
    }

    /// Maps a CDP failure in the middle of an action. `step` says what the
    /// action was doing, for the message.
    pub fn from_cdp(step: &str, error: CdpError) -> Self {
        match (&error, error.kind()) {
            (CdpError::Disconnected, _) => Self::disconnected(),
            (CdpError::Timeout { after, .. }, _) => Self::of(
                Failure::Timeout {
                    step: step.to_owned(),
                    after: *after,
                },
                format!(
                    "{step} got no answer from the browser within {}ms",
                    after.as_millis()
                ),
                "The page may be busy; take a browser_snapshot, then retry with a larger timeout_ms.",
            ),
            (_, ProtocolErrorKind::TargetGone) => Self::of(
                Failure::TargetClosed,
                format!("the tab went away during {step}"),
                "List tabs with browser_tabs and pick another one.",
            ),
            (_, ProtocolErrorKind::NodeGone) => Self::of(
                Failure::NodeGone,
                format!("the element left the page during {step}"),
                "Take a new browser_snapshot and use a fresh ref.",
            ),
            (_, ProtocolErrorKind::ContextGone) => Self::of(
                Failure::ContextGone,
                format!("the page navigated during {step}"),
                "Take a new browser_snapshot and use a fresh ref.",
            ),
            (_, ProtocolErrorKind::NoLayout) => Self::of(
                Failure::NoLayout,
                format!("the element has no visible box ({step})"),
                "It may be hidden or collapsed; take a browser_snapshot and pick a visible element.",
            ),
            (CdpError::Protocol { message, .. }, ProtocolErrorKind::BlockedByExtension) => {
                let said = message.trim_start_matches("domain_blocked:").trim();
                let domain = said.split_whitespace().next().unwrap_or("").to_owned();
                Self::of(
                    Failure::BlockedByExtension { domain },
                    format!("{said} (blocked_in: extension)"),
                    "The user keeps this domain on the blocklist of the cdpilot extension in their Chrome: \
                     choose another site, or ask the user to remove it from the extension's options.",
                )
            }
            (CdpError::TooLarge { .. }, _) => Self::new(
                ErrorCode::EvaluateError,
                format!("{step}: {error}"),
                "Ask for less: a smaller value (evaluate a part of it, or its length), a narrower snapshot or extract; the tab is usable.",
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
    fn the_engine_branches_on_failures_and_the_edge_reads_their_codes() {
        let gone = ActionError::from_cdp(
            "x",
            CdpError::Protocol {
                method: "Runtime.callFunctionOn".into(),
                code: -32000,
                message: "Cannot find context with specified id".into(),
            },
        );
        assert_eq!(
            (gone.failure.clone(), gone.code),
            (Failure::ContextGone, ErrorCode::ElementStale)
        );
        let timeout = ActionError::from_cdp(
            "loading",
            CdpError::Timeout {
                method: "Page.navigate".into(),
                after: Duration::from_secs(2),
            },
        );
        assert!(timeout.failure.ends_the_call());
        assert_eq!(timeout.code, ErrorCode::Timeout);
        assert_eq!(Failure::FrameGone.code(), ErrorCode::FrameNotFound);
        assert_eq!(
            ActionError::new(ErrorCode::NoDialog, "none", "go on").failure,
            Failure::Reported(ErrorCode::NoDialog)
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
