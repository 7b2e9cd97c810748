//! The relay's messages, typed (`docs/src/spec/protocol.md`, "Relay"):
//! what the extension sends ([`FromRelay`]), what the server sends it
//! ([`ToRelay`]), and the translation between the relay's envelope and the
//! CDP messages the engine's connection reads and writes.
//!
//! Owns no state; a message that does not parse is an error naming what is
//! wrong, never a guess.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A message from the extension.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromRelay {
    /// The first message: who it is and which pairing key it holds.
    Hello(Hello),
    /// The second: its proof, after checking the server's.
    Proof {
        proof: String,
    },
    /// The answer to a [`ToRelay::Request`].
    Response {
        id: String,
        #[serde(default)]
        result: Option<Value>,
        #[serde(default)]
        error: Option<RelayError>,
    },
    Event(Event),
    Ping,
}

#[derive(Debug, Deserialize)]
pub struct Hello {
    pub protocol_version: u64,
    pub client: String,
    #[serde(default)]
    pub extension_version: String,
    /// The key id of the pairing secret it holds (the token, or the
    /// pairing code while pairing).
    #[serde(default)]
    pub key: Option<String>,
    /// Its nonce: 32 random bytes, hex.
    #[serde(default)]
    pub nonce: Option<String>,
    /// What the first relay sent (its token in clear): never accepted.
    #[serde(default)]
    pub token: Option<Value>,
    #[serde(default)]
    pub code: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "event", content = "data", rename_all = "snake_case")]
pub enum Event {
    /// A CDP event from one of the agent's tabs (or the browser session).
    Cdp {
        method: String,
        #[serde(default)]
        params: Value,
        #[serde(default, rename = "sessionId")]
        session_id: Option<String>,
    },
    /// The user ended a session (Stop, the debugger bar, the screen lock,
    /// idleness).
    SessionStopped {
        context: String,
        #[serde(default)]
        reason: Option<String>,
    },
}

/// A refusal the extension answers a request with.
#[derive(Debug, Deserialize)]
pub struct RelayError {
    pub code: String,
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub data: Value,
}

/// A message to the extension.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToRelay {
    /// The server's nonce and its proof: sent before anything else.
    Challenge {
        nonce: String,
        proof: String,
    },
    /// The handshake is done; `token` only when a pairing code was used.
    Ack {
        protocol_version: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        token: Option<String>,
    },
    /// The handshake is refused; the socket closes.
    Reject {
        reason: &'static str,
        message: String,
    },
    /// A CDP command for the extension.
    Request {
        id: String,
        method: String,
        params: Value,
        #[serde(rename = "sessionId", skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
    },
    /// Who drives each of the agent's contexts (the popup names them).
    Sessions {
        sessions: Vec<Named>,
    },
    Pong,
}

#[derive(Debug, Serialize, PartialEq, Eq, PartialOrd, Ord, Clone)]
pub struct Named {
    pub context: String,
    pub client: String,
}

impl ToRelay {
    pub fn text(&self) -> String {
        serde_json::to_string(self).expect("relay messages serialize")
    }
}

/// A CDP command as the engine's connection writes it.
#[derive(Deserialize)]
struct EngineCommand {
    id: u64,
    method: String,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default, rename = "sessionId")]
    session_id: Option<String>,
}

/// A CDP response or event as the engine's connection reads them.
#[derive(Serialize)]
#[serde(untagged)]
enum EngineMessage<'a> {
    Result {
        id: u64,
        result: &'a Value,
    },
    Error {
        id: u64,
        error: CdpError,
    },
    Event {
        method: &'a str,
        params: &'a Value,
        #[serde(rename = "sessionId", skip_serializing_if = "Option::is_none")]
        session_id: Option<&'a str>,
    },
}

#[derive(Serialize)]
struct CdpError {
    code: i64,
    message: String,
}

/// Wraps one engine CDP command as a relay request; `None` when the
/// engine wrote something that is not a command.
pub fn request(cdp: &str) -> Option<ToRelay> {
    let command: EngineCommand = serde_json::from_str(cdp).ok()?;
    Some(ToRelay::Request {
        id: command.id.to_string(),
        method: command.method,
        params: command
            .params
            .unwrap_or_else(|| Value::Object(Default::default())),
        session_id: command.session_id.filter(|s| !s.is_empty()),
    })
}

