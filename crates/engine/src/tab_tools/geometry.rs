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

/// Top-left of the content box of a frame's `<iframe>` element `owner`, in
/// the coordinates of the root document of the session of `holder` (the
/// frame whose document holds the element, or one on the same session).
async fn owner_origin(holder: &FrameRef, owner: i64, budget: &Budget) -> Result<(f64, f64), ActionError> {
    let quads = holder
        .cdp(
            budget,
            "measuring the frame",
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
        // The cross-origin frame rooted in `session`, and its <iframe> in its
        // parent; the parent's session is asked of the records now.
        let root = tab.state(|s| {
            let root = s.frames().rooted_in(session)?;
            Some((root.parent()?.to_owned(), root.owner_node()?))
        });
        let (parent, owner) = root.ok_or_else(|| {
            ActionError::new(
                ErrorCode::FrameNotFound,
                "the frame holding the element is no longer known (it went away or moved to another process)",
                "Take a new browser_snapshot and use a fresh ref.",
            )
        })?;
        let parent = tab.frame_by_id(&parent)?;
        let (ox, oy) = owner_origin(&parent, owner, budget).await?;
        let (px, py) = session_origin(tab, parent.session.id(), budget).await?;
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
    if frame.number.is_none() {
        return Ok((0.0, 0.0));
    }
    let (root_of_session, owner) = tab.state(|s| {
        let root = frame.on_frame_target
            && s.frames()
                .rooted_in(frame.session.id())
                .is_some_and(|f| f.id() == frame.frame_id);
        (root, s.frames().get(&frame.frame_id).and_then(|f| f.owner_node()))
    });
    match owner {
        Some(owner) if !root_of_session => owner_origin(frame, owner, budget).await,
        _ => Ok((0.0, 0.0)),
    }
}
