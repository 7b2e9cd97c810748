//! Lenient hand-written types for the CDP commands cdpilot sends and the
//! events it reacts to.
//!
//! Enum-like fields are `String`s and every optional field has a default, so
//! a newer Chrome that adds values or fields cannot break parsing. Anything
//! not typed here goes through [`crate::Session::send`]; events are read
//! with [`crate::Event::decode`].

pub mod browser;
pub mod dom;
pub mod dom_debugger;
pub mod emulation;
pub mod fetch;
pub mod input;
pub mod network;
pub mod page;
pub mod runtime;
pub mod storage;
pub mod target;
pub mod webmcp;

/// Declares a typed command: `command!(Struct => "Domain.method", Response)`.
macro_rules! command {
    ($ty:ty => $method:literal, $response:ty) => {
        impl $crate::Command for $ty {
            const METHOD: &'static str = $method;
            type Response = $response;
        }
    };
}
pub(crate) use command;

/// Declares a typed event: `event!(Struct => "Domain.event")`.
#[macro_export]
#[doc(hidden)]
macro_rules! event {
    ($ty:ty => $method:literal) => {
        impl $crate::EventKind for $ty {
            const METHOD: &'static str = $method;
        }
    };
}

/// The answer of a command whose result we do not read.
#[derive(Debug, Default, serde::Deserialize)]
pub struct Empty {}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::{network, page, runtime};
    use crate::Event;

    fn event(method: &str, params: Value) -> Event {
        Event::new("S", method, &params)
    }

    #[test]
    fn events_decode_leniently_and_only_as_their_own_kind() {
        let navigated = event(
            "Page.frameNavigated",
            json!({"frame": {"id": "F", "loaderId": "L", "url": "http://x/", "newField": [1]}, "type": "Navigation"}),
        );
        let decoded = navigated.decode::<page::FrameNavigated>().unwrap();
        assert_eq!((decoded.frame.id.as_str(), decoded.frame.parent_id), ("F", None));
        assert!(navigated.decode::<page::NavigatedWithinDocument>().is_none());
        // Missing fields default; an event sent without params has none.
        let cleared = event("Runtime.executionContextsCleared", Value::Null);
        assert!(cleared.decode::<runtime::ExecutionContextsCleared>().is_some());
        let bare = event("Network.responseReceived", json!({"type": "Document"}));
        assert_eq!(
            bare.decode::<network::ResponseReceived>()
                .unwrap()
                .response
                .status,
            0
        );
    }

    #[test]
    fn response_headers_are_found_whatever_their_case() {
        let received = event(
            "Network.responseReceived",
            json!({"response": {"status": 200, "headers": {"Content-Disposition": "attachment"}}}),
        )
        .decode::<network::ResponseReceived>()
        .unwrap();
        assert_eq!(
            received.response.header("content-disposition"),
            Some("attachment")
        );
        assert_eq!(received.response.header("content-type"), None);
    }
}
