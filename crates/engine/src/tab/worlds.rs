//! Reaching a frame of the tab: resolving it from its one record
//! (`crate::frames`) to the session that owns it *now*, cdpilot's isolated
//! world in it, and evaluating there.
//!
//! A [`FrameRef`] is made per call from the current records and never
//! stored: a cross-origin frame that re-attached under a new session is
//! reached on the new one. The world is made on first use with
//! `Page.createIsolatedWorld` on the session that owns the frame, and
//! forgotten when the frame's document goes (the event reader sees its
//! context destroyed). An evaluate that finds its world gone retries once in
//! the new document's world; one whose frame moved to another session
//! retries there. Callers that find a frame's world unknown at once (the
//! event reader has not seen it made yet) share one
//! `Page.createIsolatedWorld` ([`Making`]): Chrome answers every one with
//! the same world (it keeps one per frame and name), so more would only
//! be round trips each caller waits for.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cdp::protocol::{page, runtime};
use cdp::{CdpError, Command, ProtocolErrorKind, Session};
use serde_json::Value;

use super::{Tab, WORLD};
use crate::frames::Owner;
use crate::single_flight::SingleFlight;
use crate::{ActionError, Budget, ErrorCode};

/// cdpilot's world being made, per frame (keyed by the session that owns
/// the frame and its id): one flight while it is under way, dropped when
/// it lands, so the map holds only frames being reached right now.
#[derive(Default)]
pub(crate) struct Making {
    flights: Arc<Mutex<HashMap<String, Arc<SingleFlight<i64>>>>>,
    /// How many times Chrome was asked to make the world (tests read it).
    asked: Arc<AtomicUsize>,
}

/// One frame of the tab as it is now: the main frame (`number: None`) or a
/// subframe, with the session that owns its document at resolution time.
/// Made per call; never kept.
#[derive(Clone, Debug)]
pub struct FrameRef {
    pub session: Session,
    pub frame_id: String,
    /// `f{number}` in refs, when a snapshot has numbered the frame.
    pub number: Option<u32>,
    /// The session is a cross-origin frame's target (this frame's or an
    /// ancestor's), not the tab's: its going away means a frame went away.
    pub on_frame_target: bool,
}

impl FrameRef {
    /// The prefix of refs in this frame (`""` or `f2`).
    pub fn prefix(&self) -> String {
        self.number.map(|n| format!("f{n}")).unwrap_or_default()
    }

    /// The frame as messages name it: `f2`, or its frame id.
    pub fn name(&self) -> String {
        match self.number {
            Some(n) => format!("f{n}"),
            None => self.frame_id.clone(),
        }
    }

    /// Its session as the frame records key contexts (`None`: the tab's).
    fn session_key(&self) -> Option<&str> {
        self.on_frame_target.then(|| self.session.id())
    }

    /// The frame's session went away under `step`.
    pub fn gone(&self, step: &str) -> ActionError {
        ActionError::of(
            crate::Failure::FrameGone,
            format!(
                "frame {} went away during {step} (it was removed, or its cross-origin process was replaced)",
                self.name()
            ),
            "Take a new browser_snapshot and use a ref from it.",
        )
    }

    /// Maps a CDP failure on this frame's session: a frame target that is
    /// gone is this frame gone, not the tab.
    pub fn map_cdp(&self, budget: &Budget, step: &str, error: CdpError) -> ActionError {
        if self.on_frame_target && error.kind() == ProtocolErrorKind::TargetGone {
            return self.gone(step);
        }
        budget.map_cdp(step, error)
    }

    /// Sends one typed command on the session that owns the frame, with
    /// what is left of the budget.
    pub async fn cdp<C: Command>(
        &self,
        budget: &Budget,
        step: &str,
        command: C,
    ) -> Result<C::Response, ActionError> {
        budget
            .run(step, async {
                self.session
                    .call(command, budget.deadline())
                    .await
                    .map_err(|e| self.map_cdp(budget, step, e))
            })
            .await
    }
}

