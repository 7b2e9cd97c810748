//! The book of a tab's native dialogs (alert, confirm, prompt,
//! beforeunload): which are pending, and the last 20 that closed.
//!
//! Pure bookkeeping fed by the tab's event reader; answering a dialog is an
//! action (`browser_dialog`). `Page.javascriptDialogClosed` carries no
//! message, so a close is matched to the oldest pending dialog.

use std::collections::VecDeque;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::Value;

pub const RECENT_CAP: usize = 20;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Dialog {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
    pub default_prompt: Option<String>,
    pub frame: Option<String>,
    pub opened_at: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closed_at: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closed_by: Option<String>,
    /// The CDP session the dialog belongs to (the tab's or an iframe's).
    #[serde(skip)]
    pub session: String,
    /// Who is answering it right now (set before the CDP call, so the close
    /// event is attributed to them rather than to "remote").
    #[serde(skip)]
    pub answering: Option<String>,
    /// It opened before the connection to the browser dropped. Chrome lets
    /// only the connection that saw a dialog answer it, so this one can no
    /// longer be answered; leaving the page (a navigation) closes it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub orphaned: bool,
    /// The paused bridge request to answer, for a dialog that came through
    /// the dialog bridge rather than as a native dialog.
    #[serde(
        rename = "bridged",
        serialize_with = "is_some",
        skip_serializing_if = "Option::is_none"
    )]
    pub bridge_request: Option<String>,
}

#[derive(Debug, Default)]
pub struct DialogBook {
    pub pending: Vec<Dialog>,
    pub recent: VecDeque<Dialog>,
    /// Dialogs ever opened on this tab; ids are `d-N`.
    opened: u64,
}

fn is_some<S: serde::Serializer>(value: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bool(value.is_some())
}

pub fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl DialogBook {
    /// The tab was attached again on a new connection: its pending dialogs
    /// move to the new session, marked orphaned (Chrome 156 does not hand
    /// them over); should Chrome announce one again, `opened` recognises it.
    pub fn moved_session(&mut self, old: &str, new: &str) {
        for dialog in &mut self.pending {
            if dialog.session == old {
                dialog.session = new.to_owned();
                dialog.orphaned = true;
            }
        }
    }

    /// `Page.javascriptDialogOpening`.
    pub fn opened(&mut self, session: &str, params: &Value) -> Dialog {
        let kind = params["type"].as_str().unwrap_or("alert");
        let message = params["message"].as_str().unwrap_or_default();
        if let Some(same) = self
            .pending
            .iter_mut()
            .find(|d| d.orphaned && d.session == session && d.kind == kind && d.message == message)
        {
            // Announced to the new connection after all: it can answer it.
            same.orphaned = false;
            return same.clone();
        }
        self.opened += 1;
        let dialog = Dialog {
            id: format!("d-{}", self.opened),
            kind: params["type"].as_str().unwrap_or("alert").to_owned(),
            message: params["message"].as_str().unwrap_or_default().to_owned(),
            default_prompt: params["defaultPrompt"]
                .as_str()
                .filter(|_| params["type"] == "prompt")
                .map(str::to_owned),
            frame: params["frameId"].as_str().map(str::to_owned),
            opened_at: now(),
            closed_at: None,
            closed_by: None,
            session: session.to_owned(),
            answering: None,
            orphaned: false,
            bridge_request: None,
        };
        self.pending.push(dialog.clone());
        dialog
    }

    /// A dialog the bridge paused as request `request_id` (its fields in
    /// `Page.javascriptDialogOpening`'s shape).
    pub fn bridged(&mut self, session: &str, request_id: &str, params: &Value) -> Dialog {
        let mut dialog = self.opened(session, params);
        if let Some(d) = self.pending.iter_mut().find(|d| d.id == dialog.id) {
            d.bridge_request = Some(request_id.to_owned());
        }
        dialog.bridge_request = Some(request_id.to_owned());
        dialog
    }

    /// A bridged dialog was answered (no close event comes for those).
    pub fn closed_by_id(&mut self, id: &str) {
        if let Some(index) = self.pending.iter().position(|d| d.id == id) {
            self.close_at(index);
        }
    }

    /// `Page.javascriptDialogClosed` on `session`: the close event has no
    /// message, so it closes that session's oldest pending native dialog.
    pub fn closed(&mut self, session: &str) {
        if let Some(index) = self
            .pending
            .iter()
            .position(|d| d.session == session && d.bridge_request.is_none())
        {
            self.close_at(index);
        }
    }

    /// Moves pending dialog `index` to the recent ring, recording who
    /// closed it (whoever was answering it, else the page or backend).
    fn close_at(&mut self, index: usize) {
        let mut dialog = self.pending.remove(index);
        dialog.closed_at = Some(now());
        dialog.closed_by = Some(dialog.answering.take().unwrap_or_else(|| "remote".into()));
        self.recent.push_back(dialog);
        while self.recent.len() > RECENT_CAP {
            self.recent.pop_front();
        }
    }
}

