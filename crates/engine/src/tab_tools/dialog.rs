//! `browser_dialog`: answer a pending dialog (native or bridged). The work
//! is the dialog module's; this file turns it into the tool's result.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::args::Common;
use crate::dialogs::answer;
use crate::tab::Tab;
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::{ActionError, ActionOutput, Budget};

// How to answer a dialog.
#[allow(missing_docs)] // schema-visible: see `crate::tool`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DialogAnswer {
    Accept,
    Dismiss,
}

/// Arguments of `browser_dialog`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DialogArgs {
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    pub action: DialogAnswer,
    /// Answer to a prompt().
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_text: Option<String>,
    /// Default the oldest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialog_id: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_dialog`: its declaration and checks (see `crate::tool`).
impl Tool for DialogArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_dialog",
        verb: "dialog",
        group: Group::Core,
        description: "Accept or dismiss the pending alert/confirm/prompt.",
        scope: Scope::Tab,
        runs_during_dialog: true,
        budget: DefaultBudget::Action,
        changes_page: true,
        switch: None,
        effect: Effect::AnswersDialog,
    };
}

impl TabTool for DialogArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        run(call.tab, self, call.budget).await
    }
}

pub async fn run(tab: &Tab, args: &DialogArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let accept = args.action == DialogAnswer::Accept;
    let dialog = answer::by_agent(
        &tab.dialogs(),
        tab.session.connection(),
        args.dialog_id.as_deref(),
        accept,
        args.prompt_text.as_deref(),
        budget,
    )
    .await?;
    let verb = if accept { "Accepted" } else { "Dismissed" };
    Ok(ActionOutput::new(
        format!(
            "{verb} the {} dialog {}.",
            dialog.kind,
            crate::content::page(&format!("\"{}\"", dialog.message))
        ),
        json!({ "ok": true, "dialog": dialog }),
    ))
}