/// Makes cdpilot's world in `frame` unless it is known by now (a flight
/// that ended just before this one began made it, or the event reader saw
/// it), and records it if the document is still `document`.
async fn make_world(
    frame: &FrameRef,
    state: &Mutex<super::TabState>,
    document: u64,
    asked: &AtomicUsize,
    budget: &Budget,
) -> Result<i64, ActionError> {
    let known = state
        .lock()
        .unwrap()
        .frames
        .world(&frame.frame_id, frame.session_key());
    if let Some(id) = known {
        return Ok(id);
    }
    asked.fetch_add(1, Ordering::Relaxed);
    let created = frame
        .cdp(
            budget,
            "creating cdpilot's isolated world",
            page::CreateIsolatedWorld {
                frame_id: frame.frame_id.clone(),
                world_name: WORLD.into(),
                grant_univeral_access: true,
            },
        )
        .await?;
    let id = created.execution_context_id;
    let mut s = state.lock().unwrap();
    if s.document == document {
        s.frames.set_world(&frame.frame_id, frame.session_key(), id);
    }
    Ok(id)
}

impl Tab {
    pub fn main_frame(&self) -> FrameRef {
        let frame_id = self.state(|s| s.main_frame_id.clone());
        FrameRef {
            session: self.session.clone(),
            frame_id,
            number: None,
            on_frame_target: false,
        }
    }

    /// Frame `id` as its record says now: the session that owns it, its
    /// number. A frame the records do not know, or a cross-origin frame
    /// whose target is not attached, is `frame_not_found`.
    pub fn frame_by_id(&self, id: &str) -> Result<FrameRef, ActionError> {
        self.known_frame(id).unwrap_or_else(|| {
            Err(ActionError::new(
                ErrorCode::FrameNotFound,
                format!("there is no frame \"{id}\" in this tab"),
                "Take a browser_snapshot: frames appear in its frame_tree, and refs inside frame N start with fN.",
            ))
        })
    }

    /// Frame `id` as in [`Tab::frame_by_id`]; `None` when the records do
    /// not know it (it went away, or never was).
    fn known_frame(&self, id: &str) -> Option<Result<FrameRef, ActionError>> {
        let found = self.state(|s| Some((s.frames.owner(id)?, s.frames.get(id)?.number())))?;
        let (session, on_frame_target, number) = match found {
            (Owner::Detached, _) => {
                return Some(Err(ActionError::new(
                    ErrorCode::FrameNotFound,
                    format!("frame {id} is a cross-origin frame whose process is not reachable right now (it is being replaced, or the browser connection was)"),
                    "Take a new browser_snapshot in a moment and use a ref from it.",
                )))
            }
            (Owner::Tab, number) => (self.session.clone(), false, number),
            (Owner::Target(session), number) => (self.session.connection().session(session), true, number),
        };
        Some(Ok(FrameRef {
            session,
            frame_id: id.to_owned(),
            number,
            on_frame_target,
        }))
    }

    /// The frame of ref prefix `f{number}`, where it is now. A number that
    /// was given out in this document but whose frame went away is
    /// `frame_not_found`; `None` when the number was never given out.
    pub fn numbered_frame(&self, number: u32) -> Option<Result<FrameRef, ActionError>> {
        let (id, given) = self.state(|s| {
            (
                s.frames.by_number(number).map(|f| f.id().to_owned()),
                s.frames.was_numbered(number),
            )
        });
        match id {
            // Its record may outlive the frame by an event still on its
            // way (the frame was just removed): it is named as removed.
            Some(id) => Some(
                self.known_frame(&id)
                    .unwrap_or_else(|| Err(removed_frame(number))),
            ),
            None if given => Some(Err(removed_frame(number))),
            None => None,
        }
    }

    /// The frame a tool's `frame` argument names: `f2` (as in refs), or a
    /// CDP frame id from the snapshot's frame_tree.
    pub fn frame_named(&self, name: &str) -> Result<FrameRef, ActionError> {
        if let Some(n) = name.strip_prefix('f').and_then(|n| n.parse::<u32>().ok()) {
            if let Some(frame) = self.numbered_frame(n) {
                return frame;
            }
        }
        if name == self.state(|s| s.main_frame_id.clone()) {
            return Ok(self.main_frame());
        }
        self.frame_by_id(name)
    }

    /// The page's own script context in `frame`: `None` means the session's
    /// default (the main frame, or an OOPIF's own document).
    pub fn page_context(&self, frame: &FrameRef) -> Result<Option<i64>, ActionError> {
        let (root_of_session, context) = self.state(|s| {
            let root = if frame.on_frame_target {
                s.frames
                    .rooted_in(frame.session.id())
                    .is_some_and(|f| f.id() == frame.frame_id)
            } else {
                frame.frame_id == s.main_frame_id
            };
            (root, s.frames.page_context(&frame.frame_id, frame.session_key()))
        });
        if root_of_session {
            return Ok(None);
        }
        context.map(Some).ok_or_else(|| {
            ActionError::new(
                ErrorCode::FrameNotFound,
                format!(
                    "frame {} has no script context yet (still loading, or about:blank)",
                    frame.frame_id
                ),
                "Wait for the frame to load (browser_wait), then retry.",
            )
        })
    }

