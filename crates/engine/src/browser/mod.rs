//! A browser we launched or attached to, shared by every session on it:
//! its process, its transport, its current connection and that
//! connection's target manager.
//!
//! Owns the lifetime of Chromium: [`Browser::shutdown`] closes it politely,
//! and the launch guard (see `cdp::launch`) kills it if we die first. Owns
//! the link to it: when the connection drops, [`Browser::reconnect`] opens
//! a new one in place (a new target manager with it); sessions notice the
//! new link's generation and re-attach their tabs.
//!
//! Tabs belong to sessions (`crate::session`), not here.

mod adopt;
pub mod adoption;
pub mod autoconnect;
pub mod extension;
pub mod fleet;
pub mod grid;
mod popups;
pub mod slot;
mod targets;
pub mod tenancy;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cdp::launch::{self, BrowserProcess, LaunchOptions};
use cdp::protocol::{browser, target};
use cdp::{endpoint, Connection, Transport, WebSocket};

use crate::config::BrowserConfig;
use crate::egress::{self, ContextPorts, Egress, ProxyPort};
use crate::policy::Policy;
use crate::tab::{identity, DialogRules, TabSetup};
use crate::timing;
use crate::{ActionError, Budget, ErrorCode};

pub use targets::TargetManager;

/// Where a session's browser comes from: the one browser of the process
/// (launched or `cdp_url`), or a fleet of endpoints.
#[derive(Clone)]
pub enum Browsers {
    /// The one browser every session shares.
    One(Arc<slot::BrowserSlot>),
    /// `[browser] endpoints`: each session placed on one of them.
    Fleet(Arc<fleet::Fleet>),
    /// `[browser] grid`: each session in a Grid session of its own.
    Grid(Arc<grid::Grid>),
}

impl Browsers {
    /// The URL rules, compiled once.
    pub fn policy(&self) -> &Arc<Policy> {
        match self {
            Browsers::One(slot) => slot.policy(),
            Browsers::Fleet(fleet) => fleet.policy(),
            Browsers::Grid(grid) => grid.policy(),
        }
    }
}

pub struct Browser {
    /// The Chromium we launched; `None` when attached to someone else's,
    /// and after shutdown. Locked only to take it or read its pid.
    process: Mutex<Option<BrowserProcess>>,
    /// How to reach the browser (asked again to reconnect).
    transport: Arc<dyn Transport>,
    /// The current connection and its targets; replaced by a reconnect.
    /// Locked for microseconds to clone the `Arc`.
    link: Mutex<Arc<Link>>,
    /// Given to every tab and frame before it runs.
    setup: Arc<TabSetup>,
    /// Browser contexts sessions created (the default context is not one:
    /// targets outside all of them belong to the default session), and
    /// the egress door of each, the default context's too (the door the
    /// launched browser's flags name; none for an attached browser). The
    /// workers' request gates and blocklists record their blocks there
    /// (`adopt.rs`, and the tabs' readers through [`TabSetup`]).
    doors: Arc<ContextPorts>,
    /// The engine's egress gate: each context created here gets a door.
    egress: Arc<Egress>,
    /// Sessions' contexts opening now (a browser context, its first tab,
    /// attached and enabled): a few at a time, first come first served, so
    /// a burst of 64 new sessions is served in turn instead of all of them
    /// sharing the browser's time until every attach ran out (issue 24).
    openings: tokio::sync::Semaphore,
    /// The user's own browser (`source = "auto_connect"`), with tabs and
    /// workers of the user's: nothing outside the contexts sessions created
    /// is paused, judged or kept attached (no browser-wide `Fetch`; the
    /// browser-wide auto-attach is limited to pages and shared and service
    /// workers, and lets go at once of what is not the agent's,
    /// `adopt.rs`); sessions' contexts are gated by their egress doors and
    /// their tabs' own request stages; a tab's frames and dedicated workers
    /// come with its own auto-attach.
    shared: bool,
    /// The sessions' contexts (and openings) on it now: the slot closes a
    /// launched browser nobody held for a while (`[serve]
    /// browser_idle_restart_s`), retiring it here first.
    tenants: Arc<tenancy::Tenants>,
    /// `[browser] adopt_tabs`: whether a session may take the browser's
    /// own tabs, and whether one holds them now.
    default_tabs: adoption::DefaultTabs,
}

