//! The engine a transport talks to: one browser session, started lazily on
//! the first call, reconnected when its socket dropped, relaunched when it
//! died; every action runs under the dialog rules (`supervised`), as one
//! tracing span, counted in the metrics.
//!
//! Owns the browser handle. The lock around it is held only to start,
//! reconnect or replace the browser (single-flight), never while an action
//! runs, so a long action does not block others.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::action::Action;
use crate::actions;
use crate::browser::Browser;
use crate::dialogs;
use crate::metrics::Metrics;
use crate::tab::{DialogPolicy, DialogRules, Tab};
use crate::{tools, ActionError, ActionOutput, Budget, Config};
use tracing::Instrument;

pub struct Engine {
    config: Config,
    /// What the engine did, for `cdpilot://metrics`.
    metrics: Metrics,
    /// The browser, once started. Replaced when it has died.
    browser: Mutex<Option<Arc<Browser>>>,
}

impl Engine {
    pub fn new(config: Config) -> Engine {
        Engine {
            config,
            metrics: Metrics::default(),
            browser: Mutex::new(None),
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// A budget for one call of `action`: its `timeout_ms` or the configured
    /// default, cancelled by `cancel`.
    pub fn budget_for(&self, action: &Action, cancel: CancellationToken) -> Budget {
        let limits = &self.config.limits;
        let default = match action {
            Action::Evaluate(_) => limits.evaluate_timeout_ms,
            Action::Wait(_) => limits.wait_timeout_ms,
            _ => limits.timeout_ms,
        };
        let ms = action.timeout_ms().unwrap_or(default);
        Budget::new(Duration::from_millis(ms), cancel)
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Runs one action to completion, failure, timeout or cancellation, as
    /// one tracing span, and records it in the metrics.
    pub async fn perform(&self, action: &Action, budget: &Budget) -> Result<ActionOutput, ActionError> {
        let tool = action.tool_name();
        let span = tracing::info_span!("tool", tool);
        let result = self.dispatch(action, budget).instrument(span.clone()).await;
        let elapsed = budget.elapsed();
        let _entered = span.enter();
        match &result {
            Ok(_) => tracing::info!(elapsed_ms = elapsed.as_millis() as u64, "ok"),
            Err(e) => tracing::info!(
                elapsed_ms = elapsed.as_millis() as u64,
                code = e.code.as_str(),
                "{e}"
            ),
        }
        let outcome = result.as_ref().map(|_| ()).map_err(|e| e.code);
        self.metrics.record(tool, elapsed, outcome);
        result
    }

    async fn dispatch(&self, action: &Action, budget: &Budget) -> Result<ActionOutput, ActionError> {
        let tool = action.tool_name();
        if !tools::find(tool).is_some_and(|t| t.enabled(&self.config)) {
            return Err(ActionError::invalid(
                format!("{tool} is turned off in this server's configuration"),
                "Use the other tools.",
            ));
        }
        let (browser, restarted) = self.browser(budget).await?;
        let result = match action {
            Action::Tabs(args) => actions::tabs::run(&browser, args, budget).await,
            other => match browser.tab(other.common().tab.as_deref(), budget).await {
                Ok(tab) => self.supervised(&tab, other, budget).await,
                Err(e) => Err(e),
            },
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

    /// Runs an action in a tab under the dialog rules: while a dialog blocks
    /// the page, actions that need the page get `dialog_pending`; under
    /// must_respond, `dialogs::during` ends an action at the first dialog
    /// that opens (`dialog_opened`) instead of letting it hang on the blocked
    /// page, and adds to a result the dialogs that opened before it returned.
    async fn supervised(
        &self,
        tab: &Tab,
        action: &Action,
        budget: &Budget,
    ) -> Result<ActionOutput, ActionError> {
        let may_run_blocked = tools::find(action.tool_name()).is_some_and(|t| t.runs_during_dialog);
        if !may_run_blocked {
            if let Some(dialog) = tab.dialogs().blocking() {
                // Leaving the page is the way out of a dialog nobody can answer.
                let escape = dialog.orphaned && matches!(action, Action::Navigate(_));
                if !escape {
                    return Err(dialogs::pending_error(&dialog));
                }
            }
        }
        if self.dialog_rules().policy != DialogPolicy::MustRespond {
            // The supervisor answers dialogs at once; the action goes on.
            return self.in_tab(tab, action, budget).await;
        }
        // Boxed: the action's future is large, and moving it by value into
        // another future overflowed the stack of debug builds.
        let run = Box::pin(self.in_tab(tab, action, budget));
        dialogs::during(tab, action, run).await
    }

    /// Runs an action that acts in one tab.
    async fn in_tab(&self, tab: &Tab, action: &Action, budget: &Budget) -> Result<ActionOutput, ActionError> {
        match action {
            Action::Navigate(args) => actions::navigate::run(tab, args, budget).await,
            Action::Snapshot(args) => {
                let cap = args
                    .max_elements
                    .unwrap_or(self.config.limits.snapshot_max_elements);
                crate::snapshot::run(tab, args, cap, budget).await
            }
            Action::Click(args) => actions::click::run(tab, args, budget).await,
            Action::Type(args) => actions::type_text::run(tab, args, budget).await,
            Action::Screenshot(args) => actions::screenshot::run(tab, args, budget).await,
            Action::Wait(args) => actions::wait::run(tab, args, budget).await,
            Action::Evaluate(args) => actions::evaluate::run(tab, args, budget, &self.metrics).await,
            Action::Dialog(args) => actions::dialog::run(tab, args, budget).await,
            Action::Hover(args) => actions::hover::run(tab, args, budget).await,
            Action::PressKey(args) => actions::press_key::run(tab, args, budget).await,
            Action::SelectOption(args) => actions::select_option::run(tab, args, budget).await,
            Action::Console(args) => actions::console::run(tab, args),
            Action::Extract(args) => actions::extract::run(tab, args, budget).await,
            Action::Cdp(args) => actions::cdp::run(tab, args, budget).await,
            Action::Tabs(_) => Err(ActionError::internal("browser_tabs does not act in one tab")),
        }
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
            tracing::warn!("the browser connection dropped; reconnecting");
            match browser.reconnect(budget).await {
                Ok(again) => {
                    self.metrics.reconnected();
                    let again = Arc::new(again);
                    *slot = Some(again.clone());
                    return Ok((again, false));
                }
                // Attached to someone else's browser: nothing to relaunch.
                Err(e) if !self.config.browser.cdp_url.is_empty() => return Err(e),
                Err(e) => tracing::warn!("{e}; starting a new browser"),
            }
            restarted = true;
            self.metrics.browser_restarted();
            if let Some(dead) = slot.take() {
                dead.shutdown().await;
            }
        }
        let browser = Arc::new(
            Browser::start(
                &self.config.browser,
                self.dialog_rules(),
                self.config.dialogs.bridge == "on",
                budget,
            )
            .await?,
        );
        *slot = Some(browser.clone());
        Ok((browser, restarted))
    }

    /// The `backendDOMNodeId` of the element a ref names in the active tab
    /// (library use: hand the node to other CDP tooling).
    pub async fn ref_node(&self, reference: &str, budget: &Budget) -> Result<i64, ActionError> {
        crate::validate::reference(reference)?;
        let (browser, _) = self.browser(budget).await?;
        let tab = browser.tab(None, budget).await?;
        let element = actions::element::by_ref(&tab, reference, budget).await?;
        element.backend_node_id(budget).await
    }

    fn dialog_rules(&self) -> DialogRules {
        let policy = match self.config.dialogs.policy.as_str() {
            "auto_accept" => DialogPolicy::AutoAccept,
            "auto_dismiss" => DialogPolicy::AutoDismiss,
            _ => DialogPolicy::MustRespond,
        };
        DialogRules {
            policy,
            timeout: Duration::from_secs(self.config.dialogs.timeout_s),
        }
    }

    /// The running browser, if any (for tests and diagnostics).
    pub async fn current_browser_guard_pid(&self) -> Option<u32> {
        self.browser.lock().await.as_ref().and_then(|b| b.guard_pid())
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
