//! How a front end runs one call in its session: an [`Entry`] is a session
//! plus the way into it. The engine's default session (MCP over stdio)
//! goes straight to the one dispatch; a serve session's lease
//! (`serve::sessions::Lease`) adds its bookkeeping around the same
//! dispatch. MCP takes either without knowing which, so it does not reach
//! up into `serve`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use engine::{ActionError, ActionOutput, Engine, Session};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// A call's future, boxed so `Entry` can be a trait object.
pub type CallFuture<'a> = Pin<Box<dyn Future<Output = Result<ActionOutput, ActionError>> + Send + 'a>>;

/// A session and the one way its front end calls into it.
pub trait Entry: Send + Sync {
    /// The session the calls run in.
    fn session(&self) -> &Session;

    /// Runs tool `tool` with `arguments` through the engine's dispatch,
    /// stopped when `cancel` fires.
    fn call<'a>(&'a self, tool: &'a str, arguments: Value, cancel: CancellationToken) -> CallFuture<'a>;
}

/// The engine's default session: the dispatch and nothing else.
pub struct DefaultSession(pub Arc<Engine>);

impl Entry for DefaultSession {
    fn session(&self) -> &Session {
        self.0.session()
    }

    fn call<'a>(&'a self, tool: &'a str, arguments: Value, cancel: CancellationToken) -> CallFuture<'a> {
        Box::pin(engine::dispatch::call(self.0.session(), tool, arguments, cancel))
    }
}
