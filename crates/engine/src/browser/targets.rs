//! The target manager: the only code that handles the browser-level
//! `Target.*` traffic of one connection.
//!
//! It learns targets from `Target.targetCreated / targetInfoChanged /
//! targetDestroyed` (discovery is switched on once per connection, and
//! Chrome then announces every existing target too), never by polling
//! `Target.getTargets`. It attaches each page target once: concurrent
//! callers join one attach, so no target is attached twice and no session is
//! left behind; a page that was auto-attached paused (`super::adopt`) is
//! adopted through the session it already has. Sessions ask it for the
//! pages of their browser context.
//!
//! Owns: the target list and the attached tabs of one connection. The list
//! is brought up to date from the browser session's event stream whenever
//! it is read (the connection's reader has already queued the events in
//! order), and by a small follower task woken by each of those events, so
//! the queue never holds more than the events of a moment (it once grew
//! with every navigation of every session between two reads: issue 24) and
//! a destroyed target's tab is let go at once. The follower holds nothing
//! strongly and ends with the connection or the manager.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cdp::protocol::target::{
    self, AttachedToTarget, DetachedFromTarget, TargetCrashed, TargetCreated, TargetDestroyed, TargetInfo,
    TargetInfoChanged,
};
use cdp::Connection;

use crate::single_flight::SingleFlight;
use crate::tab::{Tab, TabSetup};
use crate::{ActionError, Budget};

/// How long one attach (attach, enable the domains, disguise) may take at
/// least; longer when the caller that started it has more of its budget
/// left (a session's first tab on a browser busy opening 64 contexts). It
/// runs as its own flight: callers wait within their own budgets.
const ATTACH_BUDGET: Duration = Duration::from_secs(20);

pub struct TargetManager {
    conn: Connection,
    /// Given to every tab and frame before it runs.
    setup: Arc<TabSetup>,
    /// Every target the browser announced, in the order it did, and the
    /// browser session's events not yet applied to it.
    known: Arc<Mutex<Known>>,
    /// One attach per page target; the finished ones hold the tab. An
    /// entry goes with its target (`targetDestroyed`, [`Self::forget`]).
    attached: Flights,
    /// Attached tabs, by target id (what the flights produced).
    tabs: Arc<Mutex<HashMap<String, Arc<Tab>>>>,
}

/// One target's attach (the finished one holds its tab).
type Flight = Arc<SingleFlight<Arc<Tab>>>;
type Flights = Arc<Mutex<HashMap<String, Flight>>>;

/// What the target manager holds now (issue 24: each is bounded by the
/// targets alive in the browser, and drops with them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TargetCounts {
    /// Targets the browser announced and has not destroyed.
    pub known: usize,
    /// Attach flights kept (each holds its tab once done).
    pub flights: usize,
    /// Attached tabs.
    pub tabs: usize,
    /// Paused pages waiting to be adopted.
    pub waiting: usize,
}

struct Known {
    targets: Vec<TargetInfo>,
    /// Pages auto-attached paused, not adopted yet: target id → session
    /// id. The first attach of the target takes its session from here.
    waiting: HashMap<String, String>,
    events: cdp::EventStream,
}

impl Known {
    /// Applies every target event received so far.
    fn catch_up(&mut self, tabs: &Mutex<HashMap<String, Arc<Tab>>>, attached: &Flights) {
        while let Ok(event) = self.events.try_recv() {
            if let Some(created) = event.decode::<TargetCreated>() {
                let id = &created.target_info.target_id;
                if !self.targets.iter().any(|t| &t.target_id == id) {
                    self.targets.push(created.target_info);
                }
            } else if let Some(changed) = event.decode::<TargetInfoChanged>() {
                let id = &changed.target_info.target_id;
                if let Some(t) = self.targets.iter_mut().find(|t| &t.target_id == id) {
                    *t = changed.target_info;
                }
            } else if let Some(gone) = event.decode::<TargetDestroyed>() {
                self.targets.retain(|t| t.target_id != gone.target_id);
                self.waiting.remove(&gone.target_id);
                tabs.lock().unwrap().remove(&gone.target_id);
                attached.lock().unwrap().remove(&gone.target_id);
            } else if let Some(attached) = event.decode::<AttachedToTarget>() {
                if attached.waiting_for_debugger && attached.target_info.kind == "page" {
                    self.waiting
                        .insert(attached.target_info.target_id, attached.session_id);
                }
            } else if let Some(detached) = event.decode::<DetachedFromTarget>() {
                self.waiting.retain(|_, session| *session != detached.session_id);
            } else if let Some(crashed) = event.decode::<TargetCrashed>() {
                // Its renderer died (out of memory under the tab ceiling):
                // the calls waiting on it stop, the next ones say so.
                let id = crashed.target_id.as_str();
                if let Some(tab) = tabs.lock().unwrap().get(id) {
                    tracing::info!(target = id, "a tab's renderer crashed");
                    tab.crash.mark();
                }
            }
        }
    }
}

