//! `[browser] grid`: each cdpilot session runs in a Selenium Grid 4 session
//! of its own, made at its first call (`POST /session`, attached through
//! the answer's `se:cdp`) and deleted when the cdpilot session ends (its
//! client closed it, it was idle, stopped, or the server shut down). The
//! Grid does placement, queueing and node health; cdpilot does not balance
//! over it.
//!
//! Owns the hub's client ([`hub::Hub`]), the new-session capabilities, the
//! ids of the Grid sessions it made and not yet deleted (so shutdown
//! deletes every one), and the DELETEs under way. A session's Grid session
//! is its [`Seat`]'s: the seat holds one [`Lease`], and dropping the lease
//! deletes the Grid session. A lease's watcher task says `browser_lost`
//! when its CDP connection closes (the node died, the Grid ended it) and
//! keeps the node from timing the session out. The session-loss path is
//! the fleet's: the session's lifecycle says `browser_lost`, its next call
//! gets a new Grid session and says `browser_restarted`.

pub mod hub;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::task::{AbortHandle, JoinHandle};
use tokio_util::sync::CancellationToken;

use super::slot::dialog_rules;
use super::Browser;
use crate::config::{BrowserConfig, Config};
use crate::egress::{self, Egress, ProxyPort};
use crate::error::Failure;
use crate::events::{EndReason, Lifecycle};
use crate::policy::Policy;
use crate::single_flight::SingleFlight;
use crate::{ActionError, Budget, ErrorCode};
use hub::{Hub, HubError};

/// How long attaching to a granted session's `se:cdp` may take.
const ATTACH_BUDGET: Duration = Duration::from_secs(30);
/// How often a lease asks the Grid about its session with a WebDriver
/// no-op: it keeps the node from timing the session out (its default
/// `--session-timeout` is 300 s), and it is how a dead node is noticed,
/// since the hub keeps the `se:cdp` connection open when the node behind
/// it dies.
const KEEPALIVE: Duration = Duration::from_secs(5);
/// How long shutdown waits for the hub to answer the DELETEs.
const DELETE_BUDGET: Duration = Duration::from_secs(10);

/// The start-up checks of `[browser] grid*` (called by `startup::check`, at
/// `Engine::start`): a hub address, headers and capabilities cdpilot can
/// use, none of them undoing the egress gate. Each error names the key;
/// the address's password is masked.
pub fn check(config: &BrowserConfig) -> Result<(), String> {
    if config.grid.is_empty() {
        if !config.grid_capabilities.is_empty() || !config.grid_headers.is_empty() {
            return Err("browser.grid_capabilities / browser.grid_headers are set but browser.grid is empty: set the hub's address (http://hub:4444)".into());
        }
        return Ok(());
    }
    Hub::new(&config.grid, &config.grid_headers)?;
    if !config.cdp_url.is_empty() || !config.endpoints.is_empty() {
        return Err("browser.grid and browser.cdp_url / browser.endpoints are both set: use one".into());
    }
    for (key, value) in &config.grid_capabilities {
        if GATED_CAPABILITIES.contains(&key.as_str()) {
            return Err(format!(
                "browser.grid_capabilities.{key:?}: would route the Grid browser around cdpilot's egress gate; \
                 set [browser] upstream_proxy to use a proxy of your own"
            ));
        }
        if key == "goog:chromeOptions" {
            let Value::Object(options) = value else {
                return Err(format!(
                    "browser.grid_capabilities.\"goog:chromeOptions\" = {value}: allowed is a table"
                ));
            };
            check_chrome_options(options)?;
        }
    }
    Ok(())
}

/// Capabilities a user may not set: a W3C `proxy` makes chromedriver pass
/// its own `--proxy-server`.
const GATED_CAPABILITIES: [&str; 1] = ["proxy"];

/// Preferences cdpilot sets in the Grid browser's profile (through
/// chromedriver's `prefs`): WebRTC sends no UDP the proxy does not carry,
/// and no preloading by prediction (speculation rules' prefetch and
/// prerender are ineligible, as in a browser cdpilot launches).
const GATE_PREFS: [(&str, &str); 2] = [
    ("webrtc.ip_handling_policy", "\"disable_non_proxied_udp\""),
    ("net.network_prediction_options", "2"),
];

