//! `browser_dialog`: answer a pending dialog (native or bridged). The work
//! is the dialog module's; this file turns it into the tool's result.

use serde_json::json;

use crate::calls::{DialogAnswer, DialogArgs};
use crate::dialogs::answer;
use crate::tab::Tab;
use crate::tool::{Before, Declaration, DefaultBudget, Effect, Group, Scope, TabCall};
use crate::{ActionError, ActionOutput, Budget};

/// `browser_dialog`'s declaration (see `crate::tool`).
pub(crate) const TOOL: Declaration = Declaration {
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
    before: Before::NOTHING,
};

/// Nothing to check beyond the schema.
pub(crate) fn check(_: &DialogArgs) -> Result<(), ActionError> {
    Ok(())
}

/// Runs the tool in the call's tab.
pub(crate) async fn perform(call: &TabCall<'_>, args: &DialogArgs) -> Result<ActionOutput, ActionError> {
    run(call.tab, args, call.budget).await
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
