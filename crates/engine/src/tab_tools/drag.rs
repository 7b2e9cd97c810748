//! `browser_drag`: press the mouse on one element, move it onto another in
//! steps and release it, all trusted input. Two kinds of drag come out of
//! that: mouse-driven ones (sliders, canvases: the page follows
//! pointer/mouse events) and HTML5 drag and drop (`draggable`, `dragstart`,
//! `drop`). Headless Chromium cannot finish a native drag, so drags are
//! intercepted (`Input.setInterceptDrags`): when the page starts one, its
//! data comes back to us and the drop is dispatched at the target
//! (`Input.dispatchDragEvent`), as Playwright does.
//!
//! A drag of one item of a list onto another (a sortable: jQuery UI,
//! SortableJS, an HTML5 list) means "put it where that one is": the drop
//! point is past the target's middle in the direction of travel (every
//! sortable moves an item past another once the pointer crosses half of
//! it; the middle itself is on the fence), and the list's order is read
//! back and answered, or the call fails when the item did not move.

use cdp::protocol::input::{DispatchDragEvent, DragIntercepted, SetInterceptDrags};
use cdp::protocol::runtime;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::args::{Common, ElementTarget};
use crate::tab::Tab;
use crate::tab_tools::element::Intent;
use crate::tab_tools::{element, front, input};
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::validate;
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

/// Arguments of `browser_drag`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct DragArgs {
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub target: ElementTarget,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_ref: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_selector: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

impl DragArgs {
    /// Where the drag ends.
    pub fn drop_target(&self) -> ElementTarget {
        ElementTarget {
            reference: self.to_ref.clone(),
            selector: self.to_selector.clone(),
        }
    }
}

/// `browser_drag`: its declaration and checks (see `crate::tool`).
impl Tool for DragArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_drag",
        verb: "drag",
        group: Group::Core,
        description: "Drag an element onto to_ref with real mouse input (sliders, HTML5 drag and drop).",
        scope: Scope::Tab,
        runs_during_dialog: false,
        budget: DefaultBudget::Action,
        changes_page: true,
        switch: None,
        effect: Effect::Acts,
    };

    /// One element to drag, and one place to drop it.
    fn check(&self) -> Result<(), ActionError> {
        validate::element_target(Self::TOOL.name, &self.target)?;
        match (&self.to_ref, &self.to_selector) {
            (Some(r), None) => validate::reference(r),
            (None, Some(s)) => validate::non_empty("to_selector", s),
            (Some(_), Some(_)) => Err(ActionError::invalid(
                "browser_drag takes to_ref or to_selector, not both",
                "Pass the drop target's ref as to_ref only.",
            )),
            (None, None) => Err(ActionError::invalid(
                "browser_drag needs where to drop: to_ref (or to_selector)",
                "Pass the drop target's ref from browser_snapshot as to_ref.",
            )),
        }
    }
}

impl TabTool for DragArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        front::ensure(call.tab, call.budget).await?;
        run(call.tab, self, call.budget).await
    }
}

/// Watches the source's window for the drag's first mouse move: a
/// `dragstart` that follows (and is not cancelled) settles it as a drag;
/// two frames without one settle it as a plain mouse drag. Chromium may
/// dispatch `dragstart` a task after the move, so one task is not enough;
/// for a source that is `draggable` (it will start one) a loaded renderer
/// gets up to 3 s instead of two frames.
/// `__cdpilotDragStarted()` answers it (false when no move came).
const WATCH_DRAGSTART: &str = r#"function () {
  const win = this.ownerDocument.defaultView;
  const draggable = !!this.closest('[draggable=true]');
  let started = Promise.resolve(false);
  let settle = () => {};
  const onDrag = (e) => settle(!e.defaultPrevented);
  const onMove = () => {
    started = new Promise((resolve) => {
      settle = resolve;
      win.addEventListener('dragstart', onDrag, { once: true, capture: true });
      if (draggable) win.setTimeout(() => resolve(false), 3000);
      else win.requestAnimationFrame(() => win.requestAnimationFrame(() => resolve(false)));
    });
  };
  win.addEventListener('mousemove', onMove, { once: true, capture: true });
  win.__cdpilotDragStarted = async () => {
    const value = await started;
    win.removeEventListener('mousemove', onMove, { capture: true });
    win.removeEventListener('dragstart', onDrag, { capture: true });
    delete win.__cdpilotDragStarted;
    return value;
  };
}"#;