/// `goog:chromeOptions` of `[browser] grid_capabilities`: `args` a list of
/// strings none of which routes around the gate, `prefs` a table that
/// does not name the gate's preferences.
fn check_chrome_options(options: &serde_json::Map<String, Value>) -> Result<(), String> {
    let key = |k: &str| format!("browser.grid_capabilities.\"goog:chromeOptions\".{k}");
    if let Some(args) = options.get("args") {
        let Some(args) = args.as_array().filter(|a| a.iter().all(Value::is_string)) else {
            return Err(format!("{} = {args}: allowed is a list of strings", key("args")));
        };
        for arg in args.iter().filter_map(Value::as_str) {
            let name = arg.split('=').next().unwrap_or_default();
            if crate::egress::PROXY_FLAGS.contains(&name) || name == "--enable-quic" {
                return Err(format!(
                    "{}: {name:?} would route the Grid browser around cdpilot's egress gate; \
                     set [browser] upstream_proxy to use a proxy of your own",
                    key("args")
                ));
            }
        }
    }
    if let Some(prefs) = options.get("prefs") {
        let Value::Object(prefs) = prefs else {
            return Err(format!("{} = {prefs}: allowed is a table", key("prefs")));
        };
        for name in prefs.keys() {
            let top = name.split('.').next().unwrap_or_default();
            // A preference of ours, or a table holding ours (`webrtc`).
            let ours =
                |p: &str| p == name.as_str() || (!name.contains('.') && p.split('.').next() == Some(top));
            if GATE_PREFS.iter().any(|(p, _)| ours(p)) {
                return Err(format!(
                    "{}.{name:?}: cdpilot sets this preference itself (the egress gate needs it): remove it",
                    key("prefs")
                ));
            }
        }
    }
    Ok(())
}

/// The Chromium flags a browser on a Grid node starts with: headless, then
/// `[browser] args`, then `goog:chromeOptions.args` of `[browser]
/// grid_capabilities`, then, last (Chromium takes a switch's last value),
/// the egress gate's: its default context's connections go through the
/// gate's browser door (reachable only from a node on this machine; from
/// another the proxy refuses every connection, closed rather than open),
/// WebRTC keeps off UDP the proxy does not carry, QUIC is off. Sessions
/// never use that default context: each gets a context of its own with a
/// door of its own (`Target.createBrowserContext`'s `proxyServer`).
pub fn remote_chrome_args(config: &BrowserConfig, door: &ProxyPort) -> Vec<String> {
    let mut args = Vec::new();
    if config.headless {
        args.push("--headless=new".to_owned());
    }
    args.extend(config.args.iter().cloned());
    if let Some(Value::Array(theirs)) = config
        .grid_capabilities
        .get("goog:chromeOptions")
        .and_then(|o| o.get("args"))
    {
        args.extend(theirs.iter().filter_map(Value::as_str).map(str::to_owned));
    }
    args.extend(egress::launch_flags(door));
    args.push("--disable-quic".to_owned());
    args
}

/// The W3C `capabilities` of the new-session request: a Chromium with
/// [`remote_chrome_args`] and the gate's preferences, dialogs left to
/// cdpilot (chromedriver's default dismisses them at its next command),
/// `se:remoteUrl` the hub's address as cdpilot reaches it (what Selenium's
/// own bindings send, so a Grid behind a proxy or a port mapping answers a
/// `se:cdp` cdpilot can reach), then `[browser] grid_capabilities` laid
/// over (their `goog:chromeOptions` merged into ours; checked at start).
pub fn capabilities(config: &BrowserConfig, remote_url: &str, door: &ProxyPort) -> Value {
    let mut always = serde_json::Map::new();
    always.insert("browserName".into(), "chrome".into());
    always.insert("unhandledPromptBehavior".into(), "ignore".into());
    always.insert("se:remoteUrl".into(), remote_url.into());
    let mut options = serde_json::Map::new();
    let mut prefs = serde_json::Map::new();
    for (key, value) in &config.grid_capabilities {
        match (key.as_str(), value) {
            ("goog:chromeOptions", Value::Object(theirs)) => {
                for (k, v) in theirs {
                    match (k.as_str(), v) {
                        ("args", _) => {}
                        ("prefs", Value::Object(their_prefs)) => prefs.extend(their_prefs.clone()),
                        _ => {
                            options.insert(k.clone(), v.clone());
                        }
                    }
                }
            }
            _ => {
                always.insert(key.clone(), value.clone());
            }
        }
    }
    for (name, value) in GATE_PREFS {
        prefs.insert(name.into(), serde_json::from_str(value).expect("a JSON value"));
    }
    options.insert("args".into(), json!(remote_chrome_args(config, door)));
    options.insert("prefs".into(), Value::Object(prefs));
    always.insert("goog:chromeOptions".into(), Value::Object(options));
    json!({ "alwaysMatch": always })
}