/// How many sessions' contexts open at once on one browser: eight per
/// core. An opening is mostly waiting on the browser's round trips (its
/// context, its tab, the tab's domains), so more of them at once use the
/// browser better: 64 sessions opening at once on 2 cores were all open in
/// 27 s with 16 at a time against 44 s with 4 (docs: figures.md, "64 paced
/// sessions"); unbounded, 64 attaches once shared the browser until all
/// ran out of their time.
fn openings_at_once() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()) * 8
}

/// One connection to the browser and what was learnt through it.
pub struct Link {
    pub targets: TargetManager,
    /// Bumped by each reconnect: tabs attached under an older link are
    /// attached again.
    pub generation: u64,
}

impl Browser {
    /// Launches Chromium, or attaches to `cdp_url` (or, with `source =
    /// "auto_connect"`, to the user's running Chrome found through its
    /// `DevToolsActivePort`), and follows its targets. A failure names
    /// `cdp_url` masked (`crate::masked`): the model reads it.
    pub async fn start(
        config: &BrowserConfig,
        dialogs: DialogRules,
        bridge: bool,
        policy: Arc<Policy>,
        egress: Arc<Egress>,
        budget: &Budget,
    ) -> Result<Browser, ActionError> {
        Browser::start_unmasked(config, dialogs, bridge, policy, egress, budget)
            .await
            .map_err(|mut error| {
                error.message = crate::masked::in_text(&error.message, &config.cdp_url);
                error.next_step = crate::masked::in_text(&error.next_step, &config.cdp_url);
                error
            })
    }

    async fn start_unmasked(
        config: &BrowserConfig,
        dialogs: DialogRules,
        bridge: bool,
        policy: Arc<Policy>,
        egress: Arc<Egress>,
        budget: &Budget,
    ) -> Result<Browser, ActionError> {
        if config.source == crate::config::Source::AutoConnect {
            let ws_url = autoconnect::endpoint(&config.user_data_dir, budget).await?;
            let transport = Arc::new(WebSocket::new(ws_url));
            return Browser::open(
                transport, None, dialogs, bridge, policy, egress, None, true, false, budget,
            )
            .await;
        }
        let door = match config.cdp_url.is_empty() {
            true => Some(egress.browser_door().map_err(gate_failed)?),
            false => None,
        };
        let (transport, process): (Arc<dyn Transport>, _) = if let Some(door) = &door {
            // The gate's flags go last: Chromium takes a switch's last value.
            let mut args = config.args.clone();
            memory_ceiling(&mut args, config.tab_memory_mb);
            if policy.page_tools {
                enable_feature(&mut args, "WebMCP");
            }
            args.extend(egress::launch_flags(door));
            let options = LaunchOptions {
                executable: (!config.executable.is_empty()).then(|| PathBuf::from(&config.executable)),
                headless: config.headless,
                args,
                user_data_dir: (!config.user_data_dir.is_empty())
                    .then(|| PathBuf::from(&config.user_data_dir)),
                debugging: launch::Debugging::Pipe,
            };
            let process = timing::timed("launch.devtools", launch::launch(&options, budget.remaining()))
                .await
                .map_err(start_failed)?;
            (process.transport(), Some(process))
        } else {
            let ws_url = budget
                .run("finding the browser endpoint", async {
                    endpoint::resolve(&config.cdp_url).await.map_err(start_failed)
                })
                .await
                .map_err(attach_timed_out)?;
            (Arc::new(WebSocket::new(ws_url)), None)
        };
        // Launched: the gate's flags set its WebRTC policy.
        let webrtc_set = process.is_some();
        let attached = process.is_none();
        let mut browser = Browser::open(
            transport, process, dialogs, bridge, policy, egress, door, false, webrtc_set, budget,
        )
        .await?;
        // Only a browser attached by URL (`cdp_url`, an endpoint): the
        // configuration refuses adopt_tabs anywhere else.
        browser.default_tabs = adoption::DefaultTabs::new(config.adopt_tabs && attached);
        Ok(browser)
    }

