//! `browser_snapshot`'s declaration and handler: the page as text with a
//! ref on every element. The work is the `snapshot` module's.

use crate::calls::SnapshotArgs;
use crate::tool::{Before, Declaration, DefaultBudget, Effect, Group, Scope, TabCall};
use crate::validate;
use crate::{ActionError, ActionOutput};

/// `browser_snapshot`'s declaration (see `crate::tool`).
pub(crate) const TOOL: Declaration = Declaration {
    name: "browser_snapshot",
    verb: "snapshot",
    group: Group::Core,
    description: "The page as an accessibility tree, a line per element: role \"name\" [ref=eN]. Refs last until the page navigates.",
    scope: Scope::Tab,
    runs_during_dialog: true,
    budget: DefaultBudget::Action,
    changes_page: false,
    switch: None,
    effect: Effect::Reads,
    before: Before::NOTHING,
};

/// A selector that is not empty, a cap of at least 1, and the view's own
/// rules (`snapshot::check`: find, diff, start).
pub(crate) fn check(a: &SnapshotArgs) -> Result<(), ActionError> {
    if let Some(s) = &a.selector {
        validate::non_empty("selector", s)?;
    }
    if a.max_elements == Some(0) {
        return Err(ActionError::invalid(
            "max_elements must be at least 1",
            "Leave max_elements out for the default cap.",
        ));
    }
    crate::snapshot::check(a)
}

/// Runs the tool in the call's tab, capped at `max_elements` or `[limits]
/// snapshot_max_elements`.
pub(crate) async fn perform(call: &TabCall<'_>, args: &SnapshotArgs) -> Result<ActionOutput, ActionError> {
    let cap = args
        .max_elements
        .unwrap_or(call.config.limits.snapshot_max_elements);
    let mut output = crate::snapshot::run(call.tab, args, cap, call.budget).await?;
    // `[tools] page_tools`: what the page offers as tools, after the tree.
    if call.config.tools.page_tools.on() {
        if let Some(section) = super::page_tool::section(call.tab, call.budget).await {
            output.text.push_str("\n\n");
            output.text.push_str(&section);
        }
    }
    Ok(output)
}
