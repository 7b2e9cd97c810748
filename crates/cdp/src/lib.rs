//! The CDP wire: bytes on a socket become commands, responses and events.
//!
//! - [`Transport`] opens message pipes to a browser ([`WebSocket`], or the
//!   [`pipe::Pipe`] of a browser cdpilot launched);
//!   [`Connection`] owns one pipe, matches request
//!   ids to responses and routes events by `sessionId` (the browser's own
//!   session is routed as `""`, so there is one code path).
//! - [`Session`] is a cheap handle for one flattened session on a connection.
//! - [`protocol`] holds lenient hand-written types for the commands we use;
//!   [`Session::send`] is the raw escape hatch for the rest.
//! - [`launch`] finds and starts Chromium (with [`agent`]'s user agent
//!   when headless); [`endpoint`] resolves
//!   `http://host:port` to a browser WebSocket URL for attaching;
//!   [`peer`] says whether a loopback socket's owner is this user (the
//!   one rule for every local peer).
//!
//! This crate knows CDP, not tools: nothing here mentions refs, snapshots or
//! the agent-facing contract.

pub mod agent;
mod connection;
pub mod endpoint;
mod error;
pub mod launch;
pub mod peer;
pub mod pipe;
pub mod protocol;
mod session;
pub mod transport;

pub use connection::{held_events, Connection, Event, EventKind, EventStream, HeldEvents};
pub use error::{CdpError, ProtocolErrorKind};
pub use session::{Command, Session};
pub use transport::{Capabilities, Transport, WebSocket};
