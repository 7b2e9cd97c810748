//! The list of tools, and the [`Action`] enum generated from it.
//!
//! The list lives here, on the lowest floor, so that everything that reads
//! a call (the session's policy, its refusals, the dialog rules) can match
//! on `Action` without reaching up to the registry. Each line names a
//! tool's scope (`tab` or `session`), its `Action` variant, its argument
//! type (in this module) and the name of the module that declares it: a
//! module of `tab_tools/` for a tab's tool, of `session/` for the session's.
//! The module names are only names here: the modules that own them expand
//! the list ([`tool_list!`] hands it to a macro of theirs), each taking
//! what it needs:
//!
//! - here: the `Action` enum, the arguments every tool takes, the JSON;
//! - `tab_tools`: the dispatch of a tab's tool to its handler;
//! - `session`: the dispatch of a session's tool to its handler;
//! - `tools`: the registry (each declaration, schema and parser), the
//!   checks, each call's tool name.
//!
//! Adding a tool: a file with its declaration, checks and handler, its
//! arguments here, and one line in the list.

use serde_json::Value;

use super::*;

/// Hands the list of tools to macro `$then`, as `[$extra]` (what the
/// caller adds) and lines of `scope Variant(Args) = module;`. The order is
/// tools/list's.
macro_rules! tool_list {
    ($then:ident $($extra:tt)*) => {
        $then! {
            [$($extra)*]
            tab Navigate(NavigateArgs) = navigate;
            tab Snapshot(SnapshotArgs) = snapshot;
            tab Click(ClickArgs) = click;
            tab Type(TypeArgs) = type_text;
            tab Screenshot(ScreenshotArgs) = screenshot;
            tab Wait(WaitArgs) = wait;
            tab Evaluate(EvaluateArgs) = evaluate;
            tab Hover(HoverArgs) = hover;
            tab PressKey(PressKeyArgs) = press_key;
            tab SelectOption(SelectOptionArgs) = select_option;
            tab Extract(ExtractArgs) = extract;
            session Tabs(TabsArgs) = tabs;
            tab Cdp(CdpArgs) = cdp;
            tab Console(ConsoleArgs) = console;
            tab Dialog(DialogArgs) = dialog;
            tab FillForm(FillFormArgs) = fill_form;
            tab Drag(DragArgs) = drag;
            tab Upload(UploadArgs) = upload;
            tab Scroll(ScrollArgs) = scroll;
            session Handoff(HandoffArgs) = handoff;
            tab Network(NetworkArgs) = network;
            session Storage(StorageArgs) = storage;
            tab Pdf(PdfArgs) = pdf;
            tab Emulate(EmulateArgs) = emulate;
            tab PageTool(PageToolArgs) = page_tool;
        }
    };
}
pub(crate) use tool_list;

/// The `Action` enum and what needs only the arguments.
macro_rules! actions {
    ([] $( $scope:ident $variant:ident($args:ty) = $module:ident ;)*) => {
        /// One call of one tool, whatever transport it came from: the
        /// variant is the tool, its value the tool's parsed arguments.
        #[derive(Debug, Clone)]
        pub enum Action {
            $(
                #[doc = concat!("The ", stringify!($scope), " tool declared in `", stringify!($module), "`.")]
                $variant($args),
            )*
        }

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
        }
    };
}
tool_list!(actions);

impl Action {
    /// The call's own `timeout_ms`, if it gave one.
    pub fn timeout_ms(&self) -> Option<u64> {
        self.common().timeout_ms
    }
}

/// A dispatch from an `Action` to its handler, generated where the
/// handlers are: `tool_list!(dispatch tab in_tab TabCall)` in `tab_tools`,
/// `tool_list!(dispatch session in_session SessionCall)` in `session`.
/// Each tool whose scope is `$place` goes to its module's `perform`.
macro_rules! dispatch {
    ([$place:ident $method:ident $call:ident] $( $scope:ident $variant:ident($args:ty) = $module:ident ;)*) => {
        impl $crate::calls::Action {
            #[doc = concat!("Runs a ", stringify!($place), "-scoped tool (the dispatch generated from the list of tools).")]
            pub(crate) async fn $method(
                &self,
                call: &$call<'_>,
            ) -> Result<$crate::ActionOutput, $crate::ActionError> {
                match self {
                    $($crate::calls::Action::$variant(args) => $crate::calls::arm!($scope $place, $module, call, args),)*
                }
            }
        }
    };
}
pub(crate) use dispatch;

/// One arm of a generated dispatch: the handler of a tool whose scope is
/// the dispatch's `$place`, an internal error for another (the session
/// never sends it there).
macro_rules! arm {
    (tab tab, $module:ident, $call:ident, $args:ident) => {
        $module::perform($call, $args).await
    };
    (session session, $module:ident, $call:ident, $args:ident) => {
        $module::perform($call, $args).await
    };
    ($scope:ident $place:ident, $module:ident, $call:ident, $args:ident) => {{
        let _ = ($call, $args);
        Err($crate::ActionError::internal(concat!(
            stringify!($module),
            " does not act in a ",
            stringify!($place)
        )))
    }};
}
pub(crate) use arm;
