//! Resolving an action's target (a ref from a snapshot, or a CSS selector)
//! to a live element handle in cdpilot's isolated world.
//!
//! This is where refs go stale: a ref issued for an earlier document of the
//! tab is `element_stale`; a ref the current document never issued (another
//! tab's, another frame's, made up) is `ref_unknown`; one whose element has
//! left the DOM is `element_not_found`. An acting tool's target is checked
//! against the role and name its ref was shown with ([`resolve`]): one
//! that reads otherwise now is `ref_changed`, and nothing is done to it.
//! Reading tools take the element as it is ([`resolve_to_read`], [`by_ref`]).

use cdp::protocol::{dom, runtime};
use serde_json::json;

use crate::args::ElementTarget;
use crate::error::{Failure, RefChange};
use crate::tab::{FrameRef, Tab};
use crate::tab_tools::{geometry, input};
use crate::timing;
use crate::{ActionError, Budget, ErrorCode};

/// Resolves `null` once the element is attached, visible (a box with an
/// area), enabled and has not moved for one animation frame, else
/// `{problem, state}` after `ms` (the condition that did not hold and the
/// element's state then). The fast path (already actionable, no animation
/// running, not asked to `settle`) answers without waiting for a frame:
/// that the element holds still is checked again at the press
/// (`AT_POINT`), and one that moved is waited for here with `settle`. A
/// window that draws no frames (hidden, minimized) is not waited on past
/// `ms` either: a timer answers then, and an element no frame was drawn
/// for is not called moving; one that drew none in the first second (a
/// throttled frame out of view) is answered then, as it is.
const WAIT_ACTIONABLE: &str = r#"function (ms, settle) {
  const el = this;
  const w = el.ownerDocument.defaultView;
  const disabled = () => el.disabled === true || el.getAttribute('aria-disabled') === 'true' || !!el.closest('fieldset[disabled]');
  const boxed = () => Array.from(el.getClientRects()).some((r) => r.width > 0 && r.height > 0);
  const visible = () => el.checkVisibility({ visibilityProperty: true, opacityProperty: false }) && boxed();
  const problem = () => !el.isConnected ? 'detached' : !visible() ? 'hidden' : disabled() ? 'disabled' : null;
  const state = (p) => {
    if (p === 'detached') return 'it is no longer in the document';
    const r = el.getBoundingClientRect();
    const box = Math.round(r.width) + 'x' + Math.round(r.height) + ' at ' + Math.round(r.x) + ',' + Math.round(r.y);
    if (p === 'hidden') {
      const s = w.getComputedStyle(el);
      if (s.display === 'none') return 'display: none';
      if (s.visibility !== 'visible') return 'visibility: ' + s.visibility;
      if (!el.checkVisibility({ visibilityProperty: true })) return 'an element around it is not displayed';
      return 'its box is ' + box;
    }
    if (p === 'disabled') return el.disabled === true ? 'it has the disabled attribute'
      : el.getAttribute('aria-disabled') === 'true' ? 'aria-disabled="true"' : 'it is in a disabled fieldset';
    return 'its box was still moving, last ' + box;
  };
  const answer = (p) => p ? { problem: p, state: state(p) } : null;
  if (!settle && !problem() && el.getAnimations().length === 0) return null;
  return new Promise((resolve) => {
    const end = performance.now() + ms;
    let last = null;
    let frames = 0;
    w.setTimeout(() => resolve(answer(problem() || (frames > 1 ? 'moving' : null))), ms + 100);
    w.setTimeout(() => { if (frames === 0) resolve(answer(problem())); }, Math.min(ms, 1000));
    const tick = () => {
      frames++;
      const p = problem();
      const r = el.isConnected ? el.getBoundingClientRect() : null;
      const key = r && [r.x, r.y, r.width, r.height].join();
      if (!p && key === last) return resolve(null);
      last = key;
      if (performance.now() > end) return resolve(answer(p || 'moving'));
      w.requestAnimationFrame(tick);
    };
    w.requestAnimationFrame(tick);
  });
}"#;

/// How long a covered element is measured again before the cover is
/// reported (covers that are animations pass within it).
const COVER_PATIENCE: std::time::Duration = std::time::Duration::from_secs(1);

/// Resolves after the element's window drew two more frames, or after
/// 200 ms when it draws none (hidden).
const NEXT_FRAME: &str = "function () { const w = this.ownerDocument.defaultView; return new Promise((r) => { w.setTimeout(() => r(null), 200); w.requestAnimationFrame(() => w.requestAnimationFrame(() => r(null))); }); }";

