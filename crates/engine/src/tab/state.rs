//! What a tab's event reader knows about its document: main frame,
//! document generation, dialogs, the console, and the network's answers for
//! main-frame documents; frame events of every session are handed to the
//! frame records (`crate::frames`), which own the frames' sessions and
//! worlds. Pure bookkeeping, unit-tested without a browser.

use std::collections::VecDeque;

use cdp::protocol::{network, page, runtime, webmcp};
use cdp::Event;

use super::WORLD;

/// How many main-frame documents' responses a tab keeps (status, redirect,
/// gate error: about 100 B each), the newest last (issue 24).
pub const DOCUMENTS_KEPT: usize = 16;

/// What the event reader knows about the tab's document. Its fields are
/// the tab's own (`tab/` reads and writes them); everyone else reads them
/// through the accessors below and changes them only through its named
/// methods.
#[derive(Debug, Default)]
pub struct TabState {
    pub(super) main_frame_id: String,
    /// Bumped on every cross-document navigation of the main frame: refs
    /// issued under an older generation are stale.
    pub(super) document: u64,
    /// When the current main-frame document was committed (`timing::now`
    /// seconds; 0 for a document cdpilot attached to after its commit):
    /// console messages and dialogs older than this belong to earlier pages.
    pub(super) document_since: f64,
    pub(super) url: String,
    /// Loader of the main frame's current document.
    pub(super) loader: String,
    /// The refs' one record: the document they were issued for, the latest
    /// snapshot tree.
    pub(super) refs: super::refs::Refs,
    /// Every frame's one record (the main frame's too): tree, sessions,
    /// worlds, numbers, ref counters. Changed only through its methods.
    pub(super) frames: crate::frames::FrameTree,
    /// Console messages and uncaught exceptions of the tab and its frames.
    pub(super) console: crate::console::Console,
    /// Native dialogs: pending and recently closed. A handle on the book,
    /// which the event reader feeds directly (it has its own lock).
    pub(super) dialogs: crate::dialogs::DialogBook,
    /// Responses of recent main-frame documents, newest last; at most
    /// [`DOCUMENTS_KEPT`].
    documents: VecDeque<DocumentResponse>,
    /// The last 500 requests of the tab and its frames (`browser_network`).
    pub(super) network: crate::network::Requests,
    /// What `browser_emulate` set on the tab (later calls change parts).
    pub(super) emulated: super::emulated::Emulated,
    /// The tools its frames registered (WebMCP) and the calls waiting on
    /// them; fed by the event reader when `[tools] page_tools` is on.
    pub(super) page_tools: crate::page_tools::PageTools,
    /// Calls that may change the page, counted as each starts and ends: a
    /// snapshot is answered again only under the same count (the
    /// serializer's reuse, issue 46).
    acts: u64,
    /// The box (left, top, width, height in CSS px of the viewport) of the
    /// element an acting tool last aimed at, kept until the door takes it
    /// for the call's trace step: the tool measured it anyway, so the
    /// trace costs no round trip of its own. Two calls acting in one tab at
    /// once may take each other's: only a video's outline would be off.
    aimed: Option<(f64, f64, f64, f64)>,
}

/// The network's answer for one main-frame document.
#[derive(Debug, Default, Clone)]
pub struct DocumentResponse {
    pub loader_id: String,
    pub status: Option<u16>,
    /// The request was answered with an HTTP redirect on its way.
    pub redirected: bool,
    /// The network error the egress gate met reaching the host
    /// (`net::ERR_CONNECTION_REFUSED`), said on its `502`.
    pub gate_error: Option<String>,
}

impl TabState {
    /// The main frame's CDP id.
    pub fn main_frame_id(&self) -> &str {
        &self.main_frame_id
    }

    /// The count of calls that may change the page (see [`TabState::acted`]).
    pub fn acts(&self) -> u64 {
        self.acts
    }

    /// A call that may change the page starts or ends in the tab.
    pub fn acted(&mut self) {
        self.acts += 1;
    }

    /// An acting tool measured its element at `rect` (left, top, width,
    /// height in CSS px of the viewport): see [`TabState::take_aimed`].
    pub fn aimed_at(&mut self, rect: (f64, f64, f64, f64)) {
        self.aimed = Some(rect);
    }