const DRAG_STARTED: &str = "function () { const w = this.ownerDocument.defaultView; return w.__cdpilotDragStarted ? w.__cdpilotDragStarted() : false; }";

/// Before a drop: notes when the target's window sees the `dragover` and
/// the `drop` (a frame's renderer may take them well after Chromium
/// acknowledged the dispatch, and a drop sent before the page answered
/// the dragover is no drop).
const WATCH_DROP: &str = r#"function () {
  const win = this.ownerDocument.defaultView;
  const seen = (type) => new Promise((resolve) => win.addEventListener(type, () => resolve(true), { once: true, capture: true }));
  win.__cdpilotDragOver = seen('dragover');
  win.__cdpilotDrop = seen('drop');
  win.addEventListener('dragover', (e) => { win.__cdpilotOver = { target: e.target, x: e.clientX, y: e.clientY }; }, { once: true, capture: true });
}"#;

/// After a dragover: whether the element under the pointer is no longer
/// the one the dragover went to (the page moved its items during the
/// dragover, as an HTML5 list written to MDN's pattern moves the dragged
/// item under the pointer).
const MOVED_UNDER: &str = r#"function () {
  const over = this.ownerDocument.defaultView.__cdpilotOver;
  if (!over) return false;
  const now = this.ownerDocument.elementFromPoint(over.x, over.y);
  return !!now && now !== over.target;
}"#;

/// Whether the target's window saw `__cdpilot<name>` within 5 s, answered
/// a frame later (the page's own handlers run after the capture listener).
const SEEN: &str = r#"function (name) {
  const win = this.ownerDocument.defaultView;
  const seen = win['__cdpilot' + name] || Promise.resolve(false);
  const late = new Promise((resolve) => win.setTimeout(() => resolve(false), 5000));
  return Promise.race([seen, late]).then((v) => new Promise((resolve) => win.requestAnimationFrame(() => resolve(v))));
}"#;

/// Resolves after the target's window drew a frame.
const FRAME: &str = "function () { const w = this.ownerDocument.defaultView; return new Promise((r) => w.requestAnimationFrame(() => r(null))); }";

/// Resolves after two frames and at least 100 ms of the page's clock: the
/// pointer's rest at the drop point before the button is released.
const REST: &str = "function () { const w = this.ownerDocument.defaultView; return new Promise((r) => w.setTimeout(() => w.requestAnimationFrame(() => w.requestAnimationFrame(() => r(null))), 100)); }";

/// Where the source and the target sit in their common parent, when they
/// are two items of one list (`null` otherwise).
const SIBLINGS: &str = r#"function (target) {
  const list = this.parentElement;
  if (!list || target === this || target.parentElement !== list) return null;
  const items = Array.from(list.children).filter((el) => el.checkVisibility());
  const from = items.indexOf(this), to = items.indexOf(target);
  return from < 0 || to < 0 ? null : { from, to };
}"#;

/// After a frame: the source's list as it shows now (each shown item's
/// text), and the source's place in it.
const ORDER: &str = r#"function () {
  const win = this.ownerDocument.defaultView;
  return new Promise((resolve) => win.requestAnimationFrame(() => {
    const list = this.parentElement;
    if (!this.isConnected || !list) return resolve(null);
    const items = Array.from(list.children).filter((el) => el.checkVisibility());
    const text = (el) => (el.innerText || el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 100);
    resolve({ order: items.map(text), at: items.indexOf(this) });
  }));
}"#;

/// What undoing a drag's state may take after the call's budget ran out.
const CLEANUP: std::time::Duration = std::time::Duration::from_secs(2);

/// Moves between press and release: enough for pages that follow the
/// pointer (a slider reads each move), few enough to stay quick.
const STEPS: u32 = 8;

