//! A tab's native dialogs (alert, confirm, prompt, beforeunload), in one
//! place:
//!
//! - `book`: which dialogs are pending and which closed lately, behind
//!   narrow methods; the one record everybody else asks.
//! - `policy`: the `[dialogs]` rules and the task that applies them to a
//!   dialog that opened (answer at once, or the must_respond watchdog).
//! - `bridge`: the dialog bridge, for backends that dismiss native dialogs.
//! - `answer`: answering one dialog (a claim whose drop undoes it unless the
//!   answer went through, the CDP call, waiting for the page's reaction).
//! - `supervise`: one action under must_respond, and what its result says
//!   about the dialogs that opened during it.
//!
//! The tab's event reader forwards events to the book and spawns the policy
//! tasks it is asked to; actions call the book's and `answer`'s methods.
//! Nothing here knows about frames, refs or snapshots.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

pub mod answer;
mod book;
pub mod bridge;
mod policy;
mod report;
mod supervise;

pub use book::{DialogBook, Unclaimed};
pub use policy::{DialogPolicy, DialogRules, Watchdogs};
pub use report::pending_error;
pub use supervise::during;

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
    pub closed_by: Option<Closer>,
    /// The CDP session the dialog belongs to (the tab's or an iframe's).
    #[serde(skip)]
    pub session: String,
    /// Who is answering it right now (claimed before the CDP call, so the
    /// close event is attributed to them rather than to `remote`, and so
    /// the policy does not answer it a second time).
    #[serde(skip)]
    answering: Option<Closer>,
    /// Its place among the dialogs ever opened on this tab (`d-N`), to tell
    /// the dialogs an action saw open from older ones.
    #[serde(skip)]
    number: u64,
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

/// Seconds since the epoch, as the book's timestamps are written.
pub fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closers_serialize_as_the_contract_names_them() {
        for closer in [
            Closer::Agent,
            Closer::AutoPolicy,
            Closer::Watchdog,
            Closer::Remote,
        ] {
            assert_eq!(serde_json::json!(closer), closer.as_str());
        }
    }
}
