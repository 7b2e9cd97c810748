//! `browser_snapshot`'s declaration and handler: the page as text with a
//! ref on every element. The work is the `snapshot` module's.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::args::Common;
use crate::snapshot::View;
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::validate;
use crate::{ActionError, ActionOutput};

/// Arguments of `browser_snapshot`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct SnapshotArgs {
    /// Only frame f2 (as in refs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<String>,
    /// Only this subtree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Default 2000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_elements: Option<u32>,
    /// Text or /regex/: only matching lines, with ancestors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub find: Option<String>,
    /// Only what changed since the last snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<bool>,
    /// Continue a capped snapshot: list elements from this one on (its next_start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<u32>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

impl SnapshotArgs {
    /// What the call asks the snapshot to show.
    fn view(&self) -> View<'_> {
        View {
            frame: self.frame.as_deref(),
            selector: self.selector.as_deref(),
            find: self.find.as_deref(),
            diff: self.diff == Some(true),
            start: self.start.unwrap_or(0),
        }
    }
}

/// `browser_snapshot`: its declaration and checks (see `crate::tool`).
impl Tool for SnapshotArgs {
    const TOOL: Declaration = Declaration {
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
    };

    /// A selector that is not empty, a cap of at least 1, and the view's own
    /// rules (`snapshot::check`: find, diff, start).
    fn check(&self) -> Result<(), ActionError> {
        if let Some(s) = &self.selector {
            validate::non_empty("selector", s)?;
        }
        if self.max_elements == Some(0) {
            return Err(ActionError::invalid(
                "max_elements must be at least 1",
                "Leave max_elements out for the default cap.",
            ));
        }
        crate::snapshot::check(&self.view())
    }
}

impl TabTool for SnapshotArgs {
    /// Runs the tool in the call's tab, capped at `max_elements` or `[limits]
    /// snapshot_max_elements`.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        let cap = self
            .max_elements
            .unwrap_or(call.config.limits.snapshot_max_elements);
        let mut output = crate::snapshot::run(call.tab, &self.view(), cap, call.budget).await?;
        // `[tools] page_tools`: what the page offers as tools, after the tree.
        if call.config.tools.page_tools.on() {
            if let Some(section) = super::page_tool::section(call.tab, call.budget).await {
                output.text.push_str("\n\n");
                output.text.push_str(&section);
            }
        }
        Ok(output)
    }
}
