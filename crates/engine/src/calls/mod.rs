//! Each tool's arguments, the list of tools with the `Action` enum over
//! them (`list`), and the output every action produces.
//!
//! Argument structs derive their JSON schema; their doc comments are the
//! descriptions a model reads, so they are written for a model and kept short
//! (every character of every schema is paid on each request).
//!
//! Fields and enum values a model understands from their names carry no doc
//! comment on purpose (`#[allow(missing_docs)]`, marked schema-visible): a
//! doc comment would become a description in the schema, and on an enum's
//! values it would turn a plain `enum` list into a longer `oneOf`.

mod forms;
mod groups;
mod list;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use forms::{DragArgs, FillFormArgs, FormField, ScrollArgs, ScrollDirection, UploadArgs};
pub use groups::{
    ColorScheme, CookieArg, EmulateArgs, Geolocation, NetworkAction, NetworkArgs, PdfArgs, SameSite,
    StorageAction, StorageArgs,
};
pub use list::Action;
pub(crate) use list::{arm, dispatch, tool_list};

/// Arguments every tool takes. Deliberately undocumented in the schema:
/// the server's instructions explain them once instead of in every tool.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Common {
    // The tab to act in (an id from browser_tabs); default the active tab.
    #[allow(missing_docs)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    // The budget of the whole call in milliseconds.
    #[allow(missing_docs)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

// A step in the tab's history.
#[allow(missing_docs)] // schema-visible: see the module doc
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum History {
    Back,
    Forward,
    Reload,
}

// When a navigation counts as finished.
#[allow(missing_docs)] // schema-visible: see the module doc
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WaitUntil {
    #[default]
    Load,
    Domcontentloaded,
    Networkidle,
}

/// Open a URL, or go back/forward/reload.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct NavigateArgs {
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Instead of url.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<History>,
    /// Default load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_until: Option<WaitUntil>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub common: Common,
}

/// Arguments of `browser_snapshot`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct SnapshotArgs {
    /// Only frame f2 (as in refs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<String>,
    /// Only this subtree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Default 2000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_elements: Option<u32>,
    /// Text or /regex/: only matching lines, with ancestors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub find: Option<String>,
    /// Only what changed since the last snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<bool>,
    /// Continue a capped snapshot: list elements from this one on (its next_start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<u32>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub common: Common,
}

/// Which element an action targets: a ref from the last snapshot, or a CSS
/// selector.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ElementTarget {
    // A ref from browser_snapshot (e12); the server's instructions say so
    // once for every tool that takes one.
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    // A CSS selector, instead of ref (said once in the instructions too).
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}

// Which mouse button a click presses.
#[allow(missing_docs)] // schema-visible: see the module doc
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MouseButton {
    #[default]
    Left,
    Right,
    Middle,
}

// A key held during a click.
#[allow(missing_docs)] // schema-visible: see the module doc
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Modifier {
    Alt,
    Control,
    Meta,
    Shift,
}

/// Arguments of `browser_click`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ClickArgs {
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub target: ElementTarget,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub button: Option<MouseButton>,
    /// 2 for a double click.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub click_count: Option<u32>,
    /// Held keys.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modifiers: Vec<Modifier>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub common: Common,
}

/// Arguments of `browser_type`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct TypeArgs {
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub target: ElementTarget,
    #[allow(missing_docs)] // schema-visible: see the module doc
    pub text: String,
    /// Default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clear: Option<bool>,
    /// Press Enter afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit: Option<bool>,
    /// A key event per character.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowly: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub common: Common,
}

// A screenshot's encoding.
#[allow(missing_docs)] // schema-visible: see the module doc
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    #[default]
    Png,
    Jpeg,
}

/// Arguments of `browser_screenshot`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ScreenshotArgs {
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_page: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<ImageFormat>,
    /// JPEG quality 0-100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<u8>,
    /// Draw each ref's box and label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotate: Option<bool>,
    /// Save as this file; no image returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub common: Common,
}

/// Wait for one condition (exactly one of these).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct WaitArgs {
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_gone: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Glob (* any text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_ms: Option<u64>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub common: Common,
}

/// Arguments of `browser_handoff`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct HandoffArgs {
    /// Shown to the person.
    pub reason: String,
    /// As in browser_wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Until>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub common: Common,
}

