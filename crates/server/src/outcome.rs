//! What a finished call looks like to a client, whatever carries it: the
//! one sentence pair of a failure (what happened, what to do next), its
//! `{code, message}` object, and a result as the WebSocket API and the CLI
//! read it. Below every front end (MCP, the WebSocket API, the dashboard);
//! knows nothing of sessions or transports.

use engine::{ActionError, ActionOutput};
use serde_json::{json, Value};

/// What happened and what to do next, in one sentence pair.
pub fn error_message(error: &ActionError) -> String {
    format!("{}. {}", error.message, error.next_step)
}

/// `{code, message, data?}` of a failed call, as every transport reports it: the
/// message says what happened and what to do next.
pub fn error_object(error: &ActionError) -> Value {
    let mut object = json!({ "code": error.code.as_str(), "message": error_message(error) });
    if let Some(data) = error.data() {
        object["data"] = data;
    }
    object
}

/// A tool's result as one JSON object: its structured content (a value
/// that is not an object goes under `value`), plus `text` (what a model
/// would read) and `images` (`{mime, data}` each).
pub fn result_object(output: ActionOutput) -> Value {
    let mut result = match output.data {
        Value::Object(map) => map,
        Value::Null => serde_json::Map::new(),
        other => serde_json::Map::from_iter([("value".to_owned(), other)]),
    };
    result.insert("text".into(), output.text.into());
    let images: Vec<Value> = output
        .image
        .into_iter()
        .map(|i| json!({"mime": i.mime_type, "data": i.base64}))
        .collect();
    result.insert("images".into(), images.into());
    Value::Object(result)
}
