//! cdpilot's engine: everything behind the one [`Action`] enum, usable from
//! Rust without any transport.
//!
//! An [`Engine`] holds the [`Config`] and the one Chromium its sessions share
//! (launched, or attached to `browser.cdp_url`, by the first action that
//! needs it). Each [`Session`] is one client: [`Engine::session`] is the
//! default one (the browser's own context, as over stdio) and
//! [`Engine::new_session`] makes more, each with a browser context of its own
//! (cookies, storage and tabs no other session sees). [`Session::call`] is
//! the one door: a [`ToolCall`] (a tool's name and JSON arguments, or a
//! typed [`Action`], one struct per tool in [`calls`]) is checked, run
//! under its [`Budget`] (deadline plus cancellation), redacted of secrets
//! and audited, and returns an [`ActionOutput`] (text for a model, the same
//! facts as JSON) or an [`ActionError`] (a contract [`ErrorCode`], the
//! engine's [`Failure`], and a next step). Every transport takes it too
//! ([`dispatch::call`]).
//!
//! ```no_run
//! use engine::calls::{NavigateArgs, SnapshotArgs};
//! use engine::{Action, Budget, Config, Engine, ToolCall};
//!
//! # async fn run() -> Result<(), engine::ActionError> {
//! let engine = Engine::new(Config::default());
//! let session = engine.new_session();
//!
//! // A tool name and JSON arguments, as every transport sends them.
//! let open = ToolCall::new("browser_navigate", serde_json::json!({"url": "https://example.com"}));
//! session.call(open).await?;
//! // Or typed: the same door, the same checks, audit and redaction.
//! let page = session.call(Action::Snapshot(SnapshotArgs::default()).into()).await?;
//! println!("{}", page.text); // one line per element, each with a [ref=eN]
//!
//! let clicked = session.call(ToolCall::new("browser_click", serde_json::json!({"ref": "e2"}))).await;
//! if let Err(e) = clicked {
//!     eprintln!("{}: {}", e.code, e.next_step); // branch on e.code
//! }
//! # let _ = NavigateArgs::default();
//!
//! session.close(&Budget::with_timeout(std::time::Duration::from_secs(5))).await;
//! engine.shutdown().await; // closes the browser it launched
//! # Ok(())
//! # }
//! ```
//!
//! Runnable examples: `cargo run -p cdpilot-engine --example drive_a_page --
//! URL` and `--example many_sessions`.
//!
//! Layout, on floors (`crates/engine/floors.txt`, checked by a test: a
//! module uses only its own floor or lower): leaves (`error`, `budget`,
//! `timing`, `scripts` — the in-page scripts —, `list` — the list of
//! tools —, `args`, …) → `config` → policies and records ([`policy`],
//! [`audit`], [`secrets`], [`events`]) → the egress gate and the dialog
//! book → `tab` → `browser`, [`tool`] (what a tool is), `snapshot` →
//! `tab_tools/` (one file per tab tool: its arguments, declaration, checks
//! and handler) → [`session`] (the session's tools too) → [`calls`] (the
//! `Action` enum), [`tools`] (the registry), [`dispatch`], [`startup`] →
//! [`Engine`].

#![warn(missing_docs)]

mod args;
pub mod audit;
mod browser;
mod budget;
pub mod calls;
pub mod config;
mod console;
pub mod content;
mod dialogs;
pub mod dispatch;
mod door;
mod egress;
mod engine;
mod error;
pub mod events;
mod files;
mod frames;
pub mod handoff;
pub mod holdings;
mod list;
pub mod masked;
pub mod metrics;
mod network;
pub mod obstacle;
mod output;
pub mod page_tools;
pub mod policy;
pub mod replay;
mod scripts;
pub mod secrets;
pub mod session;
mod single_flight;
mod snapshot;
pub mod startup;
mod tab;
mod tab_tools;
mod tabs;
#[cfg(test)]
mod test_browser;
mod throttle;
pub mod timing;
pub mod tool;
pub mod tools;
pub mod trace;
mod validate;

/// The extension relay's transport (`[browser] source = "extension"`).
pub use browser::extension as browser_extension;
pub use browser::fleet::EndpointStatus;
pub use browser::grid::GridStatus;
pub use budget::Budget;
pub use calls::Action;
pub use config::Config;
pub use console::ConsoleMessage;
pub use door::ToolCall;
pub use engine::Engine;
pub use error::{ActionError, ErrorCode, Failure};
pub use output::{ActionOutput, Image};
pub use session::Session;
/// A tab's shared screencast, as its viewers (the dashboard, a hand-off
/// page) read it.
pub use tab::screencast;
