//! The tab's event reader. It follows the tab's own session and every
//! session attached under it (cross-origin iframes, workers), so their
//! console, dialogs and frames reach the tab's state.
//!
//! Dialog events go to the tab's dialog book (`crate::dialogs`); the reader
//! spawns the policy task the book asks for, in the tab's [`Watchdogs`],
//! which end with the reader.
//!
//! Children are auto-attached paused (`waitForDebuggerOnStart`); a task the
//! reader owns (it ends with the reader) prepares each one (user agent, the no-webdriver script, domains,
//! nested auto-attach) and only then lets it run, so even an iframe's first
//! script sees the prepared environment. The reader itself never awaits a
//! CDP reply.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use cdp::protocol::fetch::{self, RequestPaused};
use cdp::{Connection, Session};
use serde_json::json;
use tokio::time::Instant;

/// How long preparing a paused iframe or worker may take (its own budget:
/// no caller waits on it, and the child runs only once it is done).
const CHILD_SETUP_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);

use super::TabState;
use crate::dialogs::{self, Watchdogs};
pub use crate::dialogs::{DialogPolicy, DialogRules};
use crate::policy::{gate, Gate, Policy};

/// Installed in every document of the tab and its frames before any page
/// script runs: automation must not announce itself.
pub const NO_WEBDRIVER: &str =
    "Object.defineProperty(Navigator.prototype, 'webdriver', { get: () => false, configurable: true });";

/// What every session of the tab is given before it runs, and how its
/// dialogs are handled.
#[derive(Debug, Clone, Default)]
pub struct TabSetup {
    /// The browser's user agent with `HeadlessChrome` made `Chrome`.
    pub user_agent: Option<String>,
    pub dialogs: DialogRules,
    /// The dialog bridge is on.
    pub bridge: bool,
    /// The URL rules every document request is judged by.
    pub policy: Arc<Policy>,
}

impl TabSetup {
    /// The session's one `Fetch.enable`: the dialog bridge's requests and,
    /// when the URL policy can refuse anything, every document request.
    /// Empty: nothing is intercepted.
    fn fetch_patterns(&self) -> Vec<fetch::RequestPattern> {
        let mut patterns = Vec::new();
        if self.bridge {
            patterns.push(dialogs::bridge::fetch_pattern());
        }
        if self.policy.restricts() {
            patterns.push(gate::document_pattern());
        }
        patterns
    }

    /// Disguises one page or iframe session (user agent, no webdriver) and,
    /// with the bridge on, installs the dialog override and its interception.
    pub async fn disguise(&self, session: &Session, deadline: Instant) -> Result<(), cdp::CdpError> {
        let intercept = async {
            match self.fetch_patterns() {
                patterns if patterns.is_empty() => Ok(()),
                patterns => session
                    .call(fetch::Enable { patterns }, deadline)
                    .await
                    .map(|_| ()),
            }
        };
        let install = async {
            if !self.bridge {
                return Ok(());
            }
            session
                .send(
                    "Page.addScriptToEvaluateOnNewDocument",
                    json!({ "source": dialogs::bridge::OVERRIDE, "runImmediately": true }),
                    deadline,
                )
                .await
                .map(|_| ())
        };
        let (a, b) = tokio::join!(install, intercept);
        a?;
        b?;
        let script = session.send(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": NO_WEBDRIVER, "runImmediately": true }),
            deadline,
        );
        match &self.user_agent {
            Some(ua) => {
                let agent = session.send(
                    "Network.setUserAgentOverride",
                    json!({ "userAgent": ua }),
                    deadline,
                );
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
    setup: Arc<TabSetup>,
    gate: Arc<Gate>,
) -> tokio::task::JoinHandle<()> {
    let mut events = conn.events(None);
    let book = state.lock().unwrap().dialogs.clone();
    tokio::spawn(async move {
        // Dropped with this task (the tab aborts it), ending the policy tasks.
        let watchdogs = Watchdogs::new(setup.dialogs.clone());
        // Children being prepared: owned here, so they end with the reader
        // (a tab that stops leaves no task behind).
        let mut preparing = tokio::task::JoinSet::new();
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
                        let info = &event.params["targetInfo"];
                        let parent = info["parentFrameId"].as_str();
                        let url = info["url"].as_str().unwrap_or_default();
                        let mut state = state.lock().unwrap();
                        state.frames.oopif_attached(&frame, parent, url, &child);
                    }
                    let session = conn.session(child);
                    let setup = setup.clone();
                    while preparing.try_join_next().is_some() {}
                    preparing.spawn(async move { prepare_child(&session, &kind, &setup).await });
                }
                "Target.detachedFromTarget" => {
                    if let Some(child) = event.params["sessionId"].as_str() {
                        ours.remove(child);
                        let mut state = state.lock().unwrap();
                        state.frames.oopif_detached(child);
                    }
                }
                _ if is_document_request(&event) => {
                    if let Some(paused) = event.decode::<RequestPaused>() {
                        gate.paused(conn.session(event.session_id.clone()), paused);
                    }
                }
                _ => {
                    let from_tab = event.session_id == tab_session;
                    let opened = book.apply(&event);
                    state.lock().unwrap().apply_from(&event, from_tab);
                    if let Some(dialog) = opened {
                        let session = conn.session(dialog.session.clone());
                        watchdogs.opened(&book, session, dialog);
                    }
                }
            }
        }
    })
}

/// A paused request the URL policy judges (the dialog bridge's are the
/// dialog book's).
fn is_document_request(event: &cdp::Event) -> bool {
    event.is::<RequestPaused>() && dialogs::bridge::dialog_of(&event.params).is_none()
}

/// Prepares a paused child target, then lets it run.
async fn prepare_child(session: &Session, kind: &str, setup: &TabSetup) {
    let deadline = Instant::now() + CHILD_SETUP_BUDGET;
    if kind == "iframe" {
        let enable = async {
            let (a, b, c, d) = tokio::join!(
                setup.disguise(session, deadline),
                session.send("Runtime.enable", json!({}), deadline),
                session.send("Page.enable", json!({}), deadline),
                session.send(
                    "Target.setAutoAttach",
                    json!({ "autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true }),
                    deadline,
                ),
            );
            a.and(b.map(|_| ())).and(c.map(|_| ())).and(d.map(|_| ()))
        };
        if let Err(error) = enable.await {
            tracing::debug!("preparing an iframe session failed: {error}");
        }
    }
    if let Err(error) = session
        .send("Runtime.runIfWaitingForDebugger", json!({}), deadline)
        .await
    {
        tracing::debug!("resuming a {kind} target failed: {error}");
    }
}
