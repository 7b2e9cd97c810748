//! The book of a tab's dialogs: which are pending, the last 20 that closed,
//! and who is answering which.
//!
//! One record, written by the tab's event reader (what the browser said) and
//! by answerers through a [`Claim`]; everyone else reads copies. It has its
//! own small lock, held for microseconds and never across an `.await`, so a
//! claim can hand its dialog back from a `Drop`. It sends no command.
//!
//! `Page.javascriptDialogClosed` carries no message, so a close is matched to
//! the session's oldest pending native dialog.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use cdp::protocol::{fetch, page};
use tokio::sync::watch;

use super::{bridge, Closer, Dialog};
use crate::events::{SessionEvent, TabEvents};
use crate::timing::now;

pub const RECENT_CAP: usize = 20;

/// A handle on the book; clones share it (the tab's state, its event reader,
/// the policy tasks, claims).
#[derive(Clone, Default)]
pub struct DialogBook {
    shared: Arc<Shared>,
}

struct Shared {
    /// The record itself.
    book: Mutex<Book>,
    /// Bumped after every change, so whoever waits for one (an action racing
    /// the next dialog, an answer waiting for the page's reaction, a watchdog
    /// waiting for another answerer) looks again.
    changed: watch::Sender<u64>,
    /// The session's event stream (`dialog_opened`, `dialog_closed`), once
    /// a session adopted the tab.
    events: TabEvents,
}

impl Default for Shared {
    fn default() -> Self {
        Shared {
            book: Mutex::default(),
            changed: watch::Sender::new(0),
            events: TabEvents::default(),
        }
    }
}

#[derive(Debug, Default)]
struct Book {
    pending: Vec<Dialog>,
    recent: VecDeque<Dialog>,
    /// Dialogs ever opened on this tab; ids are `d-N`.
    opened: u64,
    /// Dialogs ever closed on this tab (to tell which an edit closed).
    closed: u64,
}

impl std::fmt::Debug for DialogBook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.read(|book| book.fmt(f))
    }
}

/// Why a dialog could not be claimed for answering.
#[derive(Debug, Clone, PartialEq)]
pub enum Unclaimed {
    /// Nothing is pending.
    NoDialog,
    /// No pending dialog has this id.
    NoSuchId(String),
    /// It opened before the connection dropped and can no longer be answered.
    Orphaned(Box<Dialog>),
    /// Someone else is answering it right now.
    Busy(Box<Dialog>, Closer),
}

impl DialogBook {
    fn read<T>(&self, read: impl FnOnce(&Book) -> T) -> T {
        read(&self.shared.book.lock().unwrap())
    }

    /// Changes the book, then tells the session's event stream which
    /// dialogs opened or closed and wakes whoever waits for a change.
    fn edit<T>(&self, edit: impl FnOnce(&mut Book) -> T) -> T {
        let (result, opened, closed) = {
            let mut book = self.shared.book.lock().unwrap();
            let (opened_before, closed_before) = (book.opened, book.closed);
            let result = edit(&mut book);
            let opened: Vec<Dialog> = book
                .pending
                .iter()
                .chain(&book.recent)
                .filter(|d| d.number > opened_before)
                .cloned()
                .collect();
            let closed_now = (book.closed - closed_before) as usize;
            let closed: Vec<Dialog> = book.recent.iter().rev().take(closed_now).rev().cloned().collect();
            (result, opened, closed)
        };
        // The session's stream hears first: a waiter woken by the change
        // may end its call at once, and that call's trace step keeps what
        // the stream heard by then (on another worker thread, the events
        // sent after the wake were sometimes not there yet).
        for dialog in opened {
            self.shared
                .events
                .emit(|tab| SessionEvent::DialogOpened { tab, dialog });
        }
        for dialog in closed {
            self.shared
                .events
                .emit(|tab| SessionEvent::DialogClosed { tab, dialog });
        }
        self.shared.changed.send_modify(|n| *n += 1);
        result
    }

    /// The tab's way to its session's event stream (bound when a session
    /// adopts the tab; the event reader sends `navigated` through it too).
    pub fn events(&self) -> &TabEvents {
        &self.shared.events
    }

