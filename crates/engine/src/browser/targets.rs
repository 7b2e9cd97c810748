//! The target manager: the only code that handles the browser-level
//! `Target.*` traffic of one connection.
//!
//! It learns targets from `Target.targetCreated / targetInfoChanged /
//! targetDestroyed` (discovery is switched on once per connection, and
//! Chrome then announces every existing target too), never by polling
//! `Target.getTargets`. It attaches each page target once: concurrent
//! callers join one attach, so no target is attached twice and no session is
//! left behind. Sessions ask it for the pages of their browser context.
//!
//! Owns: the target list and the attached tabs of one connection. Its event
//! reader only updates the list under a lock held for microseconds.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cdp::protocol::target::{self, TargetCreated, TargetDestroyed, TargetInfo, TargetInfoChanged};
use cdp::Connection;

use crate::single_flight::SingleFlight;
use crate::tab::{Tab, TabSetup};
use crate::{ActionError, Budget};

/// How long one attach (attach, enable the domains, disguise) may take. It
/// runs as its own task: callers wait within their own budgets.
const ATTACH_BUDGET: Duration = Duration::from_secs(20);

pub struct TargetManager {
    conn: Connection,
    /// Given to every tab and frame before it runs.
    setup: Arc<TabSetup>,
    /// Every target the browser announced, in the order it did.
    known: Arc<Mutex<Vec<TargetInfo>>>,
    /// One attach per page target; the finished ones hold the tab.
    attached: Mutex<HashMap<String, Arc<SingleFlight<Arc<Tab>>>>>,
    /// Attached tabs, by target id (what the flights produced).
    tabs: Arc<Mutex<HashMap<String, Arc<Tab>>>>,
    /// The event reader; stopped when the manager is dropped.
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for TargetManager {
    fn drop(&mut self) {
        self.reader.abort();
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
        let known: Arc<Mutex<Vec<TargetInfo>>> = Arc::default();
        let tabs: Arc<Mutex<HashMap<String, Arc<Tab>>>> = Arc::default();
        let mut events = conn.events(Some(""));
        let reader = {
            let known = known.clone();
            let tabs = tabs.clone();
            tokio::spawn(async move {
                while let Some(event) = events.recv().await {
                    if let Some(created) = event.decode::<TargetCreated>() {
                        let mut known = known.lock().unwrap();
                        if !known.iter().any(|t| t.target_id == created.target_info.target_id) {
                            known.push(created.target_info);
                        }
                    } else if let Some(changed) = event.decode::<TargetInfoChanged>() {
                        let mut known = known.lock().unwrap();
                        if let Some(t) = known
                            .iter_mut()
                            .find(|t| t.target_id == changed.target_info.target_id)
                        {
                            *t = changed.target_info;
                        }
                    } else if let Some(gone) = event.decode::<TargetDestroyed>() {
                        known.lock().unwrap().retain(|t| t.target_id != gone.target_id);
                        tabs.lock().unwrap().remove(&gone.target_id);
                    }
                }
            })
        };
        budget
            .cdp(
                "following the browser's targets",
                &conn.browser(),
                target::SetDiscoverTargets { discover: true },
            )
            .await?;
        Ok(TargetManager {
            conn,
            setup,
            known,
            attached: Mutex::new(HashMap::new()),
            tabs,
            reader,
        })
    }

    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Page targets (tabs) whose browser context `owns`, in the order the
    /// browser announced them.
    pub fn pages(&self, owns: impl Fn(Option<&str>) -> bool) -> Vec<TargetInfo> {
        self.known
            .lock()
            .unwrap()
            .iter()
            .filter(|t| t.kind == "page" && owns(t.browser_context_id.as_deref()))
            .cloned()
            .collect()
    }

    /// What the browser last said about a target.
    pub fn info(&self, target_id: &str) -> Option<TargetInfo> {
        self.known
            .lock()
            .unwrap()
            .iter()
            .find(|t| t.target_id == target_id)
            .cloned()
    }

    /// Remembers a target the browser just created for us (its
    /// `targetCreated` may still be on its way).
    pub fn note_created(&self, info: TargetInfo) {
        let mut known = self.known.lock().unwrap();
        if !known.iter().any(|t| t.target_id == info.target_id) {
            known.push(info);
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
        let (conn, setup, tabs, id) = (
            self.conn.clone(),
            self.setup.clone(),
            self.tabs.clone(),
            target_id.to_owned(),
        );
        let result = flight
            .run("attaching to the tab", budget, move || async move {
                let budget = Budget::with_timeout(ATTACH_BUDGET);
                let tab = match previous {
                    Some(old) => Tab::reattach(&conn, &old, setup, &budget).await?,
                    None => Tab::attach(&conn, &id, setup, &budget).await?,
                };
                let tab = Arc::new(tab);
                tabs.lock().unwrap().insert(id, tab.clone());
                Ok(tab)
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

    /// Forgets a tab we closed.
    pub fn forget(&self, target_id: &str) {
        self.tabs.lock().unwrap().remove(target_id);
        self.attached.lock().unwrap().remove(target_id);
        self.known.lock().unwrap().retain(|t| t.target_id != target_id);
    }

    /// Every attached tab (for a shutdown that must stop their tasks).
    pub fn all_tabs(&self) -> Vec<Arc<Tab>> {
        self.tabs.lock().unwrap().values().cloned().collect()
    }
}
