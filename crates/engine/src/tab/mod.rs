//! One tab: its flattened CDP session and what we know about its document.
//!
//! Owns: the tab's session, and a small state (main frame, document
//! generation, cdpilot's isolated world, HTTP statuses of documents) kept
//! current by a task that reads the tab's events. That task only updates
//! state under a lock held for microseconds; it never sends a command.
//! Actions that may navigate wait through [`Navigations`] (the tab's
//! navigation waiters), not on raw events of their own.

use std::sync::{Arc, Mutex};

use cdp::protocol::{network, page, runtime, target};
use cdp::{Connection, Session};

use crate::policy::Gate;
use crate::{ActionError, Budget};

/// Name of cdpilot's isolated world in every document.
pub const WORLD: &str = "__cdpilot_world";

pub use pump::{DialogPolicy, DialogRules, TabSetup};
pub use state::TabState;

pub mod crash;
pub(crate) mod download;
pub mod emulated;
pub mod extracts;
pub mod identity;
pub mod lanes;
mod navigation;
mod probe;
mod pump;
pub mod refs;
mod routing;
pub mod screencast;
mod state;
mod worlds;

pub use navigation::Navigations;
pub use worlds::FrameRef;

/// One page target, attached: its CDP session and what it watches. Only
/// the engine holds one (its fields are the crate's: no public item
/// hands out a tab's raw CDP session, `docs/src/library.md`).
pub struct Tab {
    pub(crate) target_id: String,
    pub(crate) session: Session,
    /// browser_evaluate's own connections to this tab: each call holds one
    /// of its own; clean ones are kept warm for the next call.
    pub(crate) evaluate_lanes: lanes::Lanes,
    /// The Markdown `browser_extract` made of this tab's documents.
    extracts: extracts::Extracts,
    state: Arc<Mutex<TabState>>,
    /// The URL policy at the request stage, and what it blocked here.
    gate: Arc<Gate>,
    /// The event reader; aborted when the tab is dropped.
    pump: tokio::task::JoinHandle<()>,
    /// Its renderer crashed since its last navigation.
    pub(crate) crash: crash::Crash,
    /// The tab's one screencast, shared by its viewers.
    screencast: screencast::Screencast,
    /// cdpilot's world being made in a frame: one flight per frame.
    worlds: worlds::Making,
    /// Held while its document's listener scan runs (one at a time): a
    /// snapshot waits for the scan a navigate started ahead of it
    /// (`snapshot::prime`) instead of starting its own.
    pub(crate) listener_scan: tokio::sync::Mutex<()>,
    /// What its sessions were given (the request stage's patterns are
    /// armed again from it when the session's routes change).
    setup: Arc<TabSetup>,
    /// The user agent and client hints the browser's pages announce
    /// (`None`: the browser's own, unchanged).
    identity: Option<identity::UserAgent>,
}

impl Drop for Tab {
    fn drop(&mut self) {
        self.pump.abort();
    }
}

impl Tab {
    /// Attaches to a page target and enables what the actions rely on.
    pub async fn attach(
        conn: &Connection,
        target_id: &str,
        setup: Arc<TabSetup>,
        budget: &Budget,
    ) -> Result<Tab, ActionError> {
        let state = Arc::new(Mutex::new(TabState::default()));
        let gate = Arc::new(Gate::new(setup.policy.clone(), target_id));
        Self::attach_with(conn, target_id, setup, state, gate, budget).await
    }

    /// Takes over a page target that was auto-attached paused (a popup, a
    /// tab another client opened, a prerender): the session `session_id`
    /// already exists, and the page runs only once its gate, world and
    /// disguise are in place, so its first request is judged. A popup
    /// follows its `opener`'s gate (the session's routes and consent) from
    /// that first request: its document is routed as the opener's would be.
    pub async fn adopt(
        conn: &Connection,
        target_id: &str,
        session_id: &str,
        opener: Option<&Gate>,
        setup: Arc<TabSetup>,
        budget: &Budget,
    ) -> Result<Tab, ActionError> {
        let state = Arc::new(Mutex::new(TabState::default()));
        let gate = Arc::new(Gate::new(setup.policy.clone(), target_id));
        if let Some(opener) = opener {
            gate.inherit(opener);
        }
        // Read before the request stage is armed from the routes: a change
        // meanwhile moves it on, and the next call arms again.
        let generation = gate.routes().map(|r| r.generation());
        let session = conn.session(session_id);
        let tab = Self::start(conn, target_id, session, true, setup, state, gate, budget).await?;
        if let Some(generation) = generation {
            tab.gate.armed_for(generation);
        }
        Ok(tab)
    }

