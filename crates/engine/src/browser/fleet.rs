//! A fleet of browser endpoints (`[browser] endpoints`): each new session
//! is placed on the endpoint with the fewest sessions; an endpoint that
//! fails is taken out, its sessions are told `session_ended`
//! (`browser_lost`), and it is retried with backoff until it answers again.
//!
//! Owns each endpoint's [`BrowserSlot`] (attached, never launched), its
//! load (sessions placed since it last came up) and whether it is up.
//! Placing is decided under one fleet-wide lock held for microseconds
//! (look at every endpoint's load, then add to the chosen one), so sessions
//! opening at once still spread evenly; each endpoint's state has a lock
//! of its own, always taken after that one. It owns
//! no session: a [`Placement`] is the session's, and dropping it gives the
//! endpoint its load back. The watcher and retry tasks end at
//! [`Fleet::shutdown`].

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::slot::BrowserSlot;
use super::Browser;
use crate::config::Config;
use crate::egress::Egress;
use crate::error::Failure;
use crate::events::{EndReason, Lifecycle};
use crate::metrics::Metrics;
use crate::policy::Policy;
use crate::{ActionError, Budget, ErrorCode};

/// The first wait before an endpoint that failed is tried again; doubled
/// after each failed try, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How long one retry of a failed endpoint may take to connect.
const RETRY_BUDGET: Duration = Duration::from_secs(10);

/// The endpoints sessions are spread over.
pub struct Fleet {
    endpoints: Vec<Arc<Endpoint>>,
    /// Held while a session is placed: two placements never both see the
    /// same least-loaded endpoint.
    placing: Mutex<()>,
    /// Cancelled at shutdown: connections closing then are not failures,
    /// and retries stop.
    stopping: CancellationToken,
}

/// One browser endpoint of the fleet.
pub struct Endpoint {
    /// The address as configured, masked (`crate::masked`: logs,
    /// `/metrics`, messages never carry its credentials).
    url: String,
    /// The browser at that address, attached on first use.
    slot: Arc<BrowserSlot>,
    /// Load and health, decided under this lock (microseconds).
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Sessions placed here since it last came up.
    load: usize,
    /// Bumped each time the endpoint is taken out: placements made before
    /// no longer count toward its load.
    epoch: u64,
    /// Taken out after a failure; the retry task brings it back.
    down: bool,
    /// The wait before the next retry.
    backoff: Duration,
    /// The sessions placed here, told `browser_lost` if it fails.
    sessions: Vec<(u64, Arc<Lifecycle>)>,
    /// Numbers the placements (to remove the right one).
    placed: u64,
    /// The browser whose connection a watcher follows.
    watched: Weak<Browser>,
}

/// What one endpoint looks like now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointStatus {
    /// The address as configured.
    pub url: String,
    /// Not taken out (it may not have been tried yet).
    pub up: bool,
    /// Sessions placed on it (a fleet's endpoints; 0 for the one browser,
    /// which every session shares).
    pub sessions: usize,
}

/// A session's place on one endpoint. Dropping it gives the load back.
pub struct Placement {
    endpoint: Arc<Endpoint>,
    epoch: u64,
    number: u64,
}

impl Drop for Placement {
    fn drop(&mut self) {
        let mut state = self.endpoint.state.lock().unwrap();
        state.sessions.retain(|(n, _)| *n != self.number);
        if state.epoch == self.epoch {
            state.load = state.load.saturating_sub(1);
        }
    }
}

impl Placement {
    /// Still on an endpoint that has not failed since it was placed.
    fn valid(&self) -> bool {
        let state = self.endpoint.state.lock().unwrap();
        !state.down && state.epoch == self.epoch
    }
}

impl Fleet {
    /// A fleet over `config.browser.endpoints`; connects to nothing yet.
    pub fn new(config: &Config, metrics: Arc<Metrics>, egress: Arc<Egress>) -> Arc<Fleet> {
        let endpoints = config
            .browser
            .endpoints
            .iter()
            .map(|url| {
                let mut config = config.clone();
                config.browser.cdp_url = url.clone();
                config.browser.endpoints.clear();
                Arc::new(Endpoint {
                    url: crate::masked::url(url),
                    slot: Arc::new(BrowserSlot::new(
                        Arc::new(config),
                        metrics.clone(),
                        egress.clone(),
                    )),
                    state: Mutex::new(State {
                        backoff: FIRST_BACKOFF,
                        ..State::default()
                    }),
                })
            })
            .collect();
        Arc::new(Fleet {
            endpoints,
            placing: Mutex::new(()),
            stopping: CancellationToken::new(),
        })
    }

    /// The URL rules (the same on every endpoint).
    pub fn policy(&self) -> &Arc<Policy> {
        self.endpoints[0].slot.policy()
    }