impl TargetManager {
    /// Starts following `conn`'s targets. Returns once Chrome has confirmed
    /// discovery (the existing targets are announced before that answer).
    pub async fn start(
        conn: Connection,
        setup: Arc<TabSetup>,
        budget: &Budget,
    ) -> Result<TargetManager, ActionError> {
        let events = conn.events(Some(""));
        let wake = conn.events(Some(""));
        budget
            .cdp(
                "following the browser's targets",
                &conn.browser(),
                target::SetDiscoverTargets { discover: true },
            )
            .await?;
        let manager = TargetManager {
            conn,
            setup,
            known: Arc::new(Mutex::new(Known {
                targets: Vec::new(),
                waiting: HashMap::new(),
                events,
            })),
            attached: Arc::default(),
            tabs: Arc::default(),
        };
        tokio::spawn(follow(
            wake,
            Arc::downgrade(&manager.known),
            Arc::downgrade(&manager.tabs),
            Arc::downgrade(&manager.attached),
        ));
        Ok(manager)
    }

    /// How many targets, flights, tabs and paused pages it holds now.
    pub fn counts(&self) -> TargetCounts {
        let (known, waiting) = {
            let mut known = self.known.lock().unwrap();
            known.catch_up(&self.tabs, &self.attached);
            (known.targets.len(), known.waiting.len())
        };
        TargetCounts {
            known,
            flights: self.attached.lock().unwrap().len(),
            tabs: self.tabs.lock().unwrap().len(),
            waiting,
        }
    }

    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Page targets (tabs) whose browser context `owns`, in the order the
    /// browser announced them.
    pub fn pages(&self, owns: impl Fn(Option<&str>) -> bool) -> Vec<TargetInfo> {
        let mut known = self.known.lock().unwrap();
        known.catch_up(&self.tabs, &self.attached);
        known
            .targets
            .iter()
            .filter(|t| t.kind == "page" && owns(t.browser_context_id.as_deref()))
            .cloned()
            .collect()
    }

    /// What the browser last said about a target.
    pub fn info(&self, target_id: &str) -> Option<TargetInfo> {
        let mut known = self.known.lock().unwrap();
        known.catch_up(&self.tabs, &self.attached);
        known.targets.iter().find(|t| t.target_id == target_id).cloned()
    }

    /// Remembers a target the browser just created for us (its
    /// `targetCreated` may still be on its way).
    pub fn note_created(&self, info: TargetInfo) {
        let mut known = self.known.lock().unwrap();
        known.catch_up(&self.tabs, &self.attached);
        if !known.targets.iter().any(|t| t.target_id == info.target_id) {
            known.targets.push(info);
        }
    }

    /// The tab of page target `target_id`, attaching it on first use
    /// (once, however many callers ask at the same time). `previous` is the
    /// same target's tab on a connection that dropped: its supervisor's
    /// picture (dialogs, frames, console) carries over.
    pub async fn tab(
        &self,
        target_id: &str,
        previous: Option<Arc<Tab>>,
        budget: &Budget,
    ) -> Result<Arc<Tab>, ActionError> {
        if let Some(tab) = self.tabs.lock().unwrap().get(target_id) {
            return Ok(tab.clone());
        }
        let flight = self
            .attached
            .lock()
            .unwrap()
            .entry(target_id.to_owned())
            .or_default()
            .clone();
        let attach_budget = ATTACH_BUDGET.max(budget.remaining());
        let (conn, setup, tabs, id) = (
            self.conn.clone(),
            self.setup.clone(),
            self.tabs.clone(),
            target_id.to_owned(),
        );
        let result = flight
            .run("attaching to the tab", budget, move || {
                // Taken as the flight starts (never by a caller that joins
                // it): the paused session is adopted exactly once.
                let paused = self.take_waiting(target_id);
                // A popup's opener's tab, whose routes it follows from its
                // first request.
                let opener = paused
                    .as_ref()
                    .and_then(|_| self.info(target_id)?.opener_id)
                    .and_then(|opener| self.tabs.lock().unwrap().get(&opener).cloned());
                async move {
                    let budget = Budget::with_timeout(attach_budget);
                    let tab = match (previous, paused) {
                        (Some(old), _) => Tab::reattach(&conn, &old, setup, &budget).await?,
                        (None, Some(session)) => {
                            let opener = opener.as_ref().map(|tab| tab.gate());
                            Tab::adopt(&conn, &id, &session, opener, setup, &budget).await?
                        }
                        (None, None) => Tab::attach(&conn, &id, setup, &budget).await?,
                    };
                    let tab = Arc::new(tab);
                    tabs.lock().unwrap().insert(id, tab.clone());
                    Ok(tab)
                }
            })
            .await;
        if result.is_err() {
            // Let a later call try again (unless one already did).
            let mut attached = self.attached.lock().unwrap();
            if attached.get(target_id).is_some_and(|f| Arc::ptr_eq(f, &flight)) {
                attached.remove(target_id);
            }
        }
        result
    }