/// The Grid sessions are made on.
pub struct Grid {
    hub: Arc<Hub>,
    /// The new-session request's `capabilities`, built once.
    capabilities: Value,
    config: Arc<Config>,
    /// The URL rules every tab's request stage judges by.
    policy: Arc<Policy>,
    /// The egress gate: isolated contexts made on a Grid browser get a
    /// door of their own (reachable only from a node on this machine).
    egress: Arc<Egress>,
    /// Grid sessions made and not deleted: id → the node it runs on (when
    /// `/status` said). Shutdown deletes whatever is left here.
    open: Mutex<BTreeMap<String, Option<String>>>,
    /// DELETEs of ended sessions still under way: shutdown waits for them.
    deleting: Mutex<Vec<JoinHandle<()>>>,
    /// New-session requests of ours the Grid has not answered yet.
    waiting: AtomicU64,
    /// Time requests waited for the Grid's answer (queue and browser
    /// start), summed, and how many were answered.
    waited: Mutex<(Duration, u64)>,
    /// Grid sessions made since start.
    made: AtomicU64,
    /// Cancelled at shutdown: connections closing then are not failures,
    /// and requests still waiting give up.
    stopping: CancellationToken,
}

/// What `/metrics` and the dashboard show of the Grid.
#[derive(Debug, Clone, Default)]
pub struct GridStatus {
    /// The hub's address.
    pub hub: String,
    /// Grid sessions open now (made by this server, not deleted).
    pub sessions_open: u64,
    /// Grid sessions made since start.
    pub sessions_made: u64,
    /// Our new-session requests waiting for the Grid's answer now.
    pub requests_waiting: u64,
    /// Seconds requests waited for a session, summed.
    pub wait_seconds_sum: f64,
    /// Requests the Grid answered (the sum's count).
    pub wait_count: u64,
    /// Sessions per node, from the Grid's `/status` (every session on the
    /// node, ours or not); empty when the hub did not answer.
    pub nodes: Vec<(String, u64)>,
    /// Requests in the Grid's queue (everyone's), when the hub answered.
    pub queued_at_hub: Option<u64>,
}

impl Grid {
    /// The Grid of `config.browser.grid` (checked at start); connects to
    /// nothing yet.
    pub fn new(config: Arc<Config>, policy: Arc<Policy>, egress: Arc<Egress>) -> Result<Arc<Grid>, String> {
        let hub = Hub::new(&config.browser.grid, &config.browser.grid_headers)?;
        let door = egress.browser_door()?;
        Ok(Arc::new(Grid {
            capabilities: capabilities(&config.browser, hub.url(), &door),
            hub: Arc::new(hub),
            config,
            policy,
            egress,
            open: Mutex::default(),
            deleting: Mutex::default(),
            waiting: AtomicU64::new(0),
            waited: Mutex::default(),
            made: AtomicU64::new(0),
            stopping: CancellationToken::new(),
        }))
    }

    /// The URL rules.
    pub fn policy(&self) -> &Arc<Policy> {
        &self.policy
    }

