//! One tab: its flattened CDP session and what we know about its document.
//!
//! Owns: the tab's session, and a small state (main frame, document
//! generation, cdpilot's isolated world, HTTP statuses of documents) kept
//! current by a task that reads the tab's events. That task only updates
//! state under a lock held for microseconds; it never sends a command.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use cdp::protocol::{page, runtime, target};
use cdp::{Connection, Event, Session};
use serde_json::{json, Value};

use crate::{ActionError, Budget};

/// Name of cdpilot's isolated world in every document.
pub const WORLD: &str = "__cdpilot_world";

pub struct Tab {
    pub target_id: String,
    pub session: Session,
    /// The browser endpoint, for connections of our own to this tab.
    pub ws_url: String,
    /// browser_evaluate's own connection to this tab, kept warm between
    /// calls and dropped after a script had to be terminated.
    pub evaluate_lane: tokio::sync::Mutex<Option<crate::actions::evaluate::Lane>>,
    state: Arc<Mutex<TabState>>,
    /// Ticks (after the state is updated) each time a dialog opens, so an
    /// action blocked by one can return at once saying so.
    dialog_opened: tokio::sync::watch::Receiver<u64>,
    /// The event reader; aborted when the tab is dropped.
    pump: tokio::task::JoinHandle<()>,
}

impl Drop for Tab {
    fn drop(&mut self) {
        self.pump.abort();
    }
}

/// What the event reader knows about the tab's document.
#[derive(Debug, Default)]
pub struct TabState {
    pub main_frame_id: String,
    /// Bumped on every cross-document navigation of the main frame: refs
    /// issued under an older generation are stale.
    pub document: u64,
    pub url: String,
    /// cdpilot's isolated world in the current main document, once known.
    pub world: Option<i64>,
    /// The document generation the current refs were issued for.
    pub refs_document: Option<u64>,
    /// Native dialogs: pending and recently closed.
    pub dialogs: crate::dialogs::DialogBook,
    /// Responses of recent main-frame documents, newest last.
    documents: VecDeque<DocumentResponse>,
}

/// The network's answer for one main-frame document.
#[derive(Debug, Default, Clone)]
pub struct DocumentResponse {
    pub loader_id: String,
    pub status: Option<u16>,
    /// The request was answered with an HTTP redirect on its way.
    pub redirected: bool,
}

impl TabState {
    /// Applies one event. Pure bookkeeping, unit-tested without a browser.
    pub fn apply(&mut self, event: &Event) {
        let p = &event.params;
        match event.method.as_str() {
            "Page.frameNavigated" => {
                let frame = &p["frame"];
                if frame.get("parentId").is_none_or(Value::is_null) {
                    self.main_frame_id = frame["id"].as_str().unwrap_or_default().to_owned();
                    self.url = frame["url"].as_str().unwrap_or_default().to_owned();
                    self.document += 1;
                    self.world = None;
                }
            }
            "Page.navigatedWithinDocument" if p["frameId"].as_str() == Some(self.main_frame_id.as_str()) => {
                self.url = p["url"].as_str().unwrap_or_default().to_owned();
            }
            "Runtime.executionContextCreated" => {
                let context = &p["context"];
                if context["name"] == WORLD
                    && context["auxData"]["frameId"].as_str() == Some(self.main_frame_id.as_str())
                {
                    self.world = context["id"].as_i64();
                }
            }
            "Runtime.executionContextDestroyed"
                if self.world.is_some() && p["executionContextId"].as_i64() == self.world =>
            {
                self.world = None;
            }
            "Runtime.executionContextsCleared" => self.world = None,
            "Page.javascriptDialogOpening" => {
                self.dialogs.opened(p);
            }
            "Page.javascriptDialogClosed" => self.dialogs.closed(),
            "Network.requestWillBeSent"
                if p["type"] == "Document" && p.get("redirectResponse").is_some_and(|r| !r.is_null()) =>
            {
                self.document_mut(p["loaderId"].as_str().unwrap_or_default())
                    .redirected = true;
            }
            "Network.responseReceived"
                if p["type"] == "Document" && p["frameId"].as_str() == Some(self.main_frame_id.as_str()) =>
            {
                let status = p["response"]["status"].as_u64().unwrap_or(0) as u16;
                self.document_mut(p["loaderId"].as_str().unwrap_or_default())
                    .status = Some(status);
            }
            _ => {}
        }
    }

    /// What the network said about the document a loader fetched.
    pub fn document_response(&self, loader_id: &str) -> Option<&DocumentResponse> {
        self.documents.iter().rev().find(|d| d.loader_id == loader_id)
    }

