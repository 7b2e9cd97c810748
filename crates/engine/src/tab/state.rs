//! What a tab's event reader knows about its document: main frame,
//! document generation, cdpilot's isolated world, dialogs, and the network's
//! answers for main-frame documents. Pure bookkeeping, unit-tested without a
//! browser.

use std::collections::VecDeque;

use cdp::Event;
use serde_json::Value;

use super::WORLD;

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
    /// Loader of the main frame's current document.
    pub loader: String,
    /// The document generation the current refs were issued for.
    pub refs_document: Option<u64>,
    /// The supervisor's frame tree (every session's frame events).
    pub frame_tree: crate::frame_tree::FrameTree,
    /// The page's own (default) script context of each subframe, by frame
    /// id, with the session it belongs to.
    pub page_contexts: std::collections::HashMap<String, (String, i64)>,
    /// Frames snapshots have shown: numbers, sessions, worlds.
    pub frames: crate::frames::FrameRegistry,
    /// Console messages and uncaught exceptions of the tab and its frames.
    pub console: crate::console::Console,
    /// Native dialogs: pending and recently closed. A handle on the book,
    /// which the event reader feeds directly (it has its own lock).
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
    /// Applies an event of the tab's own session (`from_tab`) or of one of
    /// its child sessions (iframes, workers).
    pub fn apply_from(&mut self, event: &Event, from_tab: bool) {
        if event.method.starts_with("Page.frame") {
            self.frame_tree.apply(&event.method, &event.params);
        }
        match event.method.as_str() {
            "Runtime.consoleAPICalled" | "Runtime.exceptionThrown" => {
                self.console.record(&event.method, &event.params)
            }
            "Runtime.executionContextCreated" => {
                let context = &event.params["context"];
                let frame = context["auxData"]["frameId"].as_str().unwrap_or_default();
                if let Some(id) = context["id"].as_i64() {
                    if context["name"] == WORLD && frame != self.main_frame_id {
                        self.frames.set_world(frame, &event.session_id, id);
                    }
                    if context["auxData"]["isDefault"] == true {
                        self.page_contexts
                            .insert(frame.to_owned(), (event.session_id.clone(), id));
                    }
                }
                if from_tab {
                    self.apply(event);
                }
            }
            "Runtime.executionContextDestroyed" => {
                if let Some(id) = event.params["executionContextId"].as_i64() {
                    self.frames.forget_world(&event.session_id, id);
                    self.page_contexts
                        .retain(|_, (s, c)| !(s == &event.session_id && *c == id));
                }
                if from_tab {
                    self.apply(event);
                }
            }
            "Runtime.executionContextsCleared" => {
                self.frames.forget_session_worlds(&event.session_id);
                self.page_contexts.retain(|_, (s, _)| s != &event.session_id);
                if from_tab {
                    self.apply(event);
                }
            }
            _ if from_tab => self.apply(event),
            _ => {}
        }
    }

    /// Applies one event. Pure bookkeeping, unit-tested without a browser.
    pub fn apply(&mut self, event: &Event) {
        let p = &event.params;
        match event.method.as_str() {
            "Page.frameNavigated" => {
                let frame = &p["frame"];
                if frame.get("parentId").is_none_or(Value::is_null) {
                    self.main_frame_id = frame["id"].as_str().unwrap_or_default().to_owned();
                    self.url = frame["url"].as_str().unwrap_or_default().to_owned();
                    self.loader = frame["loaderId"].as_str().unwrap_or_default().to_owned();
                    self.document += 1;
                    self.frames.reset();
                    self.dialogs.page_left();
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

    /// The connection was replaced: every session, world and ref of the old
    /// one is gone; the supervisor's records (dialogs, frames, console) stay.
    pub fn forget_sessions(&mut self) {
        self.page_contexts.clear();
        self.frames.reset();
        self.world = None;
        self.refs_document = None;
        self.frame_tree.forget_sessions();
    }

    /// HTTP status of the main frame's current document, when known.
    pub fn current_status(&self) -> Option<u16> {
        self.document_response(&self.loader).and_then(|r| r.status)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
