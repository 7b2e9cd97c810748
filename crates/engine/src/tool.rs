//! What a tool declares about itself, in its own file beside its handler:
//! a [`Declaration`] (name, CLI verb, group, description, scope, dialog
//! behaviour, default budget, whether it changes the page, the `[tools]`
//! switch that turns it off), and the `TabCall` a
//! tab-scoped handler runs with.
//!
//! This module is the vocabulary only; the list of declared tools (and
//! everything generated from it: the `Action` enum, the registry, the
//! checks and the dispatch) is `crate::tools`. It must not import any
//! tool: every tool imports it.

use crate::config::{Config, ToolsConfig};
use crate::metrics::Metrics;
use crate::secrets::Secrets;
use crate::tab::Tab;
use crate::Budget;

/// Tool groups (`docs/src/spec/tools.md`, v2): `core` is always offered;
/// `[tools] caps` turns on the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Always offered.
    Core,
    /// Network tools.
    Network,
    /// Cookies and storage.
    Storage,
    /// PDF output.
    Pdf,
    /// Device emulation.
    Emulation,
    /// Tools pages offer (WebMCP): offered by `[tools] page_tools`, not
    /// `caps`, and outside core's definitions budget.
    Page,
}

impl Group {
    /// Every group.
    pub const ALL: &'static [Group] = &[
        Group::Core,
        Group::Network,
        Group::Storage,
        Group::Pdf,
        Group::Emulation,
        Group::Page,
    ];

    /// The name `[tools] caps` uses.
    pub fn name(self) -> &'static str {
        match self {
            Group::Core => "core",
            Group::Network => "network",
            Group::Storage => "storage",
            Group::Pdf => "pdf",
            Group::Emulation => "emulation",
            Group::Page => "page",
        }
    }

    /// Whether `caps` (the `[tools] caps` list) turns this group on (the
    /// page group's one switch, `[tools] page_tools`, decides for it).
    pub fn on(self, caps: &[String]) -> bool {
        matches!(self, Group::Core | Group::Page) || caps.iter().any(|c| c == "all" || c == self.name())
    }
}

/// Where a tool acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// In one tab (the call's `tab`, default the active one): the page's
    /// URL is judged first, the dialog rules apply, the request stage's
    /// blocks are reported.
    Tab,
    /// On the session's browser context as a whole (its tabs, its
    /// cookies): no tab is picked for it.
    Session,
}

/// Which `[limits]` setting is a tool's budget when a call gives no
/// `timeout_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultBudget {
    /// `[limits] timeout_ms`.
    Action,
    /// `[limits] wait_timeout_ms`.
    Wait,
    /// `[limits] evaluate_timeout_ms`.
    Evaluate,
    /// `[handoff] timeout_s` (a person takes minutes).
    Handoff,
}

impl DefaultBudget {
    /// The configured milliseconds.
    pub fn ms(self, config: &Config) -> u64 {
        let limits = &config.limits;
        match self {
            DefaultBudget::Action => limits.timeout_ms,
            DefaultBudget::Wait => limits.wait_timeout_ms,
            DefaultBudget::Evaluate => limits.evaluate_timeout_ms,
            DefaultBudget::Handoff => config.handoff.timeout_s.saturating_mul(1000),
        }
    }
}

/// One tool as it declares itself, beside its handler
/// (`pub(crate) const TOOL: Declaration` in its file).
#[derive(Debug, Clone, Copy)]
pub struct Declaration {
    /// The tool's name (`browser_click`).
    pub name: &'static str,
    /// The CLI's subcommand that runs it (`cdpilot click`).
    pub verb: &'static str,
    /// The group that offers it.
    pub group: Group,
    /// What a model reads to choose the tool: what it does and when.
    pub description: &'static str,
    /// Where it acts.
    pub scope: Scope,
    /// May run while a native dialog blocks the page.
    pub runs_during_dialog: bool,
    /// Its budget when the call gives no `timeout_ms`.
    pub budget: DefaultBudget,
    /// Its call changes what the page shows (the dashboard takes a
    /// thumbnail after it).
    pub changes_page: bool,
    /// The `[tools]` setting that turns it off, beside its group (`None`:
    /// its group alone decides).
    pub switch: Option<Switch>,
}

/// A `[tools]` setting that turns one tool off (`[tools] evaluate = false`).
#[derive(Debug, Clone, Copy)]
pub struct Switch {
    /// The setting's name under `[tools]`.
    pub setting: &'static str,
    /// Whether the setting leaves the tool on.
    pub on: fn(&ToolsConfig) -> bool,
}

impl Switch {
    /// What keeps the tool off in `config`, or `None` when the switch
    /// leaves it on.
    pub fn why_off(&self, config: &ToolsConfig) -> Option<String> {
        (!(self.on)(config)).then(|| format!("[tools] {} = false turns it off", self.setting))
    }
}

/// What a tab-scoped handler runs with: the tab (picked, judged and
/// supervised by the session), the call's budget, and the session's
/// configuration, secrets and metrics.
pub(crate) struct TabCall<'a> {
    pub tab: &'a Tab,
    pub budget: &'a Budget,
    pub config: &'a Config,
    pub secrets: &'a Secrets,
    pub metrics: &'a Metrics,
}
