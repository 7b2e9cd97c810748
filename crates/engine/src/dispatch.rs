//! The one path from a tool call to its result, for every transport (MCP
//! over stdio or HTTP, the WebSocket API, the CLI): a tool name and JSON
//! arguments in, the same result out, through [`Session::call`] (find the
//! tool → parse its arguments → make the call's budget → perform it in the
//! session → redact secrets → one audit record).

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::door::ToolCall;
use crate::session::Session;
use crate::{ActionError, ActionOutput};

/// Runs tool `name` with `arguments` in `session`, cancelled by `cancel`:
/// [`Session::call`] for transports that hold the three apart.
pub async fn call(
    session: &Session,
    name: &str,
    arguments: Value,
    cancel: CancellationToken,
) -> Result<ActionOutput, ActionError> {
    let call = ToolCall {
        tool: name.to_owned(),
        arguments,
        cancel,
    };
    session.call(call).await
}
