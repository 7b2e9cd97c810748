//! A session's place in one browser: its browser context (or the default
//! one) and its tabs.
//!
//! Owns the session's [`TabSet`]. Tabs are attached through the browser's
//! target manager (which attaches each target once) and handed here when
//! their browser context is this session's. After a reconnect the link's
//! generation moves on and [`Context::relink`] attaches the same targets
//! again, keeping each supervisor's picture.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cdp::protocol::page;
use cdp::protocol::target::{self, TargetInfo};

use crate::browser::tenancy::Tenancy;
use crate::browser::Browser;
use crate::egress::{ProxyPort, Refusal};
use crate::error::Failure;
use crate::events::Events;
use crate::tab::Tab;
use crate::tabs::TabSet;
use crate::{ActionError, Budget, ErrorCode};

/// A session's place in one browser: its browser context and tabs. The
/// engine's own: a library user reaches the browser through
/// `Session::call` only.
pub(crate) struct Context {
    /// The browser the context lives in.
    pub(crate) browser: Arc<Browser>,
    /// The browser context this session created; `None`: the default one.
    pub(crate) id: Option<String>,
    /// The session's tabs, by short id, and which is active. Locked for
    /// microseconds.
    tabs: Mutex<TabSet>,
    /// The link generation the tabs are attached under.
    generation: AtomicU64,
    /// The session's event stream: every tab adopted here reports to it.
    events: Events,
    /// One more than the link generation whose connection was told where
    /// this context's downloads go (0: none yet); a new connection forgets.
    pub(super) downloads_for: AtomicU64,
    /// The egress gate's door this context's connections go through (its
    /// own, or the launched browser's for the default context): what it
    /// refused goes in the session's next result. Set for every context
    /// but the tabs adopted under `[browser] adopt_tabs` (a browser's
    /// default context, which no door can cover; the user chose that).
    door: Option<Arc<ProxyPort>>,
    /// `[browser] adopt_tabs`: this session holds the browser's own tabs
    /// (let go with the context, for the next session to take).
    _adopted: Option<crate::browser::adoption::Claim>,
    /// Holds the browser while the context lives: a browser nobody holds
    /// may be closed for idleness (`[serve] browser_idle_restart_s`).
    _tenancy: Tenancy,
}

impl Context {
    /// Takes the default context's tabs (`isolated` false, on a browser
    /// cdpilot launched; or any session's, first come, under `[browser]
    /// adopt_tabs` on one it attached to) or creates a new browser
    /// context, and makes sure it has a tab; meanwhile the
    /// browser is told to save the context's downloads into `downloads`
    /// (one round trip fewer on the way of the session's first call).
    pub async fn open(
        browser: Arc<Browser>,
        tenancy: Tenancy,
        isolated: bool,
        events: Events,
        downloads: &std::path::Path,
        budget: &Budget,
    ) -> Result<Context, ActionError> {
        // The launched browser's default context: its first tab is
        // cdpilot's, made active below.
        let ours_first = !isolated && browser.door().is_some();
        // `[browser] adopt_tabs` on a browser cdpilot attached to: the
        // first session there takes its own tabs, in the default context,
        // which no door of the egress gate covers (docs/src/security.md).
        let adopted = browser.claim_default_tabs();
        let (id, door) = match (isolated, browser.door()) {
            _ if adopted.is_some() => (None, None),
            (false, Some(door)) => (None, Some(door.clone())),
            // The default context of a browser cdpilot did not launch (a
            // Grid node's, `cdp_url`'s) is behind no door of the gate: the
            // default session gets a context of its own there too, kept
            // across a reconnect as the default one would be. Creating it
            // with its door is the only way on: a context that cannot be
            // gated is an error, never a session in the default one.
            (false, None) => {
                let (id, door) = browser.create_context(true, budget).await?;
                (Some(id), Some(door))
            }
            (true, _) => {
                let (id, door) = browser.create_context(false, budget).await?;
                (Some(id), Some(door))
            }
        };
        let context = Context {
            generation: AtomicU64::new(browser.link().generation),
            browser,
            id,
            tabs: Mutex::new(TabSet::default()),
            events,
            downloads_for: AtomicU64::new(0),
            door,
            _adopted: adopted,
            _tenancy: tenancy,
        };
        let first_tab = async {
            context.sync(budget).await?;
            let active = context.tabs.lock().unwrap().active();
            match active {
                None => {
                    context.open_tab(budget).await?;
                }
                Some(tab) if ours_first => context.focus(&tab, budget).await?,
                Some(_) => {}
            }
            Ok(())
        };
        tokio::try_join!(first_tab, context.save_downloads_in(downloads, budget))?;
        Ok(context)
    }