    /// The box an acting tool last aimed at since the last take, taken.
    pub fn take_aimed(&mut self) -> Option<(f64, f64, f64, f64)> {
        self.aimed.take()
    }

    /// The main document's generation (bumped by every cross-document
    /// navigation of the main frame).
    pub fn document(&self) -> u64 {
        self.document
    }

    /// When the current main-frame document was committed (`timing::now`).
    pub fn document_since(&self) -> f64 {
        self.document_since
    }

    /// The main frame's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The frame records.
    pub fn frames(&self) -> &crate::frames::FrameTree {
        &self.frames
    }

    /// A subframe's number, given now if it has none.
    pub fn frame_number_now(&mut self, id: &str) -> Option<u32> {
        self.frames.number_now(id)
    }

    /// The tools its frames registered (WebMCP).
    pub fn page_tools(&self) -> &crate::page_tools::PageTools {
        &self.page_tools
    }

    /// The page tools' record, for `browser_page_tool` (waiting on an
    /// invocation) and the snapshot (saying once that the browser has none).
    pub fn page_tools_mut(&mut self) -> &mut crate::page_tools::PageTools {
        &mut self.page_tools
    }

    /// The console ring.
    pub fn console(&self) -> &crate::console::Console {
        &self.console
    }

    /// The dialog book (a handle; it has its own lock).
    pub fn dialogs(&self) -> &crate::dialogs::DialogBook {
        &self.dialogs
    }

    /// The request log.
    pub fn network(&self) -> &crate::network::Requests {
        &self.network
    }

    /// What `browser_emulate` set on the tab.
    pub fn emulated(&self) -> &super::emulated::Emulated {
        &self.emulated
    }

    /// The session gave the tab its id (`t2`): its refs carry it, except
    /// the first tab's (`t1`), whose refs stay `e5`.
    pub fn tab_named(&mut self, id: &str) {
        self.refs.name_tab(id);
    }

    /// What starts each of the tab's refs before the frame part: `t2`, or
    /// nothing.
    pub fn refs_tab(&self) -> String {
        self.refs.tab().unwrap_or_default().to_owned()
    }

    /// The document generation the current refs were issued for, if any.
    pub fn refs_document(&self) -> Option<u64> {
        self.refs.document()
    }

    /// The latest snapshot tree, if its refs are the current document's.
    pub fn latest_tree(&self) -> Option<&str> {
        let document = self.refs.document()?;
        (document == self.document).then_some(())?;
        self.refs.tree_of(document)
    }

    /// A snapshot issued refs for `document`; if a navigation raced it, the
    /// world was replaced and the serializer ran again, so the refs are the
    /// document the tab is in now.
    pub fn refs_issued(&mut self, document: u64) {
        self.refs.issued_for(self.document.max(document));
    }

    /// Remembers a snapshot's full tree; returns the previous tree of the
    /// same document, frame and selector (what `diff` compares with).
    pub fn remember_snapshot(&mut self, key: super::refs::Key, tree: String) -> Option<String> {
        self.refs.remember(key, tree)
    }

    /// A snapshot met frame `id` (under `parent`, its element `owner_node`):
    /// its number (`fN`), given on first sight.
    pub fn frame_met(&mut self, id: &str, parent: &str, owner_node: i64) -> u32 {
        self.frames.met(id, parent, owner_node)
    }

    /// A snapshot of frame `id` issued refs up to `next`.
    pub fn frame_refs_issued(&mut self, id: &str, next: u64) {
        self.frames.refs_issued(id, next)
    }

    /// Whether the tab's current document issued `reference` (a frame's
    /// refs are counted in the frame's record; a removed frame's count):
    /// one it never issued is another tab's, another frame's, or made up.
    pub fn issued(&self, reference: &str) -> bool {
        if self.refs.document() != Some(self.document) {
            return false;
        }
        if super::refs::split_tab(reference).0 != self.refs.tab() {
            return false;
        }
        let Some((frame, number)) = super::refs::parse(reference) else {
            return false;
        };
        let id = match frame {
            None => self.main_frame_id(),
            Some(n) => match self.frames.by_number(n) {
                Some(f) => f.id(),
                None => return self.frames.was_numbered(n),
            },
        };
        number < self.frames.next_ref(id)
    }

