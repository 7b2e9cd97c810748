//! The engine a process embeds: the configuration, the one browser its
//! sessions share, and the default session (the only one over stdio).
//!
//! Owns the [`BrowserSlot`] and the default [`Session`]. More sessions,
//! each with a browser context of its own, come from
//! [`Engine::new_session`].

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::action::Action;
use crate::browser::slot::BrowserSlot;
use crate::metrics::Metrics;
use crate::session::Session;
use crate::{dispatch, ActionError, ActionOutput, Budget, Config};

/// The engine a process embeds: the configuration, the one browser all
/// its sessions share (launched on first use), and the default session.
pub struct Engine {
    config: Arc<Config>,
    /// The browser all sessions share.
    slot: Arc<BrowserSlot>,
    /// The default session's metrics; browser restarts and reconnects are
    /// counted here too.
    metrics: Arc<Metrics>,
    /// The default session: the browser's default context (a
    /// `--user-data-dir` profile is its profile).
    session: Session,
}

impl Engine {
    /// An engine for `config`. Starts nothing: the browser is launched (or
    /// attached) by the first action that needs it.
    pub fn new(config: Config) -> Engine {
        let config = Arc::new(config);
        let metrics = Arc::new(Metrics::default());
        let slot = Arc::new(BrowserSlot::new(config.clone(), metrics.clone()));
        let session = Session::new(config.clone(), slot.clone(), false, metrics.clone());
        Engine {
            config,
            slot,
            metrics,
            session,
        }
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The default session's metrics (browser restarts and reconnects too).
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
        Session::new(
            self.config.clone(),
            self.slot.clone(),
            true,
            Arc::new(Metrics::default()),
        )
    }

    /// A budget for one call of `action`: its `timeout_ms` or the configured
    /// default, cancelled by `cancel`.
    pub fn budget_for(&self, action: &Action, cancel: CancellationToken) -> Budget {
        dispatch::budget_for(&self.config, action, cancel)
    }

    /// Runs one action in the default session.
    pub async fn perform(&self, action: &Action, budget: &Budget) -> Result<ActionOutput, ActionError> {
        self.session.perform(action, budget).await
    }

    /// The `backendDOMNodeId` of the element a ref names in the active tab
    /// (library use: hand the node to other CDP tooling).
    pub async fn ref_node(&self, reference: &str, budget: &Budget) -> Result<i64, ActionError> {
        self.session.ref_node(reference, budget).await
    }

    /// Process id of the running browser's launch guard (tests, diagnostics).
    pub async fn current_browser_guard_pid(&self) -> Option<u32> {
        self.slot.guard_pid()
    }

    /// Ends the default session and closes the browser (a launched one
    /// exits and its temporary profile is removed). Actions still running
    /// on it fail with `browser_disconnected`.
    pub async fn shutdown(&self) {
        self.session.close(&Budget::with_timeout(SHUTDOWN_BUDGET)).await;
        self.slot.shutdown().await;
    }
}

/// How long ending the default session may take at shutdown.
const SHUTDOWN_BUDGET: std::time::Duration = std::time::Duration::from_secs(5);
