//! `browser_scroll`: bring an element into view, or turn the mouse wheel
//! over the page (or over a scrolling container) by an amount, and report
//! where the scrolled box ended up. Wheel input is trusted, so pages that
//! load more on `wheel` or `scroll` (infinite lists) react as for a person.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::args::{Common, ElementTarget};
use crate::tab::Tab;
use crate::tab_tools::element::{self, Element};
use crate::tab_tools::{front, input};
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::validate;
use crate::{ActionError, ActionOutput, Budget};

// Which way `browser_scroll` scrolls.
#[allow(missing_docs)] // schema-visible: see `crate::tool`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScrollDirection {
    Up,
    Down,
    Left,
    Right,
}

/// Arguments of `browser_scroll`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ScrollArgs {
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub target: ElementTarget,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<ScrollDirection>,
    /// Pixels (default one viewport).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<u32>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_scroll`: its declaration and checks (see `crate::tool`).
impl Tool for ScrollArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_scroll",
        verb: "scroll",
        group: Group::Core,
        description: "Scroll ref into view, or wheel-scroll the page (or container ref) in a direction.",
        scope: Scope::Tab,
        runs_during_dialog: false,
        budget: DefaultBudget::Action,
        changes_page: true,
        switch: None,
        effect: Effect::Acts,
    };

    /// An element to bring into view, or a direction (an amount only with one).
    fn check(&self) -> Result<(), ActionError> {
        let named = self.target.reference.is_some() || self.target.selector.is_some();
        if named {
            validate::element_target(Self::TOOL.name, &self.target)?;
        }
        match (self.direction, self.amount) {
            (None, None) if !named => Err(ActionError::invalid(
                "browser_scroll needs a ref (to scroll it into view) or a direction",
                "Pass {\"direction\": \"down\"} to scroll the page, or the ref of an element to bring into view.",
            )),
            (None, Some(_)) => Err(ActionError::invalid(
                "amount needs a direction",
                "Add direction: up, down, left or right.",
            )),
            (Some(_), Some(0)) => Err(ActionError::invalid(
                "amount must be at least 1 pixel",
                "Leave amount out to scroll one viewport.",
            )),
            _ => Ok(()),
        }
    }
}

impl TabTool for ScrollArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        front::ensure(call.tab, call.budget).await?;
        run(call.tab, self, call.budget).await
    }
}

/// The scrolled box's position and size: the element's document (`page`)
/// or the element itself.
const METRICS: &str = r#"function (page) {
  const doc = this.ownerDocument;
  const s = page ? (doc.scrollingElement || doc.documentElement) : this;
  const win = doc.defaultView;
  return { x: s.scrollLeft, y: s.scrollTop, w: page ? win.innerWidth : s.clientWidth, h: page ? win.innerHeight : s.clientHeight,
    cx: page ? win.innerWidth / 2 : null, cy: page ? win.innerHeight / 2 : null };
}"#;

/// Before the wheel: notes when a wheel event reaches the scrolled box's
/// window (the wheel is acknowledged by the top-level page; a frame's
/// process may handle it later).
const WATCH_WHEEL: &str = r#"function () {
  const win = this.ownerDocument.defaultView;
  win.__cdpilotWheelSeen = false;
  win.addEventListener('wheel', () => { win.__cdpilotWheelSeen = true; }, { once: true, capture: true, passive: true });
}"#;

/// Resolves with the box's position once the wheel's scroll has finished:
/// the position moved and then held for two frames; or it did not move in
/// twenty frames and 1.5 s after the wheel arrived (already at the end, or
/// the page ate the wheel; a loaded renderer may scroll a frame's box well
/// after the event), or in 120 frames and 5 s when the wheel never showed
/// here (it went to a frame inside, which may have scrolled instead).
const SETTLED: &str = r#"function (page, x0, y0) {
  const doc = this.ownerDocument;
  const win = doc.defaultView;
  const s = page ? (doc.scrollingElement || doc.documentElement) : this;
  return new Promise((resolve) => {
    let last = null, still = 0, frames = 0, sinceWheel = 0, wheelAt = null;
    const began = performance.now();
    const tick = () => {
      const now = [s.scrollLeft, s.scrollTop];
      const moved = now[0] !== x0 || now[1] !== y0;
      still = last && now[0] === last[0] && now[1] === last[1] ? still + 1 : 0;
      last = now;
      frames += 1;
      const t = performance.now();
      if (win.__cdpilotWheelSeen) { sinceWheel += 1; wheelAt = wheelAt ?? t; }
      const gaveUp = wheelAt !== null ? sinceWheel >= 20 && t - wheelAt >= 1500 : frames >= 120 && t - began >= 5000;
      if ((moved && still >= 2) || (!moved && gaveUp)) return resolve({ x: now[0], y: now[1], seen: wheelAt !== null });
      win.requestAnimationFrame(tick);
    };
    win.requestAnimationFrame(tick);
  });
}"#;