    /// The browser of `seat`'s Grid session, making one first when it has
    /// none or its browser is gone. A request the Grid queues is waited
    /// for within `budget`; if the budget runs out, the request stays
    /// queued and the seat's next call takes what it brings.
    pub async fn browser(
        self: &Arc<Self>,
        seat: &Arc<Seat>,
        lifecycle: &Arc<Lifecycle>,
        budget: &Budget,
    ) -> Result<Arc<Browser>, ActionError> {
        if let Some(browser) = seat.live().and_then(|l| l.browser.clone()) {
            return Ok(browser);
        }
        let (grid, for_seat, lifecycle) = (self.clone(), Arc::downgrade(seat), lifecycle.clone());
        let lease = seat
            .making
            .run(WAITING, budget, move || async move {
                let lease = grid.make(lifecycle).await?;
                // Stored by the work itself: a caller that ran out of time
                // still finds it at its next call.
                if let Some(seat) = for_seat.upgrade() {
                    *seat.lease.lock().unwrap() = Some(lease.clone());
                }
                Ok(lease)
            })
            .await
            .map_err(|mut e| {
                if matches!(e.failure, Failure::Timeout { .. }) && !budget.is_canceled() {
                    e.next_step = "Every Grid slot is taken (or the node is slow to start the browser). \
                                   The request stays in the Grid's queue and this session's next call \
                                   takes the slot it gets: retry in a while, or with a larger timeout_ms."
                        .into();
                }
                e
            })?;
        lease.browser.clone().ok_or_else(ActionError::disconnected)
    }

    /// Asks the Grid for a session and attaches to it.
    async fn make(self: &Arc<Self>, lifecycle: Arc<Lifecycle>) -> Result<Arc<Lease>, ActionError> {
        let asked = Instant::now();
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let answer = tokio::select! {
            answer = self.hub.new_session(&self.capabilities) => Some(answer),
            _ = self.stopping.cancelled() => None,
        };
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        let Some(answer) = answer else {
            return Err(ActionError::new(
                ErrorCode::BrowserDisconnected,
                "the server is shutting down",
                "Reconnect when the server is back.",
            ));
        };
        {
            let mut waited = self.waited.lock().unwrap();
            waited.0 += asked.elapsed();
            waited.1 += 1;
        }
        let created = answer.map_err(|e| self.refused(e))?;
        self.made.fetch_add(1, Ordering::Relaxed);
        self.open.lock().unwrap().insert(created.id.clone(), None);
        tracing::info!(grid = self.hub.url(), session = created.id, "Grid session made");
        // From here the lease owns the Grid session: an error drops it,
        // which deletes it.
        let mut lease = Lease {
            grid: self.clone(),
            id: created.id.clone(),
            browser: None,
            watcher: None,
        };
        if self.stopping.is_cancelled() {
            return Err(ActionError::disconnected());
        }
        // The hub's headers (its credentials) go with the handshake only
        // when `se:cdp` is on the hub's origin.
        let transport = Arc::new(cdp::WebSocket::with_headers(
            created.cdp.clone(),
            self.hub.headers_for(&created.cdp),
        ));
        let budget = Budget::with_timeout(ATTACH_BUDGET);
        let bridge = self.config.dialogs.bridge == crate::config::Bridge::On;
        let browser = Browser::attach(
            transport,
            dialog_rules(&self.config),
            bridge,
            self.policy.clone(),
            self.egress.clone(),
            // The node's Chromium got the WebRTC policy in its capabilities.
            true,
            &budget,
        )
        .await
        .map_err(|mut e| {
            e.message = format!(
                "the Grid made session {} but its browser could not be reached at {}: {}",
                created.id,
                hub::without_userinfo(&created.cdp),
                e.message
            );
            e.next_step = "Check that the Grid's se:cdp address is reachable from cdpilot (the hub's \
                           --external-url / a gateway in front of it), then retry."
                .into();
            e
        })?;
        let browser = Arc::new(browser);
        lease.browser = Some(browser.clone());
        lease.watcher = Some(self.watch(&created.id, &browser, lifecycle));
        self.locate(&created.id).await;
        Ok(Arc::new(lease))
    }

