//! `browser_extract`: the page's main content as Markdown, a page at a time.
//!
//! The page picks its main content (`selector`, else `main`, `[role=main]`,
//! `article`, else `body`) and returns a copy without navigation, headers,
//! footers, asides, dialogs, fixed overlays and hidden nodes, capped at
//! 2,000,000 characters of HTML. htmd converts it; the Markdown is then cut
//! at character offsets, so consecutive pages concatenate to exactly the
//! whole.

use serde::Deserialize;
use serde_json::json;

use crate::action::ExtractArgs;
use crate::tab::Tab;
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

pub const MAX_INPUT_CHARS: usize = 2_000_000;
pub const DEFAULT_MAX_CHARS: usize = 20_000;

/// Returns `{html, truncated}` or `{error}`.
const MAIN_CONTENT: &str = r#"(selector, cap) => {
  let root;
  try {
    root = selector ? document.querySelector(selector)
      : document.querySelector('main, [role=main]') || document.querySelector('article') || document.body;
  } catch (e) { return { error: 'invalid_selector' }; }
  if (!root) return { error: selector ? 'no_match' : 'empty' };
  const DROP = 'nav, header, footer, aside, dialog, [role=navigation], [role=banner], [role=contentinfo], [role=complementary], [role=dialog], [aria-modal=true], script, style, noscript, template, svg, iframe';
  const clone = root.cloneNode(true);
  // Walk the original and its copy in step, dropping from the copy what
  // the original shows no one (styles only exist on the original).
  const a = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
  const b = document.createTreeWalker(clone, NodeFilter.SHOW_ELEMENT);
  const doomed = [];
  for (let x = a.currentNode, y = b.currentNode; x && y; x = a.nextNode(), y = b.nextNode()) {
    if (x === root) continue;
    let drop = x.matches(DROP) || x.hidden || x.getAttribute('aria-hidden') === 'true';
    if (!drop) {
      const style = getComputedStyle(x);
      drop = style.display === 'none' || style.visibility === 'hidden' ||
        (style.position === 'fixed' && x.getBoundingClientRect().width * x.getBoundingClientRect().height > 0.25 * innerWidth * innerHeight);
    }
    if (drop) doomed.push(y);
  }
  for (const y of doomed) y.remove();
  let html = clone.outerHTML;
  const truncated = html.length > cap;
  if (truncated) html = html.slice(0, cap);
  return { html, truncated };
}"#;

#[derive(Deserialize, Default)]
#[serde(default)]
struct MainContent {
    html: String,
    truncated: bool,
    error: Option<String>,
}

pub async fn run(tab: &Tab, args: &ExtractArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let expression = format!("({MAIN_CONTENT})({}, {MAX_INPUT_CHARS})", json!(args.selector));
    let value = tab
        .evaluate_in_world(budget, "reading the page", &expression, true)
        .await?
        .value
        .unwrap_or_default();
    let main: MainContent = serde_json::from_value(value)
        .map_err(|e| ActionError::internal(format!("the page reader returned an unexpected shape: {e}")))?;
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
        Some(_) => return Ok(page(String::new(), 0, DEFAULT_MAX_CHARS, false)),
        None => {}
    }
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "head", "noscript", "template", "svg", "iframe",
        ])
        .build();
    let markdown = converter
        .convert(&main.html)
        .map_err(|e| ActionError::internal(format!("converting the page to Markdown failed: {e}")))?;
    let start = args.start_char.unwrap_or(0) as usize;
    let max = args.max_chars.map(|m| m as usize).unwrap_or(DEFAULT_MAX_CHARS);
    let mut output = page(markdown, start, max, main.truncated);
    let status = tab.state(|s| s.current_status());
    if let Some(o) = crate::obstacle::check(tab, budget, status).await? {
        output.text = format!(
            "Obstacle ({}, {} confidence): {}\n\n{}",
            o.kind, o.confidence, o.message, output.text
        );
        output.data["obstacle"] = json!(o);
    }
    Ok(output)
}

/// One page of `markdown`, starting at character `start`.
fn page(markdown: String, start: usize, max: usize, input_truncated: bool) -> ActionOutput {
    let total = markdown.chars().count();
    let content: String = markdown.chars().skip(start).take(max).collect();
    let end = start.saturating_add(content.chars().count());
    let next = (end < total).then_some(end);
    let mut text = content.clone();
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
            let out = page(whole.clone(), start, 37, false);
            joined += out.data["content"].as_str().unwrap();
            match out.data["next_start_char"].as_u64() {
                Some(n) => start = n as usize,
                None => break,
            }
        }
        assert_eq!(joined, whole);
        let past = page(whole.clone(), 10_000, 37, false);
        assert_eq!(past.data["content"], "");
        assert!(past.data["next_start_char"].is_null());
    }
}
