//! One client's session: its browser context (cookies, storage and tabs of
//! its own, or the browser's default context over stdio), its metrics, and
//! the path every action takes in it.
//!
//! Owns: the session's [`Context`] (replaced when the browser was
//! relaunched: the next result says so), its metrics, its event stream
//! (`events`) and, with a fleet of endpoints, its placement on one. The
//! browser is shared ([`Browsers`]); nothing here holds a lock across an
//! await.

mod context;
mod downloads;
pub mod events;
mod handoff;
mod idle;
mod policy;
mod refusals;
mod watch;

use std::sync::{Arc, Mutex};

use tracing::Instrument;

use crate::action::Action;
use crate::actions;
use crate::audit::Audit;
use crate::browser::fleet::Placement;
use crate::browser::grid::Seat;
use crate::browser::{Browser, Browsers};
use crate::config::Config;
use crate::content::Markers;
use crate::dialogs;
use crate::metrics::Metrics;
use crate::policy::Consent;
use crate::secrets::Secrets;
use crate::single_flight::SingleFlight;
use crate::tab::{DialogPolicy, Tab};
use crate::{tools, ActionError, ActionOutput, Budget};

pub use context::Context;
use events::{EndReason, Events, Lifecycle, SessionEvent};
pub(crate) use policy::destination_url;
pub(crate) use watch::cast;
pub use watch::{Overview, TabView};

/// One client's session: its browser context and tabs, and the path every
/// action takes in it. Get one from [`Engine::session`](crate::Engine::session)
/// or [`Engine::new_session`](crate::Engine::new_session).
pub struct Session {
    /// Names the session in the audit (`default` over stdio).
    id: String,
    config: Arc<Config>,
    /// The browser, or the fleet of endpoints, it runs on.
    browsers: Browsers,
    /// Its place on one endpoint of a fleet (none yet, or not a fleet).
    placement: Mutex<Option<Placement>>,
    /// Its Grid session (`[browser] grid`), let go when its pages end.
    seat: Arc<Seat>,
    /// Its event stream, and saying once that its pages ended.
    lifecycle: Arc<Lifecycle>,
    /// A browser context of its own (true), or the default one (stdio, so a
    /// `--user-data-dir` profile is the one the agent uses).
    isolated: bool,
    /// What this session did, for `cdpilot://metrics`.
    metrics: Arc<Metrics>,
    /// The engine's audit trail, written by the one dispatch.
    audit: Arc<Audit>,
    /// The engine's secrets: typed from placeholders here, redacted from
    /// everything the dispatch hands back.
    secrets: Arc<Secrets>,
    /// The session's place in the current browser, once opened. Shared
    /// with the idle timer, which empties it when the session expires.
    context: idle::ContextSlot,
    /// `[session] idle_timeout_s`: the idle clock and its timer.
    idle: idle::Idle,
    /// Opening the context, under way.
    opening: SingleFlight<Arc<Context>>,
    /// The user's answers to `ask` rules, and the way to ask (installed by
    /// the transport).
    consent: Arc<Consent>,
    /// Its page content markers (`[output] content_markers`): the nonce
    /// that encloses page text in every result it hands back.
    markers: Markers,
    /// The engine's open hand-offs (`browser_handoff`).
    handoffs: Arc<crate::handoff::Handoffs>,
    /// How the transport offers a hand-off's link (MCP elicitation).
    offer: Mutex<Option<Arc<dyn crate::handoff::Offer>>>,
}

/// How long opening a session's context (a browser context, its first tab)
/// may take, whoever waits for it.
const OPEN_BUDGET: std::time::Duration = std::time::Duration::from_secs(20);

