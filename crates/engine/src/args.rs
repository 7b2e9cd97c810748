//! The argument pieces several tools take: the arguments every tool takes
//! ([`Common`]), the element an action targets, when a navigation counts as
//! finished, a mouse button and a held key. Each tool's own arguments are
//! in its file, beside its handler (`crate::tool`, which also says how
//! their doc comments become the schema a model reads).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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

// When a navigation counts as finished.
#[allow(missing_docs)] // schema-visible: see `crate::tool`
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WaitUntil {
    #[default]
    Load,
    Domcontentloaded,
    Networkidle,
}

/// Which element an action targets: a ref from the last snapshot, or a CSS
/// selector.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ElementTarget {
    // A ref from browser_snapshot (e12); the server's instructions say so
    // once for every tool that takes one.
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    // A CSS selector, instead of ref (said once in the instructions too).
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}

// Which mouse button a click presses.
#[allow(missing_docs)] // schema-visible: see `crate::tool`
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MouseButton {
    #[default]
    Left,
    Right,
    Middle,
}

// A key held during a click.
#[allow(missing_docs)] // schema-visible: see `crate::tool`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Modifier {
    Alt,
    Control,
    Meta,
    Shift,
}
