//! Where frames sit in the tab's viewport, so points measured inside a
//! frame can be turned into the top-level points that mouse events need.
//!
//! `DOM.getContentQuads` answers in the coordinates of the session's root
//! document: the tab's viewport for the tab's session and its same-process
//! frames, the iframe's own viewport for a cross-origin (OOPIF) session.
//! Measured on Chromium 156: a button in a same-origin frame came back at
//! top-level x=526; one in an OOPIF at x=8, its iframe's content box
//! supplying the rest.

use std::future::Future;
use std::pin::Pin;

use cdp::protocol::dom;

use crate::tab::{FrameRef, Tab};
use crate::{ActionError, Budget, ErrorCode};

/// Top-left of the content box of a frame's `<iframe>` element, in the
/// coordinates of `session`'s root document.
async fn owner_origin(
    tab: &Tab,
    session: &str,
    owner: i64,
    budget: &Budget,
) -> Result<(f64, f64), ActionError> {
    let quads = budget
        .cdp(
            "measuring the frame",
            &tab.session.connection().session(session),
            dom::GetContentQuads {
                object_id: String::new(),
                backend_node_id: Some(owner),
            },
        )
        .await?;
    let quad = quads.quads.first().filter(|q| q.len() == 8).ok_or_else(|| {
        ActionError::new(
            ErrorCode::ElementNotInteractable,
            "the frame holding the element is not visible",
            "Scroll to or open the part of the page with the frame, then try again.",
        )
    })?;
    let x = quad.iter().step_by(2).copied().fold(f64::MAX, f64::min);
    let y = quad.iter().skip(1).step_by(2).copied().fold(f64::MAX, f64::min);
    Ok((x, y))
}

/// A point being worked out (boxed: the work recurses through frames).
type PointFuture<'a> = Pin<Box<dyn Future<Output = Result<(f64, f64), ActionError>> + Send + 'a>>;

/// Where the root document of `session` starts in the tab's viewport.
pub fn session_origin<'a>(tab: &'a Tab, session: &'a str, budget: &'a Budget) -> PointFuture<'a> {
    Box::pin(async move {
        if session == tab.session.id() {
            return Ok((0.0, 0.0));
        }
        let root = tab
            .state(|s| s.frames.rooted_in(session).cloned())
            .ok_or_else(|| {
                ActionError::new(
                    ErrorCode::ElementStale,
                    "the frame holding the element is no longer known",
                    "Take a new browser_snapshot and use a fresh ref.",
                )
            })?;
        let (ox, oy) = owner_origin(tab, &root.parent_session_id, root.owner_backend_node, budget).await?;
        let (px, py) = session_origin(tab, &root.parent_session_id, budget).await?;
        Ok((ox + px, oy + py))
    })
}

/// Where `frame`'s viewport starts within its session's coordinates: zero
/// for the main frame and for an OOPIF (it is its session's root), the
/// iframe's content box for a same-process frame.
pub async fn frame_offset_in_session(
    tab: &Tab,
    frame: &FrameRef,
    budget: &Budget,
) -> Result<(f64, f64), ActionError> {
    let Some(number) = frame.number else {
        return Ok((0.0, 0.0));
    };
    let Some(info) = tab.state(|s| s.frames.get(number).cloned()) else {
        return Ok((0.0, 0.0));
    };
    if info.session_id != info.parent_session_id {
        return Ok((0.0, 0.0));
    }
    owner_origin(tab, &info.session_id, info.owner_backend_node, budget).await
}
