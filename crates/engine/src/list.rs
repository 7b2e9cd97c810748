//! The list of tools: one line per tool, the only place a tool is
//! registered.
//!
//! Each line names the tool's scope (`tab` or `session`), its variant of
//! the [`crate::calls::Action`] enum, its arguments' type (which
//! implements [`crate::tool::Tool`]), the module that holds both (a file
//! of `tab_tools/` for a tab's tool, of `session/` for the session's) and
//! the other public types of its arguments (their enums), re-exported in
//! `crate::calls` for library users.
//!
//! The list is tokens only: it names no path, so it sits on the lowest
//! floor, and each owner expands it ([`tool_list!`] hands it to a macro of
//! theirs) for what it needs:
//!
//! - `tab_tools`: the tab tools' `mod` declarations (a tab tool's file is
//!   declared by its line here; `rustfmt` does not follow these, see
//!   `docs/src/architecture.md`);
//! - `calls`: the `Action` enum, its dispatch to each tool's handler, the
//!   re-exports of each tool's arguments;
//! - `tools`: the registry (each declaration, schema and parser);
//! - `session::handoff`: every declaration (the tools a person's hand-off
//!   lets run).
//!
//! Adding a tool: its file (arguments, `impl Tool`, handler) and one line
//! here.

/// Hands the list of tools to macro `$then`, as `[$extra]` (what the
/// caller adds) and lines of `scope Variant(Args) = module, Other, …;`.
/// The order is tools/list's.
macro_rules! tool_list {
    ($then:ident $($extra:tt)*) => {
        $then! {
            [$($extra)*]
            tab Navigate(NavigateArgs) = navigate, History;
            tab Snapshot(SnapshotArgs) = snapshot;
            tab Click(ClickArgs) = click;
            tab Type(TypeArgs) = type_text;
            tab Screenshot(ScreenshotArgs) = screenshot, ImageFormat;
            tab Wait(WaitArgs) = wait;
            tab Evaluate(EvaluateArgs) = evaluate;
            tab Hover(HoverArgs) = hover;
            tab PressKey(PressKeyArgs) = press_key;
            tab SelectOption(SelectOptionArgs) = select_option;
            tab Extract(ExtractArgs) = extract;
            session Tabs(TabsArgs) = tabs, TabsAction;
            tab Cdp(CdpArgs) = cdp;
            tab Console(ConsoleArgs) = console, ConsoleLevel;
            tab Dialog(DialogArgs) = dialog, DialogAnswer;
            tab FillForm(FillFormArgs) = fill_form, FormField;
            tab Drag(DragArgs) = drag;
            tab Upload(UploadArgs) = upload;
            tab Scroll(ScrollArgs) = scroll, ScrollDirection;
            session Handoff(HandoffArgs) = handoff, Until;
            tab Network(NetworkArgs) = network, NetworkAction;
            session Storage(StorageArgs) = storage, StorageAction, SameSite, CookieArg;
            tab Pdf(PdfArgs) = pdf;
            tab Emulate(EmulateArgs) = emulate, ColorScheme, Geolocation;
            tab PageTool(PageToolArgs) = page_tool;
            session Trace(TraceArgs) = trace_tool, TraceAction;
        }
    };
}
pub(crate) use tool_list;
