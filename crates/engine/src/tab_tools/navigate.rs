//! `browser_navigate`: open a URL or step through history, wait for the
//! chosen lifecycle point, and report where the tab really ended up.
//!
//! A navigation still going when the call's budget is spent (or the call is
//! cancelled) is stopped with `Page.stopLoading`, so the tab answers the
//! next call at once instead of waiting behind a document that has not
//! answered; the error says where the tab stays.

use std::time::Duration;

use cdp::protocol::page;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::args::{Common, WaitUntil};
use crate::tab::{Navigations, Tab};
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::validate;
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

// A step in the tab's history.
#[allow(missing_docs)] // schema-visible: see `crate::tool`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum History {
    Back,
    Forward,
    Reload,
}

/// Open a URL, or go back/forward/reload.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct NavigateArgs {
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Instead of url.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<History>,
    /// Default load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_until: Option<WaitUntil>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_navigate`: its declaration and checks (see `crate::tool`).
impl Tool for NavigateArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_navigate",
        verb: "open",
        group: Group::Core,
        description:
            "Open an http(s) URL (or go back/forward/reload) and wait for the load. Returns URL, title, status.",
        scope: Scope::Tab,
        runs_during_dialog: false,
        budget: DefaultBudget::Action,
        changes_page: true,
        switch: None,
        effect: Effect::Leaves,
    };

    /// One of url and history; a URL that is not empty (its scheme is judged
    /// against `[policy] schemes` by the session, which holds the
    /// configuration).
    fn check(&self) -> Result<(), ActionError> {
        match (&self.url, self.history) {
            (Some(_), Some(_)) => Err(ActionError::invalid(
                "pass either url or history, not both",
                "Call browser_navigate with url to open a page, or history to go back/forward/reload.",
            )),
            (None, None) => Err(ActionError::invalid(
                "browser_navigate needs a url (or history)",
                "Pass url, e.g. {\"url\": \"https://example.com\"}.",
            )),
            (Some(url), None) => validate::non_empty("url", url),
            (None, Some(_)) => Ok(()),
        }
    }

    /// Where a navigate sends the tab: its URL (history moves are judged by
    /// the request stage as they load).
    fn destination(&self) -> Option<&str> {
        self.url.as_deref()
    }
}

impl TabTool for NavigateArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        run(call.tab, self, call.budget).await
    }
}

/// The cleanup budget of stopping a load the call had no time left for.
const STOP_LOADING_BUDGET: Duration = Duration::from_secs(2);

pub async fn run(tab: &Tab, args: &NavigateArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let wait_until = args.wait_until.unwrap_or_default();
    // Watch before acting, so no lifecycle event can slip past.
    let mut navigations = tab.navigations();
    let navigated = async {
        let loader = match (&args.url, args.history) {
            (Some(url), _) => {
                let opening = open(tab, url, &mut navigations, budget);
                Some(crate::timing::timed("navigate.start", opening).await?)
            }
            (None, Some(step)) => history(tab, step, budget).await?,
            (None, None) => return Err(ActionError::invalid("no url given", "Pass url.")),
        };
        crate::timing::timed("navigate.load", navigations.loaded(loader, wait_until, budget)).await
    };
    let loader = match navigated.await {
        Ok(loader) => loader,
        // The budget is spent (or the call cancelled) while the tab may
        // still be loading: stop it, or the next call waits behind it.
        Err(error) if budget.remaining().is_zero() || budget.is_canceled() => {
            return Err(stop_loading(tab, budget, error).await)
        }
        Err(error) => return Err(error),
    };
    let response = loader
        .as_deref()
        .and_then(|l| tab.state(|s| s.document_response(l).cloned()));
    let status = response.as_ref().and_then(|r| r.status);
    if let (Some(error), Some(url)) = (response.as_ref().and_then(|r| r.gate_error.as_ref()), &args.url) {
        // The egress gate could not reach the host: the navigation failed
        // as it would have without the gate.
        return Err(ActionError::new(
            ErrorCode::NavigationFailed,
            format!("could not open {url}: {error}"),
            "Check the URL and that the site is reachable; it may be down or the address wrong.",
        ));
    }
    // One read of the new document: its address, title and obstacle
    // signals (the renderer answers it after its first layout of the page,
    // so a second read would wait in line behind it).
    let (signals, obstacle) = crate::timing::timed("navigate.probe", tab.probe(budget, status)).await?;
    let (url, title) = (signals.url, signals.title);
    let redirected_from = match (&args.url, &response) {
        (Some(requested), Some(r)) if r.redirected => Some(requested.clone()),
        _ => None,
    };
    let mut data = json!({ "url": url, "title": title, "status": status });
    let mut text = format!("Navigated to {url}");
    if let Some(status) = status {
        text += &format!(" (HTTP {status})");
    }
    if let Some(from) = redirected_from {
        text += &format!(", redirected from {from}");
        data["redirected_from"] = Value::String(from);
    }
    text += &format!(". Title: \"{title}\". Take a browser_snapshot to see the page.");
    if let Some(obstacle) = &obstacle {
        text += &format!(
            "\nObstacle ({}, {} confidence): {}",
            obstacle.kind, obstacle.confidence, obstacle.message
        );
    }
    Ok(ActionOutput::new(text, data).with_obstacle(obstacle))
}