    /// Each endpoint's address, health and load.
    pub fn status(&self) -> Vec<EndpointStatus> {
        self.endpoints
            .iter()
            .map(|e| {
                let state = e.state.lock().unwrap();
                EndpointStatus {
                    url: e.url.clone(),
                    up: !state.down,
                    sessions: state.load,
                }
            })
            .collect()
    }

    /// The browser for a session: on its placement if that endpoint is
    /// still up, else on the least-loaded endpoint that is (placing it
    /// there). An endpoint that cannot be reached is taken out and the
    /// next one tried.
    pub async fn browser(
        self: &Arc<Self>,
        placement: &Mutex<Option<Placement>>,
        lifecycle: &Arc<Lifecycle>,
        budget: &Budget,
    ) -> Result<Arc<Browser>, ActionError> {
        for _ in 0..=self.endpoints.len() {
            let current = {
                let mut placed = placement.lock().unwrap();
                if placed.as_ref().is_some_and(|p| !p.valid()) {
                    *placed = None;
                }
                match &*placed {
                    Some(p) => p.endpoint.clone(),
                    None => {
                        let new = self.place(lifecycle)?;
                        let endpoint = new.endpoint.clone();
                        *placed = Some(new);
                        endpoint
                    }
                }
            };
            match current.connect(budget).await {
                Ok(browser) => {
                    self.watch(&current, &browser);
                    return Ok(browser);
                }
                // The call ran out of time (the start gets the caller's
                // time less a margin): not the endpoint's fault.
                Err(e) if budget.is_canceled() || out_of_time(&e, budget) => return Err(e),
                Err(e) => {
                    tracing::warn!(endpoint = current.url, "browser endpoint failed: {e}");
                    self.lost(&current);
                }
            }
        }
        Err(self.all_down())
    }

    /// Places a session on the least-loaded endpoint that is up (the first
    /// of equals).
    fn place(&self, lifecycle: &Arc<Lifecycle>) -> Result<Placement, ActionError> {
        let _placing = self.placing.lock().unwrap();
        // An endpoint may be taken out between the look and the placement
        // (`lost` does not wait for this lock): look again.
        loop {
            let endpoint = self
                .endpoints
                .iter()
                .filter_map(|e| {
                    let state = e.state.lock().unwrap();
                    (!state.down).then_some((state.load, e))
                })
                .min_by_key(|(load, _)| *load)
                .map(|(_, e)| e.clone())
                .ok_or_else(|| self.all_down())?;
            let mut state = endpoint.state.lock().unwrap();
            if state.down {
                continue;
            }
            state.load += 1;
            state.placed += 1;
            let number = state.placed;
            state.sessions.push((number, lifecycle.clone()));
            let epoch = state.epoch;
            drop(state);
            tracing::info!(endpoint = endpoint.url, "session placed");
            return Ok(Placement {
                endpoint,
                epoch,
                number,
            });
        }
    }

    fn all_down(&self) -> ActionError {
        ActionError::new(
            ErrorCode::BrowserDisconnected,
            "every browser endpoint is down ([browser] endpoints); they are retried with backoff",
            "Wait a few seconds and retry; if it persists, check that the endpoints are running and reachable from cdpilot.",
        )
    }

    /// Follows `browser`'s connection: when it closes, the endpoint is
    /// taken out.
    fn watch(self: &Arc<Self>, endpoint: &Arc<Endpoint>, browser: &Arc<Browser>) {
        {
            let mut state = endpoint.state.lock().unwrap();
            if std::ptr::eq(state.watched.as_ptr(), Arc::as_ptr(browser)) {
                return;
            }
            state.watched = Arc::downgrade(browser);
        }
        let connection = browser.connection();
        let (fleet, endpoint) = (Arc::downgrade(self), endpoint.clone());
        tokio::spawn(async move {
            connection.closed().await;
            if let Some(fleet) = fleet.upgrade() {
                tracing::warn!(
                    endpoint = endpoint.url,
                    "the connection to a browser endpoint closed"
                );
                fleet.lost(&endpoint);
            }
        });
    }

    /// Takes `endpoint` out: its sessions hear `browser_lost`, new ones go
    /// elsewhere, and a task retries it with backoff.
    fn lost(self: &Arc<Self>, endpoint: &Arc<Endpoint>) {
        if self.stopping.is_cancelled() {
            return;
        }
        let sessions = {
            let mut state = endpoint.state.lock().unwrap();
            if state.down {
                return;
            }
            state.down = true;
            state.epoch += 1;
            state.load = 0;
            state.watched = Weak::new();
            std::mem::take(&mut state.sessions)
        };
        for (_, lifecycle) in sessions {
            lifecycle.ended(EndReason::BrowserLost);
        }
        let (fleet, endpoint) = (self.clone(), endpoint.clone());
        tokio::spawn(async move { fleet.retry(&endpoint).await });
    }