    /// The browser's own tabs for a session to adopt (`[browser]
    /// adopt_tabs`), when they are on offer and no session holds them.
    pub fn claim_default_tabs(&self) -> Option<adoption::Claim> {
        self.default_tabs.claim()
    }

    /// Attaches through `transport` (a Grid session's `se:cdp`, the
    /// extension's relay): nothing to launch or resolve, nothing to close
    /// but the connection. `webrtc_set`: the browser's WebRTC IP policy is
    /// cdpilot's (a Grid node's, in its capabilities).
    pub async fn attach(
        transport: Arc<dyn Transport>,
        dialogs: DialogRules,
        bridge: bool,
        policy: Arc<Policy>,
        egress: Arc<Egress>,
        webrtc_set: bool,
        budget: &Budget,
    ) -> Result<Browser, ActionError> {
        Browser::open(
            transport, None, dialogs, bridge, policy, egress, None, false, webrtc_set, budget,
        )
        .await
    }

    /// Connects through `transport` to the browser `process` runs (`None`:
    /// someone else's) and follows its targets. `webrtc_set`: the
    /// browser's WebRTC IP policy is cdpilot's (launched, a Grid node);
    /// otherwise every document goes without peer connections.
    #[allow(clippy::too_many_arguments)]
    async fn open(
        transport: Arc<dyn Transport>,
        process: Option<BrowserProcess>,
        dialogs: DialogRules,
        bridge: bool,
        policy: Arc<Policy>,
        egress: Arc<Egress>,
        door: Option<Arc<ProxyPort>>,
        shared: bool,
        webrtc_set: bool,
        budget: &Budget,
    ) -> Result<Browser, ActionError> {
        let attached = process.is_none();
        let connecting = budget.run("connecting to the browser", async {
            Connection::open(transport.clone()).await.map_err(start_failed)
        });
        let conn = timing::timed("launch.connect", connecting).await.map_err(|e| {
            if shared {
                asked_to_allow(e)
            } else if attached {
                attach_timed_out(e)
            } else {
                e
            }
        })?;
        let root = conn.browser();
        let version = budget.cdp("reading the browser version", &root, browser::GetVersion {});
        let version = timing::timed("launch.version", version).await?;
        let doors = Arc::new(ContextPorts::new(door));
        let switched = process.as_ref().and_then(|p| p.user_agent().map(str::to_owned));
        let identity = identity::of(&conn, &version, switched.as_deref());
        let user_agent = timing::timed("launch.identity", identity).await;
        let setup = Arc::new(TabSetup {
            user_agent,
            webdriver_script: attached,
            // Given as a switch, every worker's is already the session's.
            worker_agent: switched.is_none(),
            dialogs,
            bridge,
            policy,
            no_webrtc: !webrtc_set,
            doors: doors.clone(),
        });
        let targets = timing::timed(
            "launch.targets",
            TargetManager::start(conn, setup.clone(), budget),
        )
        .await?;
        let link = Arc::new(Link {
            targets,
            generation: 0,
        });
        if !shared {
            popups::watch(&link, setup.policy.clone(), budget).await?;
        }
        adopt::watch(&link, doors.clone(), shared, budget).await?;
        Ok(Browser {
            process: Mutex::new(process),
            transport,
            link: Mutex::new(link),
            setup,
            doors,
            egress,
            openings: tokio::sync::Semaphore::new(openings_at_once()),
            shared,
            tenants: Arc::default(),
            default_tabs: adoption::DefaultTabs::default(),
        })
    }

    /// Its users now: a session takes a tenancy before it opens a context
    /// here ([`tenancy::Tenants::enter`]: none once the browser is retired).
    pub fn tenants(&self) -> &Arc<tenancy::Tenants> {
        &self.tenants
    }