pub async fn run(tab: &Tab, args: &DragArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let source = element::resolve(tab, &args.target, budget).await?;
    let target = element::resolve(tab, &args.drop_target(), budget).await?;
    if source.frame.session.id() != target.frame.session.id() {
        return Err(ActionError::invalid(
            format!(
                "{} and {} are in different frames; a drag stays within one frame",
                source.label, target.label
            ),
            "Pick a drop target in the same frame as the element you drag.",
        ));
    }
    let covered = |e: ActionError| ActionError {
        message: e
            .message
            .replace("would receive the click", "would receive the drop"),
        ..e
    };
    // The target is brought into view first; measuring the source may
    // scroll again, so the target is measured last. The pointer goes to
    // the source, and what is there is checked, before the press.
    target
        .aim(tab, budget, Intent::Measure, false)
        .await
        .map_err(covered)?;
    let from = source.aim(tab, budget, Intent::Press, false).await?.point;
    let aimed = target
        .aim(tab, budget, Intent::Measure, false)
        .await
        .map_err(covered)?;
    let mut to = aimed.point;
    let places = siblings(&source, &target, budget).await?;
    if let Some((was, asked)) = places {
        to = past_middle(tab, &target, from, to, asked > was, budget).await?;
    }
    // Where the target is checked again before the drop: not in a
    // sortable list (its items move under the pointer by design).
    let drop = Drop {
        source: &source,
        target: &target,
        offset: (aimed.point.0 - aimed.local.0, aimed.point.1 - aimed.local.1),
        check: places.is_none(),
    };

    source
        .call(budget, "watching for a drag start", WATCH_DRAGSTART, vec![])
        .await?;
    let mut intercepted = tab.session.events();
    budget
        .cdp(
            "intercepting drags",
            &tab.session,
            SetInterceptDrags { enabled: true },
        )
        .await?;
    let dragged = drag(tab, &drop, from, to, &mut intercepted, budget).await;
    // Always stop intercepting (a later real drag must not be swallowed),
    // and after a failure let go of the button, within a budget of its own
    // since the call's may be spent.
    let cleanup = Budget::with_timeout(CLEANUP);
    let stop = cleanup
        .cdp(
            "intercepting drags",
            &tab.session,
            SetInterceptDrags { enabled: false },
        )
        .await;
    // Let go where the drag started: over the drop point, a release
    // would drop on whatever is there now.
    if dragged.is_err() {
        let _ = input::left_mouse(tab, &cleanup, "mouseReleased", from, false).await;
    }
    let html5 = dragged?;
    stop?;
    if target.frame.session.id() != tab.session.id() {
        target.settle(budget).await?;
    }
    let landed = match places {
        Some(places) => Some(read_back(&source, places, budget).await?),
        None => None,
    };
    // `kind` says which happened (the contract, v3): the page took an
    // HTML5 drag and drop, or followed the pointer/mouse events.
    let (kind, said) = if html5 {
        ("html5", "HTML5 drag and drop")
    } else {
        (
            "pointer",
            "a mouse drag: the page followed pointer and mouse events",
        )
    };
    let mut data = json!({ "ok": true, "kind": kind, "html5": html5 });
    let mut text = format!("Dragged {} onto {} ({said}).", source.label, target.label);
    if let Some((order, at, asked)) = landed.filter(|(order, ..)| !order.is_empty()) {
        text += &format!(" The list's order is now: {}.", order.join(", "));
        if at != asked {
            text += &format!(
                " It landed at position {} of {}, not {} as asked.",
                at + 1,
                order.len(),
                asked + 1
            );
        }
        data["order"] = json!(order);
        data["position"] = json!(at + 1);
    }
    Ok(ActionOutput::new(text, data))
}

/// `(source's index, target's index)` when the two are items of one list.
async fn siblings(
    source: &element::Element,
    target: &element::Element,
    budget: &Budget,
) -> Result<Option<(usize, usize)>, ActionError> {
    let step = "reading the list the item is in";
    let evaluated = source
        .frame
        .cdp(
            budget,
            step,
            runtime::CallFunctionOn {
                function_declaration: SIBLINGS.into(),
                object_id: Some(source.object_id.clone()),
                arguments: vec![runtime::CallArgument {
                    value: None,
                    object_id: Some(target.object_id.clone()),
                }],
                return_by_value: true,
                ..Default::default()
            },
        )
        .await?;
    let places = evaluated.result.value.unwrap_or(Value::Null);
    let index = |key: &str| places[key].as_u64().map(|n| n as usize);
    Ok(index("from").zip(index("to")))
}

