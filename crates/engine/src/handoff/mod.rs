//! Handing a tab to a person (`browser_handoff`): the hand-offs open now
//! (at most one per tab), their one-time links, where the hand-off page is
//! served, and what the person does there (`person.rs`).
//!
//! Owns the engine-wide table of open hand-offs (the page's listener finds
//! one by its id and token), locked for microseconds. A hand-off enters the
//! table when the call that waits for it opens it (`Handoffs::open`) and
//! leaves it when that call's [`Opened`] guard drops, however the call
//! ended: its link then answers "This hand-off has ended". Must not touch
//! the session's other state: the session's own side (refusing other tools,
//! the events, the offer) is `session/handoff.rs`.

pub mod person;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::audit::Audit;
use crate::secrets::Secrets;
use crate::tab::Tab;
use crate::{ActionError, ErrorCode};

/// A boxed future, as the transports' hooks return them.
pub type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where hand-off pages are served: `cdpilot serve`'s listener, or the one
/// `cdpilot mcp` starts on loopback the first time a hand-off needs it.
pub trait PageHost: Send + Sync {
    /// The origin pages are served from (`http://127.0.0.1:PORT`), starting
    /// the listener if there is none yet.
    fn origin(&self) -> Pending<'_, Result<String, String>>;
}

/// How a transport offers a hand-off's link to the user (MCP elicitation).
pub trait Offer: Send + Sync {
    /// Shows `message` and `url` to the user; resolves once they answered
    /// (or the client cannot say).
    fn offer<'a>(&'a self, message: &'a str, url: &'a str, id: &'a str) -> Pending<'a, Offered>;
}

/// What the user answered to an offered link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offered {
    /// They opened it, or will: the hand-off goes on.
    Shown,
    /// They declined: the hand-off ends as `handoff_declined`.
    Declined,
    /// The client cannot show a link to a person (an MCP client that
    /// declared no elicitation): the call returns the link to its caller
    /// at once, and the hand-off waits for a call to wait for it.
    ToCaller,
}

/// What the person answered on the hand-off page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// **Done**: the agent may go on.
    Done,
    /// **Give up**.
    GiveUp,
}

/// The open hand-offs of an engine, and where their pages are served.
#[derive(Default)]
pub struct Handoffs {
    /// Open hand-offs by id (each holds its tab while it is open).
    open: Mutex<HashMap<String, Arc<Handoff>>>,
    /// Where the pages are served; none: no transport can show one.
    host: Mutex<Option<Arc<dyn PageHost>>>,
    /// Hand-offs whose link went to the caller (its client could not show
    /// it to a person), open until a call waits for them or their time
    /// runs out; by the handed tab's target id.
    parked: Mutex<HashMap<String, Parked>>,
}

/// An open hand-off no call waits for yet (its link went to the caller).
pub(crate) struct Parked {
    pub(crate) opened: Opened,
    pub(crate) answered: oneshot::Receiver<Answer>,
}

/// One open hand-off: a tab a person holds until they press Done or Give
/// up, or the waiting call ends.
pub struct Handoff {
    /// `h` and 128 random bits: names it in the link and the events. Not
    /// guessable, so the page's listener answers nothing to someone who
    /// holds no link (ids that counted up told a neighbour which to try).
    pub id: String,
    /// The link's one-time token (128 random bits): the only credential
    /// the page and its socket need.
    token: String,
    /// Why, as the agent said it (shown to the person).
    pub reason: String,
    /// The tab's short id (`t1`).
    pub tab_name: String,
    pub(crate) tab: Arc<Tab>,
    /// The session's id, for the person's audit records.
    session: String,
    audit: Arc<Audit>,
    /// The session's secrets: the page's view of the tab's URL and the
    /// person's audit records are redacted through them (a secret the
    /// agent typed into a GET form is in the tab's URL).
    pub(crate) secrets: Arc<Secrets>,
    /// The person's answer, taken once.
    answer: Mutex<Option<oneshot::Sender<Answer>>>,
    /// Fires when the hand-off ends: the page's socket closes.
    ended: CancellationToken,
    /// The tab's gate mark when the hand-off began: what it refused since
    /// is shown on the page.
    mark: u64,
    /// Whether the person's resizes changed the tab's viewport (undone
    /// when the hand-off ends); the lock orders a resize and that undoing.
    resized: tokio::sync::Mutex<bool>,
}

/// An open hand-off, held by the call that waits for it; dropping it ends
/// the hand-off (its link answers 410 from then on).
pub struct Opened {
    handoffs: Arc<Handoffs>,
    /// The hand-off.
    pub handoff: Arc<Handoff>,
    /// `end` gives the viewport back itself (else dropping does, in a task).
    restored_here: bool,
}

impl Opened {
    /// Ends the hand-off and gives the tab the agent's viewport back (the
    /// person may have resized it) before the call returns.
    pub(crate) async fn end(mut self) {
        self.restored_here = true;
        let handoff = self.handoff.clone();
        drop(self);
        handoff.restore_viewport().await;
    }
}

