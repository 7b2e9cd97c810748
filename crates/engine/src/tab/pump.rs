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
//! script sees the prepared environment. A worker's blocklist is given it
//! there; what that blocklist refused is read here from the worker's
//! session's events (`policy::blocklist::Watch`, owned by the reader) and
//! recorded in the egress door of the worker's browser context. The reader
//! itself never awaits a CDP reply.

use std::sync::{Arc, Mutex};

use cdp::protocol::fetch::{self, RequestPaused};
use cdp::protocol::{network, page, runtime, target};
use cdp::{Connection, Session};
use tokio::time::Instant;

/// How long preparing a paused iframe or worker may take (its own budget:
/// no caller waits on it, and the child runs only once it is done).
const CHILD_SETUP_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);

use super::TabState;
use crate::dialogs::{self, Watchdogs};
pub use crate::dialogs::{DialogPolicy, DialogRules};
use crate::egress::{workers, ContextPorts};
use crate::events::SessionEvent;
use crate::policy::{blocklist, gate, Gate, Policy};

/// Installed in every document of the tab and its frames before any page
/// script runs, on a browser cdpilot did not start ([`TabSetup::webdriver_script`]):
/// automation must not announce itself. A browser cdpilot launches has
/// Chrome's own switch instead (`--disable-blink-features=AutomationControlled`,
/// `cdp::launch`), whose getter is the native one.
pub const NO_WEBDRIVER: &str =
    "Object.defineProperty(Navigator.prototype, 'webdriver', { get: () => false, configurable: true });";

