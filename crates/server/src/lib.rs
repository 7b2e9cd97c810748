//! cdpilot's front ends. Each one turns its own wire format into
//! `engine::Action`s through the shared tool registry (`engine::tools`) and
//! turns `ActionOutput`/`ActionError` back into its own results; none of
//! them reaches around the Action enum.
//!
//! - [`outcome`]: a finished call as clients read it (errors' sentence
//!   pair and object, a result as one JSON object).
//! - [`entry`]: a session and the one way a front end calls into it (its
//!   `Entry`; the engine's one door is `Session::call`).
//! - [`mcp`]: the Model Context Protocol over stdio, with the official SDK.
//! - `exposed`: a page's own tools listed as MCP tools (`page_<name>`).
//! - `ask`: asking the user about an `ask` URL rule (MCP elicitation).
//! - `offer`: offering a hand-off's link (MCP elicitation).
//! - [`stdio`]: MCP's line framing on stdin/stdout, answering every line.
//! - [`serve`]: `cdpilot serve`, many sessions over MCP's streamable HTTP
//!   and the WebSocket action API.

mod ask;
mod cancel;
pub mod entry;
mod exposed;
pub mod mcp;
mod offer;
pub mod outcome;
pub mod serve;
pub mod stdio;
