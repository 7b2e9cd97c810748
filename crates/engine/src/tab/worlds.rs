//! cdpilot's isolated world in each frame of the tab, and evaluating there.
//!
//! The world is made on first use with `Page.createIsolatedWorld` on the
//! session that owns the frame, and forgotten when the frame's document
//! goes (the event reader sees its context destroyed). An evaluate that
//! finds its world gone retries once in the new document's world.

use cdp::protocol::{page, runtime};
use cdp::Session;
use serde_json::Value;

use super::{Tab, WORLD};
use crate::{ActionError, Budget, ErrorCode};

/// One frame of the tab: the main frame (`number: None`) or a frame that a
/// snapshot showed (`f{number}`), with the session that owns its document.
#[derive(Clone, Debug)]
pub struct FrameRef {
    pub session: Session,
    pub frame_id: String,
    pub number: Option<u32>,
}

impl FrameRef {
    /// The prefix of refs in this frame (`""` or `f2`).
    pub fn prefix(&self) -> String {
        self.number.map(|n| format!("f{n}")).unwrap_or_default()
    }
}

impl Tab {
    pub fn main_frame(&self) -> FrameRef {
        let frame_id = self.state(|s| s.main_frame_id.clone());
        FrameRef {
            session: self.session.clone(),
            frame_id,
            number: None,
        }
    }

    /// Frame `f{number}` of the current main document, if a snapshot showed it.
    pub fn frame(&self, number: u32) -> Option<FrameRef> {
        let info = self.state(|s| s.frames.get(number).cloned())?;
        Some(FrameRef {
            session: self.session.connection().session(info.session_id),
            frame_id: info.frame_id,
            number: Some(number),
        })
    }

    /// The frame a tool's `frame` argument names: `f2` (as in refs), or a
    /// CDP frame id from the snapshot's frame_tree.
    pub fn frame_named(&self, name: &str) -> Result<FrameRef, ActionError> {
        if let Some(n) = name.strip_prefix('f').and_then(|n| n.parse::<u32>().ok()) {
            if let Some(frame) = self.frame(n) {
                return Ok(frame);
            }
        }
        let main = self.state(|s| s.main_frame_id.clone());
        if name == main {
            return Ok(self.main_frame());
        }
        let found = self.state(|s| {
            if let Some(info) = s.frames.by_frame_id(name) {
                return Some((info.session_id.clone(), info.number));
            }
            let record = s.frame_tree.get(name)?;
            Some((
                record
                    .session
                    .clone()
                    .unwrap_or_else(|| self.session.id().to_owned()),
                0,
            ))
        });
        match found {
            Some((session, number)) => Ok(FrameRef {
                session: self.session.connection().session(session),
                frame_id: name.to_owned(),
                number: (number > 0).then_some(number),
            }),
            None => Err(ActionError::new(
                ErrorCode::FrameNotFound,
                format!("there is no frame {name:?} in this tab"),
                "Take a browser_snapshot: frames appear in its frame_tree, and refs inside frame N start with fN.",
            )),
        }
    }

    /// The page's own script context in `frame`: `None` means the session's
    /// default (the main frame, or an OOPIF's own document).
    pub fn page_context(&self, frame: &FrameRef) -> Result<Option<i64>, ActionError> {
        let root_of_session = frame.number.is_none() && frame.session.id() == self.session.id()
            || self.state(|s| s.frame_tree.session_of(&frame.frame_id) == Some(frame.session.id()));
        if root_of_session {
            return Ok(None);
        }
        self.state(|s| s.page_contexts.get(&frame.frame_id).map(|(_, id)| *id))
            .map(Some)
            .ok_or_else(|| {
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

    /// The execution context of cdpilot's world in `frame`, made on first use.
    pub async fn world_of(&self, frame: &FrameRef, budget: &Budget) -> Result<i64, ActionError> {
        let main = frame.number.is_none();
        let (known, document) = self.state(|s| {
            let known = if main {
                s.world
            } else {
                s.frames.world(&frame.frame_id)
            };
            (known, s.document)
        });
        if let Some(id) = known {
            return Ok(id);
        }
        let created = budget
            .cdp(
                "creating cdpilot's isolated world",
                &frame.session,
                page::CreateIsolatedWorld {
                    frame_id: frame.frame_id.clone(),
                    world_name: WORLD.into(),
                    grant_univeral_access: true,
                },
            )
            .await?;
        let id = created.execution_context_id;
        self.state(|s| {
            if s.document == document {
                if main {
                    s.world = Some(id);
                } else {
                    s.frames.set_world(&frame.frame_id, frame.session.id(), id);
                }
            }
        });
        Ok(id)
    }

    fn forget_world(&self, frame: &FrameRef, context: i64) {
        self.state(|s| {
            if frame.number.is_none() {
                if s.world == Some(context) {
                    s.world = None;
                }
            } else {
                s.frames.forget_world(frame.session.id(), context);
            }
        });
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
    /// under us (the frame navigated), retries once in the new one; a
    /// promise is awaited only with `await_promise` (and then not retried:
    /// the caller decides what a navigation during a wait means).
    pub async fn evaluate_in(
        &self,
        frame: &FrameRef,
        budget: &Budget,
        step: &str,
        expression: &str,
        by_value: bool,
        await_promise: bool,
    ) -> Result<runtime::RemoteObject, ActionError> {
        let mut retried = await_promise;
        loop {
            let context = self.world_of(frame, budget).await?;
            let result = budget
                .cdp(
                    step,
                    &frame.session,
                    runtime::Evaluate {
                        expression: expression.to_owned(),
                        context_id: Some(context),
                        return_by_value: by_value,
                        await_promise,
                        user_gesture: false,
                    },
                )
                .await;
            match result {
                Err(e) if e.code == ErrorCode::ElementStale => {
                    self.forget_world(frame, context);
                    if retried {
                        return Err(e);
                    }
                    retried = true;
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
