//! Arguments of the v2 core tools that work forms and the page with trusted
//! input: `browser_fill_form`, `browser_drag`, `browser_upload`,
//! `browser_scroll`. Schema conventions as in the parent module: a field
//! without a doc comment is one a model understands by its name.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Common, ElementTarget};

/// Arguments of `browser_fill_form`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct FillFormArgs {
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    pub fields: Vec<FormField>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(flatten)]
    pub common: Common,
}

// One field of `browser_fill_form`: which control, and its new value (a
// comment, not a doc: it would be repeated in the schema).
#[allow(missing_docs)] // schema-visible: see the `calls` module doc
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FormField {
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(deserialize_with = "text_of_scalar")]
    pub value: String,
}

impl FormField {
    /// The control this field names.
    pub fn target(&self) -> ElementTarget {
        ElementTarget {
            reference: self.reference.clone(),
            selector: self.selector.clone(),
        }
    }
}

/// A form value as text: a model that writes `true` or `5` for a checkbox
/// or a number input means `"true"` or `"5"`.
fn text_of_scalar<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    match Value::deserialize(d)? {
        Value::String(s) => Ok(s),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(serde::de::Error::custom(format!(
            "a field's value is a string, not {other}"
        ))),
    }
}

/// Arguments of `browser_drag`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct DragArgs {
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(flatten)]
    pub target: ElementTarget,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_ref: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_selector: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(flatten)]
    pub common: Common,
}

impl DragArgs {
    /// Where the drag ends.
    pub fn destination(&self) -> ElementTarget {
        ElementTarget {
            reference: self.to_ref.clone(),
            selector: self.to_selector.clone(),
        }
    }
}

/// Arguments of `browser_upload`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct UploadArgs {
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(flatten)]
    pub target: ElementTarget,
    /// Relative to the server's directory.
    pub paths: Vec<String>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(flatten)]
    pub common: Common,
}

// Which way `browser_scroll` scrolls.
#[allow(missing_docs)] // schema-visible: see the `calls` module doc
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScrollDirection {
    Up,
    Down,
    Left,
    Right,
}

/// Arguments of `browser_scroll`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ScrollArgs {
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(flatten)]
    pub target: ElementTarget,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<ScrollDirection>,
    /// Pixels (default one viewport).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<u32>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(flatten)]
    pub common: Common,
}