/// With `pointer`, arms `__cdpilotMoved` (resolves when the window sees a
/// trusted `mousemove`); then resolves `true` after the element's window
/// drew two more frames, or `false` after `ms` without them.
const DRAWN: &str = "function (ms, pointer) { const w = this.ownerDocument.defaultView; \
if (pointer) w.__cdpilotMoved = new Promise((seen) => { const on = (e) => { if (e.isTrusted) { w.removeEventListener('mousemove', on, true); seen(true); } }; w.addEventListener('mousemove', on, true); }); \
return new Promise((r) => { w.setTimeout(() => r(false), ms); w.requestAnimationFrame(() => w.requestAnimationFrame(() => r(true))); }); }";

/// Whether the window saw the move `DRAWN` armed for, within `ms`.
const MOVE_SEEN: &str = "function (ms) { const w = this.ownerDocument.defaultView; const moved = w.__cdpilotMoved || Promise.resolve(true); \
return Promise.race([moved, new Promise((r) => w.setTimeout(() => r(false), ms))]); }";

/// How long input into a cross-origin frame waits for the frame to draw.
const DRAW_PATIENCE_MS: u64 = 10_000;

/// How many pointer moves [`Element::pointer_ready`] sends at most, and
/// how long it waits for the frame to see each.
const MOVES: u32 = 3;
const MOVE_PATIENCE_MS: u64 = 500;

/// What is at (x, y), the element's point in its frame, once the pointer
/// is there (its `mouseover`/`mouseenter` handlers have run): `null` when
/// it is the element or inside it; `{moved: true}` when the element's box
/// no longer holds the point; else `{cover}`, what is there instead (the
/// serializer's `describe`: role, name, ref). With `arm`, and the element
/// at the point, a record of the press is armed: capture listeners on the
/// window note where the first trusted `pointerdown`/`mousedown` went,
/// one on the element whether it reached it, and a mutation observer and
/// `input`/`change`/`toggle`/`scroll` listeners whether the page changed after it;
/// `__cdpilotPressed()` answers and disarms it.
const AT_POINT: &str = r#"function (x, y, arm) {
  const el = this;
  const doc = el.ownerDocument;
  const w = doc.defaultView;
  const inside = (n) => { for (let c = n; c; c = c.parentNode || c.host) if (c === el) return true; return false; };
  const describe = (n) => globalThis.__cdpilot && globalThis.__cdpilot.describe ? globalThis.__cdpilot.describe(n)
    : '<' + n.tagName.toLowerCase() + (n.id ? ' id="' + n.id + '"' : '') + '>';
  const root = el.getRootNode();
  const hit = (root.elementFromPoint ? root : doc).elementFromPoint(x, y);
  if (!hit || !inside(hit)) {
    const r = el.getBoundingClientRect();
    if (!hit || x < r.left - 1 || x > r.right + 1 || y < r.top - 1 || y > r.bottom + 1) return { moved: true };
    return { cover: describe(hit) };
  }
  if (!arm) return null;
  if (w.__cdpilotPressed) w.__cdpilotPressed();
  const record = { to: null, changed: false };
  const types = ['pointerdown', 'mousedown'];
  const CHANGES = ['input', 'change', 'toggle', 'scroll'];
  // Reached: each kind the window saw (pointerdown, then mousedown) came
  // to the element too; a handler may stop one and not the other.
  const seen = new Set(), got = new Set();
  const first = (e) => {
    if (!e.isTrusted) return;
    seen.add(e.type);
    if (record.to === null) { const t = e.composedPath()[0]; record.to = inside(t) ? '' : describe(t); }
  };
  const reach = (e) => { if (e.isTrusted) got.add(e.type); };
  const change = () => { if (record.to !== null) record.changed = true; };
  const observer = new MutationObserver((list) => { if (list.length) change(); });
  observer.observe(doc, { subtree: true, childList: true, attributes: true, characterData: true });
  for (const t of types) { w.addEventListener(t, first, true); el.addEventListener(t, reach, true); }
  for (const t of CHANGES) w.addEventListener(t, change, true);
  w.__cdpilotPressed = () => {
    if (observer.takeRecords().length) change();
    observer.disconnect();
    for (const t of types) { w.removeEventListener(t, first, true); el.removeEventListener(t, reach, true); }
    for (const t of CHANGES) w.removeEventListener(t, change, true);
    delete w.__cdpilotPressed;
    return { to: record.to, reached: seen.size > 0 && [...seen].every((t) => got.has(t)), changed: record.changed };
  };
  return null;
}"#;

/// The record [`AT_POINT`] armed, read on the element (for an element not
/// in the tab's main frame: the click's own probe reads it there).
const PRESSED: &str = "function () { const w = this.ownerDocument.defaultView; return w.__cdpilotPressed ? w.__cdpilotPressed() : null; }";

/// What an acting tool does at its element's point: press there (the
/// start of a drag, an option, a checkbox: what is at the point after the
/// pointer arrived must be the element), click (the same, and the press's
/// record armed: `browser_click` reads it), hover (the pointer goes
/// there; what is there is reported, not refused: a hover's handlers may
/// raise what covers it), or only measure (a drop target, checked again at
/// the drop).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    Press,
    Click,
    Hover,
    Measure,
}

