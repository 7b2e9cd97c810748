//! What the engine holds that grows with sessions and calls, counted (issue
//! 24): the tests that prove each bound read it, and so do the memory
//! benches. Reads only: each count comes from the state's one owner (the
//! target manager, the browser's context set, the egress gate, the
//! connection, the audit), locked for microseconds.
//!
//! Bounded by what is live: targets, flights and tabs by the browser's
//! targets; contexts and doors by the open sessions (+ the browser's door);
//! subscribers and CDP sessions by the attached targets. Bounded by a
//! constant: the audit ring ([`crate::audit::KEPT`] records,
//! [`crate::audit::KEPT_BYTES`]).

use serde::Serialize;

/// The CDP events held in the process (queued for readers, or being read)
/// and their peak: the one structure of the event path no constant bounds
/// (a reader never makes the socket wait), counted where events are made.
pub use cdp::{held_events, HeldEvents};

/// The engine's holdings at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Holdings {
    /// Targets the browser announced and has not destroyed.
    pub targets: usize,
    /// Attach flights the target manager keeps (each holds its tab).
    pub attach_flights: usize,
    /// Tabs attached on the browser's connection.
    pub tabs: usize,
    /// Isolated browser contexts the sessions created and have not disposed.
    pub contexts: usize,
    /// The egress gate's doors (listening ports) open.
    pub doors: usize,
    /// Event subscribers on the browser's connection.
    pub subscribers: usize,
    /// Flattened CDP sessions attached on the browser's connection.
    pub cdp_sessions: usize,
    /// Records in the audit ring.
    pub audit_records: usize,
    /// Their bytes (as JSON).
    pub audit_bytes: usize,
}