    /// Tries a taken-out endpoint again, waiting longer after each
    /// failure, until it answers (then it is back) or the fleet stops.
    async fn retry(self: &Arc<Self>, endpoint: &Arc<Endpoint>) {
        // The dead browser's tabs stop; the next try attaches afresh (a
        // restarted browser has a new address behind the same endpoint).
        endpoint.slot.shutdown().await;
        loop {
            let wait = endpoint.state.lock().unwrap().backoff;
            tokio::select! {
                _ = tokio::time::sleep_until(Instant::now() + wait) => {}
                _ = self.stopping.cancelled() => return,
            }
            match endpoint.slot.get(&Budget::with_timeout(RETRY_BUDGET)).await {
                Ok(browser) => {
                    {
                        let mut state = endpoint.state.lock().unwrap();
                        state.down = false;
                        state.backoff = FIRST_BACKOFF;
                    }
                    tracing::info!(endpoint = endpoint.url, "browser endpoint is back");
                    self.watch(endpoint, &browser);
                    return;
                }
                Err(e) => {
                    endpoint.slot.shutdown().await;
                    let mut state = endpoint.state.lock().unwrap();
                    state.backoff = (state.backoff * 2).min(MAX_BACKOFF);
                    tracing::info!(
                        endpoint = endpoint.url,
                        "browser endpoint still down ({e}); next try in {}s",
                        state.backoff.as_secs()
                    );
                }
            }
        }
    }

    /// Stops the retries and disconnects from every endpoint (attached
    /// browsers are not closed: they are not ours).
    pub async fn shutdown(&self) {
        self.stopping.cancel();
        for endpoint in &self.endpoints {
            endpoint.slot.shutdown().await;
        }
    }
}

/// A timeout that came with the caller's budget nearly spent.
fn out_of_time(error: &ActionError, budget: &Budget) -> bool {
    matches!(error.failure, Failure::Timeout { .. }) && budget.remaining() < Duration::from_secs(1)
}

impl Endpoint {
    /// The endpoint's browser; a connection that dropped is a failure at
    /// once (no reconnect: the session moves to another endpoint).
    async fn connect(&self, budget: &Budget) -> Result<Arc<Browser>, ActionError> {
        if self.slot.is_dead() {
            return Err(ActionError::new(
                ErrorCode::BrowserDisconnected,
                format!("the connection to browser endpoint {} dropped", self.url),
                "Retry: the session is placed on another endpoint.",
            ));
        }
        self.slot.get(budget).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Events;

    fn fleet_of(urls: &[&str]) -> Arc<Fleet> {
        let mut config = Config::default();
        config.browser.endpoints = urls.iter().map(|u| u.to_string()).collect();
        let egress = Arc::new(Egress::start(&config).unwrap());
        Fleet::new(&config, Arc::default(), egress)
    }

    fn lifecycle() -> Arc<Lifecycle> {
        Arc::new(Lifecycle::new(Events::default(), Arc::default()))
    }

    fn loads(fleet: &Fleet) -> Vec<(bool, usize)> {
        fleet.status().iter().map(|e| (e.up, e.sessions)).collect()
    }

    #[tokio::test]
    async fn sessions_go_least_loaded_first_and_leave_an_endpoint_that_failed() {
        // Nothing listens on port 9 of loopback: the retry task never succeeds.
        let fleet = fleet_of(&["http://127.0.0.1:9", "http://127.0.0.1:9"]);
        let lives: Vec<_> = (0..4).map(|_| lifecycle()).collect();
        let mut placed: Vec<_> = lives.iter().map(|l| fleet.place(l).unwrap()).collect();
        assert_eq!(loads(&fleet), [(true, 2), (true, 2)]);
        // Leaving frees a place, which the next session takes.
        placed.remove(0);
        assert_eq!(loads(&fleet), [(true, 1), (true, 2)]);
        placed.push(fleet.place(&lifecycle()).unwrap());
        assert_eq!(loads(&fleet), [(true, 2), (true, 2)]);

        // Sessions 0 and 2 went to the first endpoint (0 has left since).
        let mut heard = lives[2].events().subscribe();
        let first = fleet.endpoints[0].clone();
        fleet.lost(&first);
        assert_eq!(loads(&fleet), [(false, 0), (true, 2)]);
        let ended = heard.recv().await.unwrap();
        assert_eq!(ended.data()["reason"], "browser_lost");
        // Its placements are stale: dropping them does not touch the load
        // it will have when it comes back.
        assert!(placed.iter().filter(|p| !p.valid()).count() == 2);
        placed.retain(|p| p.valid());
        assert_eq!(loads(&fleet), [(false, 0), (true, 2)]);
        placed.push(fleet.place(&lifecycle()).unwrap());
        assert_eq!(loads(&fleet), [(false, 0), (true, 3)]);

        fleet.lost(&fleet.endpoints[1].clone());
        let refused = fleet.place(&lifecycle()).err().expect("every endpoint is down");
        assert_eq!(refused.code, ErrorCode::BrowserDisconnected);
        fleet.shutdown().await;
    }
}
