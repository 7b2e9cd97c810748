//! `browser_evaluate` on sessions of its own, so a script that never
//! returns cannot block the main session's commands.
//!
//! Uses the tab's evaluate lanes (`tab::lanes`): each a flattened session on the tab's target,
//! on the main connection when the transport has one pipe (the DevTools pipe
//! of a launched browser), else on a second WebSocket of its own (an
//! attached browser). A call takes a warm lane or opens
//! one, so concurrent calls on one tab never share a lane, and gives it back
//! after a call whose command was answered. A call that runs past its budget
//! (or is cancelled) discards only its own lane and, if the page's main
//! thread does not answer a probe within [`IDLE_PROBE`] (a script is still
//! running), sends `Runtime.terminateExecution` through the main session,
//! which Chrome answers even while the script spins. The termination ends
//! whatever the main thread runs; a call that was only awaiting a promise
//! leaves nothing running, so nothing is terminated, and another call's
//! promise on the tab goes on (terminating an idle page made Chrome fail
//! another call's awaited promise with an internal error, seen once under
//! load; tests/evaluate.rs checks both cases). (A script that opens a dialog returns at once with
//! `dialog_opened`: the engine does that for every action.)

use std::time::Duration;

use cdp::protocol::{dom, runtime, target};
use cdp::Connection;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::args::Common;
use crate::metrics::Metrics;
use crate::tab::lanes::{Lane, Leased};
use crate::tab::Tab;
use crate::tab_tools::element;
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, Switch, TabCall, TabTool, Tool};
use crate::validate;
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

/// Arguments of `browser_evaluate`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct EvaluateArgs {
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expression: Option<String>,
    /// Instead: a function's source, given ref's element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// f2 or a frame_tree id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<String>,
    /// Await a promise (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub await_promise: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_evaluate`: its declaration and checks (see `crate::tool`).
impl Tool for EvaluateArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_evaluate",
        verb: "eval",
        group: Group::Core,
        description: "Run JavaScript in the page; returns its JSON value (cut at 8 KB).",
        scope: Scope::Tab,
        runs_during_dialog: false,
        budget: DefaultBudget::Evaluate,
        changes_page: false,
        switch: Some(Switch {
            setting: "evaluate",
            on: |tools| tools.evaluate,
        }),
        effect: Effect::Acts,
    };

    /// An expression or a function; a ref only with a function, not with a
    /// frame.
    fn check(&self) -> Result<(), ActionError> {
        match (&self.expression, &self.function) {
            (Some(_), Some(_)) => {
                return Err(ActionError::invalid(
                    "pass either expression or function, not both",
                    "Use expression for a JS expression, function for a function source.",
                ))
            }
            (None, None) => {
                return Err(ActionError::invalid(
                    "browser_evaluate needs an expression (or a function)",
                    "Pass expression, e.g. {\"expression\": \"document.title\"}.",
                ))
            }
            (Some(e), None) => validate::non_empty("expression", e)?,
            (None, Some(f)) => validate::non_empty("function", f)?,
        }
        if self.reference.is_some() && self.frame.is_some() {
            return Err(ActionError::invalid(
                "pass ref or frame, not both (a ref already names its frame)",
                "Leave frame out when you pass ref.",
            ));
        }
        if let Some(r) = &self.reference {
            validate::reference(r)?;
            if self.function.is_none() {
                return Err(ActionError::invalid(
                    "ref needs a function to receive the element",
                    "Pass function, e.g. {\"function\": \"el => el.textContent\", \"ref\": \"e12\"}.",
                ));
            }
        }
        Ok(())
    }
}

impl TabTool for EvaluateArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        run(call.tab, self, call.budget, call.metrics).await
    }
}

/// Values whose JSON is longer than this come back as a preview.
pub const MAX_VALUE_CHARS: usize = 8 * 1024;

/// How long the page's main thread has to answer a probe after a call ran
/// out of budget or was cancelled: an answer means no script is running
/// (the call was awaiting a promise), and nothing is terminated; none, and
/// the script still running is terminated.
const IDLE_PROBE: Duration = Duration::from_millis(250);

/// The cleanup budget of `Runtime.terminateExecution`, sent after the
/// call's own budget has run out (Chrome answers it even while the script
/// spins, so this is slack, not a wait).
const TERMINATE_BUDGET: Duration = Duration::from_secs(2);