    /// The Grid's refusal as a coded error with its own words.
    fn refused(&self, error: HubError) -> ActionError {
        let hub = self.hub.url();
        match error {
            HubError::Unreachable(detail) => ActionError::new(
                ErrorCode::BrowserDisconnected,
                format!("cannot reach the Selenium Grid at {hub}: {detail}"),
                "Check that the hub runs and that [browser] grid is its address (http://host:4444), then retry.",
            ),
            HubError::Refused { message, .. } if message.to_lowercase().contains("timed out") => ActionError::new(
                ErrorCode::Timeout,
                format!("the Selenium Grid at {hub} gave up waiting for a free slot: {message}"),
                "Every Grid slot stayed taken for the Grid's --session-request-timeout: retry later, or add nodes.",
            ),
            HubError::Refused { status, error, message } => ActionError::new(
                ErrorCode::BrowserDisconnected,
                format!("the Selenium Grid at {hub} refused the new session ({status} {error}): {message}"),
                "Check [browser] grid_capabilities against what the nodes offer (the hub's /status lists their stereotypes), then retry.",
            ),
            HubError::Unexpected(detail) => ActionError::new(
                ErrorCode::BrowserDisconnected,
                format!("the Selenium Grid at {hub} answered something cdpilot cannot use: {detail}"),
                "cdpilot needs a Chromium-based browser with CDP on the nodes (se:cdp): check the node's configuration and [browser] grid_capabilities.",
            ),
        }
    }

    /// Follows a lease's connection: when it closes without the lease
    /// having let go, the session's browser is lost. Meanwhile, keeps the
    /// node from ending the session for lack of WebDriver commands.
    fn watch(self: &Arc<Self>, id: &str, browser: &Arc<Browser>, lifecycle: Arc<Lifecycle>) -> AbortHandle {
        let connection = browser.connection();
        let (grid, id) = (Arc::downgrade(self), id.to_owned());
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = connection.closed() => break,
                    _ = tokio::time::sleep(KEEPALIVE) => {
                        let Some(grid) = grid.upgrade() else { return };
                        // The hub answers for the node: an error means the
                        // session (or its node) is gone.
                        match grid.hub.touch(&id).await {
                            Ok(()) => {}
                            // A dialog is open (cdpilot's to answer): the
                            // session is alive.
                            Err(HubError::Refused { error, .. }) if error == "unexpected alert open" => {}
                            Err(e) => {
                            if grid.stopping.is_cancelled() {
                                return;
                            }
                            tracing::warn!(session = id, "the Grid lost the session: {e}");
                            connection.close();
                            break;
                            }
                        }
                    }
                }
            }
            if grid.upgrade().is_some_and(|g| !g.stopping.is_cancelled()) {
                tracing::warn!(session = id, "the connection to a Grid session's browser closed");
                lifecycle.ended(EndReason::BrowserLost);
            }
        })
        .abort_handle()
    }

    /// Notes which node session `id` landed on (the dashboard shows it).
    async fn locate(&self, id: &str) {
        let Ok(Ok(status)) = tokio::time::timeout(Duration::from_secs(2), self.hub.status()).await else {
            return;
        };
        let node = nodes(&status)
            .into_iter()
            .find(|(_, sessions)| sessions.iter().any(|s| s == id))
            .map(|(uri, _)| uri);
        if let Some(entry) = self.open.lock().unwrap().get_mut(id) {
            *entry = node;
        }
    }

    /// The node a Grid session runs on, when known.
    pub fn node_of(&self, id: &str) -> Option<String> {
        self.open.lock().unwrap().get(id).cloned().flatten()
    }

    /// Gauges and counts for `/metrics`, with the nodes' sessions read
    /// from the hub's `/status` (within `wait`).
    pub async fn status(&self, wait: Duration) -> GridStatus {
        let (sum, count) = *self.waited.lock().unwrap();
        let mut status = GridStatus {
            hub: self.hub.url().to_owned(),
            sessions_open: self.open.lock().unwrap().len() as u64,
            sessions_made: self.made.load(Ordering::Relaxed),
            requests_waiting: self.waiting.load(Ordering::SeqCst),
            wait_seconds_sum: sum.as_secs_f64(),
            wait_count: count,
            ..GridStatus::default()
        };
        if let Ok(Ok(answer)) = tokio::time::timeout(wait, self.hub.status()).await {
            status.nodes = nodes(&answer)
                .into_iter()
                .map(|(uri, sessions)| (uri, sessions.len() as u64))
                .collect();
        }
        if let Ok(Ok(queued)) = tokio::time::timeout(wait, self.hub.queued()).await {
            status.queued_at_hub = Some(queued as u64);
        }
        status
    }

    /// Deletes Grid session `id` in the background (shutdown waits for it).
    fn delete_later(self: &Arc<Self>, id: String, browser: Option<Arc<Browser>>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let hub = self.hub.clone();
        let task = runtime.spawn(async move {
            if let Some(browser) = browser {
                browser.shutdown().await;
            }
            match tokio::time::timeout(DELETE_BUDGET, hub.delete(&id)).await {
                Ok(Ok(())) => tracing::info!(session = id, "Grid session deleted"),
                Ok(Err(e)) => tracing::info!(session = id, "deleting the Grid session: {e}"),
                Err(_) => tracing::warn!(
                    session = id,
                    "the Grid did not answer DELETE within {DELETE_BUDGET:?}"
                ),
            }
        });
        let mut deleting = self.deleting.lock().unwrap();
        deleting.retain(|t| !t.is_finished());
        deleting.push(task);
    }

    /// Deletes every Grid session still open and waits for the DELETEs
    /// under way: no Grid slot stays taken after cdpilot exits.
    pub async fn shutdown(&self) {
        self.stopping.cancel();
        let open: Vec<String> = std::mem::take(&mut *self.open.lock().unwrap())
            .into_keys()
            .collect();
        let deletes = open.iter().map(|id| async move {
            match tokio::time::timeout(DELETE_BUDGET, self.hub.delete(id)).await {
                Ok(Ok(())) => tracing::info!(session = id, "Grid session deleted at shutdown"),
                Ok(Err(e)) => tracing::warn!(session = id, "deleting the Grid session at shutdown: {e}"),
                Err(_) => tracing::warn!(session = id, "the Grid did not answer DELETE at shutdown"),
            }
        });
        futures_util::future::join_all(deletes).await;
        let under_way = std::mem::take(&mut *self.deleting.lock().unwrap());
        for task in under_way {
            let _ = task.await;
        }
    }
}