    /// Records a dialog event of one of the tab's sessions. Returns the
    /// dialog that opened (or was announced again after a reconnect, and so
    /// became answerable), for the policy to handle.
    pub fn apply(&self, event: &cdp::Event) -> Option<Dialog> {
        let session = event.session_id.as_str();
        if let Some(opening) = event.decode::<page::JavascriptDialogOpening>() {
            Some(self.opened(session, &opening))
        } else if event.is::<page::JavascriptDialogClosed>() {
            self.closed(session);
            None
        } else if let Some(paused) = event.decode::<fetch::RequestPaused>() {
            let opening = bridge::dialog_of(&paused)?;
            Some(self.bridged(session, &paused.request_id, &opening))
        } else {
            None
        }
    }

    /// `Page.javascriptDialogOpening`.
    fn opened(&self, session: &str, opening: &page::JavascriptDialogOpening) -> Dialog {
        let kind = match opening.kind.as_str() {
            "" => "alert",
            kind => kind,
        };
        let message = opening.message.as_str();
        self.edit(|book| {
            if let Some(same) = book
                .pending
                .iter_mut()
                .find(|d| d.orphaned && d.session == session && d.kind == kind && d.message == message)
            {
                // Announced to the new connection after all: it can answer it.
                same.orphaned = false;
                return same.clone();
            }
            book.opened += 1;
            let dialog = Dialog {
                id: format!("d-{}", book.opened),
                kind: kind.to_owned(),
                message: message.to_owned(),
                default_prompt: opening.default_prompt.clone().filter(|_| kind == "prompt"),
                frame: opening.frame_id.clone(),
                opened_at: now(),
                closed_at: None,
                closed_by: None,
                session: session.to_owned(),
                answering: None,
                number: book.opened,
                orphaned: false,
                bridge_request: None,
            };
            book.pending.push(dialog.clone());
            dialog
        })
    }

    /// A dialog the bridge paused as request `request_id`.
    fn bridged(&self, session: &str, request_id: &str, opening: &page::JavascriptDialogOpening) -> Dialog {
        let mut dialog = self.opened(session, opening);
        self.edit(|book| {
            if let Some(d) = book.pending.iter_mut().find(|d| d.id == dialog.id) {
                d.bridge_request = Some(request_id.to_owned());
            }
        });
        dialog.bridge_request = Some(request_id.to_owned());
        dialog
    }

    /// A bridged dialog was answered (no close event comes for those).
    pub(super) fn closed_by_id(&self, id: &str) {
        self.edit(|book| {
            if let Some(index) = book.pending.iter().position(|d| d.id == id) {
                book.close_at(index);
            }
        });
    }

    /// `Page.javascriptDialogClosed` on `session`.
    fn closed(&self, session: &str) {
        self.edit(|book| {
            if let Some(index) = book
                .pending
                .iter()
                .position(|d| d.session == session && d.bridge_request.is_none())
            {
                book.close_at(index);
            }
        });
    }

    /// The main document was replaced: whatever dialog it had is gone.
    pub fn page_left(&self) {
        self.edit(|book| {
            while !book.pending.is_empty() {
                book.close_at(0);
            }
        });
    }

    /// The tab was attached again on a new connection: its pending dialogs
    /// move to the new session, marked orphaned (Chrome 156 does not hand
    /// them over); should Chrome announce one again, `opened` recognises it.
    pub fn moved_session(&self, old: &str, new: &str) {
        self.edit(|book| {
            for dialog in &mut book.pending {
                if dialog.session == old {
                    dialog.session = new.to_owned();
                    dialog.orphaned = true;
                }
            }
        });
    }

    /// Claims a pending dialog (`id`, or the oldest) for `by` to answer.
    pub fn claim(&self, id: Option<&str>, by: Closer) -> Result<Claim, Unclaimed> {
        // Not `edit`: a refusal changes nothing and must wake nobody (a
        // watchdog tries its claim again on every change).
        let dialog = self.shared.book.lock().unwrap().claim(id, by)?;
        self.shared.changed.send_modify(|n| *n += 1);
        Ok(Claim {
            book: self.clone(),
            dialog,
            by,
            answered: false,
        })
    }

    /// A claim ended without an answer: the dialog is free again.
    fn release(&self, id: &str, by: Closer) {
        self.edit(|book| {
            if let Some(dialog) = book.pending.iter_mut().find(|d| d.id == id) {
                if dialog.answering == Some(by) {
                    dialog.answering = None;
                }
            }
        });
    }

    /// The dialogs blocking the page now, oldest first.
    pub fn pending(&self) -> Vec<Dialog> {
        self.read(|book| book.pending.clone())
    }