/// Where an acting tool's input goes: `point` in the tab's viewport,
/// `local` the same in the element's frame; `under` (a hover's) what is at
/// the point instead of the element.
#[derive(Debug, Clone)]
pub struct Aimed {
    pub point: (f64, f64),
    pub local: (f64, f64),
    pub under: Option<String>,
}

/// What the page's record says the press reached ([`Element::pressed`]).
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct Pressed {
    /// `""` when the first press went to the element or inside it, else
    /// what received it; `None` when the page saw no press.
    pub to: Option<String>,
    /// The press's propagation reached the element (no handler on the way
    /// stopped it).
    pub reached: bool,
    /// The page changed (its DOM, a control's value or toggle) after it.
    pub changed: bool,
}

/// A live element: a remote object in cdpilot's isolated world of its frame.
pub struct Element {
    pub object_id: String,
    /// How the caller named it (`ref e12`, `selector "#go"`), for messages.
    pub label: String,
    /// The frame whose document holds it (its session answers for it).
    pub frame: FrameRef,
}

/// What the caller does with the element: acting on it checks its ref
/// against what the snapshot showed; reading takes it as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    Act,
    Read,
}

/// The element an acting tool (click, type, hover, drag, select, fill,
/// upload, selecting text) acts on: refused with `ref_changed` when its
/// ref's element no longer has the role or name it was shown with.
pub async fn resolve(tab: &Tab, target: &ElementTarget, budget: &Budget) -> Result<Element, ActionError> {
    resolve_as(tab, target, budget, Use::Act).await
}

/// The element a reading tool (scroll into view, screenshot, evaluate)
/// reads, as it is now.
pub async fn resolve_to_read(
    tab: &Tab,
    target: &ElementTarget,
    budget: &Budget,
) -> Result<Element, ActionError> {
    resolve_as(tab, target, budget, Use::Read).await
}

async fn resolve_as(
    tab: &Tab,
    target: &ElementTarget,
    budget: &Budget,
    use_: Use,
) -> Result<Element, ActionError> {
    match (&target.reference, &target.selector) {
        (Some(reference), _) => by_ref_as(tab, reference, budget, use_).await,
        (None, Some(selector)) => by_selector(tab, selector, budget).await,
        (None, None) => Err(ActionError::invalid(
            "no ref or selector given",
            "Pass the element's ref from browser_snapshot.",
        )),
    }
}

/// The element `reference` names, as it is now (for reading tools).
pub async fn by_ref(tab: &Tab, reference: &str, budget: &Budget) -> Result<Element, ActionError> {
    by_ref_as(tab, reference, budget, Use::Read).await
}

/// `ref_unknown`: the tab's current document never issued `reference`.
/// (The session names the tab that did, if one of its others did.)
pub fn unknown(reference: &str, why: &str) -> ActionError {
    ActionError::of(
        Failure::RefUnknown {
            reference: reference.to_owned(),
        },
        format!("ref {reference} was not issued in this tab{why}"),
        "A ref is valid only in the tab and frame whose browser_snapshot showed it: take a browser_snapshot \
         of this tab and use a ref from it, or pass the tab that showed it as `tab`.",
    )
}

async fn by_ref_as(tab: &Tab, reference: &str, budget: &Budget, use_: Use) -> Result<Element, ActionError> {
    let (document, refs_document, ours) =
        tab.state(|s| (s.document(), s.refs_document(), s.issued(reference)));
    match refs_document {
        None => return Err(unknown(reference, " (no snapshot has been taken of this page)")),
        Some(issued) if issued != document => return Err(ActionError::stale(reference)),
        Some(_) if !ours => return Err(unknown(reference, "")),
        Some(_) => {}
    }
    let not_found = || {
        ActionError::new(
            ErrorCode::ElementNotFound,
            format!("ref {reference} is not on the page (never issued, or its element or frame was removed)"),
            "Take a new browser_snapshot and use a ref from it.",
        )
    };
    // The frame is asked for where it is now (its session may have changed
    // since the snapshot: a cross-origin frame that re-attached).
    let frame = match frame_number(reference).map(|n| tab.numbered_frame(n)) {
        None => tab.main_frame(),
        Some(None) => return Err(not_found()),
        Some(Some(frame)) => frame.map_err(|e| ActionError {
            message: format!("ref {reference}: {}", e.message),
            ..e
        })?,
    };
    // Acting: the world checks the element against what its ref was shown
    // as, in the same round trip that finds it.
    let find = match use_ {
        Use::Act => "target",
        Use::Read => "lookup",
    };
    let expression = format!(
        "globalThis.__cdpilot?.issued() ? globalThis.__cdpilot.{find}({}) : 'no-world'",
        serde_json::to_string(reference).expect("string serializes")
    );
    let object = tab
        .evaluate_in(&frame, budget, "finding the element", &expression, false, false)
        .await?;
    if let Some(changed) = object
        .value
        .as_ref()
        .and_then(|v| v.as_str())
        .filter(|v| v.starts_with('{'))
    {
        return Err(changed_error(tab, &frame, reference, changed));
    }
    let main = frame.number.is_none();
    element_or_error(object, format!("ref {reference}"), frame, not_found).map_err(|e| {
        // A frame's new document has a fresh world: its old refs are gone,
        // not stale in the contract's sense (the tab did not navigate).
        match (&e.failure, main) {
            (Failure::ContextGone, true) => ActionError::stale(reference),
            (Failure::ContextGone, false) => not_found(),
            _ => e,
        }
    })
}

