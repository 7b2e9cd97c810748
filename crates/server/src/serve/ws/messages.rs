//! The messages of the WebSocket action API (`docs/src/spec/protocol.md`),
//! as types: serde reads and writes them, schemars derives the JSON Schema
//! served at `/v1/schema`. One type per direction; `type` tags each one.
//! Both directions serialize and deserialize: the server reads
//! [`ClientMessage`] and writes [`ServerMessage`], the CLI (a client of its
//! background server) the other way round.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub const PROTOCOL_VERSION: u32 = 1;

/// Client → server.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMessage {
    /// The first message of a connection.
    Hello {
        protocol_version: u32,
        /// The bearer token, unless the upgrade request carried it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
        /// Join this existing session instead of starting one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
        /// The client's name, for logs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client: Option<String>,
        /// This client answers `ask` events (an `ask` URL rule) with
        /// `decide`; without it an ask is refused with `permission_denied`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        ask: bool,
        /// Join or start the session the server keeps under this name: it
        /// outlives this connection (the CLI's sessions) until `[session]
        /// idle_timeout_s` without a call or a Stop. Not with `session`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        keep: Option<String>,
    },
    /// Run one tool.
    Request {
        /// Any string, unique per connection.
        id: String,
        tool: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<serde_json::Map<String, Value>>,
        /// The call's budget (the tool's `timeout_ms`, which wins if both are given).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Replay a trace of this server (named as `GET /v1/timeline/traces`
    /// lists it) in this session: its calls run again, each ref re-found
    /// by its role and name; the `response`'s `result` is the report
    /// (`docs/src/spec/trace.md#replay`). Cancelled like a request.
    Replay {
        /// Any string, unique per connection (its response carries it).
        id: String,
        /// The trace's name.
        trace: String,
        /// Stop after this step.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        until: Option<u64>,
        /// Pass over a step that only reads whose element changed.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        continue_on_change: bool,
    },
    /// Stop request `id`; its response is `error: {code: "canceled"}`.
    Cancel { id: String },
    /// The user's answer to the `ask` event `id`.
    Decide { id: String, allow: Allow },
}

/// An answer to an `ask` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Allow {
    /// This time only.
    Once,
    /// The asked URL's origin, for the rest of the session.
    Always,
    /// Refuse.
    Deny,
}

/// Server → client.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    Ack {
        protocol_version: u32,
        session: String,
        tools: Vec<String>,
    },
    Reject {
        reason: RejectReason,
        message: String,
    },
    /// Exactly one of `result` (the tool's structured result plus `text`
    /// and `images`) and `error`.
    Response {
        id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<ErrorBody>,
    },
    Event {
        event: String,
        session: String,
        data: Value,
    },
    /// A message the server could not take (not JSON, unknown `type`, a
    /// missing field); the connection stays open.
    Error {
        id: Option<String>,
        error: ErrorBody,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RejectReason {
    BadToken,
    UnsupportedVersion,
    TooManySessions,
    SessionNotFound,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ErrorBody {
    /// A `TOOLS.md` error code, e.g. `element_stale`, `canceled`, `invalid_argument`.
    pub code: String,
    /// What happened and what to do next.
    pub message: String,
    /// Facts beyond the code, when the error has them (`blocked_in`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// (Boxed: the rest of the message stays small.)
    pub data: Option<Box<serde_json::Value>>,
}

impl ErrorBody {
    pub fn invalid(message: impl Into<String>) -> ErrorBody {
        ErrorBody {
            code: "invalid_argument".into(),
            message: message.into(),
            data: None,
        }
    }

    /// A tool's error as the protocol sends it.
    pub fn of(error: &engine::ActionError) -> ErrorBody {
        ErrorBody {
            code: error.code.as_str().to_owned(),
            message: crate::outcome::error_message(error),
            data: error.data().map(Box::new),
        }
    }
}

impl ServerMessage {
    /// The message as one text frame.
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).expect("server messages serialize")
    }
}

impl ClientMessage {
    /// The message as one text frame.
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).expect("client messages serialize")
    }
}

/// Reads one text frame: the message, or the protocol error to answer.
pub fn parse(text: &str) -> Result<ClientMessage, ServerMessage> {
    let value: Value = serde_json::from_str(text).map_err(|e| ServerMessage::Error {
        id: None,
        error: ErrorBody::invalid(format!(
            "the message is not JSON ({e}); send one JSON object per text frame"
        )),
    })?;
    let id = value.get("id").and_then(Value::as_str).map(str::to_owned);
    serde_json::from_value(value).map_err(|e| ServerMessage::Error {
        id,
        error: ErrorBody::invalid(format!(
            "{e}; messages are objects with \"type\": \"hello\", \"request\", \"cancel\" or \"decide\" (schema at /v1/schema)"
        )),
    })
}

/// The JSON Schema of every message, both directions.
pub fn schema() -> Value {
    json!({
        "protocol_version": PROTOCOL_VERSION,
        "client_to_server": schemars::schema_for!(ClientMessage),
        "server_to_client": schemars::schema_for!(ServerMessage),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CLI writes what the server reads, and reads what it writes.
    #[test]
    fn messages_round_trip_both_ways() {
        let hello = ClientMessage::Hello {
            protocol_version: PROTOCOL_VERSION,
            token: None,
            session: None,
            client: Some("cdpilot-cli".into()),
            ask: false,
            keep: Some("default".into()),
        };
        let text = hello.to_text();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            json!({"type": "hello", "protocol_version": 1, "client": "cdpilot-cli", "keep": "default"}),
            "absent fields are left out, not null: {text}"
        );
        assert!(
            matches!(parse(&text), Ok(ClientMessage::Hello { keep: Some(k), ask: false, .. }) if k == "default")
        );

        let response = ServerMessage::Response {
            id: "1".into(),
            result: None,
            error: Some(ErrorBody::invalid("no")),
        };
        let text = response.to_text();
        assert_eq!(
            text,
            r#"{"type":"response","id":"1","error":{"code":"invalid_argument","message":"no"}}"#
        );
        let read: ServerMessage = serde_json::from_str(&text).unwrap();
        assert_eq!(read.to_text(), text);
        let reject = r#"{"type":"reject","reason":"too_many_sessions","message":"full"}"#;
        let read: ServerMessage = serde_json::from_str(reject).unwrap();
        assert!(matches!(
            read,
            ServerMessage::Reject {
                reason: RejectReason::TooManySessions,
                ..
            }
        ));
        assert_eq!(read.to_text(), reject);
    }
}