    /// The execution context of cdpilot's world in the main document.
    pub async fn world(&self, budget: &Budget) -> Result<i64, ActionError> {
        self.world_of(&self.main_frame(), budget).await
    }

    /// The execution context of cdpilot's world in `frame`, made on first
    /// use (once for all the callers that ask at once).
    pub async fn world_of(&self, frame: &FrameRef, budget: &Budget) -> Result<i64, ActionError> {
        let (known, document) =
            self.state(|s| (s.frames.world(&frame.frame_id, frame.session_key()), s.document));
        if let Some(id) = known {
            return Ok(id);
        }
        let key = format!("{}/{}", frame.session.id(), frame.frame_id);
        let flight = {
            let mut flights = self.worlds.flights.lock().unwrap();
            flights.entry(key.clone()).or_default().clone()
        };
        let work = || {
            let (frame, state) = (frame.clone(), self.state.clone());
            let (flights, asked) = (self.worlds.flights.clone(), self.worlds.asked.clone());
            // The flight outlives a caller whose budget ends: it keeps the
            // first caller's time, not its cancellation.
            let budget = Budget::with_timeout(budget.remaining());
            async move {
                let made = make_world(&frame, &state, document, &asked, &budget).await;
                flights.lock().unwrap().remove(&key);
                made
            }
        };
        flight
            .run("creating cdpilot's isolated world", budget, work)
            .await
    }

    /// How many times Chrome was asked to make cdpilot's world in this tab
    /// (the tests read it).
    #[cfg(test)]
    pub fn worlds_asked(&self) -> usize {
        self.worlds.asked.load(Ordering::Relaxed)
    }

    fn forget_world(&self, frame: &FrameRef, context: i64) {
        self.state(|s| s.frames.context_destroyed(frame.session_key(), context));
    }

    /// `frame` resolved again from the records (it may have moved).
    fn current(&self, frame: &FrameRef) -> Result<FrameRef, ActionError> {
        if !frame.on_frame_target && frame.number.is_none() {
            return Ok(self.main_frame());
        }
        match (self.known_frame(&frame.frame_id), frame.number) {
            (Some(found), _) => found,
            // A numbered frame that went away since its ref was resolved
            // is named by its number, as refs name it.
            (None, Some(number)) => Err(removed_frame(number)),
            (None, None) => self.frame_by_id(&frame.frame_id),
        }
    }

    /// Evaluates `expression` in cdpilot's world of the main document.
    pub async fn evaluate_in_world(
        &self,
        budget: &Budget,
        step: &str,
        expression: &str,
        by_value: bool,
    ) -> Result<runtime::RemoteObject, ActionError> {
        self.evaluate_in(&self.main_frame(), budget, step, expression, by_value, false)
            .await
    }

    /// Evaluates `expression` (which may return a promise, awaited within the
    /// budget) in cdpilot's world of the main document; returns its value.
    pub async fn evaluate_in_world_awaiting(
        &self,
        budget: &Budget,
        step: &str,
        expression: &str,
    ) -> Result<Value, ActionError> {
        let result = self
            .evaluate_in(&self.main_frame(), budget, step, expression, true, true)
            .await?;
        Ok(result.value.unwrap_or(Value::Null))
    }