/// `f2e7` → Some(2); `e7` → None.
fn frame_number(reference: &str) -> Option<u32> {
    crate::tab::refs::parse(reference)?.0
}

/// `ref_changed` from the world's account of it (see `target` in the
/// serializer): what the ref was shown as, what its element is now, and the
/// fresh ref of the element that now reads as it was shown, if exactly one
/// does.
fn changed_error(tab: &Tab, frame: &FrameRef, reference: &str, account: &str) -> ActionError {
    #[derive(serde::Deserialize)]
    struct Account {
        was: (String, String),
        now: (String, String),
        fresh: Option<String>,
        matches: u32,
        next: u64,
    }
    let account: Account = match serde_json::from_str(account) {
        Ok(account) => account,
        Err(e) => return ActionError::internal(format!("checking ref {reference}: {e}")),
    };
    // A fresh ref may be one the world gave out just now.
    tab.state(|s| s.frame_refs_issued(&frame.frame_id, account.next));
    let shown = |(role, name): &(String, String)| match name.is_empty() {
        true => role.clone(),
        false => format!("{role} {}", serde_json::Value::from(name.as_str())),
    };
    let message = format!(
        "ref {reference} was shown as {} but its element is now {}; nothing was done",
        shown(&account.was),
        shown(&account.now)
    );
    let next_step = match (&account.fresh, account.matches) {
        (Some(fresh), _) => format!(
            "The element shown as {} is now {fresh}: act on {fresh} if it is the one you meant.",
            shown(&account.was)
        ),
        (None, 0) => format!(
            "Nothing on the page is {} any more: take a browser_snapshot and choose again \
             (acting on {reference} again acts on it as it is now).",
            shown(&account.was)
        ),
        (None, _) => format!(
            "Several elements are {} now: take a browser_snapshot and choose one by its ref.",
            shown(&account.was)
        ),
    };
    ActionError::of(
        Failure::RefChanged(Box::new(RefChange {
            reference: reference.to_owned(),
            was: account.was,
            now: account.now,
            fresh_ref: account.fresh,
        })),
        message,
        next_step,
    )
}

pub async fn by_selector(tab: &Tab, selector: &str, budget: &Budget) -> Result<Element, ActionError> {
    let quoted = serde_json::to_string(selector).expect("string serializes");
    let expression = format!(
        "(() => {{ try {{ return document.querySelector({quoted}); }} catch (e) {{ return 'bad-selector'; }} }})()"
    );
    let object = tab
        .evaluate_in_world(budget, "finding the element", &expression, false)
        .await?;
    if object.value.as_ref().and_then(|v| v.as_str()) == Some("bad-selector") {
        return Err(ActionError::invalid(
            format!("\"{selector}\" is not a valid CSS selector"),
            "Pass a valid CSS selector, or better a ref from browser_snapshot.",
        ));
    }
    element_or_error(
        object,
        format!("selector \"{selector}\""),
        tab.main_frame(),
        || {
            ActionError::new(
                ErrorCode::ElementNotFound,
                format!("no element matches the selector \"{selector}\""),
                "Take a browser_snapshot and use a ref instead.",
            )
        },
    )
}

fn element_or_error(
    object: runtime::RemoteObject,
    label: String,
    frame: FrameRef,
    not_found: impl FnOnce() -> ActionError,
) -> Result<Element, ActionError> {
    if object.value.as_ref().and_then(|v| v.as_str()) == Some("no-world") {
        // The isolated world has no serializer: a document the refs were not issued in.
        return Err(ActionError::of(Failure::ContextGone, label, ""));
    }
    match object.object_id {
        Some(object_id) if object.subtype.as_deref() == Some("node") => Ok(Element {
            object_id,
            label,
            frame,
        }),
        _ => Err(not_found()),
    }
}

impl Element {
    /// The element's backend DOM node id (stable for the node's lifetime).
    pub async fn backend_node_id(&self, budget: &Budget) -> Result<i64, ActionError> {
        let described = self
            .frame
            .cdp(
                budget,
                "describing the element",
                dom::DescribeNode {
                    object_id: Some(self.object_id.clone()),
                    backend_node_id: None,
                },
            )
            .await?;
        Ok(described.node.backend_node_id)
    }

