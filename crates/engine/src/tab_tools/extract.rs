//! `browser_extract`: the page's main content as Markdown, a page at a time.
//!
//! The page reader (`scripts/extract.js`, in cdpilot's world) copies the rendered
//! document without what no one sees (hidden nodes, fixed overlays) or
//! needs (navigation, footers, dialogs, empty links, `data:` URIs), with
//! row header cells kept as cells and tracking parameters cut from link
//! targets (`links: false`: no targets at all); at most 2,000,000 characters
//! of HTML. Without a selector, Readability (`dom_smoothie`) chooses the
//! article in that copy, and its headline and byline lead the Markdown; when
//! it finds none, the reader's own scorer chooses (text and link density,
//! class/id hints, paragraphs). htmd converts it. The Markdown is cached per
//! document in the tab (`tab::extracts`, until a node of it changes), then cut at character offsets, so
//! consecutive pages concatenate to exactly the whole. A page with no
//! readable text says why and what to try; a page whose styles hide all text
//! is read from its DOM.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::args::Common;
use crate::scripts::READER;
use crate::tab::extracts::Converted;
use crate::tab::Tab;
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::validate;
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

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
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_extract`: its declaration and checks (see `crate::tool`).
impl Tool for ExtractArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_extract",
        verb: "extract",
        group: Group::Core,
        description: "The page's main content as Markdown (no nav, ads, overlays), paged by start_char.",
        scope: Scope::Tab,
        runs_during_dialog: false,
        budget: DefaultBudget::Action,
        changes_page: false,
        switch: None,
        effect: Effect::Acts,
    };

    /// A selector that is not empty; a page of 1 to 1,000,000 characters.
    fn check(&self) -> Result<(), ActionError> {
        if let Some(s) = &self.selector {
            validate::non_empty("selector", s)?;
        }
        match self.max_chars {
            Some(0) => Err(ActionError::invalid(
                "max_chars must be at least 1",
                "Leave it out for 20000.",
            )),
            Some(m) if m > 1_000_000 => Err(ActionError::invalid(
                format!("max_chars {m} is over 1000000"),
                "Read in pages of at most 1000000 characters.",
            )),
            _ => Ok(()),
        }
    }
}

impl TabTool for ExtractArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        run(call.tab, self, call.budget).await
    }
}

pub const MAX_INPUT_CHARS: usize = 2_000_000;
pub const DEFAULT_MAX_CHARS: usize = 20_000;

#[derive(Deserialize, Default)]
#[serde(default)]
struct MainContent {
    html: String,
    truncated: bool,
    error: Option<String>,
    key: String,
    unchanged: bool,
    fallback: Option<String>,
}

pub async fn run(tab: &Tab, args: &ExtractArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    // The keys of the Markdown the cache holds: the page answers
    // `unchanged` when its document's key is one of them.
    let known = tab.extracts().keys();
    // Without a selector the page sends its whole cleaned document and
    // Readability chooses the content; if it finds none, the page's own
    // scorer chooses.
    let whole = args.selector.is_none();
    let mut main = read(tab, budget, args, &known, whole).await?;
    if main.unchanged && tab.extracts().get(&main.key).is_none() {
        // Evicted since the keys were read: read the page afresh.
        main = read(tab, budget, args, &[], whole).await?;
    }
    let mut readable = None;
    if whole && main.error.is_none() && !main.unchanged {
        let html = std::mem::take(&mut main.html);
        let url = tab.state(|s| s.url().to_owned());
        // Readability is CPU work on up to 2,000,000 characters: off the
        // runtime's threads.
        readable = tokio::task::spawn_blocking(move || readability(&html, &url))
            .await
            .map_err(|e| ActionError::internal(format!("reading the article failed: {e}")))?;
        if readable.is_none() {
            main = read(tab, budget, args, &known, false).await?;
        }
    }
    match main.error.as_deref() {
        Some("invalid_selector") => {
            return Err(ActionError::invalid(
                "the selector is not valid CSS",
                "Fix the selector or leave it out.",
            ))
        }
        Some("no_match") => {
            return Err(ActionError::new(
                ErrorCode::ElementNotFound,
                "no element matches the selector",
                "Leave selector out to read the main content.",
            ))
        }
        Some(_) => return Ok(nothing_found(args)),
        None => {}
    }
    let hit = tab.extracts().get(&main.key).filter(|_| main.unchanged);
    let from_cache = hit.is_some();
    let converted = match hit {
        Some(c) => c,
        None => {
            let converter = htmd::HtmlToMarkdown::builder()
                .skip_tags(vec![
                    "script", "style", "head", "noscript", "template", "svg", "iframe",
                ])
                .build();
            let html = readable
                .as_ref()
                .map_or(main.html.as_str(), |r| r.content.as_str());
            let mut markdown = converter
                .convert(html)
                .map_err(|e| ActionError::internal(format!("converting the page to Markdown failed: {e}")))?;
            if let Some(r) = &readable {
                markdown = with_headline(markdown, r);
            }
            let converted = Arc::new(Converted {
                markdown,
                input_truncated: main.truncated,
                fallback: main.fallback.is_some(),
            });
            tab.extracts().keep(main.key.clone(), converted.clone());
            converted
        }
    };
    if converted.markdown.trim().is_empty() {
        return Ok(nothing_found(args));
    }
    let start = args.start_char.unwrap_or(0) as usize;
    let max = args.max_chars.map(|m| m as usize).unwrap_or(DEFAULT_MAX_CHARS);
    let mut output = page(&converted.markdown, start, max, converted.input_truncated);
    if from_cache {
        output.data["from_cache"] = json!(true);
    }
    if converted.fallback {
        output.text = format!(
            "[the page shows no text (its styles hide it); this is the text in its DOM]\n\n{}",
            output.text
        );
        output.data["fallback"] = json!("dom_text");
    }
    let status = tab.state(|s| s.current_status());
    let obstacle = tab.obstacle(budget, status).await?;
    if let Some(o) = &obstacle {
        output.text = format!(
            "Obstacle ({}, {} confidence): {}\n\n{}",
            o.kind, o.confidence, o.message, output.text
        );
    }
    Ok(output.with_obstacle(obstacle))
}

/// One run of the page reader.
async fn read(
    tab: &Tab,
    budget: &Budget,
    args: &ExtractArgs,
    known: &[String],
    whole: bool,
) -> Result<MainContent, ActionError> {
    let expression = format!(
        "({READER})({}, {MAX_INPUT_CHARS}, {}, {}, {whole})",
        json!(args.selector),
        args.links.unwrap_or(true),
        json!(known)
    );
    let value = tab
        .evaluate_in_world(budget, "reading the page", &expression, true)
        .await?
        .value
        .unwrap_or_default();
    serde_json::from_value(value)
        .map_err(|e| ActionError::internal(format!("the page reader returned an unexpected shape: {e}")))
}

/// What Readability chose from the cleaned document.
struct Readable {
    title: String,
    byline: Option<String>,
    content: String,
}

/// Readability's choice of content in `html`, when it finds some.
fn readability(html: &str, url: &str) -> Option<Readable> {
    let url = url.starts_with("http").then_some(url);
    // Classes are kept for htmd (a code block's `language-*`).
    let config = dom_smoothie::Config {
        keep_classes: true,
        ..Default::default()
    };
    let mut reader = dom_smoothie::Readability::new(html, url, Some(config)).ok()?;
    let article = reader.parse().ok()?;
    if article.text_content.trim().is_empty() {
        return None;
    }
    Some(Readable {
        title: article.title.trim().to_owned(),
        byline: article
            .byline
            .map(|b| b.trim().to_owned())
            .filter(|b| !b.is_empty()),
        content: article.content.to_string(),
    })
}

/// The article's Markdown under its headline and byline (Readability keeps
/// them apart from the content), unless the content already starts with them.
fn with_headline(markdown: String, r: &Readable) -> String {
    let head: String = markdown.chars().take(400).collect();
    let mut top = String::new();
    if !r.title.is_empty() && !head.contains(&r.title) {
        top += &format!("# {}\n\n", r.title);
    }
    if let Some(byline) = r.byline.as_ref().filter(|b| !head.contains(b.as_str())) {
        top += &format!("{byline}\n\n");
    }
    top + &markdown
}

/// An `ok` result that says nothing was found, why, and what to try.
fn nothing_found(args: &ExtractArgs) -> ActionOutput {
    let why = if args.selector.is_some() {
        "The element matched by the selector has no visible text"
    } else {
        "The page has no readable text: it may still be loading, show its content only after an interaction, or draw it (canvas, images)"
    };
    let mut out = page("", 0, DEFAULT_MAX_CHARS, false);
    out.text = format!(
        "{why}. Try browser_wait for the content (text or a selector), a selector for the part to read, or browser_screenshot to see what the page shows."
    );
    out.data["empty"] = json!(true);
    out
}

/// One page of `markdown`, starting at character `start`.
fn page(markdown: &str, start: usize, max: usize, input_truncated: bool) -> ActionOutput {
    let total = markdown.chars().count();
    let content: String = markdown.chars().skip(start).take(max).collect();
    let end = start.saturating_add(content.chars().count());
    let next = (end < total).then_some(end);
    // The page's words, enclosed in the session's markers.
    let mut text = if content.is_empty() {
        String::new()
    } else {
        crate::content::page(&content)
    };
    match next {
        Some(n) => {
            text += &format!("\n\n[characters {start}–{end} of {total}; continue with start_char: {n}]")
        }
        None if start > 0 => text += &format!("\n\n[characters {start}–{end} of {total}; end of content]"),
        None => {}
    }
    if input_truncated {
        text += "\n[the page's HTML was over 2,000,000 characters and was cut before conversion]";
    }
    ActionOutput::new(
        text,
        json!({
            "content": content,
            "start_char": start,
            "next_start_char": next,
            "total_chars": total,
            "input_truncated": input_truncated,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::page;

    #[test]
    fn pages_concatenate_to_the_whole() {
        let whole = "héllo wörld, ".repeat(50);
        let mut joined = String::new();
        let mut start = 0;
        loop {
            let out = page(&whole, start, 37, false);
            joined += out.data["content"].as_str().unwrap();
            match out.data["next_start_char"].as_u64() {
                Some(n) => start = n as usize,
                None => break,
            }
        }
        assert_eq!(joined, whole);
        let past = page(&whole, 10_000, 37, false);
        assert_eq!(past.data["content"], "");
        assert!(past.data["next_start_char"].is_null());
    }
}
