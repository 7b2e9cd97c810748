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
    /// Who is answering it right now (set before the CDP call, so the close
    /// event is attributed to them rather than to "remote").
    #[serde(skip)]
    pub answering: Option<String>,
}

#[derive(Debug, Default)]
pub struct DialogBook {
    pub pending: Vec<Dialog>,
    pub recent: VecDeque<Dialog>,
    /// Dialogs ever opened on this tab; ids are `d-N`.
    opened: u64,
}

pub fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl DialogBook {
    /// `Page.javascriptDialogOpening`.
    pub fn opened(&mut self, params: &Value) -> Dialog {
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
            answering: None,
        };
        self.pending.push(dialog.clone());
        dialog
    }

    /// `Page.javascriptDialogClosed`: the oldest pending dialog closed.
    pub fn closed(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let mut dialog = self.pending.remove(0);
        dialog.closed_at = Some(now());
        dialog.closed_by = Some(dialog.answering.take().unwrap_or_else(|| "remote".into()));
        self.recent.push_back(dialog);
        while self.recent.len() > RECENT_CAP {
            self.recent.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn closes_match_the_oldest_pending_and_recent_is_capped() {
        let mut book = DialogBook::default();
        let a = book.opened(&json!({"type": "alert", "message": "one", "frameId": "F1"}));
        let b = book.opened(&json!({"type": "prompt", "message": "two", "defaultPrompt": "x"}));
        assert_eq!((a.id.as_str(), b.id.as_str()), ("d-1", "d-2"));
        assert_eq!(b.default_prompt.as_deref(), Some("x"));
        book.pending[0].answering = Some("agent".into());
        book.closed();
        assert_eq!(book.pending.len(), 1);
        assert_eq!(book.recent[0].id, "d-1");
        assert_eq!(book.recent[0].closed_by.as_deref(), Some("agent"));
        book.closed();
        assert_eq!(book.recent[1].closed_by.as_deref(), Some("remote"));
        for _ in 0..30 {
            book.opened(&json!({"type": "alert"}));
            book.closed();
        }
        assert_eq!(book.recent.len(), RECENT_CAP);
        assert_eq!(book.recent.back().unwrap().id, "d-32");
    }
}