    /// Evaluates in cdpilot's world of `frame`. If the world was destroyed
    /// under us (the frame navigated), or the frame's target went away (it
    /// may have moved to another process), retries once where the records
    /// say the frame is now; a promise is awaited only with `await_promise`
    /// (and then not retried: the caller decides what a navigation during a
    /// wait means).
    pub async fn evaluate_in(
        &self,
        frame: &FrameRef,
        budget: &Budget,
        step: &str,
        expression: &str,
        by_value: bool,
        await_promise: bool,
    ) -> Result<runtime::RemoteObject, ActionError> {
        let mut frame = frame.clone();
        let mut retried = await_promise;
        loop {
            let context = self.world_of(&frame, budget).await?;
            let sent = budget
                .run(step, async {
                    let command = runtime::Evaluate {
                        expression: expression.to_owned(),
                        context_id: Some(context),
                        return_by_value: by_value,
                        await_promise,
                        user_gesture: false,
                        repl_mode: false,
                    };
                    Ok(frame.session.call(command, budget.deadline()).await)
                })
                .await?;
            let error = match sent {
                Ok(evaluated) => {
                    if let Some(exception) = evaluated.exception_details {
                        return Err(ActionError::internal(format!("{step}: {}", exception.message())));
                    }
                    return Ok(evaluated.result);
                }
                Err(error) => error,
            };
            let again = match error.kind() {
                ProtocolErrorKind::ContextGone => {
                    self.forget_world(&frame, context);
                    true
                }
                ProtocolErrorKind::TargetGone => frame.on_frame_target,
                _ => false,
            };
            if !again || retried {
                return Err(frame.map_cdp(budget, step, error));
            }
            retried = true;
            frame = self.current(&frame)?;
        }
    }
}

/// Frame `f{number}` is no longer on the page.
fn removed_frame(number: u32) -> ActionError {
    ActionError::new(
        ErrorCode::FrameNotFound,
        format!("frame f{number} is no longer on the page (it was removed)"),
        "Take a new browser_snapshot and use a ref from it.",
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use cdp::protocol::target;
    use serde_json::json;

    use super::*;

    /// Six callers that find the main frame's world unknown at once (the
    /// records lost it, as when a call races the event that says it was
    /// made) get the same world from one `Page.createIsolatedWorld`, and
    /// the page holds one world of cdpilot's, as a second session's
    /// `Runtime.enable` reports its contexts.
    #[tokio::test]
    async fn concurrent_callers_make_a_frames_world_once() {
        let (process, conn) = crate::test_browser::launch().await;
        let budget = Budget::with_timeout(Duration::from_secs(20));
        let url = "data:text/html,<p>fresh</p>";
        let opening = target::CreateTarget {
            url: url.into(),
            browser_context_id: None,
        };
        let created = budget
            .cdp("opening a tab", &conn.browser(), opening)
            .await
            .unwrap();
        let tab = Tab::attach(&conn, &created.target_id, Arc::default(), &budget)
            .await
            .unwrap();
        // `createTarget` answers before the page's document is in: wait
        // for its text (a condition, polled within the budget), so the
        // world below is the document's own, not the blank one's before.
        loop {
            let read = tab
                .evaluate_in_world(&budget, "reading", "document.body?.textContent", true)
                .await;
            if matches!(read, Ok(ref r) if r.value == Some(json!("fresh"))) {
                break;
            }
            assert!(!budget.remaining().is_zero(), "the test page never loaded");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let world = tab.world(&budget).await.unwrap();
        let main = tab.main_frame();
        tab.forget_world(&main, world);
        let asked = tab.worlds_asked();

        let calls = (0..6).map(|_| tab.world(&budget));
        let worlds = futures_util::future::try_join_all(calls).await.unwrap();
        assert!(worlds.iter().all(|&w| w == worlds[0]), "{worlds:?}");
        assert_eq!(
            tab.worlds_asked() - asked,
            1,
            "one createIsolatedWorld for six callers"
        );
        assert_eq!(
            tab.world(&budget).await.unwrap(),
            worlds[0],
            "recorded for the next caller"
        );
        let read = tab
            .evaluate_in_world(&budget, "reading", "document.body.textContent", true)
            .await
            .unwrap();
        assert_eq!(read.value, Some(json!("fresh")));

        // What the page holds: the contexts a second session is told of.
        let attaching = json!({"targetId": created.target_id, "flatten": true});
        let deadline = budget.deadline();
        let attached = conn
            .browser()
            .send("Target.attachToTarget", attaching, deadline)
            .await
            .unwrap();
        let other = attached["sessionId"].as_str().unwrap().to_owned();
        let mut events = conn.events(Some(&other));
        let session = conn.session(other.as_str());
        session.send("Runtime.enable", json!({}), deadline).await.unwrap();
        let mut ours = 0;
        while let Ok(event) = events.try_recv() {
            if let Some(created) = event.decode::<runtime::ExecutionContextCreated>() {
                let context = created.context;
                if context.name == WORLD && context.aux_data.frame_id == main.frame_id {
                    ours += 1;
                }
            }
        }
        assert_eq!(ours, 1, "one world of cdpilot's in the page");
        conn.close();
        process.shutdown(Duration::from_secs(5)).await;
    }
}
