//! The engine a transport talks to: one browser session, started lazily on
//! the first call and restarted on the next call after it died.
//!
//! Owns the browser handle. The lock around it is held only to start or
//! replace the browser (single-flight), never while an action runs, so a
//! long action does not block others.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::action::Action;
use crate::actions;
use crate::browser::Browser;
use crate::{ActionError, ActionOutput, Budget, Config};

pub struct Engine {
    config: Config,
    /// The browser, once started. Replaced when it has died.
    browser: Mutex<Option<Arc<Browser>>>,
}

impl Engine {
    pub fn new(config: Config) -> Engine {
        Engine {
            config,
            browser: Mutex::new(None),
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// A budget for one call of `action`: its `timeout_ms` or the configured
    /// default, cancelled by `cancel`.
    pub fn budget_for(&self, action: &Action, cancel: CancellationToken) -> Budget {
        let ms = action.timeout_ms().unwrap_or(self.config.limits.timeout_ms);
        Budget::new(Duration::from_millis(ms), cancel)
    }

    /// Runs one action to completion, failure, timeout or cancellation.
    pub async fn perform(
        &self,
        action: &Action,
        budget: &Budget,
    ) -> Result<ActionOutput, ActionError> {
        let (browser, restarted) = self.browser(budget).await?;
        let tab = browser.active_tab();
        let result = match action {
            Action::Navigate(args) => actions::navigate::run(&tab, args, budget).await,
            Action::Snapshot(args) => {
                let cap = args
                    .max_elements
                    .unwrap_or(self.config.limits.snapshot_max_elements);
                crate::snapshot::run(&tab, args, cap, budget).await
            }
            Action::Click(args) => actions::click::run(&tab, args, budget).await,
            Action::Type(args) => actions::type_text::run(&tab, args, budget).await,
            Action::Screenshot(args) => actions::screenshot::run(&tab, args, budget).await,
        };
        result.map(|mut output| {
            if restarted {
                output.text = format!(
                    "Note: the browser had closed or crashed, so cdpilot started a new one; earlier pages and refs are gone.\n{}",
                    output.text
                );
                output.data["browser_restarted"] = true.into();
            }
            output
        })
    }

    /// The live browser, starting one if there is none or the last one
    /// died. The flag says a dead browser was replaced.
    async fn browser(&self, budget: &Budget) -> Result<(Arc<Browser>, bool), ActionError> {
        let mut slot = self.browser.lock().await;
        let mut restarted = false;
        if let Some(browser) = slot.as_ref() {
            if browser.is_alive() {
                return Ok((browser.clone(), false));
            }
            tracing::warn!("the browser connection is gone; starting a new browser");
            restarted = true;
            if let Some(dead) = slot.take() {
                dead.shutdown().await;
            }
        }
        let browser = Arc::new(Browser::start(&self.config.browser, budget).await?);
        *slot = Some(browser.clone());
        Ok((browser, restarted))
    }

    /// The `backendDOMNodeId` of the element a ref names in the active tab
    /// (library use: hand the node to other CDP tooling).
    pub async fn ref_node(&self, reference: &str, budget: &Budget) -> Result<i64, ActionError> {
        crate::validate::reference(reference)?;
        let (browser, _) = self.browser(budget).await?;
        let tab = browser.active_tab();
        let element = actions::element::by_ref(&tab, reference, budget).await?;
        element.backend_node_id(&tab, budget).await
    }

    /// The running browser, if any (for tests and diagnostics).
    pub async fn current_browser_guard_pid(&self) -> Option<u32> {
        self.browser
            .lock()
            .await
            .as_ref()
            .and_then(|b| b.guard_pid())
    }

    /// Closes the browser (a launched one exits and its temporary profile is
    /// removed). Actions still running on it fail with `browser_disconnected`.
    pub async fn shutdown(&self) {
        let browser = self.browser.lock().await.take();
        if let Some(browser) = browser {
            browser.shutdown().await;
        }
    }
}
