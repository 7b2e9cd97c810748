//! cdpilot's engine: everything behind the one [`Action`] enum.
//!
//! A transport parses a tool call through [`tools`] into an [`Action`],
//! makes a [`Budget`] for it, and hands both to [`Engine::perform`]. The
//! engine starts the browser lazily, picks the tab, and runs the action:
//! navigation, snapshots with refs, trusted input, screenshots.
//!
//! Layout: `browser` and `tab` hold the CDP side; `actions/` one file per
//! action; `snapshot/` the in-page serializer and its Rust side; `budget`,
//! `error`, `validate` and `tools` are shared by all of them.

pub mod action;
mod actions;
pub mod audit;
mod browser;
mod budget;
pub mod config;
mod console;
mod dialogs;
pub mod dispatch;
mod engine;
mod error;
mod frames;
pub mod metrics;
pub mod obstacle;
pub mod policy;
pub mod secrets;
pub mod session;
mod single_flight;
mod snapshot;
mod tab;
mod tabs;
pub mod tools;
mod validate;

pub use action::{Action, ActionOutput, Image};
pub use budget::Budget;
pub use config::Config;
pub use engine::Engine;
pub use error::{ActionError, ErrorCode, Failure};
pub use session::Session;
