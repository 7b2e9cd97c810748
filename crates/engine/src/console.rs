//! A tab's console: the last 200 console messages and uncaught exceptions,
//! from the page and its frames. Fed by the tab's event reader. Each
//! message's text and URL are cut at 2,000 bytes, so the ring holds at most
//! about 200 × 4 KB (issue 24).

use std::collections::VecDeque;

use cdp::protocol::runtime;
use serde::Serialize;
use serde_json::Value;

use crate::timing::now;

/// How many messages a tab's console keeps, the newest last (issue 24).
pub const CAPACITY: usize = 200;

/// The longest text or URL kept whole, in bytes; a longer one is cut on a
/// character boundary and ends with `…` (3 bytes). With [`CAPACITY`], the
/// ring's text is at most 200 × 2 × 2,003 B ≈ 800 KB.
pub const TEXT_KEPT: usize = 2000;

/// One console message or uncaught exception.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct ConsoleMessage {
    /// "error", "warning", "info", "log", "debug".
    pub level: String,
    /// Its text (at most [`TEXT_KEPT`] bytes).
    pub text: String,
    /// The script that logged it, if known.
    pub url: String,
    /// When (seconds since the epoch).
    pub at: f64,
}

#[derive(Debug, Default)]
pub struct Console {
    /// Oldest first; at most `CAPACITY`.
    messages: VecDeque<ConsoleMessage>,
}

impl Console {
    /// The messages kept, oldest first.
    pub fn messages(&self) -> &VecDeque<ConsoleMessage> {
        &self.messages
    }

    /// Forgets every message (`browser_console clear`).
    pub fn clear(&mut self) {
        self.messages.clear();
    }

    /// Records a `Runtime.consoleAPICalled` or `Runtime.exceptionThrown`
    /// (other events are not the console's).
    pub fn record(&mut self, event: &cdp::Event) {
        let message = if let Some(called) = event.decode::<runtime::ConsoleApiCalled>() {
            let level = match called.kind.as_str() {
                "warning" => "warning",
                "error" | "assert" => "error",
                "info" => "info",
                "debug" | "trace" => "debug",
                _ => "log",
            };
            let text = called
                .args
                .iter()
                .map(remote_object_text)
                .collect::<Vec<_>>()
                .join(" ");
            let url = called
                .stack_trace
                .and_then(|trace| trace.call_frames.into_iter().next())
                .map(|frame| frame.url)
                .unwrap_or_default();
            ConsoleMessage {
                level: level.into(),
                text: clip(text),
                url: clip(url),
                at: now(),
            }
        } else if let Some(thrown) = event.decode::<runtime::ExceptionThrown>() {
            let details = thrown.exception_details;
            let text = details
                .exception
                .and_then(|e| e.description)
                .or_else(|| Some(details.text).filter(|t| !t.is_empty()))
                .unwrap_or_else(|| "uncaught exception".to_owned());
            ConsoleMessage {
                level: "error".into(),
                text: clip(text),
                url: clip(details.url),
                at: now(),
            }
        } else if event.method == cdp::transport::DROPPED {
            #[derive(serde::Deserialize)]
            struct Note {
                bytes: u64,
                #[serde(default)]
                method: String,
            }
            let Ok(note) = serde_json::from_str::<Note>(event.params()) else {
                return;
            };
            let what = match note.method.as_str() {
                "" => String::new(),
                method => format!(" ({method})"),
            };
            ConsoleMessage {
                level: "warning".into(),
                text: format!(
                    "cdpilot: a message of {} MiB was dropped{what}: over the limit of {} MiB per message from the browser",
                    (note.bytes + (1 << 19)) >> 20,
                    cdp::transport::MAX_MESSAGE >> 20
                ),
                url: String::new(),
                at: now(),
            }
        } else {
            return;
        };
        self.messages.push_back(message);
        while self.messages.len() > CAPACITY {
            self.messages.pop_front();
        }
    }
}

fn remote_object_text(object: &runtime::RemoteObject) -> String {
    match &object.value {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => object
            .description
            .clone()
            .or_else(|| object.unserializable_value.clone())
            .unwrap_or_else(|| object.kind.clone()),
        Some(other) => other.to_string(),
    }
}

fn clip(mut text: String) -> String {
    if text.len() > TEXT_KEPT {
        let mut end = TEXT_KEPT;
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

    fn event(method: &str, params: Value) -> cdp::Event {
        cdp::Event::new("S", method, &params)
    }

    #[test]
    fn messages_and_exceptions_are_kept_in_a_ring() {
        let mut c = Console::default();
        c.record(&event(
            "Runtime.consoleAPICalled",
            json!({"type": "warning", "args": [{"type": "string", "value": "careful"}, {"type": "number", "value": 3}]}),
        ));
        c.record(&event(
            "Runtime.exceptionThrown",
            json!({"exceptionDetails": {"text": "Uncaught", "url": "http://x/a.js", "exception": {"description": "Error: boom"}}}),
        ));
        assert_eq!(c.messages[0].level, "warning");
        assert_eq!(c.messages[0].text, "careful 3");
        assert_eq!(c.messages[1].text, "Error: boom");
        assert_eq!(c.messages[1].url, "http://x/a.js");
        for i in 0..250 {
            c.record(&event(
                "Runtime.consoleAPICalled",
                json!({"type": "log", "args": [{"type": "number", "value": i}]}),
            ));
        }
        assert_eq!(c.messages.len(), CAPACITY);
        assert_eq!(c.messages.back().unwrap().text, "249");
    }

    /// Issue 24: a page logging long messages from a long script URL
    /// keeps the ring at [`CAPACITY`] messages, each text and URL cut at
    /// [`TEXT_KEPT`] bytes on a character boundary, the newest kept.
    #[test]
    fn long_messages_keep_the_ring_within_its_count_and_bytes() {
        let mut c = Console::default();
        let long = "é".repeat(5000);
        let url = format!("http://x/{}", "a".repeat(5000));
        for i in 0..CAPACITY + 50 {
            c.record(&event(
                "Runtime.consoleAPICalled",
                json!({"type": "log",
                       "args": [{"type": "string", "value": format!("m{i} {long}")}],
                       "stackTrace": {"callFrames": [{"functionName": "", "scriptId": "1", "url": url, "lineNumber": 0, "columnNumber": 0}]}}),
            ));
        }
        assert_eq!(c.messages.len(), CAPACITY);
        assert!(c.messages.front().unwrap().text.starts_with("m50 "));
        assert!(c.messages.back().unwrap().text.starts_with("m249 "));
        let bytes: usize = c.messages.iter().map(|m| m.text.len() + m.url.len()).sum();
        assert!(bytes <= CAPACITY * 2 * (TEXT_KEPT + 3), "{bytes} bytes held");
        for m in &c.messages {
            assert!(m.text.len() <= TEXT_KEPT + 3 && m.text.ends_with('…'));
            assert!(m.url.len() <= TEXT_KEPT + 3 && m.url.ends_with('…'));
        }
    }
}
