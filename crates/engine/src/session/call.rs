//! What the session asks of a parsed call ([`Call`], answered by the list's
//! `Action` enum above the session, `crate::calls`), a session-scoped
//! tool's handler ([`SessionTool`]) and what it runs with ([`SessionCall`]). The session never
//! matches on a tool: it asks the call and the tool's declaration.

use std::future::Future;
use std::sync::Arc;

use super::{Context, Session};
use crate::args::Common;
use crate::config::Config;
use crate::policy::Consent;
use crate::tool::{TabCall, Tool};
use crate::{ActionError, ActionOutput, Budget};

/// A parsed call of a declared tool, as the session sees it.
pub(crate) trait Call: Sync {
    /// The arguments every tool takes (the tab, the budget).
    fn common(&self) -> &Common;

    /// Where the call sends the browser, if it says.
    fn destination(&self) -> Option<&str>;

    /// What the configuration says of the call before anything is opened.
    fn admit(&self, config: &Config) -> Result<(), ActionError>;

    /// Runs a tab-scoped tool's handler.
    fn in_tab(&self, call: &TabCall<'_>) -> impl Future<Output = Result<ActionOutput, ActionError>> + Send;

    /// Runs a session-scoped tool's handler.
    fn in_session(
        &self,
        call: &SessionCall<'_>,
    ) -> impl Future<Output = Result<ActionOutput, ActionError>> + Send;
}

/// A session-scoped tool's handler (its arguments' type implements
/// `crate::tool::Tool` too): runs the call on the session's context.
pub(crate) trait SessionTool: Tool {
    /// Runs the call.
    fn perform(
        &self,
        call: &SessionCall<'_>,
    ) -> impl Future<Output = Result<ActionOutput, ActionError>> + Send;
}

/// What a session-scoped handler runs with: the session's context (its
/// tabs, its cookies), its consent, its configuration, and the call's
/// budget.
pub(crate) struct SessionCall<'a> {
    pub context: &'a Arc<Context>,
    pub consent: &'a Arc<Consent>,
    pub config: &'a Config,
    /// The session itself (`browser_handoff` waits in it).
    pub session: &'a Session,
    pub budget: &'a Budget,
}