/// The step a call waiting for its Grid session is in.
const WAITING: &str = "waiting for a free Grid slot";

/// Each node's `uri` and the ids of the sessions in its slots, from a
/// `/status` answer's `value`.
pub fn nodes(status: &Value) -> Vec<(String, Vec<String>)> {
    status["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|node| {
            let sessions = node["slots"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|slot| slot["session"]["sessionId"].as_str().map(str::to_owned))
                .collect();
            (node["uri"].as_str().unwrap_or_default().to_owned(), sessions)
        })
        .collect()
}

/// A cdpilot session's place on the Grid: its Grid session, once made.
#[derive(Default)]
pub struct Seat {
    /// The Grid session; taken out (and so deleted) when the cdpilot
    /// session's pages end, replaced when its browser was lost.
    lease: Mutex<Option<Arc<Lease>>>,
    /// Asking the Grid, under way (a queued request outlives the call that
    /// made it).
    making: SingleFlight<Arc<Lease>>,
}

impl Seat {
    /// The Grid session, if its browser is still connected.
    fn live(&self) -> Option<Arc<Lease>> {
        self.lease
            .lock()
            .unwrap()
            .clone()
            .filter(|l| l.browser.as_ref().is_some_and(|b| b.is_alive()))
    }

    /// Lets the Grid session go (it is deleted): the cdpilot session's
    /// pages ended.
    pub fn release(&self) {
        let lease = self.lease.lock().unwrap().take();
        drop(lease);
    }

    /// The Grid session's id and node, for the dashboard.
    pub fn describe(&self) -> Option<(String, Option<String>)> {
        let lease = self.lease.lock().unwrap().clone()?;
        Some((lease.id.clone(), lease.grid.node_of(&lease.id)))
    }
}

/// One Grid session, deleted when dropped.
pub struct Lease {
    grid: Arc<Grid>,
    /// The W3C session id.
    id: String,
    /// Its browser, once attached.
    browser: Option<Arc<Browser>>,
    /// The watcher task (browser lost, keep-alive); stopped first on drop,
    /// so letting go is never taken for a loss.
    watcher: Option<AbortHandle>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(watcher) = &self.watcher {
            watcher.abort();
        }
        // Shutdown may have deleted it already.
        if self.grid.open.lock().unwrap().remove(&self.id).is_some() {
            self.grid
                .delete_later(std::mem::take(&mut self.id), self.browser.take());
        }
    }
}