/// Installed in the page's own world of every document of the tab and its
/// frames before any page script runs, on a browser whose WebRTC policy
/// cdpilot could not set ([`TabSetup::no_webrtc`]): no peer connection,
/// so no ICE gathering and no STUN over UDP around the egress gate.
///
/// Chrome runs it in every document of the tab's session, a frame's first
/// one included (a fresh `about:blank` or `srcdoc` iframe's window), so the
/// page's own frames never hand the API back. A popup is another target:
/// its first window, and every frame a script builds in it, are the
/// opener's to script before the popup's own session could install
/// anything (issue 41, finding 3). So every way a script reaches another
/// same-origin realm holds that realm before handing it over: the window
/// `window.open` (and `document.open(url, name, features)`) returns, an
/// element's `contentWindow`, `contentDocument` and `getSVGDocument()`.
/// In a realm reached that way (where Chrome runs nothing), every call
/// that can put a frame in a document (the DOM's insertion methods, the
/// `innerHTML`-like setters, `document.open`/`write`) holds that
/// document's frames once it returns, recursively, so `window[i]` and a
/// named frame reach nothing unheld; the scripts such a call would run
/// inside itself (a fragment's, written markup's) run only once the frames
/// it made are held; a mutation observer holds what appears later. What it
/// cannot reach: a popup's frame navigated to a new document (a second
/// `srcdoc`, a same-origin URL) before the popup's own session has
/// installed this script there (a race the tests' re-navigated popup frame
/// does not win; the threat model's WebRTC row; `doctor`).
pub const NO_WEBRTC: &str = r#"(() => {
  const names = ['RTCPeerConnection', 'webkitRTCPeerConnection'];
  const hooked = new WeakSet();
  const own = globalThis;
  const rawReplace = Node.prototype.replaceChild;
  // An inserted tree's scripts run inside the insertion, after its
  // frames exist: into a realm Chrome runs nothing in, they are taken out
  // for the insertion and put back (then run) once its frames are held.
  const detach = (args) => {
    const moved = [];
    for (const n of args) {
      try {
        if (!n || typeof n.querySelector !== 'function' || !n.querySelector('iframe,frame,object,embed')) continue;
        for (const script of n.querySelectorAll('script')) {
          const mark = script.ownerDocument.createComment('');
          rawReplace.call(script.parentNode, mark, script);
          moved.push([mark, script]);
        }
      } catch (e) {}
    }
    return moved;
  };
  const putBack = (moved) => {
    for (const [mark, script] of moved) { try { rawReplace.call(mark.parentNode, script, mark); } catch (e) {} }
  };
  const hold = (w) => {
    if (!w) return;
    try {
      for (const name of names) { try { delete w[name]; } catch (e) {} }
      hook(w);
      for (let i = 0; i < w.length; i++) hold(w[i]);
    } catch (e) {}
  };
  const holdDoc = (d) => { try { if (d) hold(d.defaultView); } catch (e) {} };
  const windowOf = (node) => {
    try {
      const n = node.commonAncestorContainer || node;
      return (n.ownerDocument || n).defaultView;
    } catch (e) { return null; }
  };
  const hook = (w) => {
    const proto = w.Node && w.Node.prototype;
    if (!proto || hooked.has(proto)) return;
    hooked.add(proto);
    // After a call that may have put a frame in a document: every frame of
    // that document's window held. A realm Chrome runs this script in holds
    // its own frames; a realm reached from outside (a popup's) does not.
    const foreign = w !== own;
    const all = (self) => {
      const v = windowOf(self);
      if (foreign) hold(w);
      if (v && v !== own && v !== w) hold(v);
    };
    const wrap = (owner, key, make) => {
      const d = owner && Object.getOwnPropertyDescriptor(owner, key);
      const next = d && make(d);
      if (next) Object.defineProperty(owner, key, next);
    };
    const after = (fn) => function (...args) {
      const v = windowOf(this);
      const moved = foreign || (v && v !== own) ? detach(args) : [];
      try { return fn.apply(this, args); } finally { all(this); putBack(moved); if (moved.length) all(this); }
    };
    const method = (owner, key) => wrap(owner, key, (d) =>
      typeof d.value === 'function' && { ...d, value: after(d.value) });
    const setter = (owner, key) => wrap(owner, key, (d) => d.set && { ...d, set: after(d.set) });
    for (const C of [w.HTMLIFrameElement, w.HTMLFrameElement, w.HTMLObjectElement, w.HTMLEmbedElement]) {
      const p = C && C.prototype;
      wrap(p, 'contentWindow', (d) => d.get && { ...d, get: function () { const v = d.get.call(this); hold(v); return v; } });
      wrap(p, 'contentDocument', (d) => d.get && { ...d, get: function () { const v = d.get.call(this); holdDoc(v); return v; } });
      wrap(p, 'getSVGDocument', (d) => typeof d.value === 'function' && { ...d, value: function (...a) { const v = d.value.apply(this, a); holdDoc(v); return v; } });
    }
    for (const key of ['appendChild', 'insertBefore', 'replaceChild', 'moveBefore']) method(proto, key);
    for (const C of [w.Element, w.CharacterData, w.DocumentType, w.Document, w.DocumentFragment, w.ShadowRoot]) {
      const p = C && C.prototype;
      for (const key of ['append', 'prepend', 'before', 'after', 'replaceWith', 'replaceChildren',
        'insertAdjacentElement', 'insertAdjacentHTML', 'setHTMLUnsafe', 'execCommand']) method(p, key);
      for (const key of ['innerHTML', 'outerHTML']) setter(p, key);
    }
    method(w.Range && w.Range.prototype, 'insertNode');
    const D = w.Document && w.Document.prototype;
    // document.open(url, name, features) is window.open.
    wrap(D, 'open', (d) => typeof d.value === 'function' && { ...d, value: function (...a) {
      const v = d.value.apply(this, a);
      if (a.length >= 3) hold(v); else all(this);
      return v;
    } });
    // Written markup's scripts run inside the write: into a realm Chrome
    // runs nothing in, the markup is written up to each script, the
    // frames it made held before the script runs (the parser reads the
    // pieces as one stream).
    wrap(D, 'write', (d) => typeof d.value === 'function' && { ...d, value: function (...a) {
      if (windowOf(this) === own) return d.value.apply(this, a);
      const pieces = a.join('').split(/(?=<script)/i);
      try { for (const piece of pieces) { d.value.call(this, piece); all(this); } } finally { all(this); }
    } });
    wrap(D, 'writeln', (d) => typeof d.value === 'function' && { ...d, value: function (...a) {
      this.write(a.join('') + '\n');
    } });
    const open = w.open;
    if (typeof open === 'function') {
      w.open = function (...args) { const v = open.apply(this, args); hold(v); return v; };
    }
    if (foreign && w.MutationObserver) {
      try { new w.MutationObserver(() => hold(w)).observe(w.document, { childList: true, subtree: true }); } catch (e) {}
    }
  };
  hold(own);
})();"#;