    /// The launched browser's door (its default context's refusals).
    pub fn door(&self) -> Option<&Arc<ProxyPort>> {
        self.doors.default_door()
    }

    /// The current connection and its targets.
    /// Waits for this browser's turn to open a session's context (held
    /// until the returned permit drops); FIFO.
    pub async fn opening_turn(&self) -> tokio::sync::SemaphorePermit<'_> {
        self.openings
            .acquire()
            .await
            .expect("the openings semaphore is never closed")
    }

    /// What it holds now: targets, tabs, contexts, doors, routes (the
    /// engine adds the audit's).
    pub fn holdings(&self) -> crate::holdings::Holdings {
        let link = self.link();
        let targets = link.targets.counts();
        let (subscribers, cdp_sessions) = link.targets.connection().routes();
        crate::holdings::Holdings {
            targets: targets.known,
            attach_flights: targets.flights,
            tabs: targets.tabs,
            contexts: self.doors.count(),
            doors: self.egress.doors(),
            subscribers,
            cdp_sessions,
            ..Default::default()
        }
    }

    pub fn link(&self) -> Arc<Link> {
        self.link.lock().unwrap().clone()
    }

    pub fn connection(&self) -> Connection {
        self.link().targets.connection().clone()
    }

    /// False once the connection to the browser is gone (crash, kill, drop).
    /// A launched browser that has exited is gone from that moment, even
    /// if the connection's reader has not read the pipe's end yet (a busy
    /// runtime): the connection is closed here, so the call that asks gets
    /// a relaunch, not a command sent into a dead pipe.
    pub fn is_alive(&self) -> bool {
        let connection = self.connection();
        if !connection.is_closed() && self.transport.hung_up() {
            tracing::warn!("{} is closed: the browser exited", self.transport.describe());
            connection.close();
        }
        !connection.is_closed()
    }

    /// Whether a launched browser (rather than an attached one) runs here.
    pub fn launched(&self) -> bool {
        self.process.lock().unwrap().is_some()
    }

    /// A new connection to the same browser after this one dropped, with a
    /// new target manager; the old link's tabs are re-attached by their
    /// sessions. Retries with exponential backoff within the budget; a
    /// launched browser that refuses connections is dead, and that is an
    /// error at once.
    pub async fn reconnect(&self, budget: &Budget) -> Result<(), ActionError> {
        if !self.transport.capabilities().reopen {
            return Err(start_failed(cdp::CdpError::Connect(format!(
                "the connection to {} dropped and cannot be opened again",
                self.transport.describe()
            ))));
        }
        let launched = self.launched();
        let mut delay = Duration::from_millis(100);
        let conn = loop {
            match Connection::open(self.transport.clone()).await {
                Ok(conn) => break conn,
                Err(e) if launched && e.is_refused() => return Err(start_failed(e)),
                Err(e) if budget.remaining() <= delay => return Err(start_failed(e)),
                Err(e) => {
                    tracing::info!(
                        "reconnecting to the browser failed ({e}); retrying in {}ms",
                        delay.as_millis()
                    );
                    budget
                        .run("reconnecting to the browser", async {
                            tokio::time::sleep(delay).await;
                            Ok(())
                        })
                        .await?;
                    delay = (delay * 2).min(Duration::from_secs(2));
                }
            }
        };
        let targets = TargetManager::start(conn, self.setup.clone(), budget).await?;
        let generation = self.link().generation + 1;
        let link = Arc::new(Link { targets, generation });
        if !self.shared {
            popups::watch(&link, self.setup.policy.clone(), budget).await?;
        }
        adopt::watch(&link, self.doors.clone(), self.shared, budget).await?;
        *self.link.lock().unwrap() = link;
        Ok(())
    }

    /// A new browser context (own cookies, storage, cache) for a session,
    /// every connection of which goes through a door of the egress gate of
    /// its own (on a launched, attached, fleet or Grid browser alike).
    /// `kept`: it survives the connection dropping (the default session's
    /// context on a browser cdpilot did not launch, which a reconnect finds
    /// again, as it would the default context); otherwise Chrome disposes
    /// of it when the connection that made it closes.
    pub async fn create_context(
        &self,
        kept: bool,
        budget: &Budget,
    ) -> Result<(String, Arc<ProxyPort>), ActionError> {
        let door = self.egress.new_door().map_err(gate_failed)?;
        let root = self.connection().browser();
        let creating = budget.cdp(
            "creating the session's browser context",
            &root,
            target::CreateBrowserContext {
                dispose_on_detach: !kept,
                proxy_server: Some(door.proxy_server()),
                proxy_bypass_list: Some(egress::BYPASS_NOTHING.into()),
            },
        );
        let created = timing::timed("context.create", creating).await?;
        self.doors.add(created.browser_context_id.clone(), &door);
        Ok((created.browser_context_id, door))
    }

    /// Closes a session's browser context and every tab in it.
    pub async fn dispose_context(&self, id: &str, budget: &Budget) -> Result<(), ActionError> {
        self.doors.remove(id);
        budget
            .cdp(
                "closing the session's browser context",
                &self.connection().browser(),
                target::DisposeBrowserContext {
                    browser_context_id: id.to_owned(),
                },
            )
            .await?;
        Ok(())
    }

    /// Whether a target in browser context `target_context` belongs to the
    /// session whose context is `session_context` (`None`: the default
    /// context, which owns every target outside the created ones).
    pub fn owns(&self, session_context: Option<&str>, target_context: Option<&str>) -> bool {
        match session_context {
            Some(id) => target_context == Some(id),
            None => !target_context.is_some_and(|c| self.doors.created(c)),
        }
    }

    /// Process id of the launch guard, when we launched the browser.
    pub fn guard_pid(&self) -> Option<u32> {
        self.process
            .lock()
            .unwrap()
            .as_ref()
            .and_then(BrowserProcess::guard_pid)
    }

    /// Closes a launched browser as a normal quit would, so a persistent
    /// profile keeps everything the session wrote (Chromium writes cookies
    /// and localStorage out only every ~30 s, and on quit), then lets the
    /// guard clean up (and remove a temporary profile). For an attached
    /// browser, only disconnects. Every tab's tasks stop first. Each step
    /// has a cleanup budget of its own.
    pub async fn shutdown(&self) {
        /// For Chromium to answer `Browser.close`.
        const CLOSE_BUDGET: Duration = Duration::from_secs(2);
        /// For Chromium to write out its profile and exit after that.
        const QUIT_BUDGET: Duration = Duration::from_secs(10);
        /// For the guard to kill what is left and remove the run directory.
        const CLEANUP_BUDGET: Duration = Duration::from_secs(5);

        let link = self.link();
        for tab in link.targets.all_tabs() {
            tab.stop();
        }
        let conn = link.targets.connection().clone();
        let process = self.process.lock().unwrap().take();
        let Some(mut process) = process else {
            conn.close();
            return;
        };
        // Chromium may drop the socket as it quits, before answering; only
        // silence means it is not quitting.
        let quitting = !conn.is_closed()
            && !matches!(
                conn.browser()
                    .call(browser::Close {}, tokio::time::Instant::now() + CLOSE_BUDGET)
                    .await,
                Err(cdp::CdpError::Timeout { .. })
            );
        conn.close();
        if quitting && !process.exited(QUIT_BUDGET).await {
            tracing::warn!(
                "Chromium did not quit within {}s of Browser.close; killing it",
                QUIT_BUDGET.as_secs()
            );
        }
        process.shutdown(CLEANUP_BUDGET).await;
    }
}

