//! One client's session: its browser context (cookies, storage and tabs of
//! its own, or the browser's default context over stdio), its metrics, and
//! the path every action takes in it.
//!
//! Owns: the session's `Context` (replaced when the browser was
//! relaunched: the next result says so), its metrics, its event stream
//! (`events`) and, with a fleet of endpoints, its placement on one. The
//! browser is shared (`Browsers`); nothing here holds a lock across an
//! await.
//!
//! One door: a library user reaches the browser through
//! [`Session::call`] only. Nothing public hands out the session's browser
//! context, a tab, or a raw CDP session (`docs/src/library.md`); these do
//! not compile:
//!
//! ```compile_fail,E0624
//! # async fn f(session: &engine::Session, budget: &engine::Budget) {
//! // The session's browser context (its tabs, their CDP sessions).
//! let _ = session.context(budget).await;
//! # }
//! ```
//!
//! ```compile_fail,E0603
//! // The context's type is the crate's own.
//! fn tabs_of(context: &engine::session::Context) {}
//! ```
//!
//! ```compile_fail,E0603
//! // No tab (and so no tab's CDP session) from any public module.
//! fn raw(tab: &engine::tab::Tab) {}
//! ```
//!
//! while the door itself does:
//!
//! ```no_run
//! # async fn f(session: &engine::Session) -> Result<(), engine::ActionError> {
//! let call = engine::ToolCall::new("browser_cdp", serde_json::json!({"method": "Page.getLayoutMetrics"}));
//! session.call(call).await?;
//! # Ok(())
//! # }
//! ```

mod call;
mod context;
mod downloads;
pub(crate) mod handoff;
mod idle;
mod pipeline;
mod policy;
mod reel;
mod refusals;
pub(crate) mod storage;
pub(crate) mod storage_state;
pub(crate) mod tabs;
pub(crate) mod trace_tool;
mod watch;

use std::sync::{Arc, Mutex};

use crate::audit::Audit;
use crate::browser::fleet::Placement;
use crate::browser::grid::Seat;
use crate::browser::{Browser, Browsers};
use crate::config::Config;
use crate::content::Markers;
use crate::metrics::Metrics;
use crate::policy::Consent;
use crate::secrets::Secrets;
use crate::single_flight::SingleFlight;
use crate::tab_tools;
use crate::{ActionError, Budget};

use crate::events::{EndReason, Events, Lifecycle};
pub(crate) use call::{Call, SessionCall, SessionTool};
pub(crate) use context::Context;
pub(crate) use pipeline::Notes;
pub use watch::{Overview, TabView};

/// One client's session: its browser context and tabs, and the path every
/// action takes in it. Get one from [`Engine::session`](crate::Engine::session)
/// or [`Engine::new_session`](crate::Engine::new_session).
pub struct Session {
    /// Names the session in the audit (`default` over stdio).
    id: String,
    config: Arc<Config>,
    /// The browser, or the fleet of endpoints, it runs on.
    browsers: Browsers,
    /// Its place on one endpoint of a fleet (none yet, or not a fleet).
    placement: Mutex<Option<Placement>>,
    /// Its Grid session (`[browser] grid`), let go when its pages end.
    seat: Arc<Seat>,
    /// Its event stream, and saying once that its pages ended.
    lifecycle: Arc<Lifecycle>,
    /// A browser context of its own (true), or the default one (stdio, so a
    /// `--user-data-dir` profile is the one the agent uses).
    isolated: bool,
    /// What this session did, for `cdpilot://metrics`.
    metrics: Arc<Metrics>,
    /// The engine's audit trail, written by the one dispatch.
    audit: Arc<Audit>,
    /// The engine's secrets: typed from placeholders here, redacted from
    /// everything the dispatch hands back.
    secrets: Arc<Secrets>,
    /// The session's place in the current browser, once opened. Shared
    /// with the idle timer, which empties it when the session expires.
    context: idle::ContextSlot,
    /// `[session] idle_timeout_s`: the idle clock and its timer.
    idle: idle::Idle,
    /// Opening the context, under way.
    opening: SingleFlight<Arc<Context>>,
    /// The user's answers to `ask` rules, and the way to ask (installed by
    /// the transport).
    consent: Arc<Consent>,
    /// Its routes (`browser_network route`, `har`), answered by the request
    /// stage of each of its tabs, inside the URL rules.
    routes: Arc<crate::policy::routes::Routes>,
    /// Its page content markers (`[output] content_markers`): the nonce
    /// that encloses page text in every result it hands back.
    markers: Markers,
    /// The engine's open hand-offs (`browser_handoff`).
    handoffs: Arc<crate::handoff::Handoffs>,
    /// How the transport offers a hand-off's link (MCP elicitation).
    offer: Mutex<Option<Arc<dyn crate::handoff::Offer>>>,
    /// Who drives it, as its client said (MCP `clientInfo.name`); empty
    /// until said. Shown to the user (the extension's popup).
    client: Mutex<String>,
    /// Its trace (`[trace] dir`, `browser_trace`), written by the door.
    trace: crate::trace::Slot,
    /// The screencast frames its trace keeps for the video (`[trace] video`).
    reel: reel::Reel,
}

