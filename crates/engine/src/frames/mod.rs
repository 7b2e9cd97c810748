//! The frames of one tab: ONE record per frame ([`Frame`]) in one owner
//! ([`FrameTree`]), fed by the tab's event reader and asked by snapshots,
//! ref resolution and frame routing through narrow methods.
//!
//! A record holds everything cdpilot knows about a frame: its place in the
//! tree, its address, the session of its own target while it is a
//! cross-origin frame, its script contexts (cdpilot's isolated world and the
//! page's own), its number `fN` and its ref counter. Nobody keeps a copy of
//! a frame's session: who owns a frame's document is worked out from the
//! current records each time it is needed, so a frame that moved to another
//! process (a new target, a new session) is reached where it is now.
//!
//! This module knows no CDP wire format: `tab/state.rs` turns events into
//! calls here. It never sends a command.

mod record;
mod tree;
mod view;

pub use record::Frame;
pub use tree::{FrameTree, Owner};
