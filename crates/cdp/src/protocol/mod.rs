//! Lenient hand-written types for the CDP commands cdpilot uses.
//!
//! Enum-like fields are `String`s and every optional field has a default, so
//! a newer Chrome that adds values or fields cannot break parsing. Anything
//! not typed here goes through [`crate::Session::send`].

pub mod browser;
pub mod dom;
pub mod fetch;
pub mod input;
pub mod page;
pub mod runtime;
pub mod target;

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