    /// The paused session of page `target_id`, auto-attached and not yet
    /// adopted (taken: whoever gets it must let the page run).
    pub fn take_waiting(&self, target_id: &str) -> Option<String> {
        let mut known = self.known.lock().unwrap();
        known.catch_up(&self.tabs, &self.attached);
        known.waiting.remove(target_id)
    }

    /// What every new tab and frame is given before it runs.
    pub fn setup(&self) -> &Arc<TabSetup> {
        &self.setup
    }

    /// Whether `target_id` is a page no tab of ours is attached to yet (a
    /// popup the page opened, a tab someone else created).
    pub fn is_unattached_page(&self, target_id: &str) -> bool {
        let page = self.info(target_id).is_some_and(|t| t.kind == "page");
        page && !self.tabs.lock().unwrap().contains_key(target_id)
    }

    /// Forgets a tab we closed.
    pub fn forget(&self, target_id: &str) {
        self.tabs.lock().unwrap().remove(target_id);
        self.attached.lock().unwrap().remove(target_id);
        let mut known = self.known.lock().unwrap();
        known.catch_up(&self.tabs, &self.attached);
        known.targets.retain(|t| t.target_id != target_id);
    }

    /// Every attached tab (for a shutdown that must stop their tasks).
    pub fn all_tabs(&self) -> Vec<Arc<Tab>> {
        self.tabs.lock().unwrap().values().cloned().collect()
    }
}

/// Applies the browser session's events as they come: `wake` receives a
/// copy of each, and every one drains the manager's own queue. Ends when
/// the connection closes or the manager is gone.
async fn follow(
    mut wake: cdp::EventStream,
    known: std::sync::Weak<Mutex<Known>>,
    tabs: std::sync::Weak<Mutex<HashMap<String, Arc<Tab>>>>,
    attached: std::sync::Weak<Mutex<HashMap<String, Flight>>>,
) {
    while wake.recv().await.is_some() {
        // Whatever else woke meanwhile is applied by this one catch-up.
        while wake.try_recv().is_ok() {}
        let (Some(known), Some(tabs), Some(attached)) = (known.upgrade(), tabs.upgrade(), attached.upgrade())
        else {
            return;
        };
        known.lock().unwrap().catch_up(&tabs, &attached);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdp::protocol::target::AttachedToTarget;

    /// Issue 8: "Two concurrent calls can attach the same new target twice;
    /// the loser's session is never detached." Six callers at once get one
    /// tab and Chrome reports one attachment.
    #[tokio::test]
    async fn concurrent_callers_attach_a_new_target_once() {
        let (process, conn) = crate::test_browser::launch().await;
        let budget = Budget::with_timeout(std::time::Duration::from_secs(20));
        let targets = TargetManager::start(conn.clone(), Arc::default(), &budget)
            .await
            .unwrap();
        let created = budget
            .cdp(
                "opening a tab",
                &conn.browser(),
                target::CreateTarget {
                    url: "about:blank".into(),
                    browser_context_id: None,
                },
            )
            .await
            .unwrap();
        let mut attached_events = conn.events(Some(""));
        let calls = (0..6).map(|_| targets.tab(&created.target_id, None, &budget));
        let tabs: Vec<Arc<Tab>> = futures_util::future::try_join_all(calls).await.unwrap();
        assert!(
            tabs.iter().all(|t| Arc::ptr_eq(t, &tabs[0])),
            "one tab for all callers"
        );
        // A marker command: every attach event was sent before its answer.
        budget
            .cdp("marker", &conn.browser(), cdp::protocol::browser::GetVersion {})
            .await
            .unwrap();
        let mut attachments = 0;
        while let Ok(event) = attached_events.try_recv() {
            if event
                .decode::<AttachedToTarget>()
                .is_some_and(|a| a.target_info.target_id == created.target_id)
            {
                attachments += 1;
            }
        }
        assert_eq!(attachments, 1, "the target was attached once");
        conn.close();
        process.shutdown(std::time::Duration::from_secs(5)).await;
    }
}