/// Stops the tab's loading after the call ran out of budget, under a
/// cleanup budget of its own, and says so in `error`: a navigation still
/// waiting for its document is cancelled and the tab stays on the document
/// it had; a committed one keeps what has loaded so far.
async fn stop_loading(tab: &Tab, budget: &Budget, mut error: ActionError) -> ActionError {
    let cleanup = Budget::with_timeout(STOP_LOADING_BUDGET);
    match cleanup
        .cdp("stopping the load", &tab.session, page::StopLoading {})
        .await
    {
        Ok(_) => {
            let url = tab.state(|s| s.url().to_owned());
            error.message += &format!("; the load was stopped; the tab stays on {url}");
            if budget.is_canceled() {
                // Its usual next step says nothing more was sent for it.
                error.next_step = "The tab is usable.".to_owned();
            }
        }
        Err(stop_failed) => {
            tracing::warn!("stopping a navigation past its budget: {stop_failed}");
            error.message += "; stopping the load failed too, so the tab may still be loading";
        }
    }
    error
}

/// Starts a navigation to `url`; returns the new document's loader id.
async fn open(
    tab: &Tab,
    url: &str,
    navigations: &mut Navigations<'_>,
    budget: &Budget,
) -> Result<String, ActionError> {
    let downloads = crate::tab_tools::download::DownloadWatch::start(tab);
    let navigated = budget
        .cdp(
            "starting the navigation",
            &tab.session,
            page::Navigate { url: url.to_owned() },
        )
        .await?;
    if let Some(error) = navigated.error_text.filter(|e| !e.is_empty()) {
        // The navigation's events came before its answer on the socket, so
        // they are all in the stream already.
        let loader = navigated.loader_id.unwrap_or_default();
        if let Some(file) = navigations.download(&loader) {
            // The browser saves it into [files] output_dir; say where.
            let saved = downloads.finish(tab, true, budget).await?;
            let (saved, next) = match saved.as_ref().and_then(|d| d["path"].as_str()) {
                Some(path) => (
                    format!(
                        "; it was saved as {path} ({} bytes)",
                        saved.as_ref().map_or(Value::Null, |d| d["bytes"].clone())
                    ),
                    "Read the saved file, or open a page URL instead.",
                ),
                None => (
                    String::new(),
                    "Open a page URL instead, or read the file with browser_evaluate and fetch().",
                ),
            };
            return Err(ActionError::new(
                ErrorCode::NavigationFailed,
                format!("could not open {url}: the response was a download (file name {file}), not a page{saved}; the tab stays where it was"),
                next,
            ));
        }
        return Err(ActionError::new(
            ErrorCode::NavigationFailed,
            format!("could not open {url}: {error}"),
            "Check the URL and that the site is reachable; it may be down or the address wrong.",
        ));
    }
    // No loader id: a same-document navigation (only the fragment changed).
    Ok(navigated.loader_id.unwrap_or_default())
}

/// Steps back, forward or reloads. Returns `None`: the new loader id is
/// learnt from the events.
async fn history(tab: &Tab, step: History, budget: &Budget) -> Result<Option<String>, ActionError> {
    if step == History::Reload {
        budget
            .cdp("reloading", &tab.session, page::Reload::default())
            .await?;
        return Ok(None);
    }
    let history = budget
        .cdp("reading the history", &tab.session, page::GetNavigationHistory {})
        .await?;
    let target = if step == History::Back {
        history.current_index - 1
    } else {
        history.current_index + 1
    };
    let entry = usize::try_from(target).ok().and_then(|i| history.entries.get(i));
    let Some(entry) = entry else {
        let which = if step == History::Back { "back" } else { "forward" };
        return Err(ActionError::invalid(
            format!("there is no page to go {which} to"),
            "Open a page with url instead.",
        ));
    };
    budget
        .cdp(
            "moving in history",
            &tab.session,
            page::NavigateToHistoryEntry { entry_id: entry.id },
        )
        .await?;
    Ok(None)
}

/// The document's real `location.href` and title, read in cdpilot's world.
pub async fn location(tab: &Tab, budget: &Budget) -> Result<(String, String), ActionError> {
    let value = tab
        .evaluate_in_world(
            budget,
            "reading the page's address",
            "[location.href, document.title]",
            true,
        )
        .await?
        .value
        .unwrap_or(Value::Null);
    Ok((
        value[0].as_str().unwrap_or_default().to_owned(),
        value[1].as_str().unwrap_or_default().to_owned(),
    ))
}