/// A timeout while attaching is about the address, not the page: the
/// budget's usual advice (take a snapshot) cannot help.
fn attach_timed_out(mut error: ActionError) -> ActionError {
    if matches!(error.failure, crate::error::Failure::Timeout { .. }) {
        error.next_step = "Check that cdp_url is the DevTools address of a running Chromium \
                           (http://host:port of its --remote-debugging-port, or the ws://… URL it \
                           printed) and that it answers from here, then retry."
            .into();
    }
    error
}

/// Connecting to the user's Chrome timed out: Chrome asks the user to
/// allow a remote debugging connection (chrome://inspect's mode).
fn asked_to_allow(mut error: ActionError) -> ActionError {
    if matches!(error.failure, crate::error::Failure::Timeout { .. }) {
        error.next_step = "Your Chrome may be asking you to allow the remote debugging connection: \
                           answer its dialog, then retry."
            .into();
    }
    error
}

/// The egress gate could not serve: the browser does not run without it.
fn gate_failed(why: String) -> ActionError {
    ActionError::new(
        ErrorCode::BrowserDisconnected,
        format!("could not start the browser: {why}"),
        "cdpilot's egress gate could not listen on loopback; check the machine's open file limit, then retry.",
    )
}

fn start_failed(error: cdp::CdpError) -> ActionError {
    ActionError::new(
        ErrorCode::BrowserDisconnected,
        format!("could not start the browser: {error}"),
        "Check that Chromium is installed (or the cdp_url is reachable), then retry.",
    )
}

