//! What results and errors say about dialogs: `dialog_pending` while one
//! blocks the page, and `dialog_opened` for those that opened during an
//! action. Wording only; owns no state.

use serde_json::{json, Value};

use super::Dialog;
use crate::Failure;
use crate::{ActionError, ActionOutput};

/// "an alert", "a confirm", …
fn with_article(kind: &str) -> String {
    let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {kind}")
}

/// `dialog_pending`: the page is blocked by `dialog`.
pub fn pending_error(dialog: &Dialog) -> ActionError {
    if dialog.orphaned {
        return ActionError::of(
            Failure::DialogPending {
                dialog: dialog.id.clone(),
            },
            format!(
                "{} dialog ({}) \"{}\" blocks the page; it opened before the connection to the browser dropped, so it can no longer be answered",
                with_article(&dialog.kind), dialog.id, dialog.message
            ),
            "Leave the page with browser_navigate (a URL, or history: reload); the dialog closes with it.",
        );
    }
    ActionError::of(
        Failure::DialogPending {
            dialog: dialog.id.clone(),
        },
        format!(
            "{} dialog ({}) \"{}\" is blocking the page",
            with_article(&dialog.kind),
            dialog.id,
            dialog.message
        ),
        "Answer it with browser_dialog (accept or dismiss), then retry.",
    )
}

/// `{id, type, message}`, as results name a dialog.
fn summary(dialog: &Dialog) -> Value {
    json!({ "id": dialog.id, "type": dialog.kind, "message": dialog.message })
}

/// "an alert dialog (d-1): \"Hello\"", joined with "and".
fn described(dialogs: &[Dialog]) -> String {
    dialogs
        .iter()
        .map(|d| {
            // The message is the page's: enclosed in the session's markers.
            let message = crate::content::page(&format!("\"{}\"", d.message));
            format!("{} dialog ({}): {message}", with_article(&d.kind), d.id)
        })
        .collect::<Vec<_>>()
        .join(", and ")
}

/// Adds `dialogs` (those that opened during the action and still block the
/// page, oldest first; none is fine) to an action's result:
/// `dialog_opened` names the first, `dialogs_opened` all when there are
/// several.
pub fn with_opened(mut output: ActionOutput, dialogs: &[Dialog]) -> ActionOutput {
    let Some(first) = dialogs.first() else {
        return output;
    };
    let it = if dialogs.len() == 1 {
        "It blocks"
    } else {
        "They block"
    };
    output.text = format!(
        "{}\nThe page then opened {}. {it} the page until answered: use browser_dialog.",
        output.text,
        described(dialogs)
    );
    output.data["dialog_opened"] = summary(first);
    if dialogs.len() > 1 {
        output.data["dialogs_opened"] = dialogs.iter().map(summary).collect();
    }
    output
}

/// The result of an action that a dialog interrupted: the action was done
/// up to the point where the page opened `dialogs` (at least one), which now
/// block it.
pub fn opened_output(dialogs: &[Dialog]) -> ActionOutput {
    let it = if dialogs.len() == 1 {
        "It blocks"
    } else {
        "They block"
    };
    let mut data = json!({ "ok": true });
    if let Some(first) = dialogs.first() {
        data["dialog_opened"] = summary(first);
    }
    if dialogs.len() > 1 {
        data["dialogs_opened"] = dialogs.iter().map(summary).collect();
    }
    ActionOutput::new(
        format!(
            "The page opened {}. {it} the page until answered: use browser_dialog.",
            described(dialogs)
        ),
        data,
    )
}