    /// The last [`RECENT_CAP`] closed dialogs, oldest first.
    pub fn recent(&self) -> Vec<Dialog> {
        self.read(|book| book.recent.iter().cloned().collect())
    }

    /// The oldest dialog blocking the page, if any.
    pub fn blocking(&self) -> Option<Dialog> {
        self.read(|book| book.pending.first().cloned())
    }

    pub fn is_blocked(&self) -> bool {
        self.read(|book| !book.pending.is_empty())
    }

    /// Dialogs ever opened on this tab: a mark to ask [`Self::opened_since`].
    pub fn opened_count(&self) -> u64 {
        self.read(|book| book.opened)
    }

    /// Pending dialogs that opened after the mark `count`, oldest first.
    pub fn opened_since(&self, count: u64) -> Vec<Dialog> {
        self.read(|book| {
            book.pending
                .iter()
                .filter(|d| d.number > count)
                .cloned()
                .collect()
        })
    }

    /// Whether dialog `id` is still pending.
    pub fn is_pending(&self, id: &str) -> bool {
        self.read(|book| book.pending.iter().any(|d| d.id == id))
    }

    /// Resolves once `check` holds. Create the future before the work
    /// whose effect it waits for, or accept that it may already hold.
    pub async fn until(&self, mut check: impl FnMut(&DialogBook) -> bool) {
        // Subscribed before the check, so no change between the two is missed.
        let mut changes = self.shared.changed.subscribe();
        while !check(self) {
            if changes.changed().await.is_err() {
                // The sender lives as long as `self`: cannot happen.
                std::future::pending::<()>().await;
            }
        }
    }

    /// Resolves with the pending dialogs opened after the mark `count`,
    /// once there is at least one.
    pub async fn opened_after(&self, count: u64) -> Vec<Dialog> {
        self.until(|book| !book.opened_since(count).is_empty()).await;
        self.opened_since(count)
    }
}

impl Book {
    fn claim(&mut self, id: Option<&str>, by: Closer) -> Result<Dialog, Unclaimed> {
        let index = match id {
            Some(id) => self
                .pending
                .iter()
                .position(|d| d.id == id)
                .ok_or_else(|| Unclaimed::NoSuchId(id.to_owned()))?,
            None if self.pending.is_empty() => return Err(Unclaimed::NoDialog),
            None => 0,
        };
        let dialog = &mut self.pending[index];
        if dialog.orphaned {
            return Err(Unclaimed::Orphaned(Box::new(dialog.clone())));
        }
        if let Some(other) = dialog.answering {
            return Err(Unclaimed::Busy(Box::new(dialog.clone()), other));
        }
        dialog.answering = Some(by);
        Ok(dialog.clone())
    }

    /// Moves pending dialog `index` to the recent ring, recording who
    /// closed it (whoever was answering it, else the page or backend).
    fn close_at(&mut self, index: usize) {
        let mut dialog = self.pending.remove(index);
        dialog.closed_at = Some(now());
        dialog.closed_by = Some(dialog.answering.take().unwrap_or(Closer::Remote));
        self.closed += 1;
        self.recent.push_back(dialog);
        while self.recent.len() > RECENT_CAP {
            self.recent.pop_front();
        }
    }
}

/// A dialog claimed by one answerer. Until [`Claim::answered`] is called,
/// dropping it (the answer failed, timed out or was cancelled) hands the
/// dialog back, so the watchdog or the agent can still answer it.
#[must_use = "dropping a claim hands the dialog back"]
pub struct Claim {
    book: DialogBook,
    dialog: Dialog,
    by: Closer,
    answered: bool,
}

impl Claim {
    pub fn dialog(&self) -> &Dialog {
        &self.dialog
    }