impl Session {
    /// A session on `browsers`: with a browser context of its own
    /// (`isolated`) or the default one. Library users call
    /// [`Engine::new_session`](crate::Engine::new_session) instead.
    // The engine's shared parts, one argument each: a struct of them would
    // be built in the one place that calls this.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        id: String,
        config: Arc<Config>,
        browsers: Browsers,
        isolated: bool,
        metrics: Arc<Metrics>,
        audit: Arc<Audit>,
        secrets: Arc<Secrets>,
        handoffs: Arc<crate::handoff::Handoffs>,
    ) -> Session {
        let lifecycle = Arc::new(Lifecycle::new(
            Events::redacting(secrets.clone()),
            metrics.clone(),
        ));
        let idle = idle::Idle::new(config.session.idle_timeout_s, lifecycle.clone());
        let markers = Markers::new(config.output.content_markers);
        let seat = Arc::new(Seat::default());
        if matches!(browsers, Browsers::Grid(_)) {
            // Every way the pages end (idle, stopped, closed, lost) lets
            // the Grid slot go.
            let seat = Arc::downgrade(&seat);
            lifecycle.on_end(move || {
                if let Some(seat) = seat.upgrade() {
                    seat.release();
                }
            });
        }
        Session {
            seat,
            id,
            idle,
            audit,
            secrets,
            config,
            browsers,
            placement: Mutex::new(None),
            lifecycle,
            isolated,
            metrics,
            context: Arc::new(Mutex::new(None)),
            opening: SingleFlight::default(),
            consent: Arc::default(),
            routes: Arc::default(),
            markers,
            handoffs,
            offer: Mutex::default(),
            client: Mutex::default(),
            trace: crate::trace::Slot::default(),
            reel: reel::Reel::default(),
        }
    }

    /// Its trace's place (the door writes to it, `browser_trace` starts
    /// and stops it).
    pub(crate) fn trace(&self) -> &crate::trace::Slot {
        &self.trace
    }

    /// The directory of the trace being written, if one is.
    pub fn trace_dir(&self) -> Option<std::path::PathBuf> {
        self.trace.current().map(|t| t.dir().to_owned())
    }

    /// Names who drives the session (MCP `clientInfo.name`).
    pub fn set_client_name(&self, name: &str) {
        *self.client.lock().unwrap() = name.to_owned();
    }

    /// Who drives the session, if its client said (empty otherwise).
    pub fn client_name(&self) -> String {
        self.client.lock().unwrap().clone()
    }

    /// The nonce of its page content markers, when they are on.
    pub fn content_nonce(&self) -> Option<&str> {
        self.markers.nonce()
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// What this session did.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The session's event stream (`dialog_opened`, `navigated`,
    /// `session_ended`, …): subscribe to hear what happens in it.
    pub fn events(&self) -> &Events {
        self.lifecycle.events()
    }

    /// The session's id (`default` over stdio), as the audit names it.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The engine's secrets.
    pub fn secrets(&self) -> &Secrets {
        &self.secrets
    }

    /// The engine's audit trail (shared by its sessions).
    pub fn audit(&self) -> &Audit {
        &self.audit
    }

    /// Where the transport installs its [`crate::policy::Asker`], and the
    /// user's grants.
    pub fn consent(&self) -> &Arc<Consent> {
        &self.consent
    }

    /// Its routes, which its tabs' request stages answer by.
    pub(crate) fn routes(&self) -> &Arc<crate::policy::routes::Routes> {
        &self.routes
    }

    /// The session's context in the live browser, opening it (once, for
    /// concurrent callers) when there is none or the browser was replaced.
    /// The flag says a context on an earlier browser was lost. The
    /// engine's own (its tabs hold raw CDP sessions): a library user's
    /// way in is [`Session::call`].
    pub(crate) async fn context(&self, budget: &Budget) -> Result<(Arc<Context>, bool), ActionError> {
        // A tenancy first: a browser being closed for idleness gives out
        // none, and the next one the slot gives is a new browser.
        let (browser, tenancy) = loop {
            let browser = crate::timing::timed("session.browser", self.browser(budget)).await?;
            if let Some(tenancy) = browser.tenants().enter() {
                break (browser, tenancy);
            }
        };
        let current = self.context.lock().unwrap().clone();
        if let Some(context) = &current {
            if Arc::ptr_eq(&context.browser, &browser) {
                context.relink(budget).await?;
                return Ok((context.clone(), false));
            }
        }
        let isolated = self.isolated;
        let state_file = self.config.browser.storage_state.clone();
        let events = self.events().clone();
        let downloads = self.config.files.output_dir();
        let callers_deadline = budget.deadline();
        // At least the floor, from its turn; longer when the call that
        // started it has more of its budget left (a 240 s navigate on a
        // browser busy opening 64 contexts is not cut at 20 s).
        let floor = self.config.session.opening_floor;
        // An opening whose caller ran out of time finished meanwhile: it
        // is this session's context (another opening would leave that one,
        // with its tab, in the browser).
        let left_behind = self
            .opening
            .finished()
            .and_then(Result::ok)
            .filter(|c| Arc::ptr_eq(&c.browser, &browser));
        let consent = self.consent.clone();
        let opening = self
            .opening
            .run("opening the session", budget, move || async move {
                // A few contexts open at once on one browser, first come first
                // served; this one's budget starts with its turn (each
                // caller waits within its own).
                let queue = browser.clone();
                let turn = crate::timing::timed("session.queued", queue.opening_turn()).await;
                let left = callers_deadline.saturating_duration_since(tokio::time::Instant::now());
                let budget = Budget::with_timeout(floor.max(left));
                let opening = Context::open(browser, tenancy, isolated, events, &downloads, &budget);
                let context = crate::timing::timed("session.context", opening).await;
                drop(turn);
                let context = context?;
                // The gate lets this session's granted `ask` hosts through.
                context.serves(&consent);
                // `[browser] storage_state`: every new session starts with it.
                if !state_file.is_empty() {
                    let path = std::path::Path::new(&state_file);
                    if let Err(e) = storage_state::load_file(&context, path, &budget).await {
                        context.dispose(&budget).await;
                        return Err(ActionError {
                            message: format!("[browser] storage_state: {}", e.message),
                            ..e
                        });
                    }
                }
                Ok(Arc::new(context))
            });
        let opened = match left_behind {
            Some(context) => context,
            None => opening.await?,
        };
        self.lifecycle.began();
        let replaced = current.is_some_and(|c| !Arc::ptr_eq(&c.browser, &opened.browser));
        let mut slot = self.context.lock().unwrap();
        if slot
            .as_ref()
            .is_none_or(|c| !Arc::ptr_eq(&c.browser, &opened.browser))
        {
            *slot = Some(opened.clone());
        }
        drop(slot);
        // The slot holds it now; the finished flight must not (an idle
        // expiry would leave the old context, its tabs and door, alive).
        self.opening.forget_finished();
        Ok((opened, replaced))
    }

    /// The live browser this session runs on: the one browser, or its
    /// endpoint of the fleet (placed on the least-loaded one first, and
    /// again when its endpoint failed).
    async fn browser(&self, budget: &Budget) -> Result<Arc<Browser>, ActionError> {
        match &self.browsers {
            Browsers::One(slot) => slot.get(budget).await,
            Browsers::Fleet(fleet) => fleet.browser(&self.placement, &self.lifecycle, budget).await,
            Browsers::Grid(grid) => grid.browser(&self.seat, &self.lifecycle, budget).await,
        }
    }

    /// The browser context the session's pages live in, once opened
    /// (`None` before, and for the browser's default context).
    pub fn browser_context_id(&self) -> Option<String> {
        self.context.lock().unwrap().as_ref().and_then(|c| c.id.clone())
    }

    /// Says now (once) that the session ended for `reason`, before its
    /// pages are closed: for a transport about to tell its client. True if
    /// this call said it; a later [`end`](Self::end) says nothing more.
    pub fn say_ended(&self, reason: EndReason) -> bool {
        self.lifecycle.ended(reason)
    }

    /// Ends the session for `reason`: its pages close (as
    /// [`Session::close`]) and `session_ended` is said, unless its pages
    /// had already ended (idle, a lost browser).
    pub async fn end(&self, reason: EndReason, budget: &Budget) {
        // The close ends the trace, after the step still being written.
        self.close(budget).await;
        self.lifecycle.ended(reason);
        self.placement.lock().unwrap().take();
        self.seat.release();
    }

    /// The page tools the active tab offers now (WebMCP; every name,
    /// description and schema is the page's own, untrusted), those of
    /// documents the URL rules deny left out; empty before the session's
    /// first page. No browser round trip: for `[tools] page_tools =
    /// "expose"`, whose transport lists them as tools of their own.
    pub fn page_tools_offered(&self) -> Vec<crate::page_tools::Offered> {
        let context = self.context.lock().unwrap().clone();
        let active = context.and_then(|c| c.tabs_now().into_iter().find(|(_, _, active)| *active));
        let Some((_, tab, _)) = active else {
            return Vec::new();
        };
        let mut offered = tab_tools::page_tool::offered(&tab);
        // The page's words, inside the session's markers.
        for tool in &mut offered {
            tool.page_words = self.markers.render(&tool.page_words);
        }
        offered
    }

    /// Its Grid session's id and the node it runs on (`[browser] grid`).
    pub fn grid_session(&self) -> Option<(String, Option<String>)> {
        self.seat.describe()
    }

    /// Starts the browser and opens this session's tab ahead of its first
    /// call (MCP stdio does at `initialize`), so that call finds them
    /// ready. A failure is only logged: the first call meets it again and
    /// reports it.
    pub async fn warm_up(&self) {
        let budget = Budget::with_timeout(WARM_UP_BUDGET);
        let opened = async {
            let (context, _) = self.context(&budget).await?;
            context.tab(None, &budget).await
        };
        if let Err(e) = crate::timing::timed("session.warm_up", opened).await {
            tracing::debug!("warming up the browser: {e}");
        }
    }

    /// The `backendDOMNodeId` of the element a ref names in the active tab
    /// (library use: hand the node to other CDP tooling).
    pub async fn ref_node(&self, reference: &str, budget: &Budget) -> Result<i64, ActionError> {
        crate::validate::reference(reference)?;
        let (context, _) = self.context(budget).await?;
        let tab = context.tab(None, budget).await?;
        let element = tab_tools::element::by_ref(&tab, reference, budget).await?;
        element.backend_node_id(budget).await
    }

    /// Ends the session: its tabs' tasks stop and a context of its own is
    /// closed with its tabs. The browser stays for other sessions.
    pub async fn close(&self, budget: &Budget) {
        // Its trace ends cleanly (the last call's step, if it is still
        // being written, its end line, its HAR; its video when asked)
        // before the pages go.
        self.settle_trace().await;
        self.reel_flush();
        if let Some(trace) = self.trace().stop("session_ended") {
            if self.config.trace.video {
                let _ = self.trace_video(trace.dir()).await;
            }
        }
        for context in self.take_contexts() {
            context.dispose(budget).await;
        }
    }

    /// Takes the session's context, and an opening no call took (its
    /// caller ran out of time): the finished opening holds its context
    /// too, let go here so the context (its tabs, its egress door) drops
    /// once disposed.
    fn take_contexts(&self) -> Vec<Arc<Context>> {
        let left_behind = self.opening.finished().and_then(Result::ok);
        self.opening.forget_finished();
        let context = self.context.lock().unwrap().take();
        let mut contexts: Vec<Arc<Context>> = context.into_iter().collect();
        if let Some(left) = left_behind {
            if !contexts.iter().any(|c| Arc::ptr_eq(c, &left)) {
                contexts.push(left);
            }
        }
        contexts
    }
}

