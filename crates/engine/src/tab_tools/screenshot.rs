//! `browser_screenshot`: the viewport, the full page or one element, as PNG
//! or JPEG, returned as an image for the model, or saved under `[files]
//! output_dir` (`path`) with only its facts returned; `annotate` draws the
//! refs on it (`annotate.rs`).

use base64::Engine as _;
use cdp::protocol::page;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::args::Common;
use crate::config::FilesConfig;
use crate::tab::Tab;
use crate::tab_tools::{annotate, element};
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::validate;
use crate::{files, ActionError, ActionOutput, Budget, Image};

// A screenshot's encoding.
#[allow(missing_docs)] // schema-visible: see `crate::tool`
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
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_page: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
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
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_screenshot`: its declaration and checks (see `crate::tool`).
impl Tool for ScreenshotArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_screenshot",
        verb: "screenshot",
        group: Group::Core,
        description: "Screenshot of the viewport, full_page, or an element (ref).",
        scope: Scope::Tab,
        runs_during_dialog: false,
        budget: DefaultBudget::Action,
        changes_page: false,
        switch: None,
        effect: Effect::Reads,
    };

    /// A ref of the right shape, not with full_page; quality for JPEG only.
    fn check(&self) -> Result<(), ActionError> {
        if let Some(r) = &self.reference {
            validate::reference(r)?;
        }
        if self.reference.is_some() && self.full_page == Some(true) {
            return Err(ActionError::invalid(
                "ref and full_page cannot be combined",
                "Pass ref for one element, or full_page for the whole page.",
            ));
        }
        match (self.quality, self.format.unwrap_or_default()) {
            (Some(q), _) if q > 100 => Err(ActionError::invalid(
                format!("quality must be 0-100, not {q}"),
                "Pass a JPEG quality between 0 and 100.",
            )),
            (Some(_), ImageFormat::Png) => Err(ActionError::invalid(
                "quality applies to JPEG only",
                "Add format: \"jpeg\" or leave quality out.",
            )),
            _ => Ok(()),
        }
    }
}

impl TabTool for ScreenshotArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        let cap = call.config.limits.snapshot_max_elements;
        run(call.tab, self, &call.config.files, cap, call.budget).await
    }
}

pub async fn run(
    tab: &Tab,
    args: &ScreenshotArgs,
    output: &FilesConfig,
    max_elements: u32,
    budget: &Budget,
) -> Result<ActionOutput, ActionError> {
    // Checked before the capture: a path outside the output directory
    // costs nothing.
    let path = match &args.path {
        Some(p) => Some(files::output_path(output, Some(p), p)?),
        None => None,
    };
    let format = args.format.unwrap_or_default();
    let mut capture = page::CaptureScreenshot {
        format: match format {
            ImageFormat::Png => "png".into(),
            ImageFormat::Jpeg => "jpeg".into(),
        },
        quality: match format {
            ImageFormat::Jpeg => Some(args.quality.unwrap_or(80)),
            ImageFormat::Png => None,
        },
        // Chrome's fast encoding (`optimize_for_speed`) was measured for
        // issue 24: no gain above the noise through MCP, and 1.8–2.7× the
        // PNG's bytes; left off.
        ..Default::default()
    };
    let mut what = "the viewport".to_owned();
    if let Some(reference) = &args.reference {
        let element = element::by_ref(tab, reference, budget).await?;
        let (x0, y0, x1, y1) = element.viewport_box(tab, budget).await?;
        let metrics = budget
            .cdp("measuring the page", &tab.session, page::GetLayoutMetrics {})
            .await?;
        capture.clip = Some(page::Viewport {
            x: x0 + metrics.css_visual_viewport.page_x,
            y: y0 + metrics.css_visual_viewport.page_y,
            width: (x1 - x0).max(1.0),
            height: (y1 - y0).max(1.0),
            scale: 1.0,
        });
        what = element.label;
    } else if args.full_page == Some(true) {
        let metrics = budget
            .cdp("measuring the page", &tab.session, page::GetLayoutMetrics {})
            .await?;
        let size = &metrics.css_content_size;
        capture.clip = Some(page::Viewport {
            x: 0.0,
            y: 0.0,
            width: size.width.max(1.0),
            height: size.height.max(1.0),
            scale: 1.0,
        });
        capture.capture_beyond_viewport = true;
        what = "the full page".into();
    }
    let shot = if args.annotate == Some(true) {
        let drawn = annotate::draw(tab, max_elements, budget).await?;
        let boxes = drawn.boxes;
        let shot = budget.cdp("taking the screenshot", &tab.session, capture).await;
        annotate::clear(tab, drawn).await;
        what = format!("{what} with {boxes} ref label(s)");
        shot?
    } else {
        budget.cdp("taking the screenshot", &tab.session, capture).await?
    };
    let decode = |data: &str| {
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| ActionError::internal(format!("the screenshot was not base64: {e}")))
    };
    // The size is in the image's first bytes: decode the whole image only
    // to write it.
    let head = decode(&shot.data[..shot.data.len().min(HEAD_CHARS)])?;
    let (width, height) = image_size(&head)
        .or_else(|| decode(&shot.data).ok().and_then(|bytes| image_size(&bytes)))
        .unwrap_or((0, 0));
    let mime_type = match format {
        ImageFormat::Png => "image/png",
        ImageFormat::Jpeg => "image/jpeg",
    };
    if let Some(path) = path {
        let bytes = decode(&shot.data)?;
        crate::files::write(&path, &bytes)?;
        let shown = path.display().to_string();
        return Ok(ActionOutput::new(
            format!(
                "Saved a screenshot of {what} to {shown} ({width}x{height}, {} bytes).",
                bytes.len()
            ),
            json!({ "path": shown, "width": width, "height": height, "bytes": bytes.len() }),
        ));
    }
    let mut output = ActionOutput::new(
        format!("Screenshot of {what}, {width}x{height} {}.", &mime_type[6..]),
        json!({ "width": width, "height": height }),
    );
    output.image = Some(Image {
        base64: shot.data,
        mime_type,
    });
    Ok(output)
}

/// How much of the base64 image holds its size (a PNG's header, a
/// Chrome JPEG's frame header after its tables): a multiple of 4.
const HEAD_CHARS: usize = 4096;

/// Pixel size from a PNG's IHDR or a JPEG's first SOF marker.
fn image_size(bytes: &[u8]) -> Option<(u32, u32)> {
    let be16 = |i: usize| Some(u16::from_be_bytes([*bytes.get(i)?, *bytes.get(i + 1)?]) as u32);
    let be32 = |i: usize| Some(u32::from_be_bytes(bytes.get(i..i + 4)?.try_into().ok()?));
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some((be32(16)?, be32(20)?));
    }
    if !bytes.starts_with(&[0xFF, 0xD8]) {
        return None;
    }
    let mut i = 2;
    while i + 9 < bytes.len() {
        if bytes[i] != 0xFF {
            return None;
        }
        let marker = bytes[i + 1];
        if (0xC0..=0xCF).contains(&marker) && ![0xC4, 0xC8, 0xCC].contains(&marker) {
            return Some((be16(i + 7)?, be16(i + 5)?));
        }
        i += 2 + be16(i + 2)? as usize;
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn png_size_is_read_from_the_header() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&640u32.to_be_bytes());
        png.extend_from_slice(&480u32.to_be_bytes());
        assert_eq!(super::image_size(&png), Some((640, 480)));
        assert_eq!(super::image_size(b"nope"), None);
    }
}