    /// The answer went through: the close that follows is `by`'s.
    pub fn answered(mut self) -> Dialog {
        self.answered = true;
        self.dialog.clone()
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if !self.answered {
            self.book.release(&self.dialog.id, self.by);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn event(session: &str, method: &str, params: Value) -> cdp::Event {
        cdp::Event::new(session, method, &params)
    }

    fn open(book: &DialogBook, session: &str, params: Value) -> Dialog {
        book.apply(&event(session, "Page.javascriptDialogOpening", params))
            .expect("opened")
    }

    fn close(book: &DialogBook, session: &str) {
        book.apply(&event(session, "Page.javascriptDialogClosed", json!({})));
    }

    #[test]
    fn a_dialog_announced_again_after_a_reconnect_is_the_same_dialog() {
        let book = DialogBook::default();
        let first = open(&book, "OLD", json!({"type": "confirm", "message": "Sure?"}));
        book.moved_session("OLD", "NEW");
        assert!(matches!(
            book.claim(None, Closer::Agent),
            Err(Unclaimed::Orphaned(_))
        ));
        let again = open(&book, "NEW", json!({"type": "confirm", "message": "Sure?"}));
        assert_eq!(again.id, first.id);
        assert!(!again.orphaned);
        assert_eq!(book.pending().len(), 1);
        let other = open(&book, "NEW", json!({"type": "confirm", "message": "Sure?"}));
        assert_ne!(other.id, first.id, "only the one announcement is absorbed");
    }

    #[test]
    fn closes_match_the_oldest_pending_and_recent_is_capped() {
        let book = DialogBook::default();
        let a = open(
            &book,
            "S",
            json!({"type": "alert", "message": "one", "frameId": "F1"}),
        );
        let b = open(
            &book,
            "S",
            json!({"type": "prompt", "message": "two", "defaultPrompt": "x"}),
        );
        let other = open(&book, "CHILD", json!({"type": "alert", "message": "child"}));
        close(&book, "CHILD");
        assert_eq!(book.recent()[0].id, other.id);
        assert_eq!((a.id.as_str(), b.id.as_str()), ("d-1", "d-2"));
        assert_eq!(b.default_prompt.as_deref(), Some("x"));
        book.claim(None, Closer::Agent).unwrap().answered();
        close(&book, "S");
        assert_eq!(book.pending().len(), 1);
        assert_eq!(book.recent()[1].id, "d-1");
        assert_eq!(book.recent()[1].closed_by, Some(Closer::Agent));
        close(&book, "S");
        assert_eq!(book.recent()[2].closed_by, Some(Closer::Remote));
        let paused = json!({
            "requestId": "R1",
            "request": { "url": "http://cdpilot-dialog.invalid/", "postData": "{\"type\":\"alert\",\"message\":\"bridged\"}" },
        });
        let bridged = book.apply(&event("S", "Fetch.requestPaused", paused)).unwrap();
        assert_eq!(bridged.bridge_request.as_deref(), Some("R1"));
        open(&book, "S", json!({"type": "alert", "message": "native"}));
        book.page_left();
        assert!(
            !book.is_blocked(),
            "leaving the page closes bridged and native dialogs alike"
        );
        for _ in 0..30 {
            open(&book, "S", json!({"type": "alert"}));
            close(&book, "S");
        }
        assert_eq!(book.recent().len(), RECENT_CAP);
        assert_eq!(book.recent().last().unwrap().id, "d-35");
    }

    // Issue 8: a failed or cancelled answer left the dialog marked as being
    // answered, so nobody (the watchdog included) could answer it again.
    #[test]
    fn a_claim_dropped_without_an_answer_hands_the_dialog_back() {
        let book = DialogBook::default();
        let dialog = open(&book, "S", json!({"type": "alert", "message": "hi"}));
        let claim = book.claim(Some(&dialog.id), Closer::Agent).unwrap();
        assert_eq!(
            book.claim(None, Closer::Watchdog).err(),
            Some(Unclaimed::Busy(Box::new(claim.dialog().clone()), Closer::Agent))
        );
        drop(claim);
        let watchdog = book.claim(None, Closer::Watchdog).expect("free again");
        watchdog.answered();
        close(&book, "S");
        assert_eq!(book.recent()[0].closed_by, Some(Closer::Watchdog));
        assert_eq!(
            book.claim(Some("d-9"), Closer::Agent).err(),
            Some(Unclaimed::NoSuchId("d-9".into()))
        );
        assert_eq!(book.claim(None, Closer::Agent).err(), Some(Unclaimed::NoDialog));
    }

    #[test]
    fn opened_since_names_only_pending_dialogs_after_the_mark() {
        let book = DialogBook::default();
        open(&book, "S", json!({"type": "alert", "message": "old"}));
        let mark = book.opened_count();
        assert!(book.opened_since(mark).is_empty());
        open(&book, "S", json!({"type": "confirm", "message": "new"}));
        let since: Vec<_> = book.opened_since(mark).into_iter().map(|d| d.message).collect();
        assert_eq!(since, ["new"]);
    }
}
