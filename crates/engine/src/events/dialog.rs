//! The record of one native dialog (alert, confirm, prompt, beforeunload)
//! as the tab's dialog book keeps it and as `dialog_opened` /
//! `dialog_closed` carry it. Only the record: the book (`crate::dialogs`)
//! writes it; everyone else reads copies.

use serde::Serialize;

/// Who closed a dialog, or is answering it now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Closer {
    /// `browser_dialog`.
    Agent,
    /// `auto_accept` or `auto_dismiss`.
    AutoPolicy,
    /// must_respond's timeout.
    Watchdog,
    /// The page or the backend (nobody of ours was answering it).
    Remote,
}

impl Closer {
    /// The closer as the contract names it (`closed_by`).
    pub fn as_str(self) -> &'static str {
        match self {
            Closer::Agent => "agent",
            Closer::AutoPolicy => "auto_policy",
            Closer::Watchdog => "watchdog",
            Closer::Remote => "remote",
        }
    }
}

/// One dialog as the book recorded it. A copy: changing it changes nothing;
/// the book's methods do.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Dialog {
    /// The dialog's id (`d-N`), as `browser_dialog` takes it.
    pub id: String,
    #[serde(rename = "type")]
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    pub kind: String,
    /// The text the page showed.
    pub message: String,
    /// A prompt's default answer.
    pub default_prompt: Option<String>,
    /// The frame that opened it (its CDP frame id).
    pub frame: Option<String>,
    /// When it opened (seconds since the epoch, `timing::now`).
    pub opened_at: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// When it closed.
    pub closed_at: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// Who closed it.
    pub closed_by: Option<Closer>,
    /// The CDP session the dialog belongs to (the tab's or an iframe's).
    #[serde(skip)]
    pub session: String,
    /// Who is answering it right now (claimed before the CDP call, so the
    /// close event is attributed to them rather than to `remote`, and so
    /// the policy does not answer it a second time). Book-keeping that
    /// only `dialogs::book` writes.
    #[serde(skip)]
    pub(crate) answering: Option<Closer>,
    /// Its place among the dialogs ever opened on this tab (`d-N`), to tell
    /// the dialogs an action saw open from older ones. Book-keeping that
    /// only `dialogs::book` writes.
    #[serde(skip)]
    pub(crate) number: u64,
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

fn is_some<S: serde::Serializer>(value: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bool(value.is_some())
}
