//! What a tool's call produces: a short text for a model, the same facts as
//! JSON, and an image for screenshots.

use serde_json::Value;

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