/// "an alert", "a confirm", …
fn with_article(kind: &str) -> String {
    let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {kind}")
}

/// `dialog_pending`: the page is blocked by `dialog`.
pub fn pending_error(dialog: &Dialog) -> crate::ActionError {
    if dialog.orphaned {
        return crate::ActionError::new(
            crate::ErrorCode::DialogPending,
            format!(
                "{} dialog ({}) {:?} blocks the page; it opened before the connection to the browser dropped, so it can no longer be answered",
                with_article(&dialog.kind), dialog.id, dialog.message
            ),
            "Leave the page with browser_navigate (a URL, or history: reload); the dialog closes with it.",
        );
    }
    crate::ActionError::new(
        crate::ErrorCode::DialogPending,
        format!(
            "{} dialog ({}) {:?} is blocking the page",
            with_article(&dialog.kind),
            dialog.id,
            dialog.message
        ),
        "Answer it with browser_dialog (accept or dismiss), then retry.",
    )
}

/// The result of an action that a dialog interrupted: the action was done
/// up to the point where the page opened the dialog, which now blocks it.
pub fn opened_output(dialog: &Dialog) -> crate::ActionOutput {
    crate::ActionOutput::new(
        format!(
            "The page opened {} dialog ({}): {:?}. It blocks the page until answered: use browser_dialog.",
            with_article(&dialog.kind),
            dialog.id,
            dialog.message
        ),
        serde_json::json!({
            "ok": true,
            "dialog_opened": { "id": dialog.id, "type": dialog.kind, "message": dialog.message },
        }),
    )
}

impl DialogBook {
    /// Dialogs ever opened on this tab (to tell a new one from a repeat).
    pub fn opened_count(&self) -> u64 {
        self.opened
    }

    /// The main document was replaced: whatever dialog it had is gone.
    pub fn page_left(&mut self) {
        while !self.pending.is_empty() {
            self.close_at(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_dialog_announced_again_after_a_reconnect_is_the_same_dialog() {
        let mut book = DialogBook::default();
        let first = book.opened("OLD", &json!({"type": "confirm", "message": "Sure?"}));
        book.moved_session("OLD", "NEW");
        let again = book.opened("NEW", &json!({"type": "confirm", "message": "Sure?"}));
        assert_eq!(again.id, first.id);
        assert!(!again.orphaned);
        assert_eq!(book.pending.len(), 1);
        let other = book.opened("NEW", &json!({"type": "confirm", "message": "Sure?"}));
        assert_ne!(other.id, first.id, "only the one announcement is absorbed");
    }

    #[test]
    fn closes_match_the_oldest_pending_and_recent_is_capped() {
        let mut book = DialogBook::default();
        let a = book.opened("S", &json!({"type": "alert", "message": "one", "frameId": "F1"}));
        let b = book.opened(
            "S",
            &json!({"type": "prompt", "message": "two", "defaultPrompt": "x"}),
        );
        let other = book.opened("CHILD", &json!({"type": "alert", "message": "child"}));
        book.closed("CHILD");
        assert_eq!(book.recent[0].id, other.id);
        book.recent.clear();
        assert_eq!((a.id.as_str(), b.id.as_str()), ("d-1", "d-2"));
        assert_eq!(b.default_prompt.as_deref(), Some("x"));
        book.pending[0].answering = Some("agent".into());
        book.closed("S");
        assert_eq!(book.pending.len(), 1);
        assert_eq!(book.recent[0].id, "d-1");
        assert_eq!(book.recent[0].closed_by.as_deref(), Some("agent"));
        book.closed("S");
        assert_eq!(book.recent[1].closed_by.as_deref(), Some("remote"));
        book.bridged("S", "R1", &json!({"type": "alert", "message": "bridged"}));
        book.opened("S", &json!({"type": "alert", "message": "native"}));
        book.page_left();
        assert!(
            book.pending.is_empty(),
            "leaving the page closes bridged and native dialogs alike"
        );
        for _ in 0..30 {
            book.opened("S", &json!({"type": "alert"}));
            book.closed("S");
        }
        assert_eq!(book.recent.len(), RECENT_CAP);
        assert_eq!(book.recent.back().unwrap().id, "d-35");
    }
}
