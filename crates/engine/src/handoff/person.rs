//! What the person does on a hand-off page: their mouse, wheel, keys and
//! pastes reach the handed tab (and only it) as trusted CDP input; a resize
//! of their view sets the tab's viewport (given back when the hand-off
//! ends); Back, Done and Give up; what the page shows (the live frames, the tab's URL,
//! what the URL rules refused while they drove).
//!
//! Every click and key is audited (`person: click`, `person: key`) with no
//! arguments: never a key's value, so a password typed by the person stays
//! with them. Input whose point lies outside the tab's viewport is dropped.

use std::time::Duration;

use cdp::protocol::{emulation, input};
use serde::Deserialize;
use serde_json::{json, Value};

use super::{Answer, Handoff};
use crate::audit::{self, Record};
use crate::tab::screencast::Viewer;
use crate::{ActionError, Budget};

/// The smallest viewport a resize sets (width, height in CSS pixels).
pub const VIEWPORT_MIN: (u32, u32) = (200, 150);

/// The largest viewport a resize sets.
pub const VIEWPORT_MAX: (u32, u32) = (3840, 2160);

/// How long one input event may take to reach the tab.
const INPUT_BUDGET: Duration = Duration::from_secs(5);

/// One event from the hand-off page (JSON, tagged by `type`). Points are
/// in the tab's viewport CSS pixels (the page maps its live element's box
/// onto the viewport the frames report).
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Input {
    /// A mouse move, press or release.
    Mouse {
        /// `move`, `down` or `up`.
        action: String,
        /// Viewport x.
        x: f64,
        /// Viewport y.
        y: f64,
        /// `left`, `middle`, `right` (`none` for a move).
        #[serde(default)]
        button: Option<String>,
        /// Buttons held (CDP's bit mask).
        #[serde(default)]
        buttons: u32,
        /// Modifier bits (Alt 1, Control 2, Meta 4, Shift 8).
        #[serde(default)]
        modifiers: u32,
        /// 1 for a click, 2 for a double click's second one.
        #[serde(default)]
        clicks: u32,
    },
    /// A wheel turn at a point.
    Wheel {
        /// Viewport x.
        x: f64,
        /// Viewport y.
        y: f64,
        /// Pixels to the right.
        #[serde(default)]
        dx: f64,
        /// Pixels down.
        #[serde(default)]
        dy: f64,
    },
    /// A key going down or up.
    Key {
        /// `down` or `up`.
        action: String,
        /// `KeyboardEvent.key`.
        key: String,
        /// `KeyboardEvent.code`.
        #[serde(default)]
        code: String,
        /// The text the key types (a printable key with no Control, Alt or
        /// Meta held).
        #[serde(default)]
        text: Option<String>,
        /// `KeyboardEvent.keyCode`.
        #[serde(default)]
        key_code: u32,
        /// Modifier bits.
        #[serde(default)]
        modifiers: u32,
    },
    /// The person's view of the tab was resized: the tab's viewport takes
    /// that size in CSS pixels (clamped to [`VIEWPORT_MIN`]..[`VIEWPORT_MAX`];
    /// a size that is not a positive number is dropped) until the
    /// hand-off ends, when the agent's viewport comes back.
    Resize {
        /// The live view's width.
        width: f64,
        /// The live view's height.
        height: f64,
    },
    /// Text pasted (inserted at the caret).
    Paste {
        /// The text.
        text: String,
    },
    /// The Back button.
    Back,
    /// The Done button.
    Done,
    /// The Give up button.
    GiveUp,
}

impl Handoff {
    /// What the page shows besides the frames: the reason, the tab's URL,
    /// the top-level documents the URL rules refused since it began; every
    /// URL redacted through the session's secrets (whoever holds the link
    /// reads it, and the agent may have typed a secret into a GET form).
    pub fn view(&self) -> Value {
        let url = self.tab.state(|s| s.url().to_owned());
        let refused: Vec<Value> = self
            .tab
            .gate()
            .since(self.mark)
            .into_iter()
            .filter(|b| b.main_frame)
            .map(|b| json!({"url": b.verdict.url, "rule": b.verdict.rule}))
            .collect();
        self.secrets
            .redact_value(json!({"id": self.id, "reason": self.reason, "url": url, "refused": refused}))
    }