    fn document_mut(&mut self, loader_id: &str) -> &mut DocumentResponse {
        if let Some(i) = self.documents.iter().position(|d| d.loader_id == loader_id) {
            return &mut self.documents[i];
        }
        if self.documents.len() >= 16 {
            self.documents.pop_front();
        }
        self.documents.push_back(DocumentResponse {
            loader_id: loader_id.to_owned(),
            ..Default::default()
        });
        self.documents.back_mut().expect("just pushed")
    }
}

impl Tab {
    /// Attaches to a page target and enables what the actions rely on.
    pub async fn attach(
        conn: &Connection,
        ws_url: &str,
        target_id: &str,
        budget: &Budget,
    ) -> Result<Tab, ActionError> {
        let attached = budget
            .cdp(
                "attaching to the tab",
                &conn.browser(),
                target::AttachToTarget {
                    target_id: target_id.to_owned(),
                    flatten: true,
                },
            )
            .await?;
        let session = conn.session(attached.session_id);
        let state = Arc::new(Mutex::new(TabState::default()));
        let mut events = session.events();
        let pump_state = state.clone();
        let (dialog_tx, dialog_rx) = tokio::sync::watch::channel(0u64);
        let pump = tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                pump_state.lock().unwrap().apply(&event);
                if event.method == "Page.javascriptDialogOpening" {
                    dialog_tx.send_modify(|n| *n += 1);
                }
            }
        });
        let tab = Tab {
            target_id: target_id.to_owned(),
            session,
            ws_url: ws_url.to_owned(),
            evaluate_lane: tokio::sync::Mutex::new(None),
            dialog_opened: dialog_rx,
            state,
            pump,
        };

        let s = &tab.session;
        let step = "enabling the tab's domains";
        let (tree, ..) = tokio::try_join!(
            budget.cdp(step, s, page::GetFrameTree {}),
            budget.cdp(step, s, page::Enable {}),
            budget.cdp(step, s, page::SetLifecycleEventsEnabled { enabled: true }),
            budget.cdp(step, s, runtime::Enable {}),
            async {
                budget
                    .run(step, async {
                        s.send("Network.enable", json!({}))
                            .await
                            .map_err(|e| budget.map_cdp(step, e))
                    })
                    .await
            },
            budget.cdp(
                step,
                s,
                target::SetAutoAttach {
                    auto_attach: true,
                    wait_for_debugger_on_start: false,
                    flatten: true
                }
            ),
        )?;
        {
            let mut state = tab.state.lock().unwrap();
            if state.main_frame_id.is_empty() {
                state.main_frame_id = tree.frame_tree.frame.id.clone();
                state.url = tree.frame_tree.frame.url.clone();
            }
        }
        Ok(tab)
    }

    /// Resolves with the dialog that opens next on this tab. Create the
    /// future before starting the work that may open one.
    pub fn next_dialog(&self) -> impl std::future::Future<Output = Option<crate::dialogs::Dialog>> + 'static {
        let mut watch = self.dialog_opened.clone();
        watch.mark_unchanged();
        let state = self.state.clone();
        async move {
            watch.changed().await.ok()?;
            state.lock().unwrap().dialogs.pending.last().cloned()
        }
    }

    /// Reads the tab's state under its lock (never held across an await).
    pub fn state<T>(&self, read: impl FnOnce(&mut TabState) -> T) -> T {
        read(&mut self.state.lock().unwrap())
    }

    /// The execution context of cdpilot's isolated world in the current main
    /// document, created on first use.
    pub async fn world(&self, budget: &Budget) -> Result<i64, ActionError> {
        let (known, frame_id, document) = self.state(|s| (s.world, s.main_frame_id.clone(), s.document));
        if let Some(id) = known {
            return Ok(id);
        }
        let created = budget
            .cdp(
                "creating cdpilot's isolated world",
                &self.session,
                page::CreateIsolatedWorld {
                    frame_id,
                    world_name: WORLD.into(),
                    grant_univeral_access: true,
                },
            )
            .await?;
        self.state(|s| {
            if s.document == document {
                s.world = Some(created.execution_context_id);
            }
        });
        Ok(created.execution_context_id)
    }

    /// Evaluates `expression` in cdpilot's isolated world. If the world was
    /// destroyed under us (the page navigated), retries once in the new one.
    pub async fn evaluate_in_world(
        &self,
        budget: &Budget,
        step: &str,
        expression: &str,
        by_value: bool,
    ) -> Result<runtime::RemoteObject, ActionError> {
        let mut attempt = 0;
        loop {
            let context = self.world(budget).await?;
            let result = budget
                .cdp(
                    step,
                    &self.session,
                    runtime::Evaluate {
                        expression: expression.to_owned(),
                        context_id: Some(context),
                        return_by_value: by_value,
                        await_promise: false,
                        user_gesture: false,
                    },
                )
                .await;
            match result {
                Err(e) if e.code == crate::ErrorCode::ElementStale && attempt == 0 => {
                    attempt += 1;
                    self.state(|s| {
                        if s.world == Some(context) {
                            s.world = None;
                        }
                    });
                }
                Err(e) => return Err(e),
                Ok(evaluated) => {
                    if let Some(exception) = evaluated.exception_details {
                        return Err(ActionError::internal(format!("{step}: {}", exception.message())));
                    }
                    return Ok(evaluated.result);
                }
            }
        }
    }
}

