//! Aiming at an element: waiting until it can take input (attached,
//! visible, enabled, still), the point an acting tool sends its input to
//! and what is there once the pointer arrived (the hit test), the
//! record of where a press went, and the frames a cross-origin frame must
//! draw before it takes input (the click issue: an action is reported
//! only when it landed).

use cdp::protocol::dom;
use serde_json::json;

use super::Element;
use crate::error::Failure;
use crate::tab::Tab;
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

impl Element {
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
