//! One action under must_respond, as far as dialogs go: a dialog that
//! opens while the action runs ends it at once with `dialog_opened` (the
//! page is blocked, so waiting on would hang it).
//!
//! Owns no state: it reads the tab's dialog book.

use std::future::Future;

use super::report;
use crate::action::Action;
use crate::tab::Tab;
use crate::{ActionError, ActionOutput, Budget};

/// Runs `run`, the work of `action` in `tab`, under must_respond.
pub async fn during(
    tab: &Tab,
    _action: &Action,
    _budget: &Budget,
    run: impl Future<Output = Result<ActionOutput, ActionError>>,
) -> Result<ActionOutput, ActionError> {
    let book = tab.dialogs();
    let mark = book.opened_count();
    tokio::select! {
        result = run => result,
        opened = book.opened_after(mark) => Ok(report::opened_output(&opened)),
    }
}