    /// [`Element::aim`] for a press, without `force`: the point a tool's
    /// pointer input goes to, the pointer already there.
    pub async fn actionable_point(&self, tab: &Tab, budget: &Budget) -> Result<(f64, f64), ActionError> {
        Ok(self.aim(tab, budget, Intent::Press, false).await?.point)
    }

    /// Aims an acting tool's input at the element (issue 42). Waits, within
    /// the budget, until it is attached, visible, enabled and holds still
    /// (not with `force`); scrolls it into view and measures the centre of
    /// its box; then, unless only measuring, moves the pointer there, so the
    /// page's hover handlers run, and checks what is at the point now: the
    /// element or something inside it, or, for a press, nothing is pressed
    /// and the answer names what is there (a cover that passes, a sibling
    /// sliding shut, is waited for up to a second; an element that moved is
    /// waited for until it holds still, and aimed at again). A press arms
    /// the page's record of where it goes ([`Element::pressed`]).
    pub async fn aim(
        &self,
        tab: &Tab,
        budget: &Budget,
        intent: Intent,
        force: bool,
    ) -> Result<Aimed, ActionError> {
        if !force {
            self.wait_actionable(budget, false).await?;
        }
        let covered_since = std::time::Instant::now();
        let mut moves = 0;
        loop {
            let (point, local) = self.points(tab, budget).await?;
            if intent != Intent::Measure {
                if self.frame.session.id() == tab.session.id() {
                    input::move_to(tab, budget, point).await?;
                } else {
                    self.pointer_ready(tab, point, budget).await?;
                }
            }
            let args = vec![json!(local.0), json!(local.1), json!(intent == Intent::Click)];
            let at = self.call(budget, "checking what is under the pointer", AT_POINT, args);
            let at = timing::timed("element.hit_test", at).await?;
            if at.is_null() {
                return Ok(Aimed {
                    point,
                    local,
                    under: None,
                });
            }
            if at["moved"] == true {
                moves += 1;
                if force || moves > 5 {
                    let code = match force {
                        true => ErrorCode::ElementNotInteractable,
                        false => ErrorCode::Timeout,
                    };
                    return Err(ActionError::new(
                        code,
                        format!(
                            "{} did not stay where it was measured (it moved {moves} times); nothing was done",
                            self.label
                        ),
                        "Wait for the page to settle (browser_wait), then try again.",
                    ));
                }
                self.wait_actionable(budget, true).await?;
                continue;
            }
            let cover = at["cover"].as_str().unwrap_or("another element").to_owned();
            if intent == Intent::Hover {
                return Ok(Aimed {
                    point,
                    local,
                    under: Some(cover),
                });
            }
            // A cover may be passing: a sibling that slides open or shut (a
            // tree's folder, an accordion) overlaps the element for a few
            // frames. It is measured again, a frame apart, for up to a second.
            if force || covered_since.elapsed() > COVER_PATIENCE.min(budget.remaining() / 2) {
                let what = match intent {
                    Intent::Measure => "the drop; nothing was dragged",
                    _ => "the click; nothing was pressed",
                };
                return Err(ActionError::new(
                    ErrorCode::ElementNotInteractable,
                    format!("{} is covered by {cover}, which would receive {what}", self.label),
                    "Close or dismiss the covering element first (take a browser_snapshot to find it), \
                     or act on it if it is what you meant.",
                ));
            }
            self.call_awaiting(budget, "waiting for the cover to pass", NEXT_FRAME, vec![])
                .await?;
        }
    }

    /// Waits (within the budget, keeping a fifth of it to report why) until
    /// the element is attached, visible, enabled and, when it moves or when
    /// asked to `settle`, holds the same box over two animation frames.
    /// When the wait ends first: `timeout`, naming the condition that did
    /// not hold and the element's state then.
    async fn wait_actionable(&self, budget: &Budget, settle: bool) -> Result<(), ActionError> {
        let wait_ms = budget.remaining().as_millis() as u64 * 4 / 5;
        let began = std::time::Instant::now();
        let waited = self.call_awaiting(
            budget,
            "waiting for the element to be actionable",
            WAIT_ACTIONABLE,
            vec![json!(wait_ms), json!(settle)],
        );
        let state = timing::timed("element.actionable", waited).await?;
        let Some(reason) = state["problem"].as_str() else {
            return Ok(());
        };
        let (what, next) = match reason {
            "detached" => (
                "was removed from the page",
                "Take a new browser_snapshot and use a fresh ref.",
            ),
            "hidden" => (
                "did not become visible",
                "It may be hidden or collapsed; open it first, or pick a visible element.",
            ),
            "disabled" => (
                "stayed disabled",
                "Fill in what the form needs first, then try again.",
            ),
            _ => (
                "did not hold still",
                "Wait for the page to settle (browser_wait), then try again.",
            ),
        };
        Err(ActionError::new(
            ErrorCode::Timeout,
            format!(
                "{} {what} in {} ms ({}); nothing was done",
                self.label,
                began.elapsed().as_millis(),
                state["state"].as_str().unwrap_or("no state read")
            ),
            next,
        ))
    }

