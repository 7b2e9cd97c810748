//! `browser_pdf`: the page printed with Chrome's print-to-PDF, written under
//! `[files] output_dir` (`crate::files`).

use base64::Engine as _;
use cdp::protocol::page;
use serde_json::json;

use crate::calls::PdfArgs;
use crate::config::FilesConfig;
use crate::tab::Tab;
use crate::tool::{Before, Declaration, DefaultBudget, Effect, Group, Scope, TabCall};
use crate::validate;
use crate::{files, ActionError, ActionOutput, Budget};

/// `browser_pdf`'s declaration (see `crate::tool`).
pub(crate) const TOOL: Declaration = Declaration {
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
    before: Before::NOTHING,
};

/// A path that is not empty (where it may go is judged as it is written).
pub(crate) fn check(a: &PdfArgs) -> Result<(), ActionError> {
    a.path
        .as_deref()
        .map_or(Ok(()), |p| validate::non_empty("path", p))
}

/// Runs the tool in the call's tab.
pub(crate) async fn perform(call: &TabCall<'_>, args: &PdfArgs) -> Result<ActionOutput, ActionError> {
    run(call.tab, args, &call.config.files, call.budget).await
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