impl Session {
    /// A session on `browsers`: with a browser context of its own
    /// (`isolated`) or the default one. Library users call
    /// [`Engine::new_session`](crate::Engine::new_session) instead.
    pub(crate) fn new(
        id: String,
        config: Arc<Config>,
        browsers: Browsers,
        isolated: bool,
        metrics: Arc<Metrics>,
        audit: Arc<Audit>,
        secrets: Arc<Secrets>,
        handoffs: Arc<crate::handoff::Handoffs>,
    ) -> Session {
        let lifecycle = Arc::new(Lifecycle::new(
            Events::redacting(secrets.clone()),
            metrics.clone(),
        ));
        let idle = idle::Idle::new(config.session.idle_timeout_s, lifecycle.clone());
        let markers = Markers::new(config.output.content_markers);
        let seat = Arc::new(Seat::default());
        if matches!(browsers, Browsers::Grid(_)) {
            // Every way the pages end (idle, stopped, closed, lost) lets
            // the Grid slot go.
            let seat = Arc::downgrade(&seat);
            lifecycle.on_end(move || {
                if let Some(seat) = seat.upgrade() {
                    seat.release();
                }
            });
        }
        Session {
            seat,
            id,
            idle,
            audit,
            secrets,
            config,
            browsers,
            placement: Mutex::new(None),
            lifecycle,
            isolated,
            metrics,
            context: Arc::new(Mutex::new(None)),
            opening: SingleFlight::default(),
            consent: Arc::default(),
            markers,
            handoffs,
            offer: Mutex::default(),
        }
    }