    /// `browser_console clear`: forgets the console's messages.
    pub fn clear_console(&mut self) {
        self.console.clear();
    }

    /// `browser_emulate` set the viewport.
    /// `own_screen`: the browser's own screen, measured before the first.
    pub fn emulated_metrics(&mut self, metrics: (u32, u32, f64, bool), own_screen: (u32, u32)) {
        self.emulated.set_metrics(metrics, own_screen);
    }

    /// `browser_network conditions` (or `browser_emulate offline`) set the
    /// network conditions (`None`: cleared).
    pub fn emulated_network(&mut self, conditions: Option<cdp::protocol::network::EmulateNetworkConditions>) {
        self.emulated.set_network(conditions);
    }

    /// `browser_emulate` set the user agent and locale.
    pub fn emulated_agent(&mut self, user_agent: String, locale: Option<String>) {
        self.emulated.set_agent(user_agent, locale);
    }

    /// Applies an event of the tab's own session (`from_tab`) or of one of
    /// its child sessions (iframes, workers).
    pub fn apply_from(&mut self, event: &Event, from_tab: bool) {
        self.apply_frames(event, from_tab);
        self.apply_page_tools(event, from_tab);
        self.console.record(event);
        self.network.record(event);
        if from_tab {
            self.apply_document(event);
        }
    }

    /// Hands the WebMCP domain's events (every session's) to the page
    /// tools' record; a document replaced takes its frame's tools along.
    fn apply_page_tools(&mut self, event: &Event, from_tab: bool) {
        if let Some(added) = event.decode::<webmcp::ToolsAdded>() {
            self.page_tools.added(&event.session_id, added.tools);
        } else if let Some(removed) = event.decode::<webmcp::ToolsRemoved>() {
            self.page_tools.removed(&removed.tools);
        } else if let Some(answer) = event.decode::<webmcp::ToolResponded>() {
            self.page_tools.responded(answer);
        } else if event.method == cdp::transport::DROPPED {
            // A page tool's answer over the limit: its call fails now.
            #[derive(serde::Deserialize)]
            struct Note {
                bytes: u64,
                #[serde(rename = "invocationId")]
                invocation_id: Option<String>,
            }
            let note = serde_json::from_str::<Note>(event.params()).ok();
            if let Some((bytes, invocation_id)) = note.and_then(|n| Some((n.bytes, n.invocation_id?))) {
                self.page_tools.responded(webmcp::ToolResponded {
                    invocation_id,
                    status: "Error".into(),
                    error_text: format!(
                        "its answer of {} MiB was over cdpilot's limit of {} MiB per message from the browser and was dropped",
                        (bytes + (1 << 19)) >> 20,
                        cdp::transport::MAX_MESSAGE >> 20
                    ),
                    ..Default::default()
                });
            }
        } else if let Some(navigated) = event.decode::<page::FrameNavigated>() {
            let main = from_tab && navigated.frame.parent_id.is_none();
            self.page_tools.frame_navigated(&navigated.frame.id, main);
        }
    }

    /// Applies one event of the tab's own session. Pure bookkeeping,
    /// unit-tested without a browser.
    #[cfg(test)]
    pub fn apply(&mut self, event: &Event) {
        self.apply_from(event, true)
    }

