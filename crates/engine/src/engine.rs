//! The engine a process embeds: the configuration, the one browser its
//! sessions share, and the default session (the only one over stdio).
//!
//! Owns the [`BrowserSlot`] and the default [`Session`]. More sessions,
//! each with a browser context of its own, come from
//! [`Engine::new_session`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::audit::Audit;
use crate::browser::fleet::{EndpointStatus, Fleet};
use crate::browser::grid::{Grid, GridStatus};
use crate::browser::slot::BrowserSlot;
use crate::browser::Browsers;
use crate::config::Source;
use crate::door::ToolCall;
use crate::egress::Egress;
use crate::metrics::Metrics;
use crate::secrets::Secrets;
use crate::session::Session;
use crate::{ActionError, ActionOutput, Budget, Config};

/// The engine a process embeds: the configuration, the one browser all
/// its sessions share (launched on first use), and the default session.
pub struct Engine {
    config: Arc<Config>,
    /// The browser all sessions share (the default session's, and every
    /// session's without `[browser] endpoints`).
    slot: Arc<BrowserSlot>,
    /// `[browser] endpoints`: new sessions are placed on them instead.
    fleet: Option<Arc<Fleet>>,
    /// `[browser] grid`: every session (the default one too) gets a Grid
    /// session of its own instead.
    grid: Option<Arc<Grid>>,
    /// Every session's counts (each session's metrics count here too),
    /// browser restarts and reconnects.
    metrics: Arc<Metrics>,
    /// Every call of every session, one record each (`cdpilot://audit`,
    /// `[audit] file`).
    audit: Arc<Audit>,
    /// The hand-offs open now in any session (`browser_handoff`), found by
    /// the hand-off page's listener.
    handoffs: Arc<crate::handoff::Handoffs>,
    /// `[secrets]`, their values read once at start.
    secrets: Arc<Secrets>,
    /// Numbers the sessions [`Engine::new_session`] names itself.
    sessions_started: AtomicU64,
    /// The default session: the browser's default context (a
    /// `--user-data-dir` profile is its profile).
    session: Session,
}

impl Engine {
    /// An engine for `config`. Starts nothing: the browser is launched (or
    /// attached) by the first action that needs it. Panics if the audit file
    /// cannot be opened or a secret's variable is unset: processes that take
    /// a configuration from a user call [`Engine::start`], which says so.
    pub fn new(config: Config) -> Engine {
        Engine::start(config).unwrap_or_else(|e| panic!("{e}"))
    }

    /// An engine on `config`, or the start-up error naming the key that
    /// cannot be honoured (an audit file that cannot be opened, a secret
    /// whose variable is unset).
    pub fn start(config: Config) -> Result<Engine, String> {
        crate::startup::check(&config)?;
        let config = Arc::new(config);
        let metrics = Arc::new(Metrics::default());
        let audit = Arc::new(Audit::open(&config.audit.file, metrics.clone())?);
        let secrets = Arc::new(Secrets::from_config(&config.secrets)?);
        let handoffs = Arc::new(crate::handoff::Handoffs::default());
        // Bound now: a gate that cannot listen is a start-up error.
        let egress = Arc::new(Egress::start(&config)?);
        let slot = Arc::new(BrowserSlot::new(config.clone(), metrics.clone(), egress.clone()));
        let fleet = (!config.browser.endpoints.is_empty())
            .then(|| Fleet::new(&config, metrics.clone(), egress.clone()));
        let grid = match config.browser.grid.as_str() {
            "" => None,
            _ => Some(Grid::new(config.clone(), slot.policy().clone(), egress.clone())?),
        };
        let session = Session::new(
            "default".into(),
            config.clone(),
            match &grid {
                Some(grid) => Browsers::Grid(grid.clone()),
                None => Browsers::One(slot.clone()),
            },
            // In the user's own Chrome (auto-connect, or the extension's
            // emulated browser over stdio) the default session gets a
            // browser context of its own too: the default one is the user's.
            config.browser.source != Source::Launch,
            metrics.clone(),
            audit.clone(),
            secrets.clone(),
            handoffs.clone(),
        );
        Ok(Engine {
            config,
            slot,
            fleet,
            grid,
            metrics,
            audit,
            secrets,
            handoffs,
            sessions_started: AtomicU64::new(0),
            session,
        })
    }

    /// The extension relay (`[browser] source = "extension"`): `cdpilot
    /// serve` plugs the paired extension's socket into it.
    pub fn extension_relay(&self) -> Option<&Arc<crate::browser::extension::Relay>> {
        self.slot.relay()
    }