impl Drop for Opened {
    fn drop(&mut self) {
        self.handoffs.open.lock().unwrap().remove(&self.handoff.id);
        self.handoff.ended.cancel();
        // Dropped without `end` (the call's future dropped): undone soon.
        if self.restored_here || self.handoff.resized.try_lock().is_ok_and(|r| !*r) {
            return;
        }
        let handoff = self.handoff.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { handoff.restore_viewport().await });
        }
    }
}

impl Handoffs {
    /// Serves hand-off pages through `host` from now on (the transport that
    /// has a listener installs it).
    pub fn serve_pages(&self, host: Arc<dyn PageHost>) {
        *self.host.lock().unwrap() = Some(host);
    }

    /// Whether a page host is installed.
    pub fn has_pages(&self) -> bool {
        self.host.lock().unwrap().is_some()
    }

    /// Whether a person holds the tab with target `target_id`.
    pub fn holding(&self, target_id: &str) -> bool {
        self.open
            .lock()
            .unwrap()
            .values()
            .any(|h| h.tab.target_id == target_id)
    }

    /// Opens a hand-off of `tab`: `handoff_pending` when one is already
    /// open on it. The receiver hears the person's Done or Give up.
    pub(crate) fn open(
        self: &Arc<Self>,
        tab_name: String,
        tab: Arc<Tab>,
        reason: String,
        session: String,
        audit: Arc<Audit>,
        secrets: Arc<Secrets>,
    ) -> Result<(Opened, oneshot::Receiver<Answer>), ActionError> {
        let mut open = self.open.lock().unwrap();
        if let Some(other) = open.values().find(|h| h.tab.target_id == tab.target_id) {
            return Err(ActionError::new(
                ErrorCode::HandoffPending,
                format!("tab {tab_name} is already handed to a person ({})", other.id),
                "Wait for that browser_handoff to return; take a browser_snapshot meanwhile.",
            ));
        }
        let (answer, answered) = oneshot::channel();
        let mark = tab.gate().mark();
        let handoff = Arc::new(Handoff {
            id: format!("h{}", crate::content::nonce()),
            token: crate::content::nonce(),
            reason,
            tab_name,
            tab,
            session,
            audit,
            secrets,
            answer: Mutex::new(Some(answer)),
            ended: CancellationToken::new(),
            mark,
            resized: tokio::sync::Mutex::new(false),
        });
        open.insert(handoff.id.clone(), handoff.clone());
        let opened = Opened {
            handoffs: self.clone(),
            handoff,
            restored_here: false,
        };
        Ok((opened, answered))
    }

    /// The hand-off page's link: `ORIGIN/handoff/ID#TOKEN`, starting the
    /// listener if it is not running yet.
    pub(crate) async fn link(&self, handoff: &Handoff) -> Result<String, String> {
        let host = self.host.lock().unwrap().clone();
        let Some(host) = host else {
            return Err(
                "nothing serves hand-off pages in this process (run cdpilot serve or cdpilot mcp)".into(),
            );
        };
        let origin = host.origin().await?;
        Ok(format!("{origin}/handoff/{}#{}", handoff.id, handoff.token))
    }

    /// The open hand-off `id` if `token` is its token (compared in time
    /// independent of where they differ); `None` for an ended or wrong link.
    pub fn find(&self, id: &str, token: &str) -> Option<Arc<Handoff>> {
        let handoff = self.open.lock().unwrap().get(id).cloned()?;
        let (a, b) = (token.as_bytes(), handoff.token.as_bytes());
        let same = a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0;
        same.then_some(handoff)
    }

    /// Keeps `parked` open with no call waiting for it, until
    /// [`Handoffs::unpark`] takes it or [`Handoffs::expire`] ends it.
    pub(crate) fn park(&self, parked: Parked) {
        let target = parked.opened.handoff.tab.target_id.clone();
        self.parked.lock().unwrap().insert(target, parked);
    }

    /// The parked hand-off of tab `target_id`, for the call that now waits for it.
    pub(crate) fn unpark(&self, target_id: &str) -> Option<Parked> {
        self.parked.lock().unwrap().remove(target_id)
    }

    /// Ends parked hand-off `id` if no call took it (its time ran out);
    /// whether it did.
    pub(crate) fn expire(&self, id: &str) -> bool {
        let mut parked = self.parked.lock().unwrap();
        let Some(target) = parked
            .iter()
            .find(|(_, p)| p.opened.handoff.id == id)
            .map(|(t, _)| t.clone())
        else {
            return false;
        };
        let gone = parked.remove(&target);
        drop(parked);
        drop(gone);
        true
    }

    /// Whether hand-off `id` is open (the page itself is served for an
    /// open id; its socket checks the token).
    pub fn is_open(&self, id: &str) -> bool {
        self.open.lock().unwrap().contains_key(id)
    }
}

impl Handoff {
    /// Fires when the hand-off ends.
    pub fn ended(&self) -> &CancellationToken {
        &self.ended
    }

    /// Hands the person's answer to the waiting call (the first one
    /// counts).
    pub(crate) fn answer(&self, answer: Answer) {
        if let Some(sender) = self.answer.lock().unwrap().take() {
            let _ = sender.send(answer);
        }
    }
}
