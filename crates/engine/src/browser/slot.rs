//! The browser every session of this process shares: started on first use,
//! reconnected when its socket dropped, relaunched when it died.
//!
//! Starting and recovering are single-flight ([`SingleFlight`]): the first
//! caller starts the work as a task of its own, later callers join it, and
//! each waits only within its own budget and cancellation. No lock is held
//! across a launch, a reconnect or any CDP round trip.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::config::{Bridge, Config, Source};
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
    /// Close a browser launched here once no session has held it for this
    /// long (`[serve] browser_idle_restart_s`, set by serve); `None`: never.
    idle_close: Mutex<Option<Duration>>,
    /// The task waiting for the current browser to be idle that long.
    idle_watch: Mutex<Option<tokio::task::AbortHandle>>,
}

impl BrowserSlot {
    pub fn new(config: Arc<Config>, metrics: Arc<Metrics>, egress: Arc<Egress>) -> BrowserSlot {
        let mut policy = Policy::from_config(&config.policy).unwrap_or_else(|e| {
            tracing::error!("{e}: every URL is refused");
            Policy::refusing_all(&e)
        });
        policy.page_tools = config.tools.page_tools.on();
        let relay = (config.browser.source == Source::Extension).then(|| Arc::new(Relay::new()));
        BrowserSlot {
            relay,
            policy: Arc::new(policy),
            config,
            current: Mutex::new(None),
            starting: SingleFlight::default(),
            metrics,
            egress,
            idle_close: Mutex::new(None),
            idle_watch: Mutex::new(None),
        }
    }

    /// Closes each browser launched here (never one attached to) once no
    /// session has held it for `idle` (`Duration::ZERO`: never); the next
    /// session launches a new one. Applies to browsers launched after.
    pub fn close_when_idle(&self, idle: Duration) {
        *self.idle_close.lock().unwrap() = (!idle.is_zero()).then_some(idle);
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

    /// The current browser when its connection is up and it is not being
    /// closed for idleness.
    pub fn live(&self) -> Option<Arc<Browser>> {
        self.current
            .lock()
            .unwrap()
            .clone()
            .filter(|b| b.is_alive() && !b.tenants().is_retired())
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
    async fn recover(self: &Arc<Self>, time: Duration) -> Result<Arc<Browser>, ActionError> {
        if let Some(browser) = self.live() {
            return Ok(browser);
        }
        // Retired for idleness: whoever takes it out of the slot closes it
        // (the idle watcher, or this start if it comes first), and the
        // session asking now does not wait for that.
        let retired = {
            let mut current = self.current.lock().unwrap();
            match current.as_ref().is_some_and(|b| b.tenants().is_retired()) {
                true => current.take(),
                false => None,
            }
        };
        if let Some(retired) = retired {
            self.metrics.browser_idle_closed();
            tokio::spawn(async move { retired.shutdown().await });
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
        let bridge = self.config.dialogs.bridge == Bridge::On;
        let budget = Budget::with_timeout(time);
        if let Some(relay) = &self.relay {
            let transport: Arc<dyn cdp::Transport> = relay.clone();
            let attached = Browser::attach(
                transport,
                rules,
                bridge,
                self.policy.clone(),
                self.egress.clone(),
                // The user's Chrome: its WebRTC policy is not ours to set.
                false,
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
        self.watch_idle(&browser);
        Ok(browser)
    }

    /// With `close_when_idle` set, and for a browser launched here: waits
    /// until no session has held it for that long, then closes it.
    fn watch_idle(self: &Arc<Self>, browser: &Arc<Browser>) {
        let idle = *self.idle_close.lock().unwrap();
        let Some(idle) = idle.filter(|_| browser.launched()) else {
            return;
        };
        let (slot, tenants) = (Arc::downgrade(self), browser.tenants().clone());
        let watched = Arc::downgrade(browser);
        let task = tokio::spawn(async move {
            tenants.retire_when_idle(idle).await;
            let (Some(slot), Some(browser)) = (slot.upgrade(), watched.upgrade()) else {
                return;
            };
            slot.close_retired(&browser, idle).await;
        });
        let previous = self.idle_watch.lock().unwrap().replace(task.abort_handle());
        if let Some(previous) = previous {
            previous.abort();
        }
    }

    /// Closes `browser`, retired for idleness, if it is still the slot's
    /// (a session's start may have taken it out and closed it first).
    async fn close_retired(&self, browser: &Arc<Browser>, idle: Duration) {
        let taken = {
            let mut current = self.current.lock().unwrap();
            match current.as_ref().is_some_and(|b| Arc::ptr_eq(b, browser)) {
                true => current.take(),
                false => None,
            }
        };
        if let Some(browser) = taken {
            tracing::info!(
                "no session for {} s: closing the browser (the next session launches a new one)",
                idle.as_secs()
            );
            self.metrics.browser_idle_closed();
            browser.shutdown().await;
        }
    }

    /// Closes the browser, waiting for a start under way to finish first so
    /// it cannot leave a browser behind.
    pub async fn shutdown(&self) {
        if let Some(watch) = self.idle_watch.lock().unwrap().take() {
            watch.abort();
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn slot() -> Arc<BrowserSlot> {
        let mut config = Config::default();
        config.browser.executable = testkit::chromium::executable().display().to_string();
        config.browser.args = testkit::chromium::TEST_FLAGS
            .iter()
            .map(|s| s.to_string())
            .collect();
        let config = Arc::new(config);
        let egress = Arc::new(Egress::start(&config).expect("the egress gate listens"));
        Arc::new(BrowserSlot::new(config, Arc::default(), egress))
    }

    /// The race an idle close must not lose: a session got the browser
    /// from the slot, and before it took its tenancy the browser was
    /// retired (nobody held it for the idle period). It gets no tenancy
    /// there, asks the slot again, and gets a new browser; the retired one
    /// exits.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_session_that_got_the_browser_as_it_was_retired_gets_the_next_one() {
        let slot = slot();
        // A period the test never reaches: the retirement below is the race.
        slot.close_when_idle(Duration::from_secs(3600));
        let budget = Budget::with_timeout(Duration::from_secs(30));
        let first = slot.get(&budget).await.expect("a browser");
        // An earlier session came and went.
        drop(first.tenants().enter().expect("a tenancy"));
        // The next one got the browser from the slot; then it was retired.
        let first = slot.get(&budget).await.expect("the same browser");
        let guard = first.guard_pid().expect("launched here");
        assert!(first.tenants().retire_if_idle(Duration::ZERO), "nobody held it");
        assert!(first.tenants().enter().is_none(), "retired: no tenancy");
        let second = slot.get(&budget).await.expect("the next browser");
        assert!(!Arc::ptr_eq(&first, &second), "a new browser");
        assert!(second.tenants().enter().is_some());
        assert_ne!(second.guard_pid(), Some(guard));
        assert!(
            testkit::processes::wait_until(Duration::from_secs(30), || testkit::processes::exited(guard))
                .await,
            "the retired browser's launch guard exited"
        );
        slot.shutdown().await;
    }
}