    /// Hands what every session says about frames and their script
    /// contexts to the frame records. Contexts are keyed by the session that
    /// reported them (`None`: the tab's own).
    fn apply_frames(&mut self, event: &Event, from_tab: bool) {
        let session = (!from_tab).then_some(event.session_id.as_str());
        if let Some(attached) = event.decode::<page::FrameAttached>() {
            if let Some(parent) = &attached.parent_frame_id {
                self.frames.frame_attached(&attached.frame_id, parent);
            }
        } else if let Some(navigated) = event.decode::<page::FrameNavigated>() {
            let frame = &navigated.frame;
            let (id, url, origin) = (&frame.id, &frame.url, &frame.security_origin);
            match frame.parent_id.as_deref() {
                // A new main document: the old one's frames are gone.
                None if from_tab => self.frames.main_navigated(id, url, origin),
                parent => self.frames.frame_navigated(id, parent, url, origin),
            }
        } else if let Some(within) = event.decode::<page::NavigatedWithinDocument>() {
            self.frames.moved_within(&within.frame_id, &within.url);
        } else if let Some(detached) = event.decode::<page::FrameDetached>() {
            // `swap`: it moved to another process, it did not go away.
            self.frames
                .frame_detached(&detached.frame_id, detached.reason == "swap");
        } else if let Some(created) = event.decode::<runtime::ExecutionContextCreated>() {
            let context = &created.context;
            self.frames.context_created(
                session,
                &context.aux_data.frame_id,
                context.id,
                context.name == WORLD,
                context.aux_data.is_default,
            );
        } else if let Some(destroyed) = event.decode::<runtime::ExecutionContextDestroyed>() {
            self.frames
                .context_destroyed(session, destroyed.execution_context_id);
        } else if event.is::<runtime::ExecutionContextsCleared>() {
            self.frames.contexts_cleared(session);
        }
    }

    /// What the tab's own session says about the main document.
    fn apply_document(&mut self, event: &Event) {
        if let Some(navigated) = event.decode::<page::FrameNavigated>() {
            let frame = navigated.frame;
            if frame.parent_id.is_none() {
                self.main_frame_id = frame.id;
                self.url = frame.url;
                self.loader = frame.loader_id;
                self.document += 1;
                self.document_since = crate::timing::now();
                self.dialogs.page_left();
            }
        } else if let Some(within) = event.decode::<page::NavigatedWithinDocument>() {
            if within.frame_id == self.main_frame_id {
                self.url = within.url;
            }
        } else if let Some(sent) = event.decode::<network::RequestWillBeSent>() {
            if sent.kind == "Document" && sent.redirect_response.is_some() {
                self.document_mut(&sent.loader_id).redirected = true;
            }
        } else if let Some(received) = event.decode::<network::ResponseReceived>() {
            if received.kind == "Document"
                && received.frame_id.as_deref() == Some(self.main_frame_id.as_str())
            {
                let status = received.response.status as u16;
                let gate_error = (status == 502)
                    .then(|| received.response.header(crate::egress::GATE_ERROR_HEADER))
                    .flatten()
                    .map(str::to_owned);
                let document = self.document_mut(&received.loader_id);
                document.status = Some(status);
                document.gate_error = gate_error;
            }
        }
    }

    /// Attached to a page that had already loaded: its frame events are
    /// past, so the main frame and the frame records start from the tree
    /// Chrome reports (unless events already told us).
    pub fn adopt_frame_tree(&mut self, tree: &cdp::protocol::page::FrameTree) {
        if !self.main_frame_id.is_empty() {
            return;
        }
        let main = &tree.frame;
        self.main_frame_id = main.id.clone();
        self.url = main.url.clone();
        self.frames
            .main_navigated(&main.id, &main.url, &main.security_origin);
        let mut pending: Vec<(&str, &cdp::protocol::page::FrameTree)> =
            tree.child_frames.iter().map(|c| (main.id.as_str(), c)).collect();
        while let Some((parent, child)) = pending.pop() {
            let f = &child.frame;
            self.frames.frame_attached(&f.id, parent);
            self.frames
                .frame_navigated(&f.id, Some(parent), &f.url, &f.security_origin);
            pending.extend(child.child_frames.iter().map(|c| (f.id.as_str(), c)));
        }
    }

    /// cdpilot's isolated world in the current main document, once known
    /// (the tests read it).
    #[cfg(test)]
    pub fn world(&self) -> Option<i64> {
        self.frames.world(&self.main_frame_id, None)
    }