pub async fn run(
    tab: &Tab,
    args: &EvaluateArgs,
    budget: &Budget,
    metrics: &Metrics,
) -> Result<ActionOutput, ActionError> {
    let Some(reference) = &args.reference else {
        return evaluate(tab, args, None, budget, metrics).await;
    };
    let element = element::by_ref(tab, reference, budget).await?;
    // A password-like field's value never comes back (issue 21): read
    // before and after the script (which may change it), masked in its
    // result as in snapshots.
    let before = secret_value(&element, budget).await?;
    let output = if element.frame.session.id() != tab.session.id() {
        // Inside a cross-origin frame: the evaluate connection is
        // attached to the page, not to the frame's process, so the
        // call goes through the frame's own session.
        in_frame(&element, args, budget).await
    } else {
        evaluate(tab, args, Some(&element), budget, metrics).await
    };
    let after = secret_value(&element, budget).await.ok().flatten();
    let secrets: Vec<String> = before.into_iter().chain(after).collect();
    Ok(mask(output?, &secrets))
}

/// The value of a password-like field (`type=password`, or `autocomplete`
/// naming a password, a one-time code, a card number or security code), if
/// it has one: the serializer's test (`secretLike`).
async fn secret_value(element: &element::Element, budget: &Budget) -> Result<Option<String>, ActionError> {
    const SECRET: &str = r#"function () {
        if (this.tagName !== 'INPUT' || !this.value) return null;
        const autocomplete = this.getAttribute('autocomplete') || '';
        const secret = this.type === 'password'
            || /(?:^|\s)(?:current-password|new-password|one-time-code|cc-number|cc-csc)(?:\s|$)/i.test(autocomplete);
        return secret ? this.value : null;
    }"#;
    let value = element
        .call(budget, "reading the field", SECRET, Vec::new())
        .await?;
    Ok(value.as_str().map(str::to_owned))
}

/// `output` with each of `secrets` (raw, and as JSON escapes it) replaced
/// by `••••`, in the text and in every string of the data.
fn mask(mut output: ActionOutput, secrets: &[String]) -> ActionOutput {
    fn masked(text: &str, secrets: &[String]) -> String {
        let mut text = text.to_owned();
        for secret in secrets {
            let escaped = serde_json::to_string(secret).unwrap_or_default();
            // Never empty: a secret is a non-empty string, so `"…"`.
            let escaped = &escaped[1..escaped.len() - 1];
            for form in [secret.as_str(), escaped] {
                if !form.is_empty() && text.contains(form) {
                    text = text.replace(form, "••••");
                }
            }
        }
        text
    }
    fn walk(value: Value, secrets: &[String]) -> Value {
        match value {
            Value::String(s) => Value::String(masked(&s, secrets)),
            Value::Array(items) => Value::Array(items.into_iter().map(|v| walk(v, secrets)).collect()),
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(k, v)| (masked(&k, secrets), walk(v, secrets)))
                    .collect(),
            ),
            other => other,
        }
    }
    if secrets.is_empty() {
        return output;
    }
    output.text = masked(&output.text, secrets);
    output.data = walk(std::mem::take(&mut output.data), secrets);
    output
}

async fn evaluate(
    tab: &Tab,
    args: &EvaluateArgs,
    element: Option<&element::Element>,
    budget: &Budget,
    metrics: &Metrics,
) -> Result<ActionOutput, ActionError> {
    let element = match element {
        Some(element) => Some(element.backend_node_id(budget).await?),
        None => None,
    };
    if let Some(name) = &args.frame {
        let frame = tab.frame_named(name)?;
        if frame.number.is_some() || frame.frame_id != tab.state(|s| s.main_frame_id().to_owned()) {
            return in_frame_context(tab, &frame, args, budget).await;
        }
    }
    let lane = lease(tab, budget).await?;
    let session = lane.session();
    let await_promise = args.await_promise.unwrap_or(true);
    let work = async {
        let evaluated = match (&args.expression, &args.function, element) {
            (Some(expression), _, _) => console(session, expression, await_promise, budget.deadline()).await,
            (None, Some(function), Some(backend_node_id)) => {
                let node = session
                    .call(
                        dom::ResolveNode {
                            backend_node_id,
                            execution_context_id: None,
                            object_group: None,
                        },
                        budget.deadline(),
                    )
                    .await
                    .map_err(|e| budget.map_cdp("finding the element in the page", e))?;
                let object_id = node.object.object_id.unwrap_or_default();
                session
                    .call(
                        runtime::CallFunctionOn {
                            function_declaration: function.clone(),
                            object_id: Some(object_id.clone()),
                            arguments: vec![runtime::CallArgument {
                                value: None,
                                object_id: Some(object_id),
                            }],
                            return_by_value: true,
                            await_promise,
                            user_gesture: true,
                            ..Default::default()
                        },
                        budget.deadline(),
                    )
                    .await
            }
            (None, Some(function), None) => {
                session
                    .call(
                        runtime::Evaluate {
                            expression: format!("({function})()"),
                            context_id: None,
                            return_by_value: true,
                            await_promise,
                            user_gesture: true,
                            repl_mode: false,
                        },
                        budget.deadline(),
                    )
                    .await
            }
            (None, None, _) => return Err(ActionError::invalid("nothing to evaluate", "Pass expression.")),
        };
        evaluated.map_err(|e| budget.map_cdp("running the script", e))
    };
    let outcome = budget.run("running the script", work).await;
    let evaluated = match outcome {
        Ok(evaluated) => evaluated,
        Err(error) => {
            // The lane is discarded (dropped unreturned); other calls keep theirs.
            drop(lane);
            // Out of budget or cancelled: the script may still be running.
            if (budget.remaining().is_zero() || budget.is_canceled()) && still_running(tab).await {
                terminate(tab).await;
                metrics.script_terminated();
            }
            return Err(error);
        }
    };
    lane.give_back();
    finish(evaluated)
}