/// What every session of the tab is given before it runs, and how its
/// dialogs are handled.
#[derive(Debug, Clone, Default)]
pub struct TabSetup {
    /// The browser's user agent with `HeadlessChrome` made `Chrome`, and
    /// its client hints ([`super::identity`]).
    pub user_agent: Option<super::identity::UserAgent>,
    /// `navigator.webdriver` is made false by a script ([`NO_WEBDRIVER`]):
    /// a browser cdpilot did not start, whose switches are not its own.
    pub webdriver_script: bool,
    /// A shared or service worker's `navigator.userAgent` is made the
    /// session's by a script before it runs ([`super::identity::WORKER_SCRIPT`]):
    /// a browser not given the user agent as a switch (attached, or a
    /// launch whose version could not be read first).
    pub worker_agent: bool,
    pub dialogs: DialogRules,
    /// The dialog bridge is on.
    pub bridge: bool,
    /// The URL rules every document request is judged by.
    pub policy: Arc<Policy>,
    /// WebRTC's peer connections are taken away ([`NO_WEBRTC`]): a browser
    /// cdpilot did not start (attached, an endpoint, the user's own
    /// Chrome), whose WebRTC IP policy is not cdpilot's to set.
    pub no_webrtc: bool,
    /// The egress door of each of the browser's contexts: what a tab's
    /// worker's blocklist refused is recorded in its context's, for the
    /// session owning it to report.
    pub doors: Arc<ContextPorts>,
}

impl TabSetup {
    /// The session's one `Fetch.enable`: the dialog bridge's requests and,
    /// when the URL policy can refuse anything, every document request;
    /// with a route set (`routed`), every request. Empty: nothing is
    /// intercepted.
    pub(super) fn fetch_patterns(&self, routed: bool) -> Vec<fetch::RequestPattern> {
        let mut patterns = Vec::new();
        if self.bridge {
            patterns.push(dialogs::bridge::fetch_pattern());
        }
        if self.policy.restricts() || routed {
            patterns.push(gate::pattern(&self.policy, routed));
        }
        patterns
    }

