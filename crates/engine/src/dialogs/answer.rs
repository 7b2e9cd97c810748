//! Answering one dialog: a native one with `Page.handleJavaScriptDialog`,
//! a bridged one by fulfilling its paused request; and, for the agent's
//! answer, waiting for the page's reaction so that the result can name a
//! dialog the answer made the page open.
//!
//! Whoever answers holds a [`Claim`](super::book::Claim) from the book for the
//! whole call: a failure, a timeout or a cancellation drops it and hands the
//! dialog back. Owns no state.

use std::time::Duration;

use cdp::protocol::{page, runtime};
use cdp::{Connection, Session};

use super::{bridge, report, Closer, Dialog, DialogBook, Unclaimed};
use crate::{ActionError, Budget, ErrorCode};

/// The longest an answer waits for the page's reaction (the answered code
/// running on until it returns or opens the next dialog). Past it the
/// answer is reported as it is: it went through.
const REACTION: Duration = Duration::from_secs(2);

/// Sends the answer for `dialog` on `session`, within `timeout`.
pub(super) async fn send(
    book: &DialogBook,
    session: &Session,
    dialog: &Dialog,
    accept: bool,
    prompt_text: Option<&str>,
    timeout: Duration,
) -> Result<(), cdp::CdpError> {
    match &dialog.bridge_request {
        Some(request) => {
            bridge::answer(session, request, accept, prompt_text, timeout).await?;
            // No close event comes for a bridged dialog.
            book.closed_by_id(&dialog.id);
            Ok(())
        }
        None => {
            let handle = page::HandleJavaScriptDialog {
                accept,
                prompt_text: prompt_text.map(str::to_owned),
            };
            session
                .call(handle, tokio::time::Instant::now() + timeout)
                .await
                .map(|_| ())
        }
    }
}

/// `browser_dialog`: answers a pending dialog (`id`, or the oldest) on the
/// connection `conn`, then waits (briefly) for the page's reaction. Returns
/// the dialog it answered.
pub async fn by_agent(
    book: &DialogBook,
    conn: &Connection,
    id: Option<&str>,
    accept: bool,
    prompt_text: Option<&str>,
    budget: &Budget,
) -> Result<Dialog, ActionError> {
    let claim = book.claim(id, Closer::Agent).map_err(unclaimed)?;
    let session = conn.session(claim.dialog().session.clone());
    let mark = book.opened_count();
    let step = "answering the dialog";
    budget
        .run(step, async {
            send(
                book,
                &session,
                claim.dialog(),
                accept,
                prompt_text,
                budget.remaining(),
            )
            .await
            .map_err(|e| budget.map_cdp(step, e))
        })
        .await?;
    let dialog = claim.answered();
    // The answer went through; what follows only makes the result complete,
    // so running out of time here is not an error.
    let _ = budget
        .run("waiting for the page to take the answer", async {
            let _ = tokio::time::timeout(REACTION, reaction(book, &session, &dialog.id, mark)).await;
            Ok(())
        })
        .await;
    Ok(dialog)
}

/// The page's reaction to an answer: the dialog closes, and the page runs
/// the code the dialog held up. One round trip to the page on the dialog's
/// session shows it ran: the page answers only after that code returned,
/// and not at all if the code opened another dialog (which the book then
/// shows: dialogs past `mark`).
async fn reaction(book: &DialogBook, session: &Session, id: &str, mark: u64) {
    let another = book.until(|b| b.opened_count() > mark);
    let ran_on = async {
        book.until(|b| !b.is_pending(id)).await;
        let ping = runtime::Evaluate {
            expression: "0".to_owned(),
            ..Default::default()
        };
        let ping = session.call(ping, tokio::time::Instant::now() + REACTION);
        if let Err(error) = ping.await {
            tracing::debug!("the round trip after an answer failed: {error}");
        }
    };
    tokio::select! {
        _ = another => {}
        _ = ran_on => {}
    }
}

/// Why `browser_dialog` found nothing to answer.
fn unclaimed(why: Unclaimed) -> ActionError {
    let hint = "Continue with the page; take a browser_snapshot to see it.";
    match why {
        Unclaimed::NoDialog => ActionError::new(ErrorCode::NoDialog, "no dialog is open", hint),
        Unclaimed::NoSuchId(id) => ActionError::new(
            ErrorCode::NoDialog,
            format!("no pending dialog has the id {id}"),
            hint,
        ),
        Unclaimed::Orphaned(dialog) => report::pending_error(&dialog),
        Unclaimed::Busy(dialog, by) => ActionError::new(
            ErrorCode::NoDialog,
            format!(
                "dialog {} is being answered already (by the {})",
                dialog.id,
                by.as_str().replace('_', " ")
            ),
            "Take a browser_snapshot: recent_dialogs shows how it closed.",
        ),
    }
}
