//! `browser_wait`: wait for text, text gone, a visible selector, a URL, or a
//! time, within the call's budget. Page conditions are checked in the page
//! on every DOM mutation (a `MutationObserver` in cdpilot's isolated world),
//! URLs on every navigation of the main frame (the tab's navigation watch):
//! never by polling with sleeps.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::args::Common;
use crate::error::Failure;
use crate::tab::Tab;
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::validate;
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

/// Wait for one condition (exactly one of these).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct WaitArgs {
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_gone: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Glob (* any text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_ms: Option<u64>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_wait`: its declaration and checks (see `crate::tool`).
impl Tool for WaitArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_wait",
        verb: "wait",
        group: Group::Core,
        description:
            "Wait until text appears, text_gone goes, selector is visible, the URL matches, or time_ms passes.",
        scope: Scope::Tab,
        runs_during_dialog: false,
        budget: DefaultBudget::Wait,
        changes_page: false,
        switch: None,
        effect: Effect::Reads,
    };

    /// Exactly one condition, none of them empty.
    fn check(&self) -> Result<(), ActionError> {
        let given = [
            self.text.is_some(),
            self.text_gone.is_some(),
            self.selector.is_some(),
            self.url.is_some(),
            self.time_ms.is_some(),
        ]
        .iter()
        .filter(|g| **g)
        .count();
        if given != 1 {
            return Err(ActionError::invalid(
                format!(
                    "browser_wait takes exactly one of text, text_gone, selector, url, time_ms ({given} given)"
                ),
                "Pass one condition, e.g. {\"text\": \"Saved\"}.",
            ));
        }
        for (name, value) in [
            ("text", &self.text),
            ("text_gone", &self.text_gone),
            ("selector", &self.selector),
            ("url", &self.url),
        ] {
            if let Some(v) = value {
                validate::non_empty(name, v)?;
            }
        }
        Ok(())
    }
}

impl TabTool for WaitArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        run(call.tab, self, call.budget).await
    }
}

/// Resolves true once the condition holds, false when the page-side timer
/// (set to the budget left) runs out, so no observer outlives the call.
const IN_PAGE_WAIT: &str = r#"(kind, arg, ms) => {
  const visible = (el) => el && el.checkVisibility({ visibilityProperty: true });
  const text = () => (document.body ? document.body.innerText : '').includes(arg);
  const check = () => kind === 'text' ? text() : kind === 'text_gone' ? !text() : visible(document.querySelector(arg));
  if (check()) return true;
  return new Promise((resolve) => {
    const done = (value) => { observer.disconnect(); clearTimeout(timer); resolve(value); };
    const observer = new MutationObserver(() => { if (check()) done(true); });
    observer.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
    const timer = setTimeout(() => done(false), ms);
  });
}"#;

pub async fn run(tab: &Tab, args: &WaitArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let (what, never) = if let Some(ms) = args.time_ms {
        budget
            .run("waiting", async {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                Ok(())
            })
            .await?;
        return Ok(done(budget, format!("Waited {ms} ms.")));
    } else if let Some(glob) = &args.url {
        return wait_for_url(tab, glob, budget).await;
    } else if let Some(text) = &args.text {
        (("text", text), format!("text \"{text}\" never appeared"))
    } else if let Some(text) = &args.text_gone {
        (("text_gone", text), format!("text \"{text}\" never went away"))
    } else if let Some(selector) = &args.selector {
        (
            ("selector", selector),
            format!("no visible element ever matched \"{selector}\""),
        )
    } else {
        return Err(ActionError::invalid(
            "no condition given",
            "Pass text, text_gone, selector, url or time_ms.",
        ));
    };
    let (kind, arg) = what;
    if kind == "selector" {
        validate_selector(tab, arg, budget).await?;
    }
    loop {
        let expression = format!(
            "({IN_PAGE_WAIT})({}, {}, {})",
            json!(kind),
            json!(arg),
            budget.remaining().as_millis()
        );
        let result = tab
            .evaluate_in_world_awaiting(budget, "waiting", &expression)
            .await;
        match result {
            Ok(serde_json::Value::Bool(true)) => {
                return Ok(done(
                    budget,
                    format!(
                        "Done: {} after {} ms.",
                        describe(kind, arg),
                        budget.elapsed().as_millis()
                    ),
                ))
            }
            Ok(_) => return Err(never_happened(budget, &never)),
            Err(e) if matches!(e.failure, Failure::Timeout { .. }) => {
                return Err(never_happened(budget, &never))
            }
            // The page navigated under the wait: check again in the new document.
            Err(e) if e.failure == Failure::ContextGone => continue,
            Err(e) => return Err(e),
        }
    }
}

async fn validate_selector(tab: &Tab, selector: &str, budget: &Budget) -> Result<(), ActionError> {
    let probe = format!(
        "(() => {{ try {{ document.querySelector({}); return true; }} catch (e) {{ return false; }} }})()",
        json!(selector)
    );
    let valid = tab
        .evaluate_in_world(budget, "checking the selector", &probe, true)
        .await?;
    if valid.value != Some(json!(true)) {
        return Err(ActionError::invalid(
            format!("\"{selector}\" is not a valid CSS selector"),
            "Fix the selector.",
        ));
    }
    Ok(())
}

async fn wait_for_url(tab: &Tab, glob: &str, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let reached = tab
        .navigations()
        .url_matching(|url| glob_matches(glob, url), budget)
        .await;
    match reached {
        Ok(url) => Ok(done(budget, format!("The URL {url} matches \"{glob}\"."))),
        Err(e) if matches!(e.failure, Failure::Timeout { .. }) => Err(never_happened(
            budget,
            &format!("the URL never matched \"{glob}\""),
        )),
        Err(e) => Err(e),
    }
}

fn done(budget: &Budget, text: String) -> ActionOutput {
    ActionOutput::new(
        text,
        json!({ "ok": true, "waited_ms": budget.elapsed().as_millis() as u64 }),
    )
}

fn describe(kind: &str, arg: &str) -> String {
    match kind {
        "text" => format!("text \"{arg}\" appeared"),
        "text_gone" => format!("text \"{arg}\" went away"),
        _ => format!("\"{arg}\" is visible"),
    }
}

fn never_happened(budget: &Budget, never: &str) -> ActionError {
    ActionError::new(
        ErrorCode::Timeout,
        format!("waited {:.1}s; {never}", budget.elapsed().as_secs_f64()),
        "Take a browser_snapshot before retrying.",
    )
}

/// `*` matches any run of characters (slashes included); everything else
/// matches itself.
pub fn glob_matches(glob: &str, text: &str) -> bool {
    let parts: Vec<&str> = glob.split('*').collect();
    if parts.len() == 1 {
        return glob == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(i) => rest = &rest[i + middle.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::glob_matches;

    #[test]
    fn globs_match_whole_urls() {
        assert!(glob_matches("http://x/*", "http://x/a/b?c"));
        assert!(glob_matches("*/form.html", "http://127.0.0.1:1/form.html"));
        assert!(glob_matches("*form*", "http://x/form.html"));
        assert!(!glob_matches("*/form.html", "http://x/form.html?q"));
        assert!(glob_matches("http://x/", "http://x/"));
        assert!(!glob_matches("http://x/", "http://x/y"));
        assert!(!glob_matches("a*b*c", "acb"));
    }
}