/// Runs `expression` as DevTools' console does (REPL mode): a top-level
/// `let`/`const`/`class` may be declared again in the same page, and
/// `await` used at the top level. Chrome answers REPL mode with the
/// completion value as an object (a promise unawaited), so it is then
/// read by value: awaited when it is a promise and `await_promise`.
/// Every step runs within the call's budget (and is terminated with it).
async fn console(
    session: &cdp::Session,
    expression: &str,
    await_promise: bool,
    deadline: tokio::time::Instant,
) -> Result<runtime::Evaluated, cdp::CdpError> {
    let evaluated = session
        .call(
            runtime::Evaluate {
                expression: expression.to_owned(),
                context_id: None,
                return_by_value: false,
                // REPL mode's own wrapper (top-level `await`).
                await_promise: true,
                user_gesture: true,
                repl_mode: true,
            },
            deadline,
        )
        .await?;
    let Some(object_id) = evaluated.result.object_id.clone() else {
        return Ok(evaluated);
    };
    let read = async {
        if evaluated.exception_details.is_some() {
            return Ok(evaluated);
        }
        if await_promise && evaluated.result.subtype.as_deref() == Some("promise") {
            let settled = runtime::AwaitPromise {
                promise_object_id: object_id.clone(),
                return_by_value: true,
            };
            return session.call(settled, deadline).await;
        }
        let value = runtime::CallFunctionOn {
            function_declaration: "function () { return this; }".into(),
            object_id: Some(object_id.clone()),
            return_by_value: true,
            ..Default::default()
        };
        session.call(value, deadline).await
    };
    let answer = read.await;
    let release = runtime::ReleaseObject { object_id };
    if let Err(error) = session.call(release, deadline).await {
        tracing::debug!("releasing an evaluated object failed: {error}");
    }
    answer
}

/// Calls `function` with an element of a cross-origin frame, through that
/// frame's session on the main connection (a runaway script there is still
/// bounded by the budget, but it is not terminated).
async fn in_frame(
    element: &element::Element,
    args: &EvaluateArgs,
    budget: &Budget,
) -> Result<ActionOutput, ActionError> {
    let function = args.function.clone().unwrap_or_default();
    // The page's own world, as for elements of the main frame (the ref's
    // object lives in cdpilot's isolated world).
    let backend_node_id = element.backend_node_id(budget).await?;
    let node = element
        .frame
        .cdp(
            budget,
            "finding the element in the page",
            dom::ResolveNode {
                backend_node_id,
                execution_context_id: None,
                object_group: None,
            },
        )
        .await?;
    let object_id = node.object.object_id.unwrap_or_default();
    let evaluated = element
        .frame
        .cdp(
            budget,
            "running the script",
            runtime::CallFunctionOn {
                function_declaration: function,
                object_id: Some(object_id.clone()),
                arguments: vec![runtime::CallArgument {
                    value: None,
                    object_id: Some(object_id),
                }],
                return_by_value: true,
                await_promise: args.await_promise.unwrap_or(true),
                user_gesture: true,
                ..Default::default()
            },
        )
        .await?;
    finish(evaluated)
}

/// Runs an expression or function in a subframe's own page world, through
/// the session that owns the frame (an OOPIF's own, or the tab's with the
/// frame's script context).
async fn in_frame_context(
    tab: &Tab,
    frame: &crate::tab::FrameRef,
    args: &EvaluateArgs,
    budget: &Budget,
) -> Result<ActionOutput, ActionError> {
    let context_id = tab.page_context(frame)?;
    let expression = match (&args.expression, &args.function) {
        (Some(expression), _) => expression.clone(),
        (None, Some(function)) => format!("({function})()"),
        (None, None) => return Err(ActionError::invalid("nothing to evaluate", "Pass expression.")),
    };
    let evaluated = frame
        .cdp(
            budget,
            "running the script",
            runtime::Evaluate {
                expression,
                context_id,
                return_by_value: true,
                await_promise: args.await_promise.unwrap_or(true),
                user_gesture: true,
                repl_mode: false,
            },
        )
        .await?;
    finish(evaluated)
}

