//! A browser we launched or attached to: its connection, its process (when
//! we launched it) and its tab.
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
use crate::tab::{Disguise, Tab};
use crate::{ActionError, Budget, ErrorCode};

pub struct Browser {
    conn: Connection,
    /// The Chromium we launched; `None` when attached to someone else's,
    /// and after shutdown. Locked only to take it or read its pid.
    process: Mutex<Option<BrowserProcess>>,
    tab: Arc<Tab>,
}

impl Browser {
    /// Launches Chromium (or attaches to `cdp_url`) and attaches to a tab.
    pub async fn start(config: &BrowserConfig, budget: &Budget) -> Result<Browser, ActionError> {
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
                .await?;
            let conn = budget
                .run("attaching to the browser", async {
                    Connection::connect(&ws_url).await.map_err(start_failed)
                })
                .await?;
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
        let disguise = Arc::new(Disguise {
            user_agent: version
                .user_agent
                .contains("HeadlessChrome")
                .then(|| version.user_agent.replace("HeadlessChrome", "Chrome")),
        });
        let tab = Arc::new(Tab::attach(&conn, &ws_url, &target_id, disguise, budget).await?);
        Ok(Browser {
            conn,
            process: Mutex::new(process),
            tab,
        })
    }

    /// False once the connection to the browser is gone (crash, kill, drop).
    pub fn is_alive(&self) -> bool {
        !self.conn.is_closed()
    }

    pub fn active_tab(&self) -> Arc<Tab> {
        self.tab.clone()
    }

    /// Process id of the launch guard, when we launched the browser.
    pub fn guard_pid(&self) -> Option<u32> {
        self.process
            .lock()
            .unwrap()
            .as_ref()
            .and_then(BrowserProcess::guard_pid)
    }

    /// Closes a launched browser (and removes its temporary profile); for an
    /// attached one, only disconnects.
    pub async fn shutdown(&self) {
        let process = self.process.lock().unwrap().take();
        if let Some(process) = process {
            if self.is_alive() {
                let _ = self
                    .conn
                    .browser()
                    .call_until(
                        browser::Close {},
                        tokio::time::Instant::now() + Duration::from_secs(2),
                    )
                    .await;
            }
            self.conn.close();
            process.shutdown(Duration::from_secs(5)).await;
        } else {
            self.conn.close();
        }
    }
}

fn start_failed(error: cdp::CdpError) -> ActionError {
    ActionError::new(
        ErrorCode::BrowserDisconnected,
        format!("could not start the browser: {error}"),
        "Check that Chromium is installed (or the cdp_url is reachable), then retry.",
    )
}