/// The drop point on a list item: a quarter of its size past its middle,
/// along the axis of travel, towards where the item goes (below the
/// middle moving down, above it moving up).
async fn past_middle(
    tab: &Tab,
    target: &element::Element,
    from: (f64, f64),
    to: (f64, f64),
    forward: bool,
    budget: &Budget,
) -> Result<(f64, f64), ActionError> {
    let (left, top, right, bottom) = target.viewport_box(tab, budget).await?;
    let sign = if forward { 1.0 } else { -1.0 };
    if (to.0 - from.0).abs() > (to.1 - from.1).abs() {
        Ok((to.0 + sign * (right - left) / 4.0, to.1))
    } else {
        Ok((to.0, to.1 + sign * (bottom - top) / 4.0))
    }
}

/// The list's order after a drag of one of its items: `(order, where the
/// item is, where it was asked to go)`; an error when it did not move.
async fn read_back(
    source: &element::Element,
    (was, asked): (usize, usize),
    budget: &Budget,
) -> Result<(Vec<String>, usize, usize), ActionError> {
    let read = source
        .call_awaiting(budget, "reading the list's order back", ORDER, vec![])
        .await?;
    let order: Vec<String> = read["order"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let at = read["at"].as_u64().map(|n| n as usize);
    match at {
        Some(at) if at == was => Err(ActionError::new(
            ErrorCode::ElementNotInteractable,
            format!(
                "{} was not placed: the mouse was released and the list's order is unchanged ({})",
                source.label,
                order.join(", ")
            ),
            "The list may move items only by a handle (take a browser_snapshot and drag the handle's ref), \
             or not be sortable at all.",
        )),
        Some(at) => Ok((order, at, asked)),
        // The page re-rendered the list (the dragged node is gone): the
        // order is read in the next snapshot.
        None => Ok((Vec::new(), asked, asked)),
    }
}

/// Presses at `from`, moves to `to` in steps and drops there. Returns
/// whether the page made it an HTML5 drag.
async fn drag(
    tab: &Tab,
    drop: &Drop<'_>,
    from: (f64, f64),
    to: (f64, f64),
    intercepted: &mut cdp::EventStream,
    budget: &Budget,
) -> Result<bool, ActionError> {
    let (source, target) = (drop.source, drop.target);
    input::left_mouse(tab, budget, "mouseMoved", from, false).await?;
    input::left_mouse(tab, budget, "mousePressed", from, true).await?;
    let step = |n: u32| {
        let t = f64::from(n) / f64::from(STEPS);
        (from.0 + (to.0 - from.0) * t, from.1 + (to.1 - from.1) * t)
    };
    // The first move starts an HTML5 drag if the page has one.
    input::left_mouse(tab, budget, "mouseMoved", step(1), true).await?;
    let started = source
        .call_awaiting(budget, "checking for a drag start", DRAG_STARTED, vec![])
        .await?;
    if started != Value::Bool(true) {
        // A frame per step: Chromium coalesces the moves a page has not
        // drawn a frame between into one, and sortables (jQuery UI's,
        // SortableJS's fallback) place the item by the items the pointer
        // passed over. At the end the pointer rests a moment, as a hand
        // does: SortableJS's fallback looks where it is every 50 ms.
        for n in 2..=STEPS {
            input::left_mouse(tab, budget, "mouseMoved", step(n), true).await?;
            target
                .call_awaiting(budget, "letting the page follow the pointer", FRAME, vec![])
                .await?;
        }
        let to = drop.point(tab, to, true, budget).await?;
        target
            .call_awaiting(budget, "letting the page follow the pointer", REST, vec![])
            .await?;
        // A drag the page started late was handed over meanwhile: drop it.
        let late = std::iter::from_fn(|| intercepted.try_recv().ok())
            .find_map(|event| event.decode::<DragIntercepted>());
        match late {
            Some(late) => return drop_at(tab, target, to, late.data, budget).await.map(|_| true),
            None => {
                target.watch_input(tab, "mouseup", budget).await?;
                input::left_mouse(tab, budget, "mouseReleased", to, false).await?;
                return Ok(false);
            }
        }
    }
    let data = budget
        .run("waiting for the page's drag data", async {
            while let Some(event) = intercepted.recv().await {
                if let Some(drag) = event.decode::<DragIntercepted>() {
                    return Ok(drag.data);
                }
            }
            Err(ActionError::disconnected())
        })
        .await
        .map_err(|e| ActionError {
            message: format!(
                "{} started a drag, but Chromium handed over no drag data ({})",
                source.label, e.message
            ),
            ..e
        })?;
    let to = match drop.point(tab, to, false, budget).await {
        Ok(to) => to,
        Err(e) => {
            let cancel = DispatchDragEvent {
                kind: "dragCancel".into(),
                x: from.0,
                y: from.1,
                data,
                modifiers: 0,
            };
            let _ = budget.cdp("canceling the drag", &tab.session, cancel).await;
            return Err(e);
        }
    };
    drop_at(tab, target, to, data, budget).await?;
    Ok(true)
}

/// What is at (x, y) in the target's frame, leaving out the dragged
/// element (`source`, which may follow the pointer): `null` when it is the
/// target or inside it, `{moved}` when the target's box no longer holds
/// the point, else `{cover}` (as the serializer describes it).
const DROP_AT: &str = r#"function (x, y, source) {
  const el = this;
  const doc = el.ownerDocument;
  const inside = (n, of) => { for (let c = n; c; c = c.parentNode || c.host) if (c === of) return true; return false; };
  const root = el.getRootNode();
  const hit = (root.elementsFromPoint ? root : doc).elementsFromPoint(x, y).find((n) => !inside(n, source));
  if (hit && inside(hit, el)) return null;
  const r = el.getBoundingClientRect();
  if (!hit || x < r.left - 1 || x > r.right + 1 || y < r.top - 1 || y > r.bottom + 1) return { moved: true };
  const api = globalThis.__cdpilot;
  return { cover: api && api.describe ? api.describe(hit) : '<' + hit.tagName.toLowerCase() + '>' };
}"#;

