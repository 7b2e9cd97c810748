//! The test rig shared by cdpilot's integration tests and benchmarks.
//!
//! - [`TestSite`]: fixture pages served on two loopback origins
//!   (`127.0.0.1:P1` and `localhost:P2`), so cross-origin iframes are real.
//! - [`chromium`]: where the test browser is, the flags tests add, and the
//!   launch options of a browser a test starts itself.
//! - [`snapshot`]: reading a snapshot's text as an agent does (the ref of
//!   the element a line names).
//! - [`corpus`]: real saved pages with reference extractions, and scoring.
//! - [`processes`]: which processes live, and bounded waiting for a
//!   condition that has no event (a process we did not spawn exiting).
//! - [`DeniedServer`]: a server that logs every connection and request, for
//!   asserting that a denied host saw nothing.
//! - [`grid::Grid`]: a real Selenium Grid 4 (hub + nodes, or standalone)
//!   on loopback, killed by process group when dropped.
//! - [`TcpProxy`]: a loopback proxy a test can cut, for dropped sockets.
//! - [`McpClient`]: spawns a binary and speaks MCP to it over stdio, as a
//!   client would, asserting on exactly what crosses the pipe.
//! - [`vendor`]: the widget gallery's npm libraries (`scripts/widgets`),
//!   served at `/vendor/…`.
//! - [`McpHttpClient`]: the same over MCP's streamable HTTP (`cdpilot serve`).
//!
//! It deliberately does not depend on the engine, so engine tests can use it
//! without two copies of the engine's types (only on `cdp`, for launch
//! options).

pub mod chromium;
pub mod corpus;
pub mod denied;
pub mod grid;
pub mod http_mcp;
mod mcp;
pub mod processes;
mod proxy;
pub mod site;
pub mod snapshot;
pub mod vendor;

pub use denied::DeniedServer;
pub use http_mcp::{EventStream, McpHttpClient};
pub use mcp::McpClient;
pub use proxy::TcpProxy;
pub use site::TestSite;
