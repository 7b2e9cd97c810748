//! `Runtime` domain: evaluating in a page's worlds, and what the page says
//! about its script contexts and console.
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{command, Empty};

#[derive(Debug, Default, Serialize)]
pub struct Enable {}
command!(Enable => "Runtime.enable", Empty);

#[derive(Debug, Default, Serialize)]
pub struct RunIfWaitingForDebugger {}
command!(RunIfWaitingForDebugger => "Runtime.runIfWaitingForDebugger", Empty);

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evaluate {
    pub expression: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_id: Option<i64>,
    pub return_by_value: bool,
    pub await_promise: bool,
    pub user_gesture: bool,
    /// As DevTools' console: top-level `let`/`const`/`class` may be
    /// declared again, and `await` used at the top level.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub repl_mode: bool,
}
command!(Evaluate => "Runtime.evaluate", Evaluated);

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallFunctionOn {
    pub function_declaration: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution_context_id: Option<i64>,
    pub arguments: Vec<CallArgument>,
    pub return_by_value: bool,
    pub await_promise: bool,
    pub user_gesture: bool,
}
command!(CallFunctionOn => "Runtime.callFunctionOn", Evaluated);

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallArgument {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_id: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Evaluated {
    pub result: RemoteObject,
    pub exception_details: Option<ExceptionDetails>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RemoteObject {
    #[serde(rename = "type")]
    pub kind: String,
    pub subtype: Option<String>,
    pub value: Option<Value>,
    /// Primitives JSON cannot hold, as their JS literal: `Infinity`,
    /// `-Infinity`, `NaN`, `-0`, `123n` (then `value` is absent).
    pub unserializable_value: Option<String>,
    pub description: Option<String>,
    pub object_id: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ExceptionDetails {
    pub text: String,
    pub line_number: i64,
    pub column_number: i64,
    /// The script's URL, when the exception came from one.
    pub url: String,
    pub exception: Option<RemoteObject>,
    pub stack_trace: Option<StackTrace>,
}

impl ExceptionDetails {
    /// The thrown value's description (`Error: boom\n    at …`), else the text.
    pub fn message(&self) -> String {
        self.exception
            .as_ref()
            .and_then(|e| e.description.clone())
            .unwrap_or_else(|| self.text.clone())
    }
}

/// Waits for a promise the session holds to settle.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AwaitPromise {
    pub promise_object_id: String,
    pub return_by_value: bool,
}
command!(AwaitPromise => "Runtime.awaitPromise", Evaluated);

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReleaseObject {
    pub object_id: String,
}
command!(ReleaseObject => "Runtime.releaseObject", Empty);

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReleaseObjectGroup {
    pub object_group: String,
}
command!(ReleaseObjectGroup => "Runtime.releaseObjectGroup", Empty);

/// Stops the script running on the session's main thread.
#[derive(Debug, Default, Serialize)]
pub struct TerminateExecution {}
command!(TerminateExecution => "Runtime.terminateExecution", Empty);

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct StackTrace {
    pub description: Option<String>,
    pub call_frames: Vec<CallFrame>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CallFrame {
    pub function_name: String,
    pub url: String,
    pub line_number: i64,
    pub column_number: i64,
}

// Events.

/// A script context (a document's main world or an isolated world) was
/// created.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ExecutionContextCreated {
    pub context: ExecutionContextDescription,
}
crate::event!(ExecutionContextCreated => "Runtime.executionContextCreated");

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ExecutionContextDescription {
    pub id: i64,
    pub origin: String,
    /// The isolated world's name (empty for the page's own world).
    pub name: String,
    pub aux_data: ContextAuxData,
}

/// What Chrome adds about a context: its frame, and whether it is the
/// frame's page world.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ContextAuxData {
    pub frame_id: String,
    pub is_default: bool,
    /// "default", "isolated", "worker" (kept as text).
    #[serde(rename = "type")]
    pub kind: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ExecutionContextDestroyed {
    pub execution_context_id: i64,
}
crate::event!(ExecutionContextDestroyed => "Runtime.executionContextDestroyed");

/// Every context of the session is gone.
#[derive(Debug, Default, Deserialize)]
pub struct ExecutionContextsCleared {}
crate::event!(ExecutionContextsCleared => "Runtime.executionContextsCleared");

/// A `console.*` call.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ConsoleApiCalled {
    /// "log", "warning", "error", "assert", "info", "debug", "trace", …
    /// (kept as text).
    #[serde(rename = "type")]
    pub kind: String,
    pub args: Vec<RemoteObject>,
    pub execution_context_id: i64,
    pub timestamp: f64,
    pub stack_trace: Option<StackTrace>,
}
crate::event!(ConsoleApiCalled => "Runtime.consoleAPICalled");

/// An exception nobody caught.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ExceptionThrown {
    pub timestamp: f64,
    pub exception_details: ExceptionDetails,
}
crate::event!(ExceptionThrown => "Runtime.exceptionThrown");