    /// Attaches the tabs again after the browser's connection was replaced
    /// (a no-op when it was not).
    pub async fn relink(&self, budget: &Budget) -> Result<(), ActionError> {
        let link = self.browser.link();
        if self.generation.load(Ordering::SeqCst) == link.generation {
            return Ok(());
        }
        let old = self.tabs.lock().unwrap().list();
        let mut again = Vec::new();
        for (id, tab) in old {
            match link.targets.tab(&tab.target_id, Some(tab.clone()), budget).await {
                Ok(new) => again.push((id, new)),
                Err(e) if e.failure == Failure::TargetClosed => {}
                Err(e) => return Err(e),
            }
        }
        let mut tabs = self.tabs.lock().unwrap();
        *tabs = tabs.rebuilt(again);
        self.generation.store(link.generation, Ordering::SeqCst);
        Ok(())
    }

    /// The tab an action runs in: `id` if given (without making it
    /// active), else the active tab.
    pub async fn tab(&self, id: Option<&str>, budget: &Budget) -> Result<Arc<Tab>, ActionError> {
        if let Some(tab) = self.lookup(id) {
            return Ok(tab);
        }
        // Maybe the page opened it since we last looked, or the active tab
        // was closed: bring the set up to date once.
        self.sync(budget).await?;
        self.lookup(id).ok_or_else(|| match id {
            Some(id) => ActionError::new(
                ErrorCode::TabNotFound,
                format!("there is no tab \"{id}\""),
                "List the tabs with browser_tabs and use one of their ids.",
            ),
            None => ActionError::new(
                ErrorCode::TabNotFound,
                "no tab is open",
                "Open one with browser_tabs action new.",
            ),
        })
    }

    /// Lets the egress gate's door of this context pass the `ask` hosts
    /// `consent` (the session's) grants.
    pub fn serves(&self, consent: &Arc<crate::policy::Consent>) {
        if let Some(door) = &self.door {
            door.serves(consent);
        }
    }

    /// What the egress gate refused for this context since the last take,
    /// each host once.
    pub fn take_refusals(&self) -> Vec<Refusal> {
        self.door.as_ref().map(|d| d.take_refusals()).unwrap_or_default()
    }

    /// The session's tabs as they are now (no sync with the browser).
    pub fn tabs(&self) -> Vec<Arc<Tab>> {
        self.tabs
            .lock()
            .unwrap()
            .list()
            .into_iter()
            .map(|(_, tab)| tab)
            .collect()
    }

    /// The id of another tab than `except` whose current document issued
    /// `reference`: for a `ref_unknown` to say where the ref came from.
    pub fn tab_issuing(&self, reference: &str, except: &Tab) -> Option<String> {
        let tabs = self.tabs.lock().unwrap().list();
        tabs.into_iter()
            .find(|(_, tab)| tab.target_id != except.target_id && tab.state(|s| s.issued(reference)))
            .map(|(id, _)| id)
    }

    fn lookup(&self, id: Option<&str>) -> Option<Arc<Tab>> {
        let tabs = self.tabs.lock().unwrap();
        match id {
            Some(id) => tabs.get(id),
            None => tabs.active(),
        }
    }

    /// This context's page targets, as the target manager knows them.
    fn pages(&self) -> Vec<TargetInfo> {
        let link = self.browser.link();
        link.targets
            .pages(|context| self.browser.owns(self.id.as_deref(), context))
    }