impl Tab {
    /// Evaluates `expression` (which may return a promise) in cdpilot's
    /// world and returns its value; the budget bounds the wait.
    pub async fn evaluate_in_world_awaiting(
        &self,
        budget: &Budget,
        step: &str,
        expression: &str,
    ) -> Result<Value, ActionError> {
        let context = self.world(budget).await?;
        let evaluated = budget
            .cdp(
                step,
                &self.session,
                runtime::Evaluate {
                    expression: expression.to_owned(),
                    context_id: Some(context),
                    return_by_value: true,
                    await_promise: true,
                    user_gesture: false,
                },
            )
            .await;
        let evaluated = match evaluated {
            Err(e) if e.code == crate::ErrorCode::ElementStale => {
                self.state(|s| {
                    if s.world == Some(context) {
                        s.world = None;
                    }
                });
                return Err(e);
            }
            other => other?,
        };
        if let Some(exception) = evaluated.exception_details {
            return Err(ActionError::internal(format!("{step}: {}", exception.message())));
        }
        Ok(evaluated.result.value.unwrap_or(Value::Null))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(method: &str, params: Value) -> Event {
        Event {
            session_id: "S".into(),
            method: method.into(),
            params,
        }
    }

    #[test]
    fn main_frame_navigation_bumps_the_document_and_drops_the_world() {
        let mut s = TabState {
            main_frame_id: "F1".into(),
            world: Some(7),
            ..Default::default()
        };
        s.apply(&event(
            "Page.frameNavigated",
            json!({"frame": {"id": "F2", "parentId": "F1", "url": "http://x/child"}}),
        ));
        assert_eq!(
            (s.document, s.world),
            (0, Some(7)),
            "a child frame navigation is not the document's"
        );
        s.apply(&event(
            "Page.frameNavigated",
            json!({"frame": {"id": "F1", "url": "http://x/next"}}),
        ));
        assert_eq!((s.document, s.world, s.url.as_str()), (1, None, "http://x/next"));
        s.apply(&event(
            "Page.navigatedWithinDocument",
            json!({"frameId": "F1", "url": "http://x/next#a"}),
        ));
        assert_eq!((s.document, s.url.as_str()), (1, "http://x/next#a"));
    }

    #[test]
    fn the_isolated_world_of_the_main_frame_is_tracked() {
        let mut s = TabState {
            main_frame_id: "F1".into(),
            ..Default::default()
        };
        let created = |id: i64, frame: &str, name: &str| {
            event(
                "Runtime.executionContextCreated",
                json!({"context": {"id": id, "name": name, "auxData": {"frameId": frame}}}),
            )
        };
        s.apply(&created(3, "F1", ""));
        s.apply(&created(4, "F2", WORLD));
        assert_eq!(s.world, None);
        s.apply(&created(5, "F1", WORLD));
        assert_eq!(s.world, Some(5));
        s.apply(&event(
            "Runtime.executionContextDestroyed",
            json!({"executionContextId": 5}),
        ));
        assert_eq!(s.world, None);
    }

    #[test]
    fn document_statuses_and_redirects_are_kept_by_loader() {
        let mut s = TabState {
            main_frame_id: "F1".into(),
            ..Default::default()
        };
        s.apply(&event(
            "Network.responseReceived",
            json!({"type": "Document", "frameId": "F1", "loaderId": "L1", "response": {"status": 404}}),
        ));
        s.apply(&event(
            "Network.responseReceived",
            json!({"type": "Script", "frameId": "F1", "loaderId": "L1", "response": {"status": 200}}),
        ));
        s.apply(&event("Network.requestWillBeSent", json!({"type": "Document", "frameId": "F1", "loaderId": "L2", "redirectResponse": {"status": 302}})));
        assert_eq!(s.document_response("L1").unwrap().status, Some(404));
        assert!(!s.document_response("L1").unwrap().redirected);
        assert!(s.document_response("L2").unwrap().redirected);
        assert!(s.document_response("L3").is_none());
    }
}