    /// The page's record of the press [`Element::aim`] armed: where it
    /// went, whether it reached the element, whether the page changed
    /// after it (`None`: no record, the element's document is gone).
    pub async fn pressed(&self, budget: &Budget) -> Result<Option<Pressed>, ActionError> {
        let read = self.call(budget, "reading what the press reached", PRESSED, vec![]);
        match timing::timed("element.pressed", read).await {
            Ok(value) => Ok(serde_json::from_value(value).ok()),
            Err(e) if e.failure == Failure::ContextGone => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Before input into a cross-origin frame: waits until the frame's
    /// window has drawn two frames, so the input is not lost. Chromium
    /// drops every input but a mouse move that reaches a frame whose
    /// renderer defers its main frame updates (its document has not drawn
    /// yet: render-blocking resources, a frame just scrolled into view from
    /// where it was throttled, a loaded machine), and still acknowledges
    /// it. Animation frames run only once updates run and the frame is not
    /// throttled; the second one comes after the first frame was
    /// committed. Nothing to wait for in the tab's own session (same-origin
    /// frames draw with the page that received the input). Keys go to the
    /// focused frame; pointer input also needs [`Element::pointer_ready`].
    pub async fn drawn(&self, tab: &Tab, budget: &Budget) -> Result<(), ActionError> {
        if self.frame.session.id() == tab.session.id() {
            return Ok(());
        }
        self.arm_and_draw(budget, false).await
    }

    /// [`Element::drawn`], then, for pointer input at `point`: moves the
    /// mouse there until the frame's window saw the move (at most three
    /// moves, the second a pixel aside in case the pointer already rests
    /// there). Until the browser has the frame's new place from a frame the
    /// page drew (a frame just scrolled into view, a loaded machine), it
    /// may route input at the point to the page around the frame; a move is
    /// harmless to repeat and never dropped by the frame, so once one
    /// arrived the click, wheel or drag that follows goes there too.
    pub async fn pointer_ready(
        &self,
        tab: &Tab,
        point: (f64, f64),
        budget: &Budget,
    ) -> Result<(), ActionError> {
        if self.frame.session.id() == tab.session.id() {
            return Ok(());
        }
        self.arm_and_draw(budget, true).await?;
        for attempt in 0..MOVES {
            let at = if attempt == 1 {
                (point.0 + 1.0, point.1)
            } else {
                point
            };
            input::move_to(tab, budget, at).await?;
            let seen = self.call_awaiting(
                budget,
                "waiting for the frame to see the pointer",
                MOVE_SEEN,
                vec![json!(MOVE_PATIENCE_MS)],
            );
            if timing::timed("element.pointer_seen", seen).await? == serde_json::Value::Bool(true) {
                return Ok(());
            }
        }
        tracing::debug!(
            "{}: its frame saw none of {MOVES} pointer moves; input sent anyway",
            self.label
        );
        Ok(())
    }

    /// Waits for two frames of the element's window (at most
    /// [`DRAW_PATIENCE_MS`]: a window that draws nothing at all, hidden or
    /// minimized, is not waited on for the whole budget; the input goes
    /// after it, as it did before this wait), first arming the pointer
    /// watch when `pointer`.
    async fn arm_and_draw(&self, budget: &Budget, pointer: bool) -> Result<(), ActionError> {
        let patience = (budget.remaining().as_millis() as u64 * 4 / 5).min(DRAW_PATIENCE_MS);
        let drawn = self.call_awaiting(
            budget,
            "waiting for the frame to draw",
            DRAWN,
            vec![json!(patience), json!(pointer)],
        );
        if timing::timed("element.frame_drawn", drawn).await? != serde_json::Value::Bool(true) {
            tracing::debug!(
                "{}: its frame drew nothing in {patience} ms; input sent anyway",
                self.label
            );
        }
        Ok(())
    }

    /// The click point in the tab's viewport, and the same point in the
    /// element's own frame (for hit-testing inside that frame).
    async fn points(&self, tab: &Tab, budget: &Budget) -> Result<((f64, f64), (f64, f64)), ActionError> {
        let placed = self.placed(tab, budget).await?;
        let (x, y) = placed.quad_centre;
        let (sx, sy) = placed.session_origin;
        let offset = geometry::frame_offset_in_session(tab, &self.frame, budget);
        let (fx, fy) = timing::timed("element.frame_offset", offset).await?;
        // For the trace's step (its video outlines it): measured here anyway.
        let (x0, y0, x1, y1) = placed.bounds();
        tab.state(|s| s.aimed_at((x0 + sx, y0 + sy, x1 - x0, y1 - y0)));
        Ok(((x + sx, y + sy), (x - fx, y - fy)))
    }

    /// The element's box (left, top, right, bottom) in the tab's viewport,
    /// after scrolling it into view: what an element screenshot clips to.
    pub async fn viewport_box(
        &self,
        tab: &Tab,
        budget: &Budget,
    ) -> Result<(f64, f64, f64, f64), ActionError> {
        let placed = self.placed(tab, budget).await?;
        let (sx, sy) = placed.session_origin;
        let (x0, y0, x1, y1) = placed.bounds();
        Ok((x0 + sx, y0 + sy, x1 + sx, y1 + sy))
    }

    /// Scrolls the element into view and measures its first visible content
    /// quad (in its session's coordinates) and where that session's root
    /// document sits in the tab's viewport.
    async fn placed(&self, tab: &Tab, budget: &Budget) -> Result<Placed, ActionError> {
        let scroll = self.frame.cdp(
            budget,
            "scrolling the element into view",
            dom::ScrollIntoViewIfNeeded {
                object_id: self.object_id.clone(),
                backend_node_id: None,
            },
        );
        timing::timed("element.scroll", scroll).await?;
        let measure = self.frame.cdp(
            budget,
            "measuring the element",
            dom::GetContentQuads {
                object_id: self.object_id.clone(),
                backend_node_id: None,
            },
        );
        let quads = timing::timed("element.quads", measure).await?;
        let quad = quads.quads.into_iter().find(|q| q.len() == 8 && quad_area(q) > 0.5).ok_or_else(|| {
            ActionError::new(
                ErrorCode::ElementNotInteractable,
                format!("{} has no visible box to click", self.label),
                "It may be hidden, collapsed or zero-sized; take a browser_snapshot and pick a visible element.",
            )
        })?;
        let quad_centre = (
            (quad[0] + quad[2] + quad[4] + quad[6]) / 4.0,
            (quad[1] + quad[3] + quad[5] + quad[7]) / 4.0,
        );
        let origin = geometry::session_origin(tab, self.frame.session.id(), budget);
        let session_origin = timing::timed("element.origin", origin).await?;
        Ok(Placed {
            quad,
            quad_centre,
            session_origin,
        })
    }

    /// Before input to a cross-origin frame: notes when the frame's window
    /// sees the input's last event (`kind`, e.g. `mouseup`), so
    /// [`Element::settle`] can wait for it. Nothing to do for an element of
    /// the tab's own session.
    pub async fn watch_input(&self, tab: &Tab, kind: &str, budget: &Budget) -> Result<(), ActionError> {
        if self.frame.session.id() == tab.session.id() {
            return Ok(());
        }
        let watch = "function (kind) { const w = this.ownerDocument.defaultView; w.__cdpilotInput = new Promise((resolve) => w.addEventListener(kind, () => resolve(true), { once: true, capture: true })); }";
        self.call(
            budget,
            "watching for the input",
            watch,
            vec![serde_json::json!(kind)],
        )
        .await
        .map(|_| ())
    }

    /// Waits until the element's frame has handled the input. Input for a
    /// cross-origin frame is acknowledged by the top-level page and reaches
    /// the frame's process on another channel, possibly much later on a
    /// loaded machine: this waits for the event [`Element::watch_input`]
    /// watched (at most 5 s: a loaded machine's frame process can be that late; the hit test already showed the input lands there), then one frame, so what the caller reads
    /// next reflects the input (at most 500 ms: a window that draws no
    /// frames, hidden or minimized, is not waited on for the budget). A
    /// frame that navigated meanwhile is settled.
    pub async fn settle(&self, budget: &Budget) -> Result<(), ActionError> {
        let settled = "function () {
  const w = this.ownerDocument.defaultView;
  const seen = w.__cdpilotInput || Promise.resolve(true);
  delete w.__cdpilotInput;
  const late = new Promise((resolve) => w.setTimeout(() => resolve(false), 5000));
  return Promise.race([seen, late]).then(() => new Promise((resolve) => {
    w.requestAnimationFrame(() => resolve(true));
    w.setTimeout(() => resolve(true), 500);
  }));
}";
        match self
            .call_awaiting(budget, "letting the frame handle the input", settled, vec![])
            .await
        {
            Err(e) if e.failure == Failure::ContextGone => Ok(()),
            other => other.map(|_| ()),
        }
    }

    /// Calls `function` with the element as `this` and returns the node it
    /// returns as an element of the same frame, named `label` (`None` when
    /// it returns no node): for an element found from another, such as a
    /// combobox's option.
    pub async fn related(
        &self,
        budget: &Budget,
        step: &str,
        function: &str,
        label: String,
    ) -> Result<Option<Element>, ActionError> {
        let object = self
            .call_on(
                budget,
                step,
                runtime::CallFunctionOn {
                    function_declaration: function.to_owned(),
                    object_id: Some(self.object_id.clone()),
                    return_by_value: false,
                    ..Default::default()
                },
            )
            .await?;
        Ok(match object.object_id {
            Some(object_id) if object.subtype.as_deref() == Some("node") => Some(Element {
                object_id,
                label,
                frame: self.frame.clone(),
            }),
            _ => None,
        })
    }

    /// Like [`Element::call`], for a function that returns a promise.
    pub async fn call_awaiting(
        &self,
        budget: &Budget,
        step: &str,
        function: &str,
        args: Vec<serde_json::Value>,
    ) -> Result<serde_json::Value, ActionError> {
        self.call_with(budget, step, function, args, true).await
    }

    /// Calls `function` (JS source) with the element as `this`; returns its
    /// value by value.
    pub async fn call(
        &self,
        budget: &Budget,
        step: &str,
        function: &str,
        args: Vec<serde_json::Value>,
    ) -> Result<serde_json::Value, ActionError> {
        self.call_with(budget, step, function, args, false).await
    }

    async fn call_with(
        &self,
        budget: &Budget,
        step: &str,
        function: &str,
        args: Vec<serde_json::Value>,
        await_promise: bool,
    ) -> Result<serde_json::Value, ActionError> {
        let returned = self
            .call_on(
                budget,
                step,
                runtime::CallFunctionOn {
                    function_declaration: function.to_owned(),
                    object_id: Some(self.object_id.clone()),
                    arguments: args
                        .into_iter()
                        .map(|v| runtime::CallArgument {
                            value: Some(v),
                            object_id: None,
                        })
                        .collect(),
                    return_by_value: true,
                    await_promise,
                    ..Default::default()
                },
            )
            .await?;
        Ok(returned.value.unwrap_or(serde_json::Value::Null))
    }

    /// Sends `call` (a function called on this element) to its frame; an
    /// exception the function throws is an internal error naming `step`.
    async fn call_on(
        &self,
        budget: &Budget,
        step: &str,
        call: runtime::CallFunctionOn,
    ) -> Result<runtime::RemoteObject, ActionError> {
        let evaluated = self.frame.cdp(budget, step, call).await?;
        if let Some(exception) = evaluated.exception_details {
            return Err(ActionError::internal(format!("{step}: {}", exception.message())));
        }
        Ok(evaluated.result)
    }
}

/// An element measured in its session: quads are in the coordinates of
/// the session's root document, which starts at `session_origin`.
struct Placed {
    quad: Vec<f64>,
    quad_centre: (f64, f64),
    session_origin: (f64, f64),
}

impl Placed {
    /// The quad's bounding box (left, top, right, bottom) in its session's
    /// coordinates.
    fn bounds(&self) -> (f64, f64, f64, f64) {
        let q = &self.quad;
        let xs = q.iter().step_by(2).copied();
        let ys = q.iter().skip(1).step_by(2).copied();
        let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let (y0, y1) = ys.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
        (x0, y0, x1, y1)
    }
}

/// Shoelace formula; a degenerate quad has no area to click.
fn quad_area(q: &[f64]) -> f64 {
    let mut area = 0.0;
    for i in 0..4 {
        let (x1, y1) = (q[2 * i], q[2 * i + 1]);
        let (x2, y2) = (q[(2 * i + 2) % 8], q[(2 * i + 3) % 8]);
        area += x1 * y2 - x2 * y1;
    }
    (area / 2.0).abs()
}

/// The origin of the document that owns the element `target` names (its
/// frame's, from the frame records the browser's events keep; the top
/// page's when it is in no iframe): where a secret typed into it goes.
pub(crate) async fn origin(
    tab: &Tab,
    target: &ElementTarget,
    budget: &Budget,
) -> Result<String, ActionError> {
    let element = resolve(tab, target, budget).await?;
    let frame_id = element.frame.frame_id.clone();
    let (origin, top) = tab.state(|s| {
        let origin = s.frames().get(&frame_id).map(|f| f.origin().to_owned());
        (origin, s.url().to_owned())
    });
    Ok(match origin {
        Some(origin) if !origin.is_empty() && origin != "null" => origin,
        // No record of the frame (the tab's own document before its first
        // navigation event): the tab's URL, when the element is in it.
        _ if frame_id == tab.target_id => top,
        // An iframe cdpilot has no origin for: nothing a secret can be
        // bound to.
        _ => "null".into(),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn quad_area_of_a_square_and_a_line() {
        assert_eq!(
            super::quad_area(&[0.0, 0.0, 10.0, 0.0, 10.0, 10.0, 0.0, 10.0]),
            100.0
        );
        assert_eq!(super::quad_area(&[0.0, 0.0, 10.0, 0.0, 10.0, 0.0, 0.0, 0.0]), 0.0);
    }
}

/// The in-page waits against a window that draws no frames (tests).
#[cfg(test)]
#[path = "element_hidden.rs"]
mod hidden;