// browser_handoff's `until`: one condition of browser_wait's.
#[allow(missing_docs)] // schema-visible: see the module doc
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Until {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}

/// Arguments of `browser_evaluate`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct EvaluateArgs {
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expression: Option<String>,
    /// Instead: a function's source, given ref's element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// f2 or a frame_tree id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<String>,
    /// Await a promise (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub await_promise: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub common: Common,
}

// How to answer a dialog.
#[allow(missing_docs)] // schema-visible: see the module doc
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DialogAnswer {
    Accept,
    Dismiss,
}

/// Arguments of `browser_dialog`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DialogArgs {
    #[allow(missing_docs)] // schema-visible: see the module doc
    pub action: DialogAnswer,
    /// Answer to a prompt().
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_text: Option<String>,
    /// Default the oldest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialog_id: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub common: Common,
}

/// Arguments of `browser_hover`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct HoverArgs {
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub target: ElementTarget,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub common: Common,
}

/// Arguments of `browser_press_key`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct PressKeyArgs {
    /// Enter, Tab, ArrowDown, a character, Control+a…
    pub key: String,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub common: Common,
}

/// Arguments of `browser_select_option`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct SelectOptionArgs {
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub target: ElementTarget,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// Instead of values: select this text in ref (default: the page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub common: Common,
}

// Which console messages to read.
#[allow(missing_docs)] // schema-visible: see the module doc
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ConsoleLevel {
    Error,
    Warning,
    All,
}

/// Arguments of `browser_console`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ConsoleArgs {
    /// Default all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<ConsoleLevel>,
    /// Empty it after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clear: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub common: Common,
}

/// Arguments of `browser_extract`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ExtractArgs {
    /// Part to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// next_start_char of the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_char: Option<u64>,
    /// Default 20000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<u64>,
    /// false: drop link and image URLs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub common: Common,
}

// What `browser_tabs` does.
#[allow(missing_docs)] // schema-visible: see the module doc
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TabsAction {
    List,
    New,
    Select,
    Close,
}

/// Arguments of `browser_tabs`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TabsArgs {
    #[allow(missing_docs)] // schema-visible: see the module doc
    pub action: TabsAction,
    /// For new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// For select and close, `tab` names the tab.
    #[serde(flatten)]
    pub common: Common,
}

/// Arguments of `browser_cdp`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CdpArgs {
    /// Domain.method, e.g. Page.getLayoutMetrics.
    pub method: String,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Map<String, serde_json::Value>>,
    /// f2 or a frame_tree id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub common: Common,
}

/// Arguments of `browser_page_tool`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PageToolArgs {
    /// A tool the snapshot's page tools list.
    pub name: String,
    /// Its input, as its schema says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<serde_json::Map<String, serde_json::Value>>,
    /// f2: when two frames offer the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the module doc
    #[serde(flatten)]
    pub common: Common,
}

/// What an action produced: a short text for a model, the same facts as
/// JSON, and an image for screenshots.
#[derive(Debug, Clone)]
pub struct ActionOutput {
    /// What a model reads: a short summary of what happened.
    pub text: String,
    /// The same facts as JSON (`structuredContent` over MCP).
    pub data: Value,
    /// A screenshot's image, if the action took one.
    pub image: Option<Image>,
    /// The obstacle it found on the page (also in `data`), for the
    /// session's event stream.
    pub(crate) obstacle: Option<crate::obstacle::Obstacle>,
}

/// An encoded image (a screenshot).
#[derive(Debug, Clone)]
pub struct Image {
    /// Base64 of the encoded image.
    pub base64: String,
    /// `image/png` or `image/jpeg`.
    pub mime_type: &'static str,
}

impl ActionOutput {
    /// An output of `text` and `data`, without an image.
    pub fn new(text: impl Into<String>, data: Value) -> ActionOutput {
        ActionOutput {
            text: text.into(),
            data,
            image: None,
            obstacle: None,
        }
    }

    /// The output with the obstacle found on the page, if any: in `data`
    /// for the model, and typed for the session's event stream.
    pub(crate) fn with_obstacle(mut self, obstacle: Option<crate::obstacle::Obstacle>) -> ActionOutput {
        if let Some(o) = &obstacle {
            self.data["obstacle"] = serde_json::json!(o);
        }
        self.obstacle = obstacle;
        self
    }
}
