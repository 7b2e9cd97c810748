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
//! Nothing here knows about frames, refs or snapshots. The record of one
//! dialog ([`Dialog`], [`Closer`]) lives with the event stream that carries
//! it (`crate::events::dialog`), a floor below.

pub mod answer;
mod book;
pub mod bridge;
mod policy;
mod report;
mod supervise;

pub use crate::events::dialog::{Closer, Dialog};
pub use book::{DialogBook, Unclaimed};
pub use policy::{DialogPolicy, DialogRules, Watchdogs};
pub use report::pending_error;
pub use supervise::during;

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
