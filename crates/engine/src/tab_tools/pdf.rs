//! `browser_pdf`: the page printed with Chrome's print-to-PDF, written under
//! `[files] output_dir` (`crate::files`).

use base64::Engine as _;
use cdp::protocol::page;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::args::Common;
use crate::config::FilesConfig;
use crate::tab::Tab;
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::validate;
use crate::{files, ActionError, ActionOutput, Budget};

/// Arguments of `browser_pdf`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct PdfArgs {
    /// File name in the output directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landscape: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub print_background: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_pdf`: its declaration and checks (see `crate::tool`).
impl Tool for PdfArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_pdf",
        verb: "pdf",
        group: Group::Pdf,
        description: "Print the page to a PDF file in the output directory. Returns path, bytes, pages.",
        scope: Scope::Tab,
        runs_during_dialog: false,
        budget: DefaultBudget::Action,
        changes_page: false,
        switch: None,
        effect: Effect::Acts,
    };

    /// A path that is not empty (where it may go is judged as it is written).
    fn check(&self) -> Result<(), ActionError> {
        self.path
            .as_deref()
            .map_or(Ok(()), |p| validate::non_empty("path", p))
    }
}

impl TabTool for PdfArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        run(call.tab, self, &call.config.files, call.budget).await
    }
}

pub async fn run(
    tab: &Tab,
    args: &PdfArgs,
    output: &FilesConfig,
    budget: &Budget,
) -> Result<ActionOutput, ActionError> {
    let path = files::output_path(
        output,
        args.path.as_deref(),
        &format!("page-{}.pdf", files::stamp()),
    )?;
    let print = page::PrintToPdf {
        landscape: args.landscape.unwrap_or(false),
        print_background: args.print_background.unwrap_or(false),
    };
    let printed = budget
        .cdp("printing the page to PDF", &tab.session, print)
        .await
        .map_err(|e| {
            if e.failure.ends_the_call() {
                return e;
            }
            // Chrome prints only when headless.
            ActionError::new(
                e.code,
                format!("Chrome could not print the page: {}", e.message),
                "Printing to PDF needs headless Chromium ([browser] headless = true); use browser_screenshot with full_page instead.",
            )
        })?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&printed.data)
        .map_err(|e| ActionError::internal(format!("the PDF was not base64: {e}")))?;
    crate::files::write(&path, &bytes)?;
    let pages = page_count(&bytes);
    let shown = path.display().to_string();
    Ok(ActionOutput::new(
        format!(
            "Saved the page as PDF: {shown} ({} bytes, {pages} page(s)).",
            bytes.len()
        ),
        json!({ "path": shown, "bytes": bytes.len(), "pages": pages }),
    ))
}

/// Pages of a PDF: its `/Type /Page` objects (not `/Pages`). Chrome writes
/// page dictionaries uncompressed.
fn page_count(pdf: &[u8]) -> usize {
    let needle = b"/Type /Page";
    pdf.windows(needle.len() + 1)
        .filter(|w| w.starts_with(needle) && w[needle.len()] != b's')
        .count()
}

#[cfg(test)]
mod tests {
    #[test]
    fn pages_are_counted_without_the_page_tree() {
        let pdf = b"%PDF-1.4\n1 0 obj <</Type /Pages /Count 2>>\n2 0 obj <</Type /Page>>\n3 0 obj <</Type /Page\n>>";
        assert_eq!(super::page_count(pdf), 2);
    }
}