/// A lane for one call: a warm one of the tab's, or a new one.
async fn lease<'t>(tab: &'t Tab, budget: &Budget) -> Result<Leased<'t>, ActionError> {
    let lane = match tab.evaluate_lanes.take() {
        Some(lane) => lane,
        None => open_lane(tab, budget).await?,
    };
    Ok(tab.evaluate_lanes.lend(lane))
}

/// Attaches a flattened session of the lane's own to the tab's target: on
/// a connection of its own when the transport can open a second pipe, else
/// on the tab's connection. The one place a lane is made.
async fn open_lane(tab: &Tab, budget: &Budget) -> Result<Lane, ActionError> {
    let main = tab.session.connection();
    let transport = main.transport().clone();
    let own = if transport.capabilities().parallel_pipes {
        let step = "opening the evaluate connection";
        let conn = budget
            .run(step, async {
                Connection::open(transport)
                    .await
                    .map_err(|e| budget.map_cdp(step, e))
            })
            .await?;
        Some(conn)
    } else {
        None
    };
    let conn = own.clone().unwrap_or_else(|| main.clone());
    let step = "opening the evaluate session";
    let attached = budget
        .cdp(
            step,
            &conn.browser(),
            target::AttachToTarget {
                target_id: tab.target_id.clone(),
                flatten: true,
            },
        )
        .await?;
    let session = conn.session(attached.session_id);
    Ok(Lane::new(own, session))
}

/// Stops whatever the page's main thread is running (the timed-out call's
/// lane is already discarded by its caller).
/// Whether the page's main thread is busy: it does not evaluate `0` within
/// [`IDLE_PROBE`] (a spinning script holds it; an awaited promise does not).
async fn still_running(tab: &Tab) -> bool {
    let probe = tab
        .session
        .call(
            runtime::Evaluate {
                expression: "0".into(),
                context_id: None,
                return_by_value: true,
                await_promise: false,
                user_gesture: false,
                repl_mode: false,
            },
            tokio::time::Instant::now() + IDLE_PROBE,
        )
        .await;
    probe.is_err()
}

async fn terminate(tab: &Tab) {
    let sent = tab
        .session
        .call(
            runtime::TerminateExecution {},
            tokio::time::Instant::now() + TERMINATE_BUDGET,
        )
        .await;
    if let Err(error) = sent {
        tracing::warn!("stopping the runaway script failed: {error}");
    }
}

/// A script's answer: its value, or `evaluate_error` for a throw.
fn finish(evaluated: runtime::Evaluated) -> Result<ActionOutput, ActionError> {
    if let Some(exception) = evaluated.exception_details {
        let description = exception.message();
        let mut lines = description.lines();
        let message = lines.next().unwrap_or("the script threw").to_owned();
        let stack = lines.next().map(str::trim).unwrap_or_default().to_owned();
        return Err(ActionError::new(
            ErrorCode::EvaluateError,
            // What the page's script threw: enclosed in the session's markers.
            crate::content::page(&if stack.is_empty() {
                message
            } else {
                format!("{message} ({stack})")
            }),
            "Fix the script and run it again.",
        ));
    }
    Ok(output(evaluated.result))
}

fn output(result: runtime::RemoteObject) -> ActionOutput {
    let kind = match result.subtype.as_deref() {
        Some(subtype) if result.kind == "object" => subtype.to_owned(),
        _ => result.kind.clone(),
    };
    // Infinity, -Infinity, NaN, -0 and BigInts have no JSON form: Chrome
    // sends their JS literal (`-0`, `123n`) instead of a value. They come
    // back as that string, `type` saying number or bigint (issue 8).
    if let Some(literal) = result.unserializable_value {
        return ActionOutput::new(
            format!("Result ({kind}): {literal}"),
            json!({ "value": literal, "type": kind, "truncated": false }),
        );
    }
    let value = result.value.unwrap_or(Value::Null);
    let json = serde_json::to_string(&value).unwrap_or_default();
    let (shown, truncated) = if json.len() > MAX_VALUE_CHARS {
        let mut end = MAX_VALUE_CHARS;
        while !json.is_char_boundary(end) {
            end -= 1;
        }
        (Value::String(json[..end].to_owned()), true)
    } else {
        (value, false)
    };
    let text = if truncated {
        format!(
            "Result ({kind}, {} chars of JSON; first {MAX_VALUE_CHARS} shown, truncated):\n{}",
            json.len(),
            crate::content::page(shown.as_str().unwrap_or_default())
        )
    } else if kind == "undefined" {
        "Result: undefined".to_owned()
    } else {
        // The value came from the page: enclosed in the session's markers.
        format!("Result ({kind}): {}", crate::content::page(&json))
    };
    ActionOutput::new(
        text,
        json!({ "value": shown, "type": kind, "truncated": truncated }),
    )
}