    /// Hears each refusal of the URL rules in the tab (the page then shows
    /// the view again: a refused navigation brings no frame).
    pub fn refusals(&self) -> tokio::sync::watch::Receiver<u64> {
        self.tab.gate().refusals()
    }

    /// Joins the tab's screencast (shared with every other viewer of the
    /// tab: other hand-off pages, the dashboard's live view). While one of
    /// the page's sockets holds it, input is checked against the viewport
    /// its frames show.
    pub fn watch(&self) -> Viewer {
        self.tab.watch()
    }

    /// Applies one event of the person's: input reaches the tab as trusted
    /// CDP input; Back goes back in the tab's history; Done and Give up
    /// answer the waiting call. An event outside the viewport, or before
    /// the first frame told its size, is dropped (`Ok(false)`).
    pub async fn act(&self, event: Input) -> Result<bool, ActionError> {
        let budget = Budget::new(INPUT_BUDGET, self.ended.child_token());
        let session = &self.tab.session;
        match event {
            Input::Mouse {
                action,
                x,
                y,
                button,
                buttons,
                modifiers,
                clicks,
            } => {
                if !self.inside(x, y) {
                    return Ok(false);
                }
                let kind = match action.as_str() {
                    "move" => "mouseMoved",
                    "down" => "mousePressed",
                    "up" => "mouseReleased",
                    other => {
                        return Err(ActionError::invalid(
                            format!("mouse action \"{other}\""),
                            "Send move, down or up.",
                        ))
                    }
                };
                let button = button.unwrap_or_else(|| "none".into());
                if !matches!(button.as_str(), "none" | "left" | "middle" | "right") {
                    return Err(ActionError::invalid(
                        format!("button \"{button}\""),
                        "Send left, middle, right or none.",
                    ));
                }
                if kind == "mousePressed" {
                    self.audited("person: click");
                }
                let event = input::DispatchMouseEvent {
                    kind: kind.into(),
                    x,
                    y,
                    button,
                    buttons,
                    click_count: clicks.max(u32::from(kind != "mouseMoved")),
                    modifiers,
                };
                let step = "forwarding the person's mouse";
                if kind == "mouseMoved" {
                    // Not waited for: the press behind it is not held up by
                    // its round trip (Chrome takes them in order).
                    session.post(event).map_err(|e| budget.map_cdp(step, e))?;
                } else {
                    budget.cdp(step, session, event).await?;
                }
            }
            Input::Wheel { x, y, dx, dy } => {
                if !self.inside(x, y) {
                    return Ok(false);
                }
                let event = input::DispatchMouseWheel {
                    kind: "mouseWheel".into(),
                    x,
                    y,
                    delta_x: dx,
                    delta_y: dy,
                };
                budget
                    .cdp("forwarding the person's wheel", session, event)
                    .await?;
            }
            Input::Key {
                action,
                key,
                code,
                text,
                key_code,
                modifiers,
            } => {
                let kind = match (action.as_str(), &text) {
                    ("down", Some(_)) => "keyDown",
                    ("down", None) => "rawKeyDown",
                    ("up", _) => "keyUp",
                    (other, _) => {
                        return Err(ActionError::invalid(
                            format!("key action \"{other}\""),
                            "Send down or up.",
                        ))
                    }
                };
                if action == "down" {
                    self.audited("person: key");
                }
                let event = input::DispatchKeyEvent {
                    kind: kind.into(),
                    key,
                    code,
                    text: text.filter(|_| kind == "keyDown"),
                    windows_virtual_key_code: key_code,
                    native_virtual_key_code: key_code,
                    modifiers,
                };
                budget.cdp("forwarding the person's key", session, event).await?;
            }
            Input::Resize { width, height } => return self.resize(width, height, &budget).await,
            Input::Paste { text } => {
                self.audited("person: key");
                budget
                    .cdp(
                        "forwarding the person's paste",
                        session,
                        input::InsertText { text },
                    )
                    .await?;
            }
            Input::Back => {
                self.audited("person: back");
                let back = crate::tab_tools::navigate::NavigateArgs {
                    history: Some(crate::tab_tools::navigate::History::Back),
                    ..Default::default()
                };
                crate::tab_tools::navigate::run(&self.tab, &back, &budget).await?;
            }
            Input::Done => {
                self.audited("person: done");
                self.answer(Answer::Done);
            }
            Input::GiveUp => {
                self.audited("person: give up");
                self.answer(Answer::GiveUp);
            }
        }
        Ok(true)
    }