    /// Attaches again, on a new connection, to the target `old` showed,
    /// keeping what the supervisor knew (dialogs, frame records, console).
    /// Sessions, worlds and refs of the old connection are gone.
    pub async fn reattach(
        conn: &Connection,
        old: &Tab,
        setup: Arc<TabSetup>,
        budget: &Budget,
    ) -> Result<Tab, ActionError> {
        let old_session = old.session.id().to_owned();
        old.state(|s| s.forget_sessions());
        let tab = Self::attach_with(
            conn,
            &old.target_id,
            setup,
            old.state.clone(),
            old.gate.clone(),
            budget,
        )
        .await?;
        let new_session = tab.session.id().to_owned();
        tab.state(|s| s.dialogs.moved_session(&old_session, &new_session));
        Ok(tab)
    }

    async fn attach_with(
        conn: &Connection,
        target_id: &str,
        setup: Arc<TabSetup>,
        state: Arc<Mutex<TabState>>,
        gate: Arc<Gate>,
        budget: &Budget,
    ) -> Result<Tab, ActionError> {
        let root = conn.browser();
        let attaching = budget.cdp(
            "attaching to the tab",
            &root,
            target::AttachToTarget {
                target_id: target_id.to_owned(),
                flatten: true,
            },
        );
        let attached = crate::timing::timed("tab.attach", attaching).await?;
        let session = conn.session(attached.session_id);
        Self::start(conn, target_id, session, false, setup, state, gate, budget).await
    }

    /// Follows an attached tab session and enables what the actions rely on
    /// (a `paused` one is let run once all of that is sent).
    #[allow(clippy::too_many_arguments)]
    async fn start(
        conn: &Connection,
        target_id: &str,
        session: Session,
        paused: bool,
        setup: Arc<TabSetup>,
        state: Arc<Mutex<TabState>>,
        gate: Arc<Gate>,
        budget: &Budget,
    ) -> Result<Tab, ActionError> {
        // A tab taken over again (a new connection) keeps its session's routes.
        let routed = gate.routed();
        let pump = pump::spawn(
            conn.clone(),
            session.id().to_owned(),
            state.clone(),
            setup.clone(),
            gate.clone(),
        );
        let tab = Tab {
            target_id: target_id.to_owned(),
            session,
            evaluate_lanes: Default::default(),
            extracts: Default::default(),
            state,
            gate,
            pump,
            crash: Default::default(),
            screencast: Default::default(),
            worlds: Default::default(),
            listener_scan: Default::default(),
            setup: setup.clone(),
            identity: setup.user_agent.clone(),
        };

        if tab.state(|s| s.dialogs.is_blocked()) {
            // A dialog that opened before the connection dropped still
            // blocks the page, and every command its renderer must answer
            // (Page.enable and Runtime.enable among them) waits behind it.
            // Send them and go on: a navigation clears the dialog, and then
            // they are answered.
            let session = tab.session.clone();
            let later = Budget::with_timeout(std::time::Duration::from_secs(600));
            tokio::spawn(async move {
                if let Err(e) = enable(&session, &setup, routed, false, &later).await {
                    tracing::debug!("enabling a blocked tab's domains: {e}");
                }
            });
            return Ok(tab);
        }
        let enabling = enable(&tab.session, &setup, routed, paused, budget);
        let tree = crate::timing::timed("tab.enable", enabling).await?;
        tab.state(|s| s.adopt_frame_tree(&tree.frame_tree));
        let page_tools = pump::follow_page_tools(&tab.session, &setup, budget.deadline()).await;
        tab.state(|s| s.page_tools.set_availability(page_tools));
        Ok(tab)
    }

