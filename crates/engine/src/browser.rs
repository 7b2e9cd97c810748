//! A browser we launched or attached to: its connection, its process (when
//! we launched it) and its tabs.
//!
//! Owns the lifetime of Chromium: [`Browser::shutdown`] closes it politely,
//! and the launch guard (see `cdp::launch`) kills it if we die first.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cdp::launch::{self, BrowserProcess, LaunchOptions};
use cdp::protocol::{browser, target};
use cdp::{endpoint, Connection};

use crate::config::BrowserConfig;
use crate::tab::{DialogRules, Tab, TabSetup};
use crate::tabs::TabSet;
use crate::{ActionError, Budget, ErrorCode};

pub struct Browser {
    conn: Connection,
    /// The Chromium we launched; `None` when attached to someone else's,
    /// and after shutdown. Locked only to take it or read its pid.
    process: Mutex<Option<BrowserProcess>>,
    /// The browser endpoint (tabs open their own evaluate connections).
    ws_url: String,
    /// Given to every tab and frame before it runs.
    setup: Arc<TabSetup>,
    /// The tabs, by short id, and which is active. Locked for microseconds.
    tabs: Mutex<TabSet>,
}

impl Browser {
    /// Launches Chromium (or attaches to `cdp_url`) and attaches to a tab.
    pub async fn start(
        config: &BrowserConfig,
        dialogs: DialogRules,
        bridge: bool,
        budget: &Budget,
    ) -> Result<Browser, ActionError> {
        let (conn, process, ws_url) = if config.cdp_url.is_empty() {
            let options = LaunchOptions {
                executable: (!config.executable.is_empty()).then(|| PathBuf::from(&config.executable)),
                headless: config.headless,
                args: config.args.clone(),
                user_data_dir: (!config.user_data_dir.is_empty())
                    .then(|| PathBuf::from(&config.user_data_dir)),
            };
            let process = launch::launch(&options, budget.remaining().min(Duration::from_secs(30)))
                .await
                .map_err(start_failed)?;
            let conn = budget
                .run("connecting to the browser", async {
                    Connection::connect(process.ws_url()).await.map_err(start_failed)
                })
                .await?;
            let ws_url = process.ws_url().to_owned();
            (conn, Some(process), ws_url)
        } else {
            let ws_url = budget
                .run("finding the browser endpoint", async {
                    endpoint::resolve(&config.cdp_url).await.map_err(start_failed)
                })
                .await
                .map_err(attach_timed_out)?;
            let conn = budget
                .run("attaching to the browser", async {
                    Connection::connect(&ws_url).await.map_err(start_failed)
                })
                .await
                .map_err(attach_timed_out)?;
            (conn, None, ws_url)
        };
        let targets = budget
            .cdp("listing tabs", &conn.browser(), target::GetTargets {})
            .await?;
        let page = targets.target_infos.into_iter().find(|t| t.kind == "page");
        let target_id = match page {
            Some(page) => page.target_id,
            None => {
                budget
                    .cdp(
                        "opening a tab",
                        &conn.browser(),
                        target::CreateTarget {
                            url: "about:blank".into(),
                        },
                    )
                    .await?
                    .target_id
            }
        };
        let version = budget
            .cdp(
                "reading the browser version",
                &conn.browser(),
                browser::GetVersion {},
            )
            .await?;
        let setup = Arc::new(TabSetup {
            user_agent: version
                .user_agent
                .contains("HeadlessChrome")
                .then(|| version.user_agent.replace("HeadlessChrome", "Chrome")),
            dialogs,
            bridge,
        });
        let tab = Arc::new(Tab::attach(&conn, &ws_url, &target_id, setup.clone(), budget).await?);
        let mut tabs = TabSet::default();
        tabs.add(tab);
        Ok(Browser {
            conn,
            process: Mutex::new(process),
            ws_url,
            setup,
            tabs: Mutex::new(tabs),
        })
    }

