//! What a tool is: its arguments' type implements [`Tool`] in the tool's
//! own file, carrying its [`Declaration`] (name, CLI verb, group,
//! description, scope, dialog behaviour, default budget, whether it changes
//! the page, the `[tools]` switch that turns it off, what it does to the
//! page ([`Effect`]: read, act, leave, answer its dialog)), its checks,
//! where a call sends the browser, what the configuration admits, and its
//! handler; and the [`TabCall`] a tab-scoped handler runs with. One line
//! in the list (`crate::list`) registers a tool.
//!
//! The session asks a tool's declaration and its call every question it
//! has about it (may it run while a person holds the tab, while a dialog
//! blocks the page, in a crashed tab; is the page it is on judged; where
//! does it go; does an obstacle it meets start a hand-off): it never
//! matches on the tool.
//!
//! Arguments derive their JSON schema; their doc comments are the
//! descriptions a model reads, so they are written for a model and kept
//! short (every character of every schema is paid on each request).
//! Fields and enum values a model understands from their names carry no
//! doc comment on purpose (`#[allow(missing_docs)]`, marked
//! schema-visible): a doc comment would become a description in the
//! schema, and on an enum's values it would turn a plain `enum` list into
//! a longer `oneOf`.
//!
//! This module is the vocabulary only: the list of tools is `crate::list`,
//! the `Action` enum generated from it `crate::calls`, the registry
//! `crate::tools`. It imports no tool: every tool imports it.

use std::future::Future;

use crate::config::{Config, ToolsConfig};
use crate::metrics::Metrics;
use crate::secrets::Secrets;
use crate::tab::Tab;
use crate::{ActionError, ActionOutput, Budget};

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
    /// A trace of the session (`browser_trace`).
    Trace,
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
        Group::Trace,
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
            Group::Trace => "trace",
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

/// One tool as it declares itself, beside its handler (`const TOOL` of its
/// `impl Tool`).
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
    /// What its call does to the tab's page (what the session lets it do
    /// while a person holds the tab, in a crashed tab, on a page the URL
    /// rules would refuse).
    pub effect: Effect,
}

impl Declaration {
    /// Whether it may run in a tab a person holds (`browser_handoff`):
    /// only tools that read the page do.
    pub fn runs_in_handoff(&self) -> bool {
        self.effect == Effect::Reads
    }

    /// Whether it may run in a tab whose renderer crashed: only a tool
    /// that loads another document (in a new renderer) does.
    pub fn escapes_crash(&self) -> bool {
        self.effect == Effect::Leaves
    }

    /// Whether it may run while a dialog that nobody can answer (its
    /// opener gone) blocks the page, though it does not run during a
    /// dialog: a tool that leaves the page (the way out) does.
    pub fn escapes_orphaned_dialog(&self) -> bool {
        self.effect == Effect::Leaves
    }

    /// Whether the page the tab is on is judged by the URL rules before
    /// the call: not for a tool that leaves it or answers its dialog.
    pub fn judges_current_page(&self) -> bool {
        !matches!(self.effect, Effect::Leaves | Effect::AnswersDialog)
    }

    /// Whether, under `[dialogs] policy = "must_respond"`, a dialog that
    /// opens during the call lets it go on (it is the call that answers).
    pub fn answers_dialogs(&self) -> bool {
        self.effect == Effect::AnswersDialog
    }

    /// Whether an obstacle its call meets (a CAPTCHA, a login wall) starts
    /// a hand-off by itself under `[handoff] auto`: a tool that loaded the
    /// page that shows it.
    pub fn hands_off_obstacles(&self) -> bool {
        self.effect == Effect::Leaves
    }
}

/// What a tool's call does to the tab's page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Only reads it (snapshot, screenshot, wait): runs while a person
    /// holds the tab.
    Reads,
    /// Acts on it (click, type, evaluate, …) or on the session: refused
    /// while a person holds the tab.
    Acts,
    /// Loads another document in the tab (navigate): the page it leaves
    /// is not judged, it runs in a crashed tab and past a dialog nobody
    /// can answer, and an obstacle on the page it loads may start a
    /// hand-off (`[handoff] auto`).
    Leaves,
    /// Answers the page's dialog: the page is not judged, and a dialog
    /// opening during it does not end it.
    AnswersDialog,
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

/// A tool, implemented by its arguments' type in the tool's own file:
/// what it declares, what its arguments must be beyond their schema, where
/// a call sends the browser and what the configuration admits; its handler
/// is [`TabTool`] (a tab's tool) or the session's `SessionTool`. The list
/// of tools (`crate::list`) names the type; everything else (the `Action`
/// variant, the registry's schema and parser, the dispatch) is generated
/// from it.
pub(crate) trait Tool: Sized {
    /// What it declares about itself.
    const TOOL: Declaration;

    /// What the arguments must be beyond their schema, checked before
    /// anything is opened: a clear error and a next step.
    fn check(&self) -> Result<(), ActionError> {
        Ok(())
    }

    /// Where the call sends the browser, if it says (judged by the URL
    /// rules, its scheme by `[policy] schemes`, before anything is sent).
    fn destination(&self) -> Option<&str> {
        None
    }

    /// What the configuration says of the call before anything is opened
    /// (`browser_cdp`'s fence).
    fn admit(&self, _config: &Config) -> Result<(), ActionError> {
        Ok(())
    }
}

/// A tab-scoped tool's handler: runs the call in the tab the session
/// picked, judged and supervises.
pub(crate) trait TabTool: Tool {
    /// Runs the call.
    fn perform(&self, call: &TabCall<'_>) -> impl Future<Output = Result<ActionOutput, ActionError>> + Send;
}
