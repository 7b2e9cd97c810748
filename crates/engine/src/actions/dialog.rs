//! `browser_dialog`: answer a pending native dialog.

use serde_json::json;

use crate::action::{DialogAnswer, DialogArgs};
use crate::tab::Tab;
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

pub async fn run(tab: &Tab, args: &DialogArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let accept = args.action == DialogAnswer::Accept;
    // Pick the dialog and mark who answers it, so the close event is
    // recorded as closed by the agent.
    let dialog = tab.state(|s| {
        let pending = &mut s.dialogs.pending;
        let index = match &args.dialog_id {
            Some(id) => pending.iter().position(|d| &d.id == id),
            None => (!pending.is_empty()).then_some(0),
        }?;
        pending[index].answering = Some("agent".into());
        Some(pending[index].clone())
    });
    let Some(dialog) = dialog else {
        let message = match &args.dialog_id {
            Some(id) => format!("no pending dialog has the id {id}"),
            None => "no dialog is open".to_owned(),
        };
        return Err(ActionError::new(
            ErrorCode::NoDialog,
            message,
            "Continue with the page; take a browser_snapshot to see it.",
        ));
    };
    if dialog.orphaned {
        tab.state(|s| {
            if let Some(d) = s.dialogs.pending.iter_mut().find(|d| d.id == dialog.id) {
                d.answering = None;
            }
        });
        return Err(crate::dialogs::pending_error(&dialog));
    }
    let session = tab.session.connection().session(dialog.session.clone());
    let step = "answering the dialog";
    budget
        .run(step, async {
            tab.answer_dialog(
                &session,
                &dialog,
                accept,
                args.prompt_text.as_deref(),
                budget.deadline(),
            )
            .await
            .map_err(|e| budget.map_cdp(step, e))
        })
        .await?;
    let verb = if accept { "Accepted" } else { "Dismissed" };
    Ok(ActionOutput::new(
        format!("{verb} the {} dialog {:?}.", dialog.kind, dialog.message),
        json!({ "ok": true, "dialog": dialog }),
    ))
}