    /// A new connection to the same browser after this one dropped: every
    /// tab is attached again under its id, keeping what its supervisor
    /// knew (pending dialogs, frame records, console). Retries with
    /// exponential backoff within the budget; a launched browser that
    /// refuses connections is dead, and that is an error at once.
    pub async fn reconnect(&self, budget: &Budget) -> Result<Browser, ActionError> {
        let launched = self.process.lock().unwrap().is_some();
        let mut delay = Duration::from_millis(100);
        let conn = loop {
            match Connection::connect(&self.ws_url).await {
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
        let old_tabs = self.tabs.lock().unwrap().list();
        let mut reattached = Vec::new();
        for (id, tab) in old_tabs {
            match Tab::reattach(&conn, &tab, self.setup.clone(), budget).await {
                Ok(new) => reattached.push((id, Arc::new(new))),
                Err(e) if e.code == ErrorCode::TabNotFound => {}
                Err(e) => return Err(e),
            }
        }
        let tabs = self.tabs.lock().unwrap().rebuilt(reattached);
        let process = self.process.lock().unwrap().take();
        Ok(Browser {
            conn,
            process: Mutex::new(process),
            ws_url: self.ws_url.clone(),
            setup: self.setup.clone(),
            tabs: Mutex::new(tabs),
        })
    }

    /// False once the connection to the browser is gone (crash, kill, drop).
    pub fn is_alive(&self) -> bool {
        !self.conn.is_closed()
    }

    /// The tab an action runs in: `id` if given (without making it
    /// active), else the active tab.
    pub async fn tab(&self, id: Option<&str>, budget: &Budget) -> Result<Arc<Tab>, ActionError> {
        if let Some(tab) = self.lookup(id) {
            return Ok(tab);
        }
        // Maybe the page opened it since we last looked, or the active tab
        // was closed: bring the set up to date once.
        self.sync_tabs(budget).await?;
        self.lookup(id).ok_or_else(|| match id {
            Some(id) => ActionError::new(
                ErrorCode::TabNotFound,
                format!("there is no tab {id:?}"),
                "List the tabs with browser_tabs and use one of their ids.",
            ),
            None => ActionError::new(
                ErrorCode::TabNotFound,
                "no tab is open",
                "Open one with browser_tabs action new.",
            ),
        })
    }

    fn lookup(&self, id: Option<&str>) -> Option<Arc<Tab>> {
        let tabs = self.tabs.lock().unwrap();
        match id {
            Some(id) => tabs.get(id),
            None => tabs.active(),
        }
    }

    /// Attaches page targets we have not seen (tabs the page opened) and
    /// drops closed ones.
    pub async fn sync_tabs(&self, budget: &Budget) -> Result<Vec<target::TargetInfo>, ActionError> {
        let targets = budget
            .cdp("listing tabs", &self.conn.browser(), target::GetTargets {})
            .await?;
        let pages: Vec<String> = targets
            .target_infos
            .iter()
            .filter(|t| t.kind == "page")
            .map(|t| t.target_id.clone())
            .collect();
        let unseen: Vec<String> = {
            let mut tabs = self.tabs.lock().unwrap();
            tabs.retain_targets(&pages);
            pages.iter().filter(|t| !tabs.has_target(t)).cloned().collect()
        };
        for target_id in unseen {
            let tab = Tab::attach(&self.conn, &self.ws_url, &target_id, self.setup.clone(), budget).await?;
            self.tabs.lock().unwrap().add(Arc::new(tab));
        }
        Ok(targets.target_infos)
    }

    /// Opens a new tab (about:blank) and makes it active; returns its id.
    pub async fn open_tab(&self, budget: &Budget) -> Result<(String, Arc<Tab>), ActionError> {
        let created = budget
            .cdp(
                "opening a tab",
                &self.conn.browser(),
                target::CreateTarget {
                    url: "about:blank".into(),
                },
            )
            .await?;
        let tab = Arc::new(
            Tab::attach(
                &self.conn,
                &self.ws_url,
                &created.target_id,
                self.setup.clone(),
                budget,
            )
            .await?,
        );
        let mut tabs = self.tabs.lock().unwrap();
        let id = tabs.add(tab.clone());
        tabs.select(&id);
        Ok((id, tab))
    }

    /// Makes `id` the active tab (and brings it to the front).
    pub async fn select_tab(&self, id: &str, budget: &Budget) -> Result<(), ActionError> {
        let tab = self.tab(Some(id), budget).await?;
        self.tabs.lock().unwrap().select(id);
        let step = "bringing the tab to the front";
        budget
            .run(step, async {
                self.conn
                    .browser()
                    .send(
                        "Target.activateTarget",
                        serde_json::json!({ "targetId": tab.target_id }),
                    )
                    .await
                    .map_err(|e| budget.map_cdp(step, e))
            })
            .await?;
        Ok(())
    }

    /// Closes tab `id`. Closing the last tab opens a blank one, so the
    /// session always has a tab to act in.
    pub async fn close_tab(&self, id: &str, budget: &Budget) -> Result<(), ActionError> {
        let tab = self.tab(Some(id), budget).await?;
        budget
            .cdp(
                "closing the tab",
                &self.conn.browser(),
                target::CloseTarget {
                    target_id: tab.target_id.clone(),
                },
            )
            .await?;
        let empty = {
            let mut tabs = self.tabs.lock().unwrap();
            tabs.remove(id);
            tabs.list().is_empty()
        };
        if empty {
            self.open_tab(budget).await?;
        }
        Ok(())
    }

    /// `(id, tab, active)` for every tab, in order.
    pub fn tab_list(&self) -> Vec<(String, Arc<Tab>, bool)> {
        let tabs = self.tabs.lock().unwrap();
        let active = tabs.active_id().to_owned();
        tabs.list()
            .into_iter()
            .map(|(id, tab)| (id.clone(), tab, id == active))
            .collect()
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
    /// browser, only disconnects. Each step has a cleanup budget of its own.
    pub async fn shutdown(&self) {
        /// For Chromium to answer `Browser.close`.
        const CLOSE_BUDGET: Duration = Duration::from_secs(2);
        /// For Chromium to write out its profile and exit after that.
        const QUIT_BUDGET: Duration = Duration::from_secs(10);
        /// For the guard to kill what is left and remove the run directory.
        const CLEANUP_BUDGET: Duration = Duration::from_secs(5);

        let process = self.process.lock().unwrap().take();
        let Some(mut process) = process else {
            self.conn.close();
            return;
        };
        // Chromium may drop the socket as it quits, before answering; only
        // silence means it is not quitting.
        let quitting = self.is_alive()
            && !matches!(
                self.conn
                    .browser()
                    .call_until(browser::Close {}, tokio::time::Instant::now() + CLOSE_BUDGET)
                    .await,
                Err(cdp::CdpError::Timeout { .. })
            );
        self.conn.close();
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
    if error.code == ErrorCode::Timeout {
        error.next_step = "Check that cdp_url is the DevTools address of a running Chromium \
                           (http://host:port of its --remote-debugging-port, or the ws://… URL it \
                           printed) and that it answers from here, then retry."
            .into();
    }
    error
}

fn start_failed(error: cdp::CdpError) -> ActionError {
    ActionError::new(
        ErrorCode::BrowserDisconnected,
        format!("could not start the browser: {error}"),
        "Check that Chromium is installed (or the cdp_url is reachable), then retry.",
    )
}