    /// Sets the tab's viewport to the person's view (`Input::Resize`):
    /// `Ok(false)` for a size that is no positive number, or once the
    /// hand-off ended.
    async fn resize(&self, width: f64, height: f64, budget: &Budget) -> Result<bool, ActionError> {
        if !(width.is_finite() && height.is_finite() && width >= 1.0 && height >= 1.0) {
            return Ok(false);
        }
        let clamp = |v: f64, min: u32, max: u32| (v.round() as u32).clamp(min, max);
        let (width, height) = (
            clamp(width, VIEWPORT_MIN.0, VIEWPORT_MAX.0),
            clamp(height, VIEWPORT_MIN.1, VIEWPORT_MAX.1),
        );
        let mut resized = self.resized.lock().await;
        if self.ended.is_cancelled() {
            return Ok(false);
        }
        // The agent's own scale and mobile mode stay (0: the window's own).
        let (_, _, scale, mobile) = self
            .tab
            .state(|s| s.emulated().metrics())
            .unwrap_or((0, 0, 0.0, false));
        // Marked before it is sent: a resize cut short by the end may
        // still reach Chrome, and is then undone all the same.
        *resized = true;
        let set = emulation::SetDeviceMetricsOverride {
            width,
            height,
            device_scale_factor: scale,
            mobile,
            ..Default::default()
        };
        budget
            .cdp("resizing the tab to the person's view", &self.tab.session, set)
            .await?;
        Ok(true)
    }

    /// Gives the tab the agent's viewport back if the person resized it:
    /// what `browser_emulate` set, or the window's own. Runs when the
    /// hand-off ends (after `ended` fired: no resize follows it).
    pub(crate) async fn restore_viewport(&self) {
        let mut resized = self.resized.lock().await;
        if !std::mem::take(&mut *resized) {
            return;
        }
        let budget = Budget::with_timeout(INPUT_BUDGET);
        let session = &self.tab.session;
        let restored = match self.tab.state(|s| s.emulated().metrics()) {
            Some((width, height, device_scale_factor, mobile)) => {
                let set = emulation::SetDeviceMetricsOverride {
                    width,
                    height,
                    device_scale_factor,
                    mobile,
                    ..Default::default()
                };
                budget.cdp("restoring the agent's viewport", session, set).await
            }
            None => {
                let clear = emulation::ClearDeviceMetricsOverride {};
                budget.cdp("restoring the agent's viewport", session, clear).await
            }
        };
        if let Err(e) = restored {
            tracing::debug!("after the hand-off {}: {}", self.id, e.message);
        }
    }

    /// Whether `(x, y)` lies in the tab's viewport as the last frame showed it.
    fn inside(&self, x: f64, y: f64) -> bool {
        let (width, height) = self.tab.cast_viewport();
        x.is_finite() && y.is_finite() && x >= 0.0 && y >= 0.0 && x < width && y < height
    }

    /// One audit record of the person's (no arguments: never what they
    /// typed; the tab's URL redacted through the session's secrets).
    fn audited(&self, what: &str) {
        self.audit.record(Record {
            at: audit::rfc3339(std::time::SystemTime::now()),
            session: self.session.clone(),
            tool: what.to_owned(),
            arguments: json!({"handoff": self.id, "tab": self.tab_name}),
            url_before: Some(self.secrets.redact(&self.tab.state(|s| s.url().to_owned()))),
            url_after: None,
            verdicts: Vec::new(),
            routed: Vec::new(),
            outcome: "ok".into(),
            ms: 0,
        });
    }
}
