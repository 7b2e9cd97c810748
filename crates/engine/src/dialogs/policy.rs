//! The dialog policy (`[dialogs]` in the configuration) and the tasks that
//! apply it: each dialog that opens is answered at once (auto_accept,
//! auto_dismiss) or, under must_respond, dismissed by a watchdog if nobody
//! answered it within the timeout.
//!
//! The tasks belong to one tab: [`Watchdogs`] lives in the tab's event
//! reader, and dropping it (the reader ends with the tab) cancels them all.

use std::future::Future;
use std::time::Duration;

use cdp::Session;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::{answer, Closer, Dialog, DialogBook, Unclaimed};

/// The time a policy's own answer may take (it has no caller's budget).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// The dialog policy (`[dialogs]` in the configuration).
#[derive(Debug, Clone)]
pub struct DialogRules {
    pub policy: DialogPolicy,
    /// must_respond: a dialog nobody answered is dismissed after this.
    pub timeout: Duration,
}

impl Default for DialogRules {
    fn default() -> Self {
        DialogRules {
            policy: DialogPolicy::MustRespond,
            timeout: Duration::from_secs(300),
        }
    }
}

pub use crate::config::DialogPolicy;

/// The policy tasks of one tab. Dropping this ends every one of them.
pub struct Watchdogs {
    rules: DialogRules,
    /// Parent of every task's cancellation.
    cancel: CancellationToken,
    /// Cancels `cancel` when the owner goes away.
    _on_drop: DropGuard,
}

impl Watchdogs {
    pub fn new(rules: DialogRules) -> Watchdogs {
        let cancel = CancellationToken::new();
        Watchdogs {
            rules,
            _on_drop: cancel.clone().drop_guard(),
            cancel,
        }
    }

    /// Applies the policy to `dialog`, which just opened on `session`.
    pub fn opened(&self, book: &DialogBook, session: Session, dialog: Dialog) {
        let answerer = book.clone();
        self.spawn(book, dialog, move |dialog, accept| async move {
            answer::send(&answerer, &session, &dialog, accept, None, ANSWER_TIMEOUT).await
        });
    }

    /// Spawns the policy's task for `dialog`; `answer` sends an answer.
    fn spawn<F, Fut>(&self, book: &DialogBook, dialog: Dialog, answer: F) -> tokio::task::JoinHandle<()>
    where
        F: FnOnce(Dialog, bool) -> Fut + Send + 'static,
        Fut: Future<Output = Result<(), cdp::CdpError>> + Send + 'static,
    {
        let task = apply(book.clone(), dialog.id, self.rules.clone(), answer);
        let cancel = self.cancel.clone();
        tokio::spawn(async move {
            cancel.run_until_cancelled(task).await;
        })
    }
}

