//! Answering one dialog: a native one with `Page.handleJavaScriptDialog`,
//! a bridged one by fulfilling its paused request.
//!
//! Whoever answers holds a [`Claim`](super::book::Claim) from the book for the
//! whole call: a failure, a timeout or a cancellation drops it and hands the
//! dialog back. Owns no state.

use std::time::Duration;

use cdp::{Connection, Session};
use serde_json::json;

use super::{bridge, report, Closer, Dialog, DialogBook, Unclaimed};
use crate::{ActionError, Budget, ErrorCode};

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
            let mut params = json!({ "accept": accept });
            if let Some(text) = prompt_text {
                params["promptText"] = json!(text);
            }
            session
                .send_with_timeout("Page.handleJavaScriptDialog", params, timeout)
                .await
                .map(|_| ())
        }
    }
}

/// `browser_dialog`: answers a pending dialog (`id`, or the oldest) on the
/// connection `conn`. Returns the dialog it answered.
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
    Ok(claim.answered())
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