/// How many times a drop target that moved away is followed.
const FOLLOWS: u32 = 3;

/// The drop's two elements, and how the target's drop point is checked.
struct Drop<'a> {
    source: &'a element::Element,
    target: &'a element::Element,
    /// The target's frame's place in the tab's viewport (point − local).
    offset: (f64, f64),
    /// Whether the target is checked at the drop point.
    check: bool,
}

impl Drop<'_> {
    /// Before the drop (issue 42): the point to drop at. The target is
    /// checked at `to`; one that moved away during the drag (the page
    /// rearranged itself when it started) is measured again and followed,
    /// the pointer carried there in steps when the drag is the mouse's
    /// (`pointer`); one that is covered, or keeps moving, is not dropped on:
    /// the drag is let go where it started and the answer says what is at
    /// the point.
    async fn point(
        &self,
        tab: &Tab,
        to: (f64, f64),
        pointer: bool,
        budget: &Budget,
    ) -> Result<(f64, f64), ActionError> {
        if !self.check {
            return Ok(to);
        }
        let (mut to, mut offset) = (to, self.offset);
        for follow in 0..=FOLLOWS {
            let at = self.at(to, offset, budget).await?;
            if at.is_null() {
                return Ok(to);
            }
            if at["moved"] != true || follow == FOLLOWS {
                let what = at["cover"]
                    .as_str()
                    .map(|cover| format!("{cover} is at the drop point now"))
                    .unwrap_or_else(|| "it kept moving away from the pointer".into());
                return Err(ActionError::new(
                    ErrorCode::ElementNotInteractable,
                    format!(
                        "nothing was dropped on {}: {what}; the drag was let go where it started",
                        self.target.label
                    ),
                    "Take a browser_snapshot to see where things are now, then drag again.",
                ));
            }
            let aimed = self.target.aim(tab, budget, Intent::Measure, false).await?;
            if pointer {
                let was = to;
                for n in 1..=4 {
                    let t = f64::from(n) / 4.0;
                    let step = (
                        was.0 + (aimed.point.0 - was.0) * t,
                        was.1 + (aimed.point.1 - was.1) * t,
                    );
                    input::left_mouse(tab, budget, "mouseMoved", step, true).await?;
                    self.target
                        .call_awaiting(budget, "letting the page follow the pointer", FRAME, vec![])
                        .await?;
                }
            }
            to = aimed.point;
            offset = (aimed.point.0 - aimed.local.0, aimed.point.1 - aimed.local.1);
        }
        Ok(to)
    }

    /// [`DROP_AT`] at `to` (in the tab's viewport), on the target.
    async fn at(&self, to: (f64, f64), offset: (f64, f64), budget: &Budget) -> Result<Value, ActionError> {
        let local = (to.0 - offset.0, to.1 - offset.1);
        let evaluated = self
            .target
            .frame
            .cdp(
                budget,
                "checking the drop point",
                runtime::CallFunctionOn {
                    function_declaration: DROP_AT.into(),
                    object_id: Some(self.target.object_id.clone()),
                    arguments: vec![
                        runtime::CallArgument {
                            value: Some(json!(local.0)),
                            object_id: None,
                        },
                        runtime::CallArgument {
                            value: Some(json!(local.1)),
                            object_id: None,
                        },
                        runtime::CallArgument {
                            value: None,
                            object_id: Some(self.source.object_id.clone()),
                        },
                    ],
                    return_by_value: true,
                    ..Default::default()
                },
            )
            .await?;
        Ok(evaluated.result.value.unwrap_or(Value::Null))
    }
}