    /// Attaches page targets of this context we have not seen (tabs the
    /// page opened) and drops closed ones.
    pub async fn sync(&self, budget: &Budget) -> Result<(), ActionError> {
        let pages: Vec<String> = self.pages().into_iter().map(|t| t.target_id).collect();
        let unseen: Vec<String> = {
            let mut tabs = self.tabs.lock().unwrap();
            tabs.retain_targets(&pages);
            pages.iter().filter(|t| !tabs.has_target(t)).cloned().collect()
        };
        let link = self.browser.link();
        for target_id in unseen {
            match link.targets.tab(&target_id, None, budget).await {
                Ok(tab) => {
                    self.adopt(&mut self.tabs.lock().unwrap(), tab);
                }
                // Closed while we were attaching: nothing to list.
                Err(e) if e.failure == Failure::TargetClosed && link.targets.info(&target_id).is_none() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Opens a new tab (about:blank) in this context and makes it active;
    /// returns its id.
    pub async fn open_tab(&self, budget: &Budget) -> Result<(String, Arc<Tab>), ActionError> {
        let link = self.browser.link();
        let root = link.targets.connection().browser();
        let creating = budget.cdp(
            "opening a tab",
            &root,
            target::CreateTarget {
                url: "about:blank".into(),
                browser_context_id: self.id.clone(),
            },
        );
        let created = crate::timing::timed("tab.create", creating).await?;
        link.targets.note_created(TargetInfo {
            target_id: created.target_id.clone(),
            kind: "page".into(),
            url: "about:blank".into(),
            browser_context_id: self.id.clone(),
            ..Default::default()
        });
        let tab = link.targets.tab(&created.target_id, None, budget).await?;
        let id = {
            let mut tabs = self.tabs.lock().unwrap();
            let id = self.adopt(&mut tabs, tab.clone());
            tabs.select(&id);
            id
        };
        self.focus(&tab, budget).await?;
        Ok((id, tab))
    }

    /// Gives `tab` the focus on a headless browser (`Page.bringToFront`):
    /// the session's active tab has it (`document.hasFocus()`, focus
    /// events, what a focus-gated shortcut checks), as the front tab of a
    /// person's window has. A headless window's first tab has none until
    /// then (`Target.activateTarget` does not give it to the launched
    /// browser's first tab). Real focus, not
    /// `Emulation.setFocusEmulationEnabled`, which would also make a tab
    /// behind another read `visible` and so defeat `tab_tools::front`
    /// (issue 45). A headed browser's focus is its window system's and the
    /// person's: left alone (the extension's among them).
    async fn focus(&self, tab: &Tab, budget: &Budget) -> Result<(), ActionError> {
        if tab.identity().is_none() {
            return Ok(());
        }
        budget
            .cdp("giving the tab the focus", &tab.session, page::BringToFront {})
            .await?;
        Ok(())
    }

    /// Adds a tab to the set and sends its events to the session's stream
    /// under its short id.
    fn adopt(&self, tabs: &mut TabSet, tab: Arc<Tab>) -> String {
        let events = tab.dialogs();
        let id = tabs.add(tab.clone());
        tab.state(|s| s.tab_named(&id));
        events.events().bind(&self.events, &id);
        id
    }

    /// Makes `id` the active tab (and brings it to the front).
    pub async fn select_tab(&self, id: &str, budget: &Budget) -> Result<(), ActionError> {
        let tab = self.tab(Some(id), budget).await?;
        self.tabs.lock().unwrap().select(id);
        budget
            .cdp(
                "bringing the tab to the front",
                &self.browser.connection().browser(),
                target::ActivateTarget {
                    target_id: tab.target_id.clone(),
                },
            )
            .await?;
        self.focus(&tab, budget).await
    }

    /// Closes tab `id`. Closing the last tab opens a blank one, so the
    /// session always has a tab to act in.
    pub async fn close_tab(&self, id: &str, budget: &Budget) -> Result<(), ActionError> {
        let tab = self.tab(Some(id), budget).await?;
        let link = self.browser.link();
        budget
            .cdp(
                "closing the tab",
                &link.targets.connection().browser(),
                target::CloseTarget {
                    target_id: tab.target_id.clone(),
                },
            )
            .await?;
        tab.stop();
        link.targets.forget(&tab.target_id);
        let empty = {
            let mut tabs = self.tabs.lock().unwrap();
            tabs.remove(id);
            tabs.list().is_empty()
        };
        if empty {
            self.open_tab(budget).await?;
        }
        Ok(())
    }

    /// `(id, tab, active, what the browser says of it)` for every tab, in
    /// order. The set of tabs comes from the target manager's events; each
    /// tab's URL and title are read fresh (Chrome announces a new title a
    /// moment after the page has it).
    pub async fn tab_list(
        &self,
        budget: &Budget,
    ) -> Result<Vec<(String, Arc<Tab>, bool, TargetInfo)>, ActionError> {
        let link = self.browser.link();
        let (tabs, active) = {
            let tabs = self.tabs.lock().unwrap();
            (tabs.list(), tabs.active_id().to_owned())
        };
        let browser = link.targets.connection().browser();
        let reads = tabs.iter().map(|(_, tab)| {
            budget.cdp(
                "reading the tabs' titles",
                &browser,
                target::GetTargetInfo {
                    target_id: tab.target_id.clone(),
                },
            )
        });
        let infos = futures_util::future::join_all(reads).await;
        let mut listed = Vec::new();
        for ((id, tab), info) in tabs.into_iter().zip(infos) {
            let info = match info {
                Ok(read) => read.target_info,
                // Closed meanwhile: the next list drops it.
                Err(e) if e.failure == Failure::TargetClosed => continue,
                Err(e) if !e.failure.ends_the_call() => link.targets.info(&tab.target_id).unwrap_or_default(),
                Err(e) => return Err(e),
            };
            let is_active = id == active;
            listed.push((id, tab, is_active, info));
        }
        Ok(listed)
    }

    /// `(id, tab, active)` for every tab, in order, as known now (no
    /// browser round trip).
    pub(crate) fn tabs_now(&self) -> Vec<(String, Arc<Tab>, bool)> {
        let tabs = self.tabs.lock().unwrap();
        let active = tabs.active_id().to_owned();
        tabs.list()
            .into_iter()
            .map(|(id, tab)| {
                let is_active = id == active;
                (id, tab, is_active)
            })
            .collect()
    }

    /// Stops every tab's tasks and, for a context of its own, closes it
    /// with its tabs.
    pub async fn dispose(&self, budget: &Budget) {
        let link = self.browser.link();
        let tabs = std::mem::take(&mut *self.tabs.lock().unwrap()).list();
        for (_, tab) in tabs {
            tab.stop();
            // The target manager lets go of the tab now, not when (or if)
            // the browser's `targetDestroyed` is read.
            link.targets.forget(&tab.target_id);
        }
        if let Some(id) = &self.id {
            if let Err(e) = self.browser.dispose_context(id, budget).await {
                tracing::debug!("disposing browser context {id}: {e}");
            }
        }
    }
}