/// A relay response as the CDP response the engine waits for; an error
/// says what is wrong with it.
pub fn response(id: &str, result: Option<&Value>, error: Option<&RelayError>) -> Result<String, String> {
    let id: u64 = id
        .parse()
        .map_err(|_| "a response needs the id of its request".to_owned())?;
    let message = match (result, error) {
        (_, Some(error)) => {
            let code = match error.code.as_str() {
                "domain_blocked" => -32000,
                _ => error
                    .data
                    .get("cdp_code")
                    .and_then(Value::as_i64)
                    .unwrap_or(-32000),
            };
            // The engine reads the extension's blocklist refusals by this
            // prefix (`permission_denied`, `blocked_in: extension`).
            let message = match error.code.as_str() {
                "domain_blocked" => format!("domain_blocked: {}", error.message),
                _ => error.message.clone(),
            };
            EngineMessage::Error {
                id,
                error: CdpError { code, message },
            }
        }
        (Some(result @ Value::Object(_)), None) => EngineMessage::Result { id, result },
        _ => return Err("a response needs a result or an error object".into()),
    };
    Ok(serde_json::to_string(&message).expect("CDP messages serialize"))
}

/// A relay `cdp` event as the CDP event the engine reads.
pub fn event(method: &str, params: &Value, session_id: Option<&str>) -> String {
    serde_json::to_string(&EngineMessage::Event {
        method,
        params,
        session_id,
    })
    .expect("CDP messages serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> FromRelay {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn relay_messages_parse_into_their_variants() {
        let FromRelay::Response { id, result, error } =
            parse(r#"{"type":"response","id":"7","result":{"a":1}}"#)
        else {
            panic!()
        };
        assert_eq!(
            response(&id, result.as_ref(), error.as_ref()).unwrap(),
            r#"{"id":7,"result":{"a":1}}"#
        );
        let FromRelay::Response { id, result, error } = parse(
            r#"{"type":"response","id":"8","error":{"code":"domain_blocked","message":"x.test is on the blocklist"}}"#,
        ) else {
            panic!()
        };
        let blocked = response(&id, result.as_ref(), error.as_ref()).unwrap();
        assert!(blocked.contains("domain_blocked: x.test"), "{blocked}");
        let FromRelay::Event(Event::Cdp {
            method,
            params,
            session_id,
        }) = parse(
            r#"{"type":"event","event":"cdp","data":{"method":"Page.loadEventFired","params":{},"sessionId":"s1"}}"#,
        )
        else {
            panic!()
        };
        assert_eq!(
            event(&method, &params, session_id.as_deref()),
            r#"{"method":"Page.loadEventFired","params":{},"sessionId":"s1"}"#
        );
        assert!(matches!(
            parse(r#"{"type":"event","event":"session_stopped","data":{"context":"c"}}"#),
            FromRelay::Event(Event::SessionStopped { .. })
        ));
        assert!(matches!(parse(r#"{"type":"ping"}"#), FromRelay::Ping));
        assert!(response("x", None, None)
            .unwrap_err()
            .contains("id of its request"));
        assert!(response("1", None, None)
            .unwrap_err()
            .contains("result or an error"));
        assert!(serde_json::from_str::<FromRelay>(r#"{"type":"response"}"#).is_err());
        assert!(serde_json::from_str::<FromRelay>(r#"{"type":"nope"}"#).is_err());
        assert!(serde_json::from_str::<FromRelay>("nope").is_err());
    }

    #[test]
    fn commands_are_wrapped_with_their_session() {
        let wrapped = request(r#"{"id":3,"method":"Page.navigate","params":{"url":"u"},"sessionId":"s"}"#)
            .unwrap()
            .text();
        assert_eq!(
            wrapped,
            r#"{"type":"request","id":"3","method":"Page.navigate","params":{"url":"u"},"sessionId":"s"}"#
        );
        let browser = request(r#"{"id":4,"method":"Browser.getVersion"}"#)
            .unwrap()
            .text();
        assert!(!browser.contains("sessionId"), "{browser}");
        assert!(request("{}").is_none());
    }
}