    /// The user agent and client hints the session gives its pages
    /// (`None`: the browser's own).
    pub fn identity(&self) -> Option<&identity::UserAgent> {
        self.identity.as_ref()
    }

    /// The Markdown `browser_extract` made of this tab's documents.
    pub fn extracts(&self) -> &extracts::Extracts {
        &self.extracts
    }

    /// The tab's dialog book (a handle; see `crate::dialogs`).
    pub fn dialogs(&self) -> crate::dialogs::DialogBook {
        self.state(|s| s.dialogs.clone())
    }

    /// Joins the tab's screencast (started by its first viewer, stopped
    /// when the last one leaves).
    pub fn watch(&self) -> screencast::Viewer {
        self.screencast.watch(&self.session)
    }

    /// The tab's viewport in CSS pixels as its screencast's latest frame
    /// showed it; (0, 0) before one.
    pub fn cast_viewport(&self) -> (f64, f64) {
        self.screencast.viewport()
    }

    /// The tab's request-stage judge (the URL policy, what it blocked).
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// Stops the tab's event reader (the tab was closed, or the session or
    /// the server is ending): its watchdogs and child preparations end too.
    pub fn stop(&self) {
        self.pump.abort();
    }

    /// Reads the tab's state under its lock (never held across an await).
    pub fn state<T>(&self, read: impl FnOnce(&mut TabState) -> T) -> T {
        read(&mut self.state.lock().unwrap())
    }
}

/// Enables what the actions rely on, on a freshly attached tab session;
/// returns the frame tree. A `paused` page (auto-attached, waiting for
/// the debugger) is let run by the last command: Chrome runs a session's
/// commands in order, so the gate, the scripts and the auto-attach are in
/// place first, and the page answers the rest only once it runs.
async fn enable(
    s: &Session,
    setup: &TabSetup,
    routed: bool,
    paused: bool,
    budget: &Budget,
) -> Result<page::FrameTreeResult, ActionError> {
    let step = "enabling the tab's domains";
    let (tree, ..) = tokio::try_join!(
        budget.cdp(step, s, page::GetFrameTree {}),
        budget.cdp(step, s, page::Enable {}),
        budget.cdp(step, s, page::SetLifecycleEventsEnabled { enabled: true }),
        budget.cdp(step, s, runtime::Enable {}),
        budget.cdp(step, s, network::Enable {}),
        // Documents a service worker would answer go to the network, where
        // the request stage judges them.
        budget.cdp(step, s, network::SetBypassServiceWorker { bypass: true }),
        // No focus emulation (`Emulation.setFocusEmulationEnabled`): it
        // also makes `document.visibilityState` read `visible` in a tab
        // behind another and in a minimized window, which `front.rs` reads
        // to bring a hidden tab forward before input (issue 45 left the
        // page's focus as the browser's own for that reason).
        // No prerendering: a speculation rule would have the browser load a
        // document (a path the rules deny) before any request stage of
        // ours saw it. A browser cdpilot launches has all preloading off
        // in its profile; one it did not launch has only this.
        async {
            let allowed = page::SetPrerenderingAllowed { is_allowed: false };
            if let Err(e) = s.call(allowed, budget.deadline()).await {
                // An older browser without the command: its prerenders are
                // adopted (paused) by the browser's auto-attach.
                tracing::debug!("turning prerendering off failed: {e}");
            }
            Ok::<_, ActionError>(())
        },
        budget.cdp(
            step,
            s,
            target::SetAutoAttach {
                auto_attach: true,
                wait_for_debugger_on_start: true,
                flatten: true
            }
        ),
        budget.run(step, async {
            setup
                .disguise(s, routed, budget.deadline())
                .await
                .map_err(|e| budget.map_cdp(step, e))
        }),
        async {
            if paused {
                budget.cdp(step, s, runtime::RunIfWaitingForDebugger {}).await?;
            }
            Ok(())
        },
    )?;
    Ok(tree)
}
