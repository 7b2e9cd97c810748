//! The browser every session of this process shares: started on first use,
//! reconnected when its socket dropped, relaunched when it died.
//!
//! Starting and recovering are single-flight ([`SingleFlight`]): the first
//! caller starts the work as a task of its own, later callers join it, and
//! each waits only within its own budget and cancellation. No lock is held
//! across a launch, a reconnect or any CDP round trip.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::config::Config;
use crate::egress::Egress;
use crate::metrics::Metrics;
use crate::policy::Policy;
use crate::single_flight::SingleFlight;
use crate::tab::DialogRules;
use crate::{ActionError, Budget};

use super::extension::Relay;
use super::Browser;

/// How long a launch (or attach) may take, whoever waits for it.
const START_BUDGET: Duration = Duration::from_secs(30);
/// Kept back from the first caller's budget for the start (see `get`).
const START_MARGIN: Duration = Duration::from_millis(100);
/// How long a reconnect to a live browser keeps retrying.
const RECONNECT_BUDGET: Duration = Duration::from_secs(10);

pub struct BrowserSlot {
    config: Arc<Config>,
    /// The browser, once started; replaced when it has died.
    current: Mutex<Option<Arc<Browser>>>,
    /// Starting, reconnecting or relaunching, under way.
    starting: SingleFlight<Arc<Browser>>,
    /// Process-wide counters (restarts, reconnects).
    metrics: Arc<Metrics>,
    /// The URL rules, compiled once; every tab's request stage judges by them.
    policy: Arc<Policy>,
    /// The engine's egress gate, which every browser started here uses.
    egress: Arc<Egress>,
    /// `[browser] source = "extension"`: the browser is the paired Chrome,
    /// reached through this relay instead of launched.
    relay: Option<Arc<Relay>>,
}

impl BrowserSlot {
    pub fn new(config: Arc<Config>, metrics: Arc<Metrics>, egress: Arc<Egress>) -> BrowserSlot {
        let policy = Policy::from_config(&config.policy).unwrap_or_else(|e| {
            tracing::error!("{e}: every URL is refused");
            Policy::refusing_all(&e)
        });
        let relay = (config.browser.source == "extension").then(|| Arc::new(Relay::new()));
        BrowserSlot {
            relay,
            policy: Arc::new(policy),
            config,
            current: Mutex::new(None),
            starting: SingleFlight::default(),
            metrics,
            egress,
        }
    }

    /// The extension relay, when sessions run in the paired Chrome.
    pub fn relay(&self) -> Option<&Arc<Relay>> {
        self.relay.as_ref()
    }

    /// The live browser, starting, reconnecting or relaunching it first if
    /// need be. Sessions compare the browser they get with the one they had
    /// to learn that it was replaced.
    pub async fn get(self: &Arc<Self>, budget: &Budget) -> Result<Arc<Browser>, ActionError> {
        if let Some(browser) = self.live() {
            return Ok(browser);
        }
        let this = self.clone();
        // The start runs as its own task with the first caller's time (less
        // a margin, so that when that runs out the caller hears which step
        // of the start was slow rather than only that the start was).
        let time = budget.remaining().saturating_sub(START_MARGIN).min(START_BUDGET);
        self.starting
            .run("starting the browser", budget, move || async move {
                this.recover(time).await
            })
            .await
    }

    /// The URL rules.
    pub fn policy(&self) -> &Arc<Policy> {
        &self.policy
    }

    /// The current browser when its connection is up.
    pub fn live(&self) -> Option<Arc<Browser>> {
        self.current.lock().unwrap().clone().filter(|b| b.is_alive())
    }

    /// A browser was started and its connection is gone (a reconnect has
    /// not been tried yet).
    pub fn is_dead(&self) -> bool {
        self.current
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(|b| !b.is_alive())
    }

    /// Runs as the single flight: reconnect to the browser we had, or
    /// start one.
    async fn recover(&self, time: Duration) -> Result<Arc<Browser>, ActionError> {
        if let Some(browser) = self.live() {
            return Ok(browser);
        }
        let old = self.current.lock().unwrap().clone();
        if let Some(old) = old {
            tracing::warn!("the browser connection dropped; reconnecting");
            match old.reconnect(&Budget::with_timeout(RECONNECT_BUDGET)).await {
                Ok(()) => {
                    self.metrics.reconnected();
                    return Ok(old);
                }
                // Attached to someone else's browser: nothing to relaunch.
                Err(e) if !self.config.browser.cdp_url.is_empty() || self.relay.is_some() => return Err(e),
                Err(e) => tracing::warn!("{e}; starting a new browser"),
            }
            self.metrics.browser_restarted();
            old.shutdown().await;
        }
        let rules = dialog_rules(&self.config);
        let bridge = self.config.dialogs.bridge == "on";
        let budget = Budget::with_timeout(time);
        if let Some(relay) = &self.relay {
            let transport: Arc<dyn cdp::Transport> = relay.clone();
            let attached = Browser::attach(
                transport,
                rules,
                bridge,
                self.policy.clone(),
                self.egress.clone(),
                &budget,
            );
            let browser = Arc::new(attached.await?);
            *self.current.lock().unwrap() = Some(browser.clone());
            return Ok(browser);
        }
        let browser = Arc::new(
            Browser::start(
                &self.config.browser,
                rules,
                bridge,
                self.policy.clone(),
                self.egress.clone(),
                &budget,
            )
            .await?,
        );
        *self.current.lock().unwrap() = Some(browser.clone());
        Ok(browser)
    }

    /// Closes the browser, waiting for a start under way to finish first so
    /// it cannot leave a browser behind.
    pub async fn shutdown(&self) {
        if let Some(starting) = self.starting.in_flight() {
            let _ = starting.await;
        }
        let browser = self.current.lock().unwrap().take();
        if let Some(browser) = browser {
            browser.shutdown().await;
        }
    }

    /// Process id of the running browser's launch guard.
    pub fn guard_pid(&self) -> Option<u32> {
        self.current.lock().unwrap().as_ref().and_then(|b| b.guard_pid())
    }
}

pub fn dialog_rules(config: &Config) -> DialogRules {
    DialogRules {
        policy: config.dialogs.policy,
        timeout: Duration::from_secs(config.dialogs.timeout_s),
    }
}
