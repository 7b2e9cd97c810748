//! The tab's event reader. It follows the tab's own session and every
//! session attached under it (cross-origin iframes, workers), so their
//! console, dialogs and frames reach the tab's state.
//!
//! Children are auto-attached paused (`waitForDebuggerOnStart`); a spawned
//! task prepares each one (user agent, the no-webdriver script, domains,
//! nested auto-attach) and only then lets it run, so even an iframe's first
//! script sees the prepared environment. The reader itself never awaits a
//! CDP reply.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use cdp::{Connection, Session};
use serde_json::json;
use tokio::sync::watch;

use super::TabState;

/// Installed in every document of the tab and its frames before any page
/// script runs: automation must not announce itself.
pub const NO_WEBDRIVER: &str =
    "Object.defineProperty(Navigator.prototype, 'webdriver', { get: () => false, configurable: true });";

/// What every session of the tab is given before it runs.
#[derive(Debug, Clone, Default)]
pub struct Disguise {
    /// The browser's user agent with `HeadlessChrome` made `Chrome`.
    pub user_agent: Option<String>,
}

impl Disguise {
    /// Applies the disguise to one page or iframe session.
    pub async fn apply(&self, session: &Session) -> Result<(), cdp::CdpError> {
        let script = session.send(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": NO_WEBDRIVER, "runImmediately": true }),
        );
        match &self.user_agent {
            Some(ua) => {
                let agent = session.send("Network.setUserAgentOverride", json!({ "userAgent": ua }));
                let (a, b) = tokio::join!(script, agent);
                a.and(b).map(|_| ())
            }
            None => script.await.map(|_| ()),
        }
    }
}

pub(super) fn spawn(
    conn: Connection,
    tab_session: String,
    state: Arc<Mutex<TabState>>,
    dialog_opened: watch::Sender<u64>,
    disguise: Arc<Disguise>,
) -> tokio::task::JoinHandle<()> {
    let mut events = conn.events(None);
    tokio::spawn(async move {
        // The tab's session and every session attached beneath it.
        let mut ours: HashSet<String> = HashSet::from([tab_session.clone()]);
        while let Some(event) = events.recv().await {
            if !ours.contains(&event.session_id) {
                continue;
            }
            match event.method.as_str() {
                "Target.attachedToTarget" => {
                    let child = event.params["sessionId"].as_str().unwrap_or_default().to_owned();
                    let kind = event.params["targetInfo"]["type"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    let frame = event.params["targetInfo"]["targetId"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    ours.insert(child.clone());
                    if kind == "iframe" {
                        state.lock().unwrap().child_sessions.insert(frame, child.clone());
                    }
                    let session = conn.session(child);
                    let disguise = disguise.clone();
                    tokio::spawn(async move { prepare_child(&session, &kind, &disguise).await });
                }
                "Target.detachedFromTarget" => {
                    if let Some(child) = event.params["sessionId"].as_str() {
                        ours.remove(child);
                        state.lock().unwrap().child_sessions.retain(|_, s| s != child);
                    }
                }
                _ => {
                    let from_tab = event.session_id == tab_session;
                    state.lock().unwrap().apply_from(&event, from_tab);
                    if event.method == "Page.javascriptDialogOpening" {
                        dialog_opened.send_modify(|n| *n += 1);
                    }
                }
            }
        }
    })
}

/// Prepares a paused child target, then lets it run.
async fn prepare_child(session: &Session, kind: &str, disguise: &Disguise) {
    if kind == "iframe" {
        let enable = async {
            let (a, b, c, d) = tokio::join!(
                disguise.apply(session),
                session.send("Runtime.enable", json!({})),
                session.send("Page.enable", json!({})),
                session.send(
                    "Target.setAutoAttach",
                    json!({ "autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true })
                ),
            );
            a.and(b.map(|_| ())).and(c.map(|_| ())).and(d.map(|_| ()))
        };
        if let Err(error) = enable.await {
            tracing::debug!("preparing an iframe session failed: {error}");
        }
    }
    if let Err(error) = session.send("Runtime.runIfWaitingForDebugger", json!({})).await {
        tracing::debug!("resuming a {kind} target failed: {error}");
    }
}