/// Turns a Chromium feature on (`[tools] page_tools`: `WebMCP`): added to
/// the user's own `--enable-features` when they give one (Chromium takes a
/// switch's last value, so a second one would drop theirs).
fn enable_feature(args: &mut Vec<String>, feature: &str) {
    const SWITCH: &str = "--enable-features=";
    match args.iter_mut().rev().find(|a| a.starts_with(SWITCH)) {
        Some(given) if given[SWITCH.len()..].split(',').any(|f| f == feature) => {}
        Some(given) => {
            given.push(',');
            given.push_str(feature);
        }
        None => args.push(format!("{SWITCH}{feature}")),
    }
}

/// Sets each renderer's V8 heap ceiling (`[browser] tab_memory_mb`; 0:
/// Chromium's own): added to the configured `--js-flags` (Chromium takes
/// one value of a switch), unless they set `--max-old-space-size` already.
fn memory_ceiling(args: &mut Vec<String>, mb: u64) {
    if mb == 0 {
        return;
    }
    let ceiling = format!("--max-old-space-size={mb}");
    match args.iter_mut().rev().find(|a| a.starts_with("--js-flags=")) {
        Some(flags) if flags.contains("--max-old-space-size") => {}
        Some(flags) => {
            flags.push(' ');
            flags.push_str(&ceiling);
        }
        None => args.push(format!("--js-flags={ceiling}")),
    }
}

#[cfg(test)]
mod memory_ceiling_tests {
    use super::memory_ceiling;

    #[test]
    fn the_ceiling_joins_the_configured_js_flags_and_yields_to_their_own() {
        let mut args = vec!["--mute-audio".to_owned()];
        memory_ceiling(&mut args, 512);
        assert_eq!(args[1], "--js-flags=--max-old-space-size=512");
        let mut args = vec!["--js-flags=--expose-gc".to_owned()];
        memory_ceiling(&mut args, 512);
        assert_eq!(args, ["--js-flags=--expose-gc --max-old-space-size=512"]);
        let mut args = vec!["--js-flags=--max-old-space-size=64".to_owned()];
        memory_ceiling(&mut args, 512);
        assert_eq!(args, ["--js-flags=--max-old-space-size=64"]);
        let mut args = Vec::new();
        memory_ceiling(&mut args, 0);
        assert!(args.is_empty());
    }
}

#[cfg(test)]
mod enable_feature_tests {
    use super::enable_feature;

    /// `[tools] page_tools` joins the user's own `--enable-features` list.
    #[test]
    fn a_feature_joins_the_configured_list_once() {
        let mut args = vec!["--mute-audio".to_owned()];
        enable_feature(&mut args, "WebMCP");
        assert_eq!(args[1], "--enable-features=WebMCP");
        let mut args = vec!["--enable-features=Foo".to_owned()];
        enable_feature(&mut args, "WebMCP");
        assert_eq!(args, ["--enable-features=Foo,WebMCP"]);
        enable_feature(&mut args, "WebMCP");
        assert_eq!(args, ["--enable-features=Foo,WebMCP"]);
    }
}
