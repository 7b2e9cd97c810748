//! `Runtime` domain: evaluating in a page's worlds.
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
    pub exception: Option<RemoteObject>,
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

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReleaseObject {
    pub object_id: String,
}
command!(ReleaseObject => "Runtime.releaseObject", Empty);
