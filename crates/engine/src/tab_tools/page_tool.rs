//! `browser_page_tool`: calls a tool the page registered (WebMCP,
//! `document.modelContext.registerTool` or a form's `toolname`), in any
//! frame, through `WebMCP.invokeTool`, and the snapshot's `page tools:`
//! section that lists them ([`section`]). Turned on with `[tools]
//! page_tools`.
//!
//! The page is untrusted: a tool is judged by the URL rules against the
//! document that registered it (a denied origin's tools are neither listed
//! nor callable), a tool not marked read-only is asked about where the
//! client can be asked (`[policy] page_tools_ask`), the arguments are
//! checked against the tool's own schema first, and every word of the
//! page's (names, descriptions, schemas quoted in errors, results) leaves
//! inside the page content markers. A call past its budget, or cancelled,
//! sends `WebMCP.cancelInvocation`.

use std::time::Duration;

use cdp::protocol::webmcp::{CancelInvocation, InvokeTool, ToolResponded};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::args::Common;
use crate::content;
use crate::page_tools::{self, schema, Availability, PageTool};
use crate::policy::{Answer, Decision, Verdict};
use crate::tab::Tab;
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, Switch, TabCall, TabTool, Tool};
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

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
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_page_tool`: its declaration and checks (see `crate::tool`).
impl Tool for PageToolArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_page_tool",
        verb: "page-tool",
        group: Group::Page,
        description: "Call a tool the page offers (the snapshot's page tools) with its arguments.",
        scope: Scope::Tab,
        runs_during_dialog: false,
        budget: DefaultBudget::Action,
        changes_page: true,
        switch: Some(Switch {
            setting: "page_tools",
            on: |tools| tools.page_tools.on(),
        }),
        effect: Effect::Acts,
    };

    /// A name to look for.
    fn check(&self) -> Result<(), ActionError> {
        crate::validate::non_empty("name", &self.name)
    }
}

impl TabTool for PageToolArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        run(call.tab, self, &call.config.policy, call.budget).await
    }
}

/// How long cancelling an invocation may take once the call's own budget
/// is spent (the page is not waited for: Chrome answers the command).
const CANCEL_BUDGET: Duration = Duration::from_secs(2);
/// Characters of a tool's answer shown.
const MAX_ANSWER: usize = 20_000;

/// The error for a browser without the WebMCP domain.
fn not_available() -> ActionError {
    ActionError::invalid(
        "page tools: not available in this browser (it was started without --enable-features=WebMCP)",
        "Use the page's own controls (browser_snapshot, browser_click). A browser cdpilot launches has the feature on with [tools] page_tools.",
    )
}

pub async fn run(
    tab: &Tab,
    args: &PageToolArgs,
    policy: &crate::config::PolicyConfig,
    budget: &Budget,
) -> Result<ActionOutput, ActionError> {
    if tab.state(|s| s.page_tools().availability()) == Availability::Absent {
        return Err(not_available());
    }
    let frame = match args.frame.as_deref() {
        Some("top") => Some(tab.state(|s| s.main_frame_id().to_owned())),
        Some(name) => Some(tab.frame_named(name)?.frame_id),
        None => None,
    };
    let offered: Vec<PageTool> = tab.state(|s| {
        s.page_tools()
            .tools()
            .iter()
            .filter(|t| t.name == args.name && frame.as_ref().is_none_or(|f| *f == t.frame_id))
            .cloned()
            .collect()
    });
    let tool = match offered.as_slice() {
        [] => return Err(unknown(tab, &args.name)),
        [one] => one.clone(),
        _ => {
            let frames: Vec<String> = offered.iter().map(|t| frame_label(tab, &t.frame_id)).collect();
            return Err(ActionError::invalid(
                format!(
                    "page tool {} is offered by {} frames ({})",
                    content::page(&args.name),
                    offered.len(),
                    frames.join(", ")
                ),
                "Pass frame (f1, or \"top\" for the page's own) to say which.",
            ));
        }
    };
    let url = frame_url(tab, &tool.frame_id);
    let what = format!("calling page tool {} of", content::page(&tool.name));
    // The URL rules, against the document that registered it.
    let verdict = tab.gate().policy().judge(&url);
    let consent = tab.gate().consent();
    let _once = match &consent {
        Some(consent) => consent.settle(&verdict, &what, budget).await?,
        None if verdict.allowed() => None,
        None => return Err(verdict.denied_error(&what)),
    };
    let arguments = Value::Object(args.arguments.clone().unwrap_or_default());
    check_arguments(&tool, &arguments)?;
    // The page's read-only claim is a claim: it skips the ask only for an
    // origin the user trusts with it.
    if policy.page_tools_ask && !(tool.read_only && trusts_claims(policy, &url)) {
        let asker = consent.as_ref().and_then(|c| c.asker());
        if let Some(asker) = asker {
            let question = Verdict {
                url: url.clone(),
                decision: Decision::Ask,
                rule: format!(
                    "[policy] page_tools_ask: the page's tool \"{}\"{}; arguments {}",
                    page_tools::cap(&tool.name, page_tools::MAX_NAME),
                    match tool.read_only {
                        true => " (the page claims it is read-only, a claim not checked)",
                        false => "",
                    },
                    page_tools::cap(&arguments.to_string(), 300)
                ),
            };
            let answer = budget
                .run("waiting for the user's answer", async {
                    Ok(asker.ask(&question).await)
                })
                .await?;
            match answer {
                Answer::Once | Answer::Always => {}
                Answer::Deny => return Err(question.refused_error(&what)),
                Answer::Failed(why) => return Err(question.unanswered_error(&what, &why)),
            }
        }
    }
    let answer = invoke(tab, &tool, arguments, budget).await?;
    answered(tab, &tool, answer)
}

/// Whether the user lets the origin of `url` claim its tools are read-only
/// (`[policy] page_tools_trust_claims`).
fn trusts_claims(policy: &crate::config::PolicyConfig, url: &str) -> bool {
    let Some(origin) = crate::policy::consent::origin_of(url) else {
        return false;
    };
    policy
        .page_tools_trust_claims
        .iter()
        .any(|trusted| crate::policy::consent::origin_of(trusted).as_deref() == Some(origin.as_str()))
}

/// The tool's arguments against its own schema (none: anything goes).
fn check_arguments(tool: &PageTool, arguments: &Value) -> Result<(), ActionError> {
    if tool.schema_too_large {
        return Err(ActionError::invalid(
            format!(
                "page tool {} has an input schema over {} characters, so its arguments cannot be checked",
                content::page(&tool.name),
                page_tools::MAX_SCHEMA
            ),
            "cdpilot does not call it; use the page's own controls instead.",
        ));
    }
    let Some(problem) = tool.schema.as_ref().and_then(|s| schema::mismatch(s, arguments)) else {
        return Ok(());
    };
    Err(ActionError::invalid(
        format!(
            "the arguments do not match page tool {}'s input schema: {}",
            content::page(&tool.name),
            content::page(&problem)
        ),
        "Pass arguments as its schema says (the snapshot lists its arguments), then call it again.",
    ))
}

/// Sends the invocation on the session of the tool's frame and waits for
/// its answer within the budget; past it (or cancelled), cancels it.
async fn invoke(
    tab: &Tab,
    tool: &PageTool,
    input: Value,
    budget: &Budget,
) -> Result<ToolResponded, ActionError> {
    let frame = tab.frame_by_id(&tool.frame_id)?;
    let step = "calling the page's tool";
    let invoked = frame
        .cdp(
            budget,
            step,
            InvokeTool {
                frame_id: tool.frame_id.clone(),
                tool_name: tool.name.clone(),
                input,
            },
        )
        .await?;
    let id = invoked.invocation_id;
    let answer = tab.state(|s| s.page_tools_mut().expect(&id, tool));
    let waited = budget
        .run("waiting for the page's tool to answer", async {
            answer
                .await
                .map_err(|_| ActionError::internal("the tab's event reader stopped"))
        })
        .await;
    match waited {
        Ok(answer) => Ok(answer),
        Err(mut error) => {
            tab.state(|s| s.page_tools_mut().forget(&id));
            let deadline = tokio::time::Instant::now() + CANCEL_BUDGET;
            let cancel = CancelInvocation {
                invocation_id: id.clone(),
            };
            match frame.session.call(cancel, deadline).await {
                Ok(_) => {
                    error.next_step = format!(
                        "cdpilot cancelled the invocation (WebMCP.cancelInvocation); the tab is usable. {}",
                        error.next_step
                    )
                }
                Err(e) => tracing::debug!("cancelling page tool invocation {id}: {e}"),
            }
            Err(error)
        }
    }
}

/// The tool's answer as a result, or its failure as an error; the page's
/// words inside the markers.
fn answered(tab: &Tab, tool: &PageTool, answer: ToolResponded) -> Result<ActionOutput, ActionError> {
    let name = content::page(&tool.name);
    match answer.status.as_str() {
        "Completed" => {
            let text = answer.output.as_ref().map(answer_text).unwrap_or_default();
            let shown = page_tools::cap_block(&text, MAX_ANSWER);
            Ok(ActionOutput::new(
                format!("page tool {name} answered:\n{}", content::page(&shown)),
                json!({
                    "tool": tool.name,
                    "frame": frame_label(tab, &tool.frame_id),
                    "chars": text.chars().count(),
                }),
            ))
        }
        "Canceled" => Err(ActionError::new(
            ErrorCode::Canceled,
            format!("page tool {name} was cancelled by the page"),
            "Take a browser_snapshot to see the page; call it again if it still makes sense.",
        )),
        // A form's tool submits its form: its document going away is the
        // submission's navigation, not a failure.
        page_tools::REMOVED if tool.declarative => Ok(ActionOutput::new(
            format!(
                "page tool {name} submitted its form; the page navigated to {}",
                tab.state(|s| s.url().to_owned())
            ),
            json!({
                "tool": tool.name,
                "frame": frame_label(tab, &tool.frame_id),
                "navigated": true,
            }),
        )),
        page_tools::REMOVED => Err(ActionError::new(
            ErrorCode::EvaluateError,
            format!("page tool {name} went away before it answered (the page unregistered it or navigated)"),
            "Take a browser_snapshot to see the page and the tools it offers now.",
        )),
        _ => {
            let thrown = answer
                .exception
                .as_ref()
                .and_then(|e| e.get("description"))
                .and_then(Value::as_str)
                .map(str::to_owned)
                .filter(|d| !d.is_empty())
                .unwrap_or(answer.error_text);
            Err(ActionError::new(
                ErrorCode::EvaluateError,
                format!(
                    "page tool {name} failed: {}",
                    content::page(&page_tools::cap_block(&thrown, 2000))
                ),
                "The page's own tool reported the error; check the arguments against the snapshot, or use the page's controls.",
            ))
        }
    }
}

/// A tool's output as text: the MCP shape's text parts, a string as it
/// is, anything else as JSON.
fn answer_text(output: &Value) -> String {
    if let Some(parts) = output.get("content").and_then(Value::as_array) {
        let texts: Vec<&str> = parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect();
        if !texts.is_empty() {
            return texts.join("\n");
        }
    }
    match output {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// No tool of that name: say which there are.
fn unknown(tab: &Tab, name: &str) -> ActionError {
    let names: Vec<String> = tab.state(|s| s.page_tools().tools().iter().map(|t| t.name.clone()).collect());
    let known = match names.is_empty() {
        true => "the page offers no tools now".to_owned(),
        false => format!("it offers: {}", content::page(&names.join(", "))),
    };
    ActionError::invalid(
        format!("the page offers no tool named {} ({known})", content::page(name)),
        "Take a browser_snapshot: its page tools section lists what the page offers now.",
    )
}

/// What `tab`'s frames offer now, as a client showing page tools as tools
/// of their own lists them: those of documents the URL rules deny left
/// out, nothing while the browser has no WebMCP.
pub(crate) fn offered(tab: &Tab) -> Vec<page_tools::Offered> {
    let (availability, tools) =
        tab.state(|s| (s.page_tools().availability(), s.page_tools().tools().to_vec()));
    if availability == Availability::Absent {
        return Vec::new();
    }
    let policy = tab.gate().policy();
    tools
        .into_iter()
        .filter(|tool| policy.judge(&frame_url(tab, &tool.frame_id)).decision != Decision::Deny)
        .filter_map(|tool| {
            Some(page_tools::Offered::of(
                &tool,
                numbered_label(tab, &tool.frame_id)?,
            ))
        })
        .collect()
}

/// The URL of the document in `frame_id` (the tab's when unknown).
fn frame_url(tab: &Tab, frame_id: &str) -> String {
    tab.state(|s| {
        s.frames()
            .get(frame_id)
            .map(|f| f.url().to_owned())
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| s.url().to_owned())
    })
}

/// The frame's name in what the agent reads: `top`, `f2` (numbered now if
/// no snapshot met it yet), or its frame id while the tab does not know
/// it (yet).
fn frame_label(tab: &Tab, frame_id: &str) -> String {
    numbered_label(tab, frame_id).unwrap_or_else(|| frame_id.to_owned())
}

/// `f2` (a number given now if the snapshot met the frame not yet), or
/// `top` for the main frame: a name that lasts as long as the document;
/// `None` for a frame not known (yet): its tools wait for it.
fn numbered_label(tab: &Tab, frame_id: &str) -> Option<String> {
    tab.state(|s| {
        if frame_id == s.main_frame_id() {
            return Some("top".to_owned());
        }
        s.frame_number_now(frame_id).map(|n| format!("f{n}"))
    })
}

/// Whether the page's document has `document.modelContext`: a browser
/// whose `WebMCP.enable` succeeds may still have the feature off (the
/// domain is there, the page API is not). Asked of a secure document
/// that registered nothing yet; `None` when it cannot tell (not a secure
/// context, which has no page tools anyway; no answer).
async fn page_has_model_context(tab: &Tab, budget: &Budget) -> Option<bool> {
    let probe = cdp::protocol::runtime::Evaluate {
        expression: "window.isSecureContext ? typeof document.modelContext : 'insecure'".into(),
        context_id: None,
        return_by_value: true,
        await_promise: false,
        user_gesture: false,
        repl_mode: false,
    };
    let answer = budget
        .cdp("asking the page for document.modelContext", &tab.session, probe)
        .await
        .ok()?;
    match answer.result.value.as_ref().and_then(Value::as_str)? {
        "insecure" => None,
        "undefined" => Some(false),
        _ => Some(true),
    }
}

/// The snapshot's `page tools:` section: the tools of allowed origins,
/// inside the markers, with what was left out said; once per tab, that the
/// browser has none. `None` when there is nothing to say.
pub(crate) async fn section(tab: &Tab, budget: &Budget) -> Option<String> {
    let (availability, none_yet) = tab.state(|s| {
        let t = s.page_tools();
        (t.availability(), t.tools().is_empty() && t.refused() == 0)
    });
    if availability == Availability::Available
        && none_yet
        && page_has_model_context(tab, budget).await == Some(false)
    {
        tab.state(|s| s.page_tools_mut().set_availability(Availability::Absent));
    }
    let (availability, absent_news, tools, refused) = tab.state(|s| {
        let news = s.page_tools_mut().say_absence();
        let t = s.page_tools();
        (t.availability(), news, t.tools().to_vec(), t.refused())
    });
    if availability == Availability::Absent {
        return absent_news.then(|| "page tools: not available in this browser".to_owned());
    }
    let policy = tab.gate().policy();
    let mut lines = Vec::new();
    let mut denied = 0;
    for tool in &tools {
        if policy.judge(&frame_url(tab, &tool.frame_id)).decision == Decision::Deny {
            denied += 1;
            continue;
        }
        let frame = frame_label(tab, &tool.frame_id);
        let place = if frame == "top" {
            String::new()
        } else {
            format!("[{frame}] ")
        };
        let mut line = format!(
            "{place}{}({}) — {}",
            tool.name,
            tool.argument_names().join(", "),
            page_tools::cap(&tool.description, page_tools::LISTED_DESCRIPTION)
        );
        if !tool.read_only {
            line.push_str(" [not read-only]");
        }
        if tool.declarative {
            line.push_str(" [form]");
        }
        lines.push(line);
    }
    if lines.is_empty() && denied == 0 && refused == 0 {
        return None;
    }
    let mut out = String::from("page tools (call with browser_page_tool; the page's own words):");
    if !lines.is_empty() {
        out.push('\n');
        out.push_str(&content::page(&lines.join("\n")));
    }
    if denied > 0 {
        out.push_str(&format!(
            "\n({denied} tool(s) of frames the URL rules deny are not listed)"
        ));
    }
    if refused > 0 {
        out.push_str(&format!(
            "\n({refused} more registration(s) ignored: cdpilot keeps at most {} tools per page, names up to {} characters)",
            page_tools::MAX_TOOLS,
            page_tools::MAX_NAME
        ));
    }
    Some(out)
}
