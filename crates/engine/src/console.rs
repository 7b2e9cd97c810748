//! A tab's console: the last 200 console messages and uncaught exceptions,
//! from the page and its frames. Fed by the tab's event reader.

use std::collections::VecDeque;

use serde::Serialize;
use serde_json::Value;

use crate::dialogs::now;

pub const CAPACITY: usize = 200;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ConsoleMessage {
    /// "error", "warning", "info", "log", "debug".
    pub level: String,
    pub text: String,
    pub url: String,
    pub at: f64,
}

#[derive(Debug, Default)]
pub struct Console {
    pub messages: VecDeque<ConsoleMessage>,
}

impl Console {
    /// `Runtime.consoleAPICalled` or `Runtime.exceptionThrown`.
    pub fn record(&mut self, method: &str, params: &Value) {
        let message = match method {
            "Runtime.consoleAPICalled" => {
                let level = match params["type"].as_str().unwrap_or("log") {
                    "warning" => "warning",
                    "error" | "assert" => "error",
                    "info" => "info",
                    "debug" | "trace" => "debug",
                    _ => "log",
                };
                let text = params["args"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(remote_object_text)
                    .collect::<Vec<_>>()
                    .join(" ");
                ConsoleMessage {
                    level: level.into(),
                    text: clip(text),
                    url: params["stackTrace"]["callFrames"][0]["url"]
                        .as_str()
                        .unwrap_or_default()
                        .into(),
                    at: now(),
                }
            }
            "Runtime.exceptionThrown" => {
                let details = &params["exceptionDetails"];
                let text = details["exception"]["description"]
                    .as_str()
                    .or_else(|| details["text"].as_str())
                    .unwrap_or("uncaught exception");
                ConsoleMessage {
                    level: "error".into(),
                    text: clip(text.to_owned()),
                    url: details["url"].as_str().unwrap_or_default().into(),
                    at: now(),
                }
            }
            _ => return,
        };
        self.messages.push_back(message);
        while self.messages.len() > CAPACITY {
            self.messages.pop_front();
        }
    }
}

fn remote_object_text(object: &Value) -> String {
    match &object["value"] {
        Value::String(s) => s.clone(),
        Value::Null => object["description"]
            .as_str()
            .or_else(|| object["unserializableValue"].as_str())
            .unwrap_or(object["type"].as_str().unwrap_or_default())
            .to_owned(),
        other => other.to_string(),
    }
}

fn clip(mut text: String) -> String {
    if text.len() > 2000 {
        let mut end = 2000;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_and_exceptions_are_kept_in_a_ring() {
        let mut c = Console::default();
        c.record(
            "Runtime.consoleAPICalled",
            &json!({"type": "warning", "args": [{"type": "string", "value": "careful"}, {"type": "number", "value": 3}]}),
        );
        c.record(
            "Runtime.exceptionThrown",
            &json!({"exceptionDetails": {"text": "Uncaught", "url": "http://x/a.js", "exception": {"description": "Error: boom"}}}),
        );
        assert_eq!(c.messages[0].level, "warning");
        assert_eq!(c.messages[0].text, "careful 3");
        assert_eq!(c.messages[1].text, "Error: boom");
        assert_eq!(c.messages[1].url, "http://x/a.js");
        for i in 0..250 {
            c.record(
                "Runtime.consoleAPICalled",
                &json!({"type": "log", "args": [{"type": "number", "value": i}]}),
            );
        }
        assert_eq!(c.messages.len(), CAPACITY);
        assert_eq!(c.messages.back().unwrap().text, "249");
    }
}