    /// Closes the browser launched here (never one attached to) once no
    /// session has held it for `idle` (`Duration::ZERO`: never); the next
    /// session launches a new one. `cdpilot serve` sets it from `[serve]
    /// browser_idle_restart_s`; it applies to browsers launched after.
    pub fn close_idle_browser_after(&self, idle: std::time::Duration) {
        self.slot.close_when_idle(idle);
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The counts of every session (the default one's alone over stdio),
    /// browser restarts and reconnects.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The default session.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// A new session on the shared browser with a browser context of its
    /// own: cookies, storage and tabs no other session sees.
    pub fn new_session(&self) -> Session {
        let n = self.sessions_started.fetch_add(1, Ordering::Relaxed) + 1;
        self.new_session_named(format!("session-{n}"))
    }

    /// [`Engine::new_session`] under the transport's id for it (its name in
    /// the audit).
    pub fn new_session_named(&self, id: String) -> Session {
        let browsers = match (&self.fleet, &self.grid) {
            (Some(fleet), _) => Browsers::Fleet(fleet.clone()),
            (None, Some(grid)) => Browsers::Grid(grid.clone()),
            (None, None) => Browsers::One(self.slot.clone()),
        };
        Session::new(
            id,
            self.config.clone(),
            browsers,
            true,
            Arc::new(Metrics::within(self.metrics.clone())),
            self.audit.clone(),
            self.secrets.clone(),
            self.handoffs.clone(),
        )
    }

    /// The configured secrets (for a transport's own outgoing text: the
    /// dashboard's state, log lines).
    pub fn secrets(&self) -> &Arc<Secrets> {
        &self.secrets
    }

    /// The audit trail of every session's calls.
    pub fn audit(&self) -> &Audit {
        &self.audit
    }

    /// The hand-offs open now (`browser_handoff`): a transport with a
    /// listener serves their pages ([`crate::handoff::Handoffs::serve_pages`]).
    pub fn handoffs(&self) -> &Arc<crate::handoff::Handoffs> {
        &self.handoffs
    }

    /// Runs one call in the default session ([`Session::call`]: checked,
    /// audited and redacted like a transport's).
    pub async fn call(&self, call: impl Into<ToolCall>) -> Result<ActionOutput, ActionError> {
        self.session.call(call.into()).await
    }

    /// The `backendDOMNodeId` of the element a ref names in the active tab
    /// (library use: hand the node to other CDP tooling).
    pub async fn ref_node(&self, reference: &str, budget: &Budget) -> Result<i64, ActionError> {
        self.session.ref_node(reference, budget).await
    }

    /// What the engine holds now that grows with sessions and calls (the
    /// shared browser's targets, contexts, doors and routes; the audit
    /// ring): see [`crate::holdings`].
    pub fn holdings(&self) -> crate::holdings::Holdings {
        let mut held = self.slot.live().map(|b| b.holdings()).unwrap_or_default();
        (held.audit_records, held.audit_bytes) = self.audit.held();
        held
    }

    /// Process id of the running browser's launch guard (tests, diagnostics).
    pub async fn current_browser_guard_pid(&self) -> Option<u32> {
        self.slot.guard_pid()
    }

    /// The browser endpoints new sessions are placed on, with their health
    /// and load: `[browser] endpoints`, else the one browser (up when its
    /// connection is).
    pub fn browser_endpoints(&self) -> Vec<EndpointStatus> {
        match &self.fleet {
            Some(fleet) => fleet.status(),
            None => vec![EndpointStatus {
                url: match (self.config.browser.source, self.config.browser.cdp_url.as_str()) {
                    (Source::AutoConnect, _) => "auto-connect (your running Chrome)".into(),
                    (Source::Extension, _) => "the paired Chrome (extension)".into(),
                    (_, "") => "launched".into(),
                    (_, url) => crate::masked::url(url),
                },
                up: !self.slot.is_dead(),
                sessions: 0,
            }],
        }
    }

    /// The Selenium Grid's gauges and its nodes' sessions (`[browser]
    /// grid`; `/status` asked within `wait`).
    pub async fn grid_status(&self, wait: std::time::Duration) -> Option<GridStatus> {
        match &self.grid {
            Some(grid) => Some(grid.status(wait).await),
            None => None,
        }
    }

    /// Ends the default session and closes the browser (a launched one
    /// exits and its temporary profile is removed). Actions still running
    /// on it fail with `browser_disconnected`.
    pub async fn shutdown(&self) {
        // Its trace ends in the close (its last step, its end line, its HAR).
        self.session.close(&Budget::with_timeout(SHUTDOWN_BUDGET)).await;
        self.slot.shutdown().await;
        if let Some(fleet) = &self.fleet {
            fleet.shutdown().await;
        }
        if let Some(grid) = &self.grid {
            grid.shutdown().await;
        }
    }
}

/// How long ending the default session may take at shutdown.
const SHUTDOWN_BUDGET: std::time::Duration = std::time::Duration::from_secs(5);
