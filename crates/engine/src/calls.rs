//! A typed call of one tool: the [`Action`] enum, one variant per line of
//! the list of tools (`crate::list`) holding that tool's arguments, and
//! what it answers the session (`session::Call`) by asking each tool's
//! `impl Tool`: its arguments, destination, admission and handler.
//!
//! Every tool's arguments are defined beside its handler and re-exported
//! here, with the pieces they share, so a library user writes
//! `engine::calls::NavigateArgs`.

use serde_json::Value;

pub use crate::args::{Common, ElementTarget, Modifier, MouseButton, WaitUntil};
use crate::config::Config;
use crate::list::tool_list;
use crate::session::{Call, SessionCall, SessionTool};
use crate::tool::{TabCall, TabTool, Tool};
use crate::{ActionError, ActionOutput};

/// A tool's arguments' type, by its scope in the list: in `tab_tools::` for
/// a tab's tool, in `session::` for the session's.
macro_rules! args_type {
    (tab $module:ident $args:ident) => {
        crate::tab_tools::$module::$args
    };
    (session $module:ident $args:ident) => {
        crate::session::$module::$args
    };
}
pub(crate) use args_type;

/// The public names a tool's file defines, re-exported here.
macro_rules! reexport {
    (tab $module:ident $($name:ident)*) => { pub use crate::tab_tools::$module::{$($name),*}; };
    (session $module:ident $($name:ident)*) => { pub use crate::session::$module::{$($name),*}; };
}

/// One arm of a dispatch: the handler of a tool whose scope is the
/// dispatch's place, an internal error for another (the session never
/// sends it there).
macro_rules! arm {
    (tab tab, $args:ident, $call:ident) => {
        TabTool::perform($args, $call).await
    };
    (session session, $args:ident, $call:ident) => {
        SessionTool::perform($args, $call).await
    };
    ($scope:ident $place:ident, $args:ident, $call:ident) => {{
        let _ = ($args, $call);
        Err(ActionError::internal(concat!(
            "a ",
            stringify!($scope),
            " tool does not act in a ",
            stringify!($place)
        )))
    }};
}

/// The `Action` enum and everything that matches on it.
macro_rules! calls {
    ([] $( $scope:ident $variant:ident($args:ident) = $module:ident $(, $other:ident)* ;)*) => {
        /// One call of one tool, whatever transport it came from: the
        /// variant is the tool, its value the tool's parsed arguments.
        #[derive(Debug, Clone)]
        pub enum Action {
            $(
                #[doc = concat!("The ", stringify!($scope), " tool of `", stringify!($module), "`.")]
                $variant(args_type!($scope $module $args)),
            )*
        }

        $(reexport!($scope $module $args $($other)*);)*

        impl Action {
            /// The arguments every tool takes.
            pub fn common(&self) -> &Common {
                match self {
                    $(Action::$variant(a) => &a.common,)*
                }
            }

            /// The arguments as the JSON a transport would send.
            pub fn arguments(&self) -> Value {
                match self {
                    $(Action::$variant(a) => serde_json::to_value(a).expect("arguments serialize"),)*
                }
            }

            /// The tool's name, as MCP and the WebSocket API call it.
            pub fn tool_name(&self) -> &'static str {
                match self {
                    $(Action::$variant(_) => <args_type!($scope $module $args) as Tool>::TOOL.name,)*
                }
            }

            /// The tool's own checks of its parsed arguments.
            pub(crate) fn check(&self) -> Result<(), ActionError> {
                match self {
                    $(Action::$variant(a) => Tool::check(a),)*
                }
            }
        }

        impl Call for Action {
            fn common(&self) -> &Common {
                Action::common(self)
            }

            fn destination(&self) -> Option<&str> {
                match self {
                    $(Action::$variant(a) => Tool::destination(a),)*
                }
            }

            fn admit(&self, config: &Config) -> Result<(), ActionError> {
                match self {
                    $(Action::$variant(a) => Tool::admit(a, config),)*
                }
            }

            async fn in_tab(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
                match self {
                    $(Action::$variant(a) => arm!($scope tab, a, call),)*
                }
            }

            async fn in_session(&self, call: &SessionCall<'_>) -> Result<ActionOutput, ActionError> {
                match self {
                    $(Action::$variant(a) => arm!($scope session, a, call),)*
                }
            }
        }

        // The list's scope and the declaration's agree.
        $(const _: () = assert!(
            matches!(
                (<args_type!($scope $module $args) as Tool>::TOOL.scope, stringify!($scope).as_bytes()),
                (crate::tool::Scope::Tab, b"tab") | (crate::tool::Scope::Session, b"session")
            ),
            concat!("the scope of ", stringify!($variant), " in the list differs from its declaration")
        );)*
    };
}
tool_list!(calls);

impl Action {
    /// The call's own `timeout_ms`, if it gave one.
    pub fn timeout_ms(&self) -> Option<u64> {
        self.common().timeout_ms
    }
}
