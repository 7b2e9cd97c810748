//! cdpilot's engine: everything behind the one [`Action`] enum, usable from
//! Rust without any transport.
//!
//! An [`Engine`] holds the [`Config`] and the one Chromium its sessions share
//! (launched, or attached to `browser.cdp_url`, by the first action that
//! needs it). Each [`Session`] is one client: [`Engine::session`] is the
//! default one (the browser's own context, as over stdio) and
//! [`Engine::new_session`] makes more, each with a browser context of its own
//! (cookies, storage and tabs no other session sees). A session runs an
//! [`Action`] (typed arguments, one struct per tool in [`action`]) under a
//! [`Budget`] (deadline plus cancellation) and returns an [`ActionOutput`]
//! (text for a model, the same facts as JSON) or an [`ActionError`] (a
//! contract [`ErrorCode`], the engine's [`Failure`], and a next step).
//! [`dispatch::call`] is the path every transport takes: a tool name and
//! JSON arguments in, the same result out.
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use engine::action::{NavigateArgs, SnapshotArgs};
//! use engine::{Action, Budget, Config, Engine};
//!
//! # async fn run() -> Result<(), engine::ActionError> {
//! let engine = Engine::new(Config::default());
//! let session = engine.new_session();
//! let budget = || Budget::with_timeout(Duration::from_secs(30));
//!
//! let open = Action::Navigate(NavigateArgs {
//!     url: Some("https://example.com".into()),
//!     ..Default::default()
//! });
//! session.perform(&open, &budget()).await?;
//! let page = session.perform(&Action::Snapshot(SnapshotArgs::default()), &budget()).await?;
//! println!("{}", page.text); // one line per element, each with a [ref=eN]
//!
//! // The same through the transports' dispatch: a tool name and JSON.
//! let click = serde_json::json!({"ref": "e2"});
//! let clicked = engine::dispatch::call(&session, "browser_click", click, Default::default()).await;
//! if let Err(e) = clicked {
//!     eprintln!("{}: {}", e.code, e.next_step); // branch on e.code
//! }
//!
//! session.close(&budget()).await;
//! engine.shutdown().await; // closes the browser it launched
//! # Ok(())
//! # }
//! ```
//!
//! Runnable examples: `cargo run -p cdpilot-engine --example drive_a_page --
//! URL` and `--example many_sessions`.
//!
//! Layout: `browser` and `tab` hold the CDP side; `actions/` one file per
//! action; `snapshot/` the in-page serializer and its Rust side; `budget`,
//! `error`, `validate` and `tools` are shared by all of them.

#![warn(missing_docs)]

pub mod action;
mod actions;
pub mod audit;
mod browser;
mod budget;
pub mod config;
mod console;
pub mod content;
mod dialogs;
pub mod dispatch;
mod egress;
mod engine;
mod error;
mod files;
mod frames;
pub mod handoff;
pub mod metrics;
mod network;
pub mod obstacle;
pub mod policy;
pub mod secrets;
pub mod session;
mod single_flight;
mod snapshot;
mod storage_state;
mod tab;
mod tabs;
pub mod timing;
pub mod tools;
mod validate;

pub use action::{Action, ActionOutput, Image};
pub use browser::fleet::EndpointStatus;
pub use browser::grid::GridStatus;
pub use budget::Budget;
pub use config::Config;
pub use engine::Engine;
pub use error::{ActionError, ErrorCode, Failure};
pub use session::Session;