/// Tests only (cargo feature `test-support`, which the engine's own tests
/// turn on): weak handles on a session's context and tabs, to see them
/// freed after close. They hand out nothing to act with.
#[cfg(feature = "test-support")]
#[doc(hidden)]
pub struct Held {
    context: std::sync::Weak<Context>,
    tabs: Vec<std::sync::Weak<crate::tab::Tab>>,
}

#[cfg(feature = "test-support")]
#[doc(hidden)]
impl Held {
    /// How many tabs the context had.
    pub fn tabs(&self) -> usize {
        self.tabs.len()
    }

    /// Whether something still holds the context.
    pub fn context_held(&self) -> bool {
        self.context.upgrade().is_some()
    }

    /// How many of its tabs something still holds.
    pub fn tabs_held(&self) -> usize {
        self.tabs.iter().filter(|t| t.upgrade().is_some()).count()
    }
}

#[cfg(feature = "test-support")]
#[doc(hidden)]
impl Session {
    /// Tests only: [`Held`] for the session's context (opened if needed).
    pub async fn held(&self, budget: &Budget) -> Result<Held, ActionError> {
        let (context, _) = self.context(budget).await?;
        Ok(Held {
            tabs: context.tabs().iter().map(Arc::downgrade).collect(),
            context: Arc::downgrade(&context),
        })
    }
}

/// How long starting the browser ahead of the first call may take.
const WARM_UP_BUDGET: std::time::Duration = std::time::Duration::from_secs(30);

/// How long closing a dropped session's browser context may take.
const DROP_CLOSE_BUDGET: std::time::Duration = std::time::Duration::from_secs(5);

impl Drop for Session {
    /// A session dropped without [`Session::close`] still closes its own
    /// browser context (in the background), so its tabs do not outlive it.
    fn drop(&mut self) {
        let contexts = self.take_contexts();
        if contexts.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            for context in contexts {
                context.dispose(&Budget::with_timeout(DROP_CLOSE_BUDGET)).await;
            }
        });
    }
}