/// What the policy does with dialog `id`.
async fn apply<F, Fut>(book: DialogBook, id: String, rules: DialogRules, answer: F)
where
    F: FnOnce(Dialog, bool) -> Fut,
    Fut: Future<Output = Result<(), cdp::CdpError>>,
{
    let (accept, by) = match rules.policy {
        DialogPolicy::AutoAccept => (true, Closer::AutoPolicy),
        DialogPolicy::AutoDismiss => (false, Closer::AutoPolicy),
        DialogPolicy::MustRespond => {
            tokio::time::sleep(rules.timeout).await;
            (false, Closer::Watchdog)
        }
    };
    // While someone else is answering it, wait: their answer may fail, and
    // then the dialog is ours again.
    let mut claimed = None;
    book.until(|book| match book.claim(Some(&id), by) {
        Err(Unclaimed::Busy(..)) => false,
        other => {
            claimed = Some(other);
            true
        }
    })
    .await;
    // Closed meanwhile, or orphaned (no longer answerable): nothing to do.
    let Some(Ok(claim)) = claimed else { return };
    match answer(claim.dialog().clone(), accept).await {
        Ok(()) => {
            claim.answered();
        }
        Err(error) => tracing::debug!("answering dialog {id} ({}) failed: {error}", by.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use serde_json::json;

    use super::*;

    fn book_with_alert() -> (DialogBook, Dialog) {
        let book = DialogBook::default();
        let event = cdp::Event::new(
            "S",
            "Page.javascriptDialogOpening",
            &json!({"type": "alert", "message": "hi"}),
        );
        let dialog = book.apply(&event).expect("opened");
        (book, dialog)
    }

    /// The answers an answerer gave (accept or not), in order.
    type Answers = Arc<Mutex<Vec<bool>>>;

    /// An answerer that records its answers and closes the dialog as the
    /// browser would.
    fn recording(
        book: &DialogBook,
    ) -> (
        Answers,
        impl FnOnce(Dialog, bool) -> std::future::Ready<Result<(), cdp::CdpError>> + Send + 'static,
    ) {
        let answers = Arc::new(Mutex::new(Vec::new()));
        let (book, seen) = (book.clone(), answers.clone());
        let answer = move |dialog: Dialog, accept| {
            seen.lock().unwrap().push(accept);
            book.apply(&cdp::Event::new(
                dialog.session,
                "Page.javascriptDialogClosed",
                &json!({}),
            ));
            std::future::ready(Ok(()))
        };
        (answers, answer)
    }

    fn must_respond(after: u64) -> DialogRules {
        DialogRules {
            policy: DialogPolicy::MustRespond,
            timeout: Duration::from_secs(after),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_watchdog_dismisses_after_the_timeout_and_not_before() {
        let (book, dialog) = book_with_alert();
        let (answers, answer) = recording(&book);
        let watchdogs = Watchdogs::new(must_respond(300));
        let task = watchdogs.spawn(&book, dialog, answer);
        tokio::time::sleep(Duration::from_secs(299)).await;
        assert!(answers.lock().unwrap().is_empty(), "not before the timeout");
        task.await.unwrap();
        assert_eq!(*answers.lock().unwrap(), [false]);
        assert_eq!(book.recent()[0].closed_by, Some(Closer::Watchdog));
    }

    // Issue 8: watchdog tasks outlived their tab.
    #[tokio::test(start_paused = true)]
    async fn dropping_the_watchdogs_ends_their_tasks() {
        let (book, dialog) = book_with_alert();
        let (answers, answer) = recording(&book);
        let watchdogs = Watchdogs::new(must_respond(300));
        let task = watchdogs.spawn(&book, dialog, answer);
        tokio::time::sleep(Duration::from_secs(10)).await;
        drop(watchdogs);
        tokio::time::timeout(Duration::from_secs(1), task)
            .await
            .expect("the task ended at once")
            .unwrap();
        tokio::time::sleep(Duration::from_secs(600)).await;
        assert!(answers.lock().unwrap().is_empty());
        assert!(book.is_blocked());
    }

    // Issue 8: an answer that failed left the dialog marked as being
    // answered, and the watchdog skipped it forever.
    #[tokio::test(start_paused = true)]
    async fn the_watchdog_answers_once_a_failed_answer_hands_the_dialog_back() {
        let (book, dialog) = book_with_alert();
        let (answers, answer) = recording(&book);
        let watchdogs = Watchdogs::new(must_respond(5));
        let agent = book.claim(None, Closer::Agent).unwrap();
        let task = watchdogs.spawn(&book, dialog, answer);
        // The agent's answer is still under way when the timeout passes.
        tokio::time::sleep(Duration::from_secs(30)).await;
        assert!(answers.lock().unwrap().is_empty(), "the agent is answering");
        drop(agent);
        task.await.unwrap();
        assert_eq!(*answers.lock().unwrap(), [false]);
        assert_eq!(book.recent()[0].closed_by, Some(Closer::Watchdog));
    }

    #[tokio::test(start_paused = true)]
    async fn auto_policies_answer_at_once() {
        for (policy, accept) in [
            (DialogPolicy::AutoAccept, true),
            (DialogPolicy::AutoDismiss, false),
        ] {
            let (book, dialog) = book_with_alert();
            let (answers, answer) = recording(&book);
            let watchdogs = Watchdogs::new(DialogRules {
                policy,
                timeout: Duration::from_secs(300),
            });
            let started = tokio::time::Instant::now();
            watchdogs.spawn(&book, dialog, answer).await.unwrap();
            assert_eq!(started.elapsed(), Duration::ZERO);
            assert_eq!(*answers.lock().unwrap(), [accept]);
            assert_eq!(book.recent()[0].closed_by, Some(Closer::AutoPolicy));
        }
    }
}