/// Enters, hovers and drops the intercepted drag's `data` at `to`, on
/// `target`, waiting for the page to see the dragover before the drop and
/// the drop before returning. A drop the page never saw is tried once
/// more, then reported.
async fn drop_at(
    tab: &Tab,
    target: &element::Element,
    to: (f64, f64),
    data: Value,
    budget: &Budget,
) -> Result<(), ActionError> {
    let dispatch = |kind: &str| DispatchDragEvent {
        kind: kind.into(),
        x: to.0,
        y: to.1,
        data: data.clone(),
        modifiers: 0,
    };
    budget
        .cdp("dropping", &tab.session, dispatch("dragEnter"))
        .await?;
    for _ in 0..2 {
        target
            .call(budget, "watching for the drop", WATCH_DROP, vec![])
            .await?;
        budget.cdp("dropping", &tab.session, dispatch("dragOver")).await?;
        target
            .call_awaiting(budget, "waiting for the dragover", SEEN, vec![json!("DragOver")])
            .await?;
        // The page moved another element under the pointer: Chromium's
        // next dragover only enters it (dragenter, dragleave), and a drop
        // before its own dragover accepted is no drop. A hand keeps
        // moving; here one dragover switches, the next is the element's.
        if target
            .call(budget, "waiting for the dragover", MOVED_UNDER, vec![])
            .await?
            == Value::Bool(true)
        {
            budget.cdp("dropping", &tab.session, dispatch("dragOver")).await?;
            target
                .call(budget, "watching for the drop", WATCH_DROP, vec![])
                .await?;
            budget.cdp("dropping", &tab.session, dispatch("dragOver")).await?;
            target
                .call_awaiting(budget, "waiting for the dragover", SEEN, vec![json!("DragOver")])
                .await?;
        }
        budget.cdp("dropping", &tab.session, dispatch("drop")).await?;
        let dropped = target
            .call_awaiting(budget, "waiting for the drop", SEEN, vec![json!("Drop")])
            .await?;
        if dropped == Value::Bool(true) {
            return Ok(());
        }
    }
    Err(ActionError::new(
        ErrorCode::ElementNotInteractable,
        format!(
            "{} did not take the drop: the page never received it (its dragover was not accepted)",
            target.label
        ),
        "Take a browser_snapshot to find the element that accepts drops, and drag onto it.",
    ))
}
