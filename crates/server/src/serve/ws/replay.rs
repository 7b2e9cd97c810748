//! `{"type": "replay", "id", "trace", "until"?, "continue_on_change"?}`
//! (issue 43): a trace of this server's shelf (named as the timeline names
//! it: never a path, so a client cannot make the server read elsewhere)
//! replayed in the connection's own session by `engine::replay`, the one
//! replay the CLI and the library run; each call through the session's
//! lease (its turns, its Stop), under the rules in force. The answer is a
//! `response` whose `result` is the replay's report.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use engine::replay::{replay, Caller, Options};
use engine::{ActionError, ActionOutput, Session, ToolCall};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::messages::ErrorBody;
use crate::serve::dashboard::timeline::Shelf;
use crate::serve::sessions::Lease;

/// A replay's calls, through the lease, cancelled by the request's token.
struct LeaseCaller {
    lease: Arc<Lease>,
    cancel: CancellationToken,
}

impl Caller for LeaseCaller {
    fn session(&self) -> &Session {
        self.lease.session()
    }

    fn call(
        &self,
        call: ToolCall,
    ) -> Pin<Box<dyn Future<Output = Result<ActionOutput, ActionError>> + Send + '_>> {
        Box::pin(async move {
            self.lease
                .call(&call.tool, call.arguments, self.cancel.clone())
                .await
        })
    }
}

/// Replays trace `name` of `shelf` in `lease`'s session: the report, or
/// why there is none.
pub(super) async fn run(
    shelf: Shelf,
    lease: Arc<Lease>,
    name: String,
    options: Options,
    cancel: CancellationToken,
) -> Result<Value, ErrorBody> {
    let shelved = shelf.find(&name).ok_or_else(|| {
            ErrorBody::invalid(format!(
                "no trace {name:?} on this server (name one of GET /v1/timeline/traces, as the timeline lists them)"
            ))
        })?;
    let dir = shelved.dir.clone();
    let read = tokio::task::spawn_blocking(move || engine::trace::read::read(&dir))
        .await
        .map_err(|_| ErrorBody::invalid("reading the trace failed"))?
        .map_err(|e| {
            // Named by its file's name and line, not the server's path.
            let line = e.line.map(|l| format!(" line {l}")).unwrap_or_default();
            ErrorBody::invalid(format!("trace {name:?}: trace.jsonl{line}: {}", e.message))
        })?;
    let caller = LeaseCaller { lease, cancel };
    let report = replay(&caller, &shelved.name, &read, &options).await;
    Ok(report.json)
}