    /// The nonce of its page content markers, when they are on.
    pub fn content_nonce(&self) -> Option<&str> {
        self.markers.nonce()
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// What this session did.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The session's event stream (`dialog_opened`, `navigated`,
    /// `session_ended`, …): subscribe to hear what happens in it.
    pub fn events(&self) -> &Events {
        self.lifecycle.events()
    }

    /// The session's id (`default` over stdio), as the audit names it.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The engine's secrets.
    pub fn secrets(&self) -> &Secrets {
        &self.secrets
    }

    /// The engine's audit trail (shared by its sessions).
    pub fn audit(&self) -> &Audit {
        &self.audit
    }

    /// Where the transport installs its [`crate::policy::Asker`], and the
    /// user's grants.
    pub fn consent(&self) -> &Arc<Consent> {
        &self.consent
    }

    /// `invalid_argument` for a tool this session's configuration turns
    /// off, naming the setting that would turn it on.
    pub(crate) fn refuse_if_off(&self, spec: &tools::ToolSpec) -> Result<(), ActionError> {
        match spec.why_off(&self.config) {
            None => Ok(()),
            Some(why) => Err(ActionError::invalid(
                format!(
                    "{} is turned off in this server's configuration: {why}",
                    spec.name
                ),
                tools::use_one_of(&self.config),
            )),
        }
    }

    /// Runs one action to completion, failure, timeout or cancellation, as
    /// one tracing span, and records it in the metrics.
    pub async fn perform(&self, action: &Action, budget: &Budget) -> Result<ActionOutput, ActionError> {
        self.perform_noted(action, budget, &mut Notes::default()).await
    }

    /// [`Session::perform`], noting for the audit what the call saw (the
    /// tab's URL before and after, the policy's verdicts).
    pub(crate) async fn perform_noted(
        &self,
        action: &Action,
        budget: &Budget,
        notes: &mut Notes,
    ) -> Result<ActionOutput, ActionError> {
        let tool = action.tool_name();
        let span = tracing::info_span!("tool", tool);
        let _running = self.consent.call_running();
        let (_in_flight, expired) =
            crate::timing::timed("session.idle", self.idle.begin(&self.context)).await;
        let mut result = self.run(action, budget, notes).instrument(span.clone()).await;
        if expired {
            session_restarted(&mut result, self.config.session.idle_timeout_s);
        }
        let elapsed = budget.elapsed();
        let _entered = span.enter();
        match &result {
            Ok(_) => tracing::info!(elapsed_ms = elapsed.as_millis() as u64, "ok"),
            Err(e) => tracing::info!(
                elapsed_ms = elapsed.as_millis() as u64,
                code = e.code.as_str(),
                "{e}"
            ),
        }
        let outcome = result.as_ref().map(|_| ()).map_err(|e| e.code);
        self.metrics.record(tool, elapsed, outcome);
        self.report(action, &result, notes);
        // Page text leaves enclosed in the session's markers.
        self.markers.render_result(result)
    }

    /// Counts the call's URL verdicts and tells the event stream what the
    /// call saw: URLs the policy refused, an obstacle.
    fn report(&self, action: &Action, result: &Result<ActionOutput, ActionError>, notes: &Notes) {
        for verdict in &notes.verdicts {
            let decision = verdict["action"].as_str().unwrap_or("deny");
            self.metrics.verdict(decision);
            // A destination the user allowed shows as `ask`; one refused
            // ends the call with permission_denied.
            let refused = decision == "deny"
                || (decision == "ask"
                    && matches!(result, Err(e) if e.code == crate::ErrorCode::PermissionDenied));
            if refused {
                self.events().emit(SessionEvent::PermissionDenied {
                    url: verdict["url"].as_str().unwrap_or_default().to_owned(),
                    rule: verdict["rule"].as_str().unwrap_or_default().to_owned(),
                });
            }
        }
        if let Ok(output) = result {
            if !output.data["obstacle"].is_null() {
                self.events().emit(SessionEvent::Obstacle {
                    tab: action.common().tab.clone(),
                    obstacle: output.data["obstacle"].clone(),
                });
            }
        }
    }

    async fn run(
        &self,
        action: &Action,
        budget: &Budget,
        notes: &mut Notes,
    ) -> Result<ActionOutput, ActionError> {
        // Some calls (a snapshot while a dialog blocks the page, a tab list)
        // finish without waiting on anything; taking part in tokio's
        // cooperative budget keeps a caller that loops on them from
        // starving the tab's own tasks (the dialog watchdog) on its thread.
        tokio::task::consume_budget().await;
        let tool = action.tool_name();
        if let Some(spec) = tools::find(tool) {
            self.refuse_if_off(spec)?;
        }
        if let Action::Cdp(args) = action {
            crate::policy::cdp_fence::admit(&args.method, self.config.tools.cdp)?;
        }
        crate::validate::urls(action, &self.config.policy.schemes)?;
        let rules = self.browsers.policy();
        // Judged once: the verdict goes to the audit and decides the call. A
        // "once" answer is held until the call ends.
        let destination = destination_url(action).map(|url| rules.judge(url));
        let _once = match &destination {
            Some(verdict) => {
                notes.verdicts.push(verdict.to_json());
                self.consent.settle(verdict, "navigating to", budget).await?
            }
            None => None,
        };
        let (context, restarted) = self.context(budget).await?;
        context
            .save_downloads_in(&self.config.files.output_dir(), budget)
            .await?;
        let result = match action {
            Action::Tabs(args) => actions::tabs::run(&context, args, &self.consent, budget).await,
            Action::Storage(args) => actions::storage::run(&context, args, &self.config.files, budget).await,
            Action::Handoff(args) => self.hand_off(&context, args, budget).await,
            other => match context.tab(other.common().tab.as_deref(), budget).await {
                Ok(tab) => {
                    notes.url_before = Some(tab.state(|s| s.url.clone()));
                    tab.gate().serve(&self.consent);
                    let judging = policy::current_page(other, &tab, rules, &self.consent, budget);
                    let _once = crate::timing::timed("session.policy", judging).await?;
                    let mark = tab.gate().mark();
                    let acting = self.supervised(&tab, other, budget);
                    let result = crate::timing::timed("session.action", acting).await;
                    let result = policy::after(result, tab.gate().since(mark), &tab);
                    notes.url_after = Some(tab.state(|s| s.url.clone()));
                    result
                }
                Err(e) => Err(e),
            },
        };
        // What the egress gate refused (connections by host and port).
        let (result, refused) = refusals::after(action, result, context.take_refusals());
        notes.verdicts.extend(refused);
        if let Ok(output) = &result {
            // What the request stage blocked while the action ran.
            for blocked in output.data["blocked"].as_array().into_iter().flatten() {
                notes.verdicts.push(serde_json::json!({
                    "url": blocked["url"], "action": "deny", "rule": blocked["rule"],
                }));
            }
        }
        let result = self.after_obstacle(&context, action, result, budget).await;
        result.map(|mut output| {
            if restarted {
                output.text = format!(
                    "Note: the browser had closed or crashed, so cdpilot started a new one; earlier pages and refs are gone.\n{}",
                    output.text
                );
                output.data["browser_restarted"] = true.into();
            }
            output
        })
    }

    /// The session's context in the live browser, opening it (once, for
    /// concurrent callers) when there is none or the browser was replaced.
    /// The flag says a context on an earlier browser was lost.
    pub async fn context(&self, budget: &Budget) -> Result<(Arc<Context>, bool), ActionError> {
        let browser = crate::timing::timed("session.browser", self.browser(budget)).await?;
        let current = self.context.lock().unwrap().clone();
        if let Some(context) = &current {
            if Arc::ptr_eq(&context.browser, &browser) {
                context.relink(budget).await?;
                return Ok((context.clone(), false));
            }
        }
        let isolated = self.isolated;
        let state_file = self.config.browser.storage_state.clone();
        let events = self.events().clone();
        let opened = self
            .opening
            .run("opening the session", budget, move || async move {
                let budget = Budget::with_timeout(OPEN_BUDGET);
                let opening = Context::open(browser, isolated, events, &budget);
                let context = crate::timing::timed("session.context", opening).await?;
                // `[browser] storage_state`: every new session starts with it.
                if !state_file.is_empty() {
                    let path = std::path::Path::new(&state_file);
                    if let Err(e) = crate::storage_state::load_file(&context, path, &budget).await {
                        context.dispose(&budget).await;
                        return Err(ActionError {
                            message: format!("[browser] storage_state: {}", e.message),
                            ..e
                        });
                    }
                }
                Ok(Arc::new(context))
            })
            .await?;
        self.lifecycle.began();
        let replaced = current.is_some_and(|c| !Arc::ptr_eq(&c.browser, &opened.browser));
        let mut slot = self.context.lock().unwrap();
        if slot
            .as_ref()
            .is_none_or(|c| !Arc::ptr_eq(&c.browser, &opened.browser))
        {
            *slot = Some(opened.clone());
        }
        Ok((opened, replaced))
    }

    /// The live browser this session runs on: the one browser, or its
    /// endpoint of the fleet (placed on the least-loaded one first, and
    /// again when its endpoint failed).
    async fn browser(&self, budget: &Budget) -> Result<Arc<Browser>, ActionError> {
        match &self.browsers {
            Browsers::One(slot) => slot.get(budget).await,
            Browsers::Fleet(fleet) => fleet.browser(&self.placement, &self.lifecycle, budget).await,
            Browsers::Grid(grid) => grid.browser(&self.seat, &self.lifecycle, budget).await,
        }
    }

    /// Says now (once) that the session ended for `reason`, before its
    /// pages are closed: for a transport about to tell its client. True if
    /// this call said it; a later [`end`](Self::end) says nothing more.
    pub fn say_ended(&self, reason: EndReason) -> bool {
        self.lifecycle.ended(reason)
    }

    /// Ends the session for `reason`: its pages close (as
    /// [`Session::close`]) and `session_ended` is said, unless its pages
    /// had already ended (idle, a lost browser).
    pub async fn end(&self, reason: EndReason, budget: &Budget) {
        self.close(budget).await;
        self.lifecycle.ended(reason);
        self.placement.lock().unwrap().take();
        self.seat.release();
    }

    /// Its Grid session's id and the node it runs on (`[browser] grid`).
    pub fn grid_session(&self) -> Option<(String, Option<String>)> {
        self.seat.describe()
    }

    /// Runs an action in a tab under the dialog rules: while a dialog blocks
    /// the page, actions that need the page get `dialog_pending`; under
    /// must_respond, `dialogs::during` ends an action at the first dialog
    /// that opens (`dialog_opened`) instead of letting it hang on the blocked
    /// page, and reports every dialog that opened during it.
    async fn supervised(
        &self,
        tab: &Tab,
        action: &Action,
        budget: &Budget,
    ) -> Result<ActionOutput, ActionError> {
        self.refuse_in_handoff(tab, action)?;
        let may_run_blocked = tools::find(action.tool_name()).is_some_and(|t| t.runs_during_dialog);
        if !may_run_blocked {
            if let Some(dialog) = tab.dialogs().blocking() {
                // Leaving the page is the way out of a dialog nobody can answer.
                let escape = dialog.orphaned && matches!(action, Action::Navigate(_));
                if !escape {
                    return Err(dialogs::pending_error(&dialog));
                }
            }
        }
        if crate::browser::slot::dialog_rules(&self.config).policy != DialogPolicy::MustRespond {
            // The supervisor answers dialogs at once; the action goes on.
            return self.in_tab(tab, action, budget).await;
        }
        // Boxed: the action's future is large, and moving it by value into
        // another future overflowed the stack of debug builds.
        let run = Box::pin(self.in_tab(tab, action, budget));
        dialogs::during(tab, action, run).await
    }

    /// The one dispatch from an action to the code that performs it in a tab.
    async fn in_tab(&self, tab: &Tab, action: &Action, budget: &Budget) -> Result<ActionOutput, ActionError> {
        match action {
            Action::Navigate(args) => actions::navigate::run(tab, args, budget).await,
            Action::Snapshot(args) => {
                let cap = args
                    .max_elements
                    .unwrap_or(self.config.limits.snapshot_max_elements);
                crate::snapshot::run(tab, args, cap, budget).await
            }
            Action::Click(args) => actions::click::run(tab, args, budget).await,
            Action::Type(args) if args.text.contains("{{secret:") => {
                let origin = element_origin(tab, &args.target, budget).await?;
                let mut args = args.clone();
                args.text = self.secrets.expand(&args.text, &origin)?;
                actions::type_text::run(tab, &args, budget).await
            }
            Action::Type(args) => actions::type_text::run(tab, args, budget).await,
            Action::Screenshot(args) => {
                let cap = self.config.limits.snapshot_max_elements;
                actions::screenshot::run(tab, args, &self.config.files, cap, budget).await
            }
            Action::Wait(args) => actions::wait::run(tab, args, budget).await,
            Action::Evaluate(args) => actions::evaluate::run(tab, args, budget, &self.metrics).await,
            Action::Dialog(args) => actions::dialog::run(tab, args, budget).await,
            Action::Hover(args) => actions::hover::run(tab, args, budget).await,
            Action::PressKey(args) => actions::press_key::run(tab, args, budget).await,
            Action::SelectOption(args) => actions::select_option::run(tab, args, budget).await,
            Action::Console(args) => actions::console::run(tab, args),
            Action::Extract(args) => actions::extract::run(tab, args, budget).await,
            Action::Cdp(args) => actions::cdp::run(tab, args, budget).await,
            Action::Tabs(_) => Err(ActionError::internal("browser_tabs does not act in one tab")),
            Action::Network(args) => actions::network::run(tab, args, budget).await,
            Action::Storage(_) => Err(ActionError::internal(
                "browser_storage acts in the session, not one tab",
            )),
            Action::Pdf(args) => actions::pdf::run(tab, args, &self.config.files, budget).await,
            Action::Emulate(args) => actions::emulate::run(tab, args, budget).await,
            Action::FillForm(args) => {
                let mut args = args.clone();
                for field in &mut args.fields {
                    if field.value.contains("{{secret:") {
                        let origin = element_origin(tab, &field.target(), budget).await?;
                        field.value = self.secrets.expand(&field.value, &origin)?;
                    }
                }
                actions::fill_form::run(tab, &args, budget).await
            }
            Action::Drag(args) => actions::drag::run(tab, args, budget).await,
            Action::Upload(args) => {
                actions::upload::run(tab, args, &self.config.files.upload_roots(), budget).await
            }
            Action::Scroll(args) => actions::scroll::run(tab, args, budget).await,
            Action::Handoff(_) => Err(ActionError::internal(
                "browser_handoff is run by the session, not in a tab",
            )),
        }
    }

    /// Starts the browser and opens this session's tab ahead of its first
    /// call (MCP stdio does at `initialize`), so that call finds them
    /// ready. A failure is only logged: the first call meets it again and
    /// reports it.
    pub async fn warm_up(&self) {
        let budget = Budget::with_timeout(WARM_UP_BUDGET);
        let opened = async {
            let (context, _) = self.context(&budget).await?;
            context.tab(None, &budget).await
        };
        if let Err(e) = crate::timing::timed("session.warm_up", opened).await {
            tracing::debug!("warming up the browser: {e}");
        }
    }

    /// The `backendDOMNodeId` of the element a ref names in the active tab
    /// (library use: hand the node to other CDP tooling).
    pub async fn ref_node(&self, reference: &str, budget: &Budget) -> Result<i64, ActionError> {
        crate::validate::reference(reference)?;
        let (context, _) = self.context(budget).await?;
        let tab = context.tab(None, budget).await?;
        let element = actions::element::by_ref(&tab, reference, budget).await?;
        element.backend_node_id(budget).await
    }

    /// Ends the session: its tabs' tasks stop and a context of its own is
    /// closed with its tabs. The browser stays for other sessions.
    pub async fn close(&self, budget: &Budget) {
        let context = self.context.lock().unwrap().take();
        if let Some(context) = context {
            context.dispose(budget).await;
        }
    }
}

/// Says in a call's result (or error) that the session had expired for
/// idleness before it, so the model knows its tabs and refs are gone.
fn session_restarted(result: &mut Result<ActionOutput, ActionError>, timeout_s: u64) {
    let note = format!(
        "Note: this session had no call for {timeout_s}s ([session] idle_timeout_s), so it was ended and a new one started; earlier tabs, pages and refs are gone."
    );
    match result {
        Ok(output) => {
            output.text = format!("{note}\n{}", output.text);
            output.data["session_restarted"] = true.into();
        }
        Err(error) => error.next_step = format!("{} {note}", error.next_step),
    }
}

/// What one call saw, for its audit record.
#[derive(Debug, Default)]
pub(crate) struct Notes {
    pub url_before: Option<String>,
    pub url_after: Option<String>,
    /// `{url, action, rule}` of each URL the policy judged.
    pub verdicts: Vec<serde_json::Value>,
}

/// How long starting the browser ahead of the first call may take.
const WARM_UP_BUDGET: std::time::Duration = std::time::Duration::from_secs(30);

/// How long closing a dropped session's browser context may take.
const DROP_CLOSE_BUDGET: std::time::Duration = std::time::Duration::from_secs(5);

impl Drop for Session {
    /// A session dropped without [`Session::close`] still closes its own
    /// browser context (in the background), so its tabs do not outlive it.
    fn drop(&mut self) {
        let context = self.context.lock().unwrap().take();
        let Some(context) = context else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            context.dispose(&Budget::with_timeout(DROP_CLOSE_BUDGET)).await;
        });
    }
}

/// The origin of the document that owns the element `target` names (its
/// frame's, from the frame records the browser's events keep; the top
/// page's when it is in no iframe): where a secret typed into it goes.
async fn element_origin(
    tab: &Tab,
    target: &crate::action::ElementTarget,
    budget: &Budget,
) -> Result<String, ActionError> {
    let element = actions::element::resolve(tab, target, budget).await?;
    let frame_id = element.frame.frame_id.clone();
    let (origin, top) = tab.state(|s| {
        let origin = s.frames.get(&frame_id).map(|f| f.origin().to_owned());
        (origin, s.url.clone())
    });
    Ok(match origin {
        Some(origin) if !origin.is_empty() && origin != "null" => origin,
        // No record of the frame (the tab's own document before its first
        // navigation event): the tab's URL, when the element is in it.
        _ if frame_id == tab.target_id => top,
        // An iframe cdpilot has no origin for: nothing a secret can be
        // bound to.
        _ => "null".into(),
    })
}