    /// Disguises one page or iframe session (user agent, no webdriver) and,
    /// with the bridge on, installs the dialog override and its interception
    /// (every request when the tab's session has a route set: `routed`).
    pub async fn disguise(
        &self,
        session: &Session,
        routed: bool,
        deadline: Instant,
    ) -> Result<(), cdp::CdpError> {
        let before_scripts = |source: &str| page::AddScriptToEvaluateOnNewDocument {
            source: source.to_owned(),
            world_name: None,
            run_immediately: true,
        };
        let intercept = async {
            match self.fetch_patterns(routed) {
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
                .call(before_scripts(dialogs::bridge::OVERRIDE), deadline)
                .await
                .map(|_| ())
        };
        // cdpilot's world, with the snapshot serializer in it, made in every
        // document as it starts: the first snapshot of a page (and of each
        // of its frames) finds it ready.
        let world = session.call(
            page::AddScriptToEvaluateOnNewDocument {
                source: crate::scripts::SERIALIZER.to_owned(),
                world_name: Some(super::WORLD.to_owned()),
                run_immediately: true,
            },
            deadline,
        );
        let script = async {
            if self.webdriver_script {
                session.call(before_scripts(NO_WEBDRIVER), deadline).await?;
            }
            if self.no_webrtc {
                session.call(before_scripts(NO_WEBRTC), deadline).await?;
            }
            Ok(())
        };
        let agent = self.agent(session, deadline);
        // All sent at once, in this order (Chrome runs a session's commands
        // in order, so the scripts are installed in this order): a new page
        // that is paused before its first request answers none of them
        // until it is let run, which must not wait for their answers.
        let (a, b, c, d, e) = tokio::join!(install, intercept, world, script, agent);
        a.and(b).and(c.map(|_| ())).and(d).and(e)
    }

    /// The session's user agent and client hints (a page, an iframe, a
    /// worker: a dedicated worker also inherits its frame's), when the
    /// browser's own say `HeadlessChrome`.
    pub async fn agent(&self, session: &Session, deadline: Instant) -> Result<(), cdp::CdpError> {
        match &self.user_agent {
            Some(ua) => {
                let agent = network::SetUserAgentOverride {
                    user_agent: ua.string.clone(),
                    user_agent_metadata: Some(ua.metadata.clone()),
                };
                session.call(agent, deadline).await.map(|_| ())
            }
            None => Ok(()),
        }
    }

    /// A paused shared or service worker's user agent and hints: its
    /// requests' through the override, its own `navigator.userAgent`
    /// through [`super::identity::WORKER_SCRIPT`] where the browser was not
    /// given it as a switch.
    pub async fn worker_agent(&self, session: &Session, deadline: Instant) -> Result<(), cdp::CdpError> {
        self.agent(session, deadline).await?;
        let Some(ua) = self.user_agent.as_ref().filter(|_| self.worker_agent) else {
            return Ok(());
        };
        let script = runtime::Evaluate {
            expression: super::identity::worker_script(&ua.string),
            context_id: None,
            return_by_value: true,
            await_promise: false,
            user_gesture: false,
            repl_mode: false,
        };
        let evaluated = session.call(script, deadline).await?;
        if let Some(exception) = evaluated.exception_details {
            tracing::debug!("giving a worker the user agent failed: {}", exception.message());
        }
        Ok(())
    }
}

pub(super) fn spawn(
    conn: Connection,
    tab_session: String,
    state: Arc<Mutex<TabState>>,
    setup: Arc<TabSetup>,
    gate: Arc<Gate>,
) -> tokio::task::JoinHandle<()> {
    // The tab's session and every session attached beneath it (routed by
    // the connection's session table): another tab's events are never
    // queued here, nor decoded.
    let mut events = conn.tree_events(&tab_session);
    let book = state.lock().unwrap().dialogs.clone();
    tokio::spawn(async move {
        // Dropped with this task (the tab aborts it), ending the policy tasks.
        let watchdogs = Watchdogs::new(setup.dialogs.clone());
        // Children being prepared: owned here, so they end with the reader
        // (a tab that stops leaves no task behind).
        let mut preparing = tokio::task::JoinSet::new();
        // What the tab's workers' blocklists refused (none without a rule
        // refusing by path): each worker's kind and browser context.
        let mut blocklisted = blocklist::Watch::<(String, Option<String>)>::new(setup.policy.clone());
        while let Some(event) = events.recv().await {
            if let Some(attached) = event.decode::<target::AttachedToTarget>() {
                let child = attached.session_id;
                let info = attached.target_info;
                if let Some(watch) = blocklisted.as_mut().filter(|_| is_worker(&info.kind)) {
                    watch.follow(&child, (info.kind.clone(), info.browser_context_id.clone()));
                }
                if info.kind == "iframe" {
                    let mut state = state.lock().unwrap();
                    state.frames.oopif_attached(
                        &info.target_id,
                        info.parent_frame_id.as_deref(),
                        &info.url,
                        &child,
                    );
                }
                let session = conn.session(child);
                let setup = setup.clone();
                let routed = gate.routed();
                let conditions = state.lock().unwrap().emulated().network();
                while preparing.try_join_next().is_some() {}
                preparing.spawn(async move {
                    prepare_child(&session, &info.kind, &setup, routed, conditions).await
                });
            } else if let Some(detached) = event.decode::<target::DetachedFromTarget>() {
                let child = detached.session_id;
                if let Some(watch) = &mut blocklisted {
                    watch.forget(&child);
                }
                if !child.is_empty() {
                    let tools_changed = {
                        let mut state = state.lock().unwrap();
                        state.frames.oopif_detached(&child);
                        let before = state.page_tools.generation();
                        state.page_tools.session_detached(&child);
                        state.page_tools.generation() != before
                    };
                    if tools_changed {
                        book.events().emit(|tab| SessionEvent::PageToolsChanged { tab });
                    }
                }
            } else if is_document_request(&event) {
                if let Some(paused) = event.decode::<RequestPaused>() {
                    gate.paused(conn.session(event.session_id.clone()), paused);
                }
            } else {
                if let Some(refused) = blocklisted.as_mut().and_then(|w| w.event(&event)) {
                    let (kind, context) = &refused.worker;
                    let door = setup.doors.of(context.as_deref());
                    let (url, rule) = (&refused.verdict.url, &refused.verdict.rule);
                    workers::report(door, url, rule, &refused.resource, kind);
                }
                let from_tab = event.session_id == tab_session;
                let opened = book.apply(&event);
                let (navigated, tools_changed) = {
                    let mut state = state.lock().unwrap();
                    let before = from_tab.then(|| (state.document, state.url.clone()));
                    let tools_before = state.page_tools.generation();
                    state.apply_from(&event, from_tab);
                    let navigated = before
                        .filter(|(document, url)| *document != state.document || *url != state.url)
                        .map(|_| state.url.clone());
                    (navigated, state.page_tools.generation() != tools_before)
                };
                if let Some(url) = navigated {
                    book.events().emit(|tab| SessionEvent::Navigated { tab, url });
                }
                if tools_changed {
                    book.events().emit(|tab| SessionEvent::PageToolsChanged { tab });
                }
                if let Some(dialog) = opened {
                    let session = conn.session(dialog.session.clone());
                    watchdogs.opened(&book, session, dialog);
                }
            }
        }
    })
}

/// With `[tools] page_tools` on, turns on the WebMCP domain in one of the
/// tab's sessions (Chrome then reports the tools already registered).
/// What the browser said: the domain is there, or absent (no
/// `--enable-features=WebMCP`: an attached Chrome, a Grid node), or
/// unknown (off, or the session went away).
pub(super) async fn follow_page_tools(
    session: &Session,
    setup: &TabSetup,
    deadline: Instant,
) -> crate::page_tools::Availability {
    use crate::page_tools::Availability;
    if !setup.policy.page_tools {
        return Availability::Unknown;
    }
    match session.call(cdp::protocol::webmcp::Enable {}, deadline).await {
        Ok(_) => Availability::Available,
        Err(e) if e.is_unknown_method() => Availability::Absent,
        Err(e) => {
            tracing::debug!("following a session's page tools: {e}");
            Availability::Unknown
        }
    }
}

/// A paused request the URL policy judges (the dialog bridge's are the
/// dialog book's).
fn is_document_request(event: &cdp::Event) -> bool {
    event
        .decode::<RequestPaused>()
        .is_some_and(|paused| dialogs::bridge::dialog_of(&paused).is_none())
}

/// A child the tab's reader gives the rules that refuse by path as its
/// blocklist (and watches for what it refused): a worker of the tab's
/// (dedicated, or shared when it attaches here too).
fn is_worker(kind: &str) -> bool {
    matches!(kind, "worker" | "shared_worker")
}

/// Prepares a paused child target, then lets it run: a cross-origin
/// frame pauses every request for the routes when the tab's session has
/// one set (`routed`) and gets the tab's network conditions.
async fn prepare_child(
    session: &Session,
    kind: &str,
    setup: &TabSetup,
    routed: bool,
    conditions: Option<network::EmulateNetworkConditions>,
) {
    let deadline = Instant::now() + CHILD_SETUP_BUDGET;
    if kind == "iframe" {
        if let Some(conditions) = conditions {
            if let Err(error) = session.call(conditions, deadline).await {
                tracing::debug!("giving an iframe the tab's network conditions failed: {error}");
            }
        }
        let auto_attach = target::SetAutoAttach {
            auto_attach: true,
            wait_for_debugger_on_start: true,
            flatten: true,
        };
        let enable = async {
            let (a, b, c, d, e, f, _) = tokio::join!(
                setup.disguise(session, routed, deadline),
                session.call(runtime::Enable {}, deadline),
                session.call(page::Enable {}, deadline),
                session.call(auto_attach, deadline),
                // The frame's requests, for browser_network.
                session.call(network::Enable {}, deadline),
                // Its documents are judged, never a service worker's answer.
                session.call(network::SetBypassServiceWorker { bypass: true }, deadline),
                // The tools its documents register (`[tools] page_tools`).
                follow_page_tools(session, setup, deadline),
            );
            a.and(b.map(|_| ()))
                .and(c.map(|_| ()))
                .and(d.map(|_| ()))
                .and(e.map(|_| ()))
                .and(f.map(|_| ()))
        };
        if let Err(error) = enable.await {
            tracing::debug!("preparing an iframe session failed: {error}");
        }
    }
    if kind == "worker" {
        // A dedicated worker's requests pause in its frame's request stage
        // (where the routes answer them) but Chrome reports them only in
        // the worker's own session: its network domain, for the tab's
        // request log (`browser_network`, the trace).
        if let Err(error) = session.call(network::Enable {}, deadline).await {
            tracing::debug!("following a worker's requests failed: {error}");
        }
    }
    if is_worker(kind) && setup.policy.restricts() {
        // A worker the tab's auto-attach holds (its dedicated workers):
        // Chrome has no `Fetch` in its session (its requests pause in the
        // parent frame's, among the frame's own sub-resources, which the
        // request stage lets through unjudged by path), so the rules that
        // refuse by path go with it as its blocklist, before it runs. Its
        // connections are held by host at the egress gate. A worker it
        // starts (a nested dedicated worker) attaches beneath it, paused,
        // and is prepared here the same way: without this it ran at once,
        // with no blocklist.
        let nested = target::SetAutoAttach {
            auto_attach: true,
            wait_for_debugger_on_start: true,
            flatten: true,
        };
        if let Err(error) = session.call(nested, deadline).await {
            tracing::debug!("holding a {kind} target's own workers failed: {error}");
        }
        if let Err(error) = blocklist::install(session, &setup.policy, deadline).await {
            tracing::debug!("giving a {kind} target its blocklist failed: {error}");
        }
    }
    if let Err(error) = session.call(runtime::RunIfWaitingForDebugger {}, deadline).await {
        tracing::debug!("resuming a {kind} target failed: {error}");
    }
}