    /// The connection was replaced: every session, world and ref of the old
    /// one is gone; the supervisor's records (dialogs, frames, console) stay.
    pub fn forget_sessions(&mut self) {
        self.frames.forget_sessions();
        self.refs.forget_document();
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
        if self.documents.len() >= DOCUMENTS_KEPT {
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
    use serde_json::{json, Value};

    fn event(method: &str, params: Value) -> Event {
        Event::new("S", method, &params)
    }

    /// A tab on a page whose main frame is `main` (as attaching finds it).
    fn on_page(main: &str) -> TabState {
        let mut s = TabState::default();
        let frame = cdp::protocol::page::Frame {
            id: main.into(),
            ..Default::default()
        };
        s.adopt_frame_tree(&cdp::protocol::page::FrameTree {
            frame,
            child_frames: vec![],
        });
        s
    }

    #[test]
    fn contexts_of_a_frame_session_are_that_sessions() {
        let mut s = on_page("F1");
        s.apply(&event(
            "Page.frameAttached",
            json!({"frameId": "O", "parentFrameId": "F1"}),
        ));
        s.frames.oopif_attached("O", Some("F1"), "http://b/", "OS");
        let created = Event::new(
            "OS",
            "Runtime.executionContextCreated",
            &json!({"context": {"id": 3, "name": WORLD, "auxData": {"frameId": "O"}}}),
        );
        s.apply_from(&created, false);
        assert_eq!(s.frames.world("O", Some("OS")), Some(3));
        // The tab's context 3 is another one: destroying it keeps O's.
        s.apply(&event(
            "Runtime.executionContextDestroyed",
            json!({"executionContextId": 3}),
        ));
        assert_eq!(s.frames.world("O", Some("OS")), Some(3));
        s.apply_from(
            &Event::new("OS", "Runtime.executionContextsCleared", &json!({})),
            false,
        );
        assert_eq!(s.frames.world("O", Some("OS")), None);
    }

    #[test]
    fn main_frame_navigation_bumps_the_document_and_drops_the_world() {
        let mut s = on_page("F1");
        s.frames.set_world("F1", None, 7);
        s.apply(&event(
            "Page.frameNavigated",
            json!({"frame": {"id": "F2", "parentId": "F1", "url": "http://x/child"}}),
        ));
        assert_eq!(
            (s.document, s.world()),
            (0, Some(7)),
            "a child frame navigation is not the document's"
        );
        s.apply(&event(
            "Page.frameNavigated",
            json!({"frame": {"id": "F1", "url": "http://x/next"}}),
        ));
        assert_eq!(
            (s.document, s.world(), s.url.as_str()),
            (1, None, "http://x/next")
        );
        s.apply(&event(
            "Page.navigatedWithinDocument",
            json!({"frameId": "F1", "url": "http://x/next#a"}),
        ));
        assert_eq!((s.document, s.url.as_str()), (1, "http://x/next#a"));
    }

    #[test]
    fn the_isolated_world_of_the_main_frame_is_tracked() {
        let mut s = on_page("F1");
        let created = |id: i64, frame: &str, name: &str| {
            event(
                "Runtime.executionContextCreated",
                json!({"context": {"id": id, "name": name, "auxData": {"frameId": frame}}}),
            )
        };
        s.apply(&created(3, "F1", ""));
        s.apply(&created(4, "F2", WORLD));
        assert_eq!(s.world(), None);
        s.apply(&created(5, "F1", WORLD));
        assert_eq!(s.world(), Some(5));
        s.apply(&event(
            "Runtime.executionContextDestroyed",
            json!({"executionContextId": 5}),
        ));
        assert_eq!(s.world(), None);
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

    /// Issue 24: a tab that navigates without end keeps the responses of
    /// its last [`DOCUMENTS_KEPT`] documents, the newest among them.
    #[test]
    fn a_tab_keeps_its_last_sixteen_documents() {
        let mut s = TabState {
            main_frame_id: "F1".into(),
            ..Default::default()
        };
        for i in 0..DOCUMENTS_KEPT + 10 {
            s.apply(&event(
                "Network.responseReceived",
                json!({"type": "Document", "frameId": "F1", "loaderId": format!("L{i}"), "response": {"status": 200 + i}}),
            ));
        }
        assert_eq!(s.documents.len(), DOCUMENTS_KEPT);
        let newest = format!("L{}", DOCUMENTS_KEPT + 9);
        assert_eq!(
            s.document_response(&newest).unwrap().status,
            Some(209 + DOCUMENTS_KEPT as u16)
        );
        assert!(s.document_response("L9").is_none(), "the oldest went first");
        assert!(s.document_response("L10").is_some());
    }
}
