//! `browser_cdp`: the escape hatch for the long tail: one raw CDP command
//! on the tab's session, or on a frame's own session (cross-origin frames).
//! Turned off with `tools.cdp = false`.

use serde_json::{json, Value};

use crate::action::CdpArgs;
use crate::tab::Tab;
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

/// Longest result text shown to the model; the full result is in the data.
const MAX_TEXT: usize = 20_000;

pub async fn run(tab: &Tab, args: &CdpArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let session = match &args.frame {
        Some(name) => tab.frame_named(name)?.session,
        None => tab.session.clone(),
    };
    let params = args
        .params
        .clone()
        .map(Value::Object)
        .unwrap_or_else(|| json!({}));
    let step = format!("running {}", args.method);
    let result = budget
        .run(&step, async {
            session
                .send(&args.method, params, budget.deadline())
                .await
                .map_err(|e| match e {
                    cdp::CdpError::Protocol { message, .. } => ActionError::new(
                        ErrorCode::InvalidArgument,
                        format!("Chrome refused {}: {message}", args.method),
                        "Check the method name and its parameters in the DevTools protocol.",
                    ),
                    other => budget.map_cdp(&step, other),
                })
        })
        .await?;
    let mut text = serde_json::to_string(&result).unwrap_or_default();
    if text.len() > MAX_TEXT {
        let mut end = MAX_TEXT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text += "… (truncated; the whole result is in structuredContent)";
    }
    Ok(ActionOutput::new(text, json!({ "result": result })))
}