pub async fn run(tab: &Tab, args: &ScrollArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let named = args.target.reference.is_some() || args.target.selector.is_some();
    let Some(direction) = args.direction else {
        let element = element::resolve_to_read(tab, &args.target, budget).await?;
        element.viewport_box(tab, budget).await?;
        let at = element
            .call(budget, "reading the scroll position", METRICS, vec![json!(true)])
            .await?;
        return Ok(scrolled(format!("Scrolled {} into view", element.label), &at));
    };
    // The scrolled box: the container named, else the page's root.
    let (scroller, page) = if named {
        (element::resolve_to_read(tab, &args.target, budget).await?, false)
    } else {
        (element::by_selector(tab, ":root", budget).await?, true)
    };
    let before = scroller
        .call(budget, "measuring the scrolled box", METRICS, vec![json!(page)])
        .await?;
    let point = if page {
        (
            before["cx"].as_f64().unwrap_or_default(),
            before["cy"].as_f64().unwrap_or_default(),
        )
    } else {
        scroller.actionable_point(tab, budget).await?
    };
    let size = |key: &str| before[key].as_f64().unwrap_or_default();
    let (delta_x, delta_y) = match (direction, args.amount.map(f64::from)) {
        (ScrollDirection::Down, amount) => (0.0, amount.unwrap_or(size("h"))),
        (ScrollDirection::Up, amount) => (0.0, -amount.unwrap_or(size("h"))),
        (ScrollDirection::Right, amount) => (amount.unwrap_or(size("w")), 0.0),
        (ScrollDirection::Left, amount) => (-amount.unwrap_or(size("w")), 0.0),
    };
    scroller
        .call(budget, "watching for the wheel", WATCH_WHEEL, vec![])
        .await?;
    input::wheel(tab, budget, point, (delta_x, delta_y)).await?;
    // A box in a cross-origin frame gets the wheel: its frame has drawn
    // (`actionable_point` waited for it), so the wheel is not dropped.
    let at = settle(&scroller, page, &before, budget).await?;
    let what = if page {
        "the page".to_owned()
    } else {
        scroller.label.clone()
    };
    let moved = at["x"] != before["x"] || at["y"] != before["y"];
    let mut text = format!("Scrolled {what} {}", direction_name(direction));
    if !moved {
        text += " but it did not move (already at the end, or not scrollable that way)";
    }
    Ok(scrolled(text, &at))
}

async fn settle(
    scroller: &Element,
    page: bool,
    before: &Value,
    budget: &Budget,
) -> Result<Value, ActionError> {
    scroller
        .call_awaiting(
            budget,
            "waiting for the scroll to finish",
            SETTLED,
            vec![json!(page), before["x"].clone(), before["y"].clone()],
        )
        .await
}

fn direction_name(direction: ScrollDirection) -> &'static str {
    match direction {
        ScrollDirection::Up => "up",
        ScrollDirection::Down => "down",
        ScrollDirection::Left => "left",
        ScrollDirection::Right => "right",
    }
}

fn scrolled(text: String, at: &Value) -> ActionOutput {
    let (x, y) = (
        at["x"].as_f64().unwrap_or_default(),
        at["y"].as_f64().unwrap_or_default(),
    );
    ActionOutput::new(
        format!("{text}; it is now at x={x}, y={y}."),
        json!({ "ok": true, "scroll_x": x, "scroll_y": y }),
    )
}
