//! One action under must_respond, as far as dialogs go. A dialog that opens
//! while the action runs ends it at once with `dialog_opened` (the page is
//! blocked, so waiting on would hang it); otherwise its result names every
//! dialog that opened before it returned and still blocks the page, for
//! `browser_dialog` including one the page opened in reaction to the answer.
//!
//! Not waited for: a dialog the page defers past the action's end (a click
//! handler's `setTimeout(() => alert(…))`): measured in headless Chromium,
//! such a timer fires 2 to 20 ms after the click's handler ran (rendering
//! goes first after input), and waiting for that turn would make every
//! click that much slower. The next call names such a dialog
//! (`dialog_pending`, or the snapshot's `pending_dialogs`).
//!
//! Owns no state: it reads the tab's dialog book.

use std::future::Future;

use super::{report, DialogBook};
use crate::{ActionError, ActionOutput};

/// Runs `run`, an action's work in the tab whose dialog book is `book`,
/// under must_respond. `answers_dialog`: the action is `browser_dialog`.
pub async fn during(
    book: &DialogBook,
    answers_dialog: bool,
    run: impl Future<Output = Result<ActionOutput, ActionError>>,
) -> Result<ActionOutput, ActionError> {
    let mark = book.opened_count();
    let output = if answers_dialog {
        // An answer waits for the page's reaction itself; a dialog that
        // opens meanwhile is reported beside the answer, not instead of it.
        run.await?
    } else {
        tokio::select! {
            result = run => result?,
            opened = book.opened_after(mark) => return Ok(report::opened_output(&opened)),
        }
    };
    Ok(report::with_opened(output, &book.opened_since(mark)))
}
