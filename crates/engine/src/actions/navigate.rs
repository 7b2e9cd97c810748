//! `browser_navigate`: open a URL or step through history, wait for the
//! chosen lifecycle point, and report where the tab really ended up.
//!
//! A navigation still going when the call's budget is spent (or the call is
//! cancelled) is stopped with `Page.stopLoading`, so the tab answers the
//! next call at once instead of waiting behind a document that has not
//! answered; the error says where the tab stays.

use std::time::Duration;

use cdp::protocol::page;
use cdp::EventStream;
use serde_json::{json, Value};

use crate::action::{History, NavigateArgs, WaitUntil};
use crate::tab::Tab;
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

/// The cleanup budget of stopping a load the call had no time left for.
const STOP_LOADING_BUDGET: Duration = Duration::from_secs(2);

pub async fn run(tab: &Tab, args: &NavigateArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let wait_until = args.wait_until.unwrap_or_default();
    // Subscribe before acting, so no lifecycle event can slip past.
    let mut events = tab.session.events();
    let navigated = async {
        let loader = match (&args.url, args.history) {
            (Some(url), _) => Some(open(tab, url, &mut events, budget).await?),
            (None, Some(step)) => history(tab, step, budget).await?,
            (None, None) => return Err(ActionError::invalid("no url given", "Pass url.")),
        };
        wait_for_load(tab, &mut events, loader, wait_until, budget).await
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
    let (url, title) = location(tab, budget).await?;
    let response = loader
        .as_deref()
        .and_then(|l| tab.state(|s| s.document_response(l).cloned()));
    let status = response.as_ref().and_then(|r| r.status);
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
    text += &format!(". Title: {title:?}. Take a browser_snapshot to see the page.");
    if let Some(obstacle) = crate::obstacle::check(tab, budget, status).await? {
        text += &format!(
            "\nObstacle ({}, {} confidence): {}",
            obstacle.kind, obstacle.confidence, obstacle.message
        );
        data["obstacle"] = json!(obstacle);
    }
    Ok(ActionOutput::new(text, data))
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
            let url = tab.state(|s| s.url.clone());
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
    events: &mut EventStream,
    budget: &Budget,
) -> Result<String, ActionError> {
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
        let main_frame = tab.state(|s| s.main_frame_id.clone());
        while let Ok(event) = events.try_recv() {
            if let Some(file) = download_in(&event, &main_frame, &loader) {
                return Err(ActionError::new(
                    ErrorCode::NavigationFailed,
                    format!("could not open {url}: the response was a download (file name {file}), not a page; the tab stays where it was"),
                    "cdpilot does not save downloads yet. Open a page URL instead, or read the file with browser_evaluate and fetch().",
                ));
            }
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

/// The file name, when `event` shows that the main frame's navigation
/// (`loader`) was answered with a download rather than a page: a document
/// response with `Content-Disposition: attachment`, or Chrome's own
/// download notice (sent once download events are enabled).
fn download_in(event: &cdp::Event, main_frame: &str, loader: &str) -> Option<String> {
    let p = &event.params;
    match event.method.as_str() {
        "Page.downloadWillBegin" if p["frameId"] == main_frame => {
            Some(p["suggestedFilename"].as_str().unwrap_or_default().to_owned())
        }
        "Network.responseReceived" if p["type"] == "Document" && p["loaderId"] == loader => {
            let headers = p["response"]["headers"].as_object()?;
            let disposition = headers
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case("content-disposition"))?
                .1
                .as_str()?;
            if !disposition
                .trim_start()
                .get(..10)
                .is_some_and(|kind| kind.eq_ignore_ascii_case("attachment"))
            {
                return None;
            }
            let url = p["response"]["url"].as_str().unwrap_or_default();
            Some(attachment_name(disposition).unwrap_or_else(|| last_segment(url)))
        }
        _ => None,
    }
}

/// The file name a `Content-Disposition` header gives (`filename*=` in
/// UTF-8 first, else `filename=`, quoted or not).
fn attachment_name(disposition: &str) -> Option<String> {
    let params: Vec<(String, &str)> = disposition
        .split(';')
        .skip(1)
        .filter_map(|part| part.split_once('='))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim()))
        .collect();
    let extended = params
        .iter()
        .find(|(name, _)| name == "filename*")
        .and_then(|(_, value)| {
            let (_charset_and_language, encoded) = value.rsplit_once('\'')?;
            Some(percent_decoded(encoded))
        });
    let plain = || {
        params
            .iter()
            .find(|(name, _)| name == "filename")
            .map(|(_, value)| value.trim_matches('"').to_owned())
    };
    extended.or_else(plain).filter(|name| !name.is_empty())
}

fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The last path segment of a URL, for a download that names no file.
fn last_segment(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or_default();
    match path.rsplit('/').next() {
        Some(name) if !name.is_empty() => name.to_owned(),
        _ => "unnamed".to_owned(),
    }
}

/// Steps back, forward or reloads. Returns `None`: the new loader id is
/// learnt from the events.
async fn history(tab: &Tab, step: History, budget: &Budget) -> Result<Option<String>, ActionError> {
    if step == History::Reload {
        budget
            .send("reloading", &tab.session, "Page.reload", json!({}))
            .await?;
        return Ok(None);
    }
    let history = budget
        .send(
            "reading the history",
            &tab.session,
            "Page.getNavigationHistory",
            json!({}),
        )
        .await?;
    let current = history["currentIndex"].as_i64().unwrap_or(0);
    let target = if step == History::Back {
        current - 1
    } else {
        current + 1
    };
    let entry = history["entries"]
        .get(target.max(0) as usize)
        .filter(|_| target >= 0);
    let Some(entry_id) = entry.and_then(|e| e["id"].as_i64()) else {
        let which = if step == History::Back { "back" } else { "forward" };
        return Err(ActionError::invalid(
            format!("there is no page to go {which} to"),
            "Open a page with url instead.",
        ));
    };
    budget
        .send(
            "moving in history",
            &tab.session,
            "Page.navigateToHistoryEntry",
            json!({ "entryId": entry_id }),
        )
        .await?;
    Ok(None)
}

/// Waits until the main frame reaches `wait_until` for `loader` (`Some("")`
/// for a same-document navigation, which needs no wait; `None` when the
/// loader is not known yet and is taken from the next main-frame commit).
/// Returns the loader that loaded.
pub async fn wait_for_load(
    tab: &Tab,
    events: &mut EventStream,
    loader: Option<String>,
    wait_until: WaitUntil,
    budget: &Budget,
) -> Result<Option<String>, ActionError> {
    if loader.as_deref() == Some("") {
        return Ok(None);
    }
    let wanted = match wait_until {
        WaitUntil::Load => "load",
        WaitUntil::Domcontentloaded => "DOMContentLoaded",
        WaitUntil::Networkidle => "networkIdle",
    };
    let step = format!("waiting for the page's {wanted} event");
    let main_frame = tab.state(|s| s.main_frame_id.clone());
    let mut loader = loader;
    budget
        .run(&step, async {
            while let Some(event) = events.recv().await {
                let p = &event.params;
                match event.method.as_str() {
                    "Page.frameNavigated" if loader.is_none() && p["frame"]["id"] == main_frame.as_str() => {
                        loader = p["frame"]["loaderId"].as_str().map(str::to_owned);
                    }
                    // Loading stopped before anything committed: the navigation
                    // was cancelled, became a download, or got a 204.
                    "Page.frameStoppedLoading" if loader.is_none() && p["frameId"] == main_frame.as_str() => {
                        return Ok(());
                    }
                    "Page.navigatedWithinDocument"
                        if loader.is_none() && p["frameId"] == main_frame.as_str() =>
                    {
                        return Ok(());
                    }
                    "Page.lifecycleEvent"
                        if p["name"] == wanted
                            && p["frameId"] == main_frame.as_str()
                            && loader.as_deref().is_some_and(|l| p["loaderId"] == l) =>
                    {
                        return Ok(());
                    }
                    _ => {}
                }
            }
            Err(ActionError::disconnected())
        })
        .await?;
    Ok(loader)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn event(method: &str, params: Value) -> cdp::Event {
        cdp::Event {
            session_id: String::new(),
            method: method.to_owned(),
            params,
        }
    }

    fn document(loader: &str, headers: Value) -> cdp::Event {
        event(
            "Network.responseReceived",
            json!({"type": "Document", "frameId": "F1", "loaderId": loader,
                   "response": {"url": "http://x/files/data.bin?x=1", "headers": headers}}),
        )
    }

    #[test]
    fn a_document_answered_as_an_attachment_is_a_download_with_its_name() {
        let named = document(
            "L1",
            json!({"Content-Disposition": "attachment; filename=\"report.csv\""}),
        );
        assert_eq!(download_in(&named, "F1", "L1").as_deref(), Some("report.csv"));
        let utf8 = document(
            "L1",
            json!({"content-disposition": "ATTACHMENT; filename=\"x.txt\"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf"}),
        );
        assert_eq!(download_in(&utf8, "F1", "L1").as_deref(), Some("résumé.pdf"));
        let unnamed = document("L1", json!({"content-disposition": "attachment"}));
        assert_eq!(download_in(&unnamed, "F1", "L1").as_deref(), Some("data.bin"));
    }

    #[test]
    fn pages_and_other_navigations_are_not_downloads() {
        let inline = document("L1", json!({"content-disposition": "inline; filename=a.pdf"}));
        assert_eq!(download_in(&inline, "F1", "L1"), None);
        let plain = document("L1", json!({"content-type": "text/html"}));
        assert_eq!(download_in(&plain, "F1", "L1"), None);
        let other_loader = document("L0", json!({"content-disposition": "attachment; filename=a"}));
        assert_eq!(download_in(&other_loader, "F1", "L1"), None);
    }

    #[test]
    fn chromes_download_notice_names_the_file() {
        let notice = event(
            "Page.downloadWillBegin",
            json!({"frameId": "F1", "url": "http://x/a", "suggestedFilename": "a.zip"}),
        );
        assert_eq!(download_in(&notice, "F1", "L1").as_deref(), Some("a.zip"));
        assert_eq!(download_in(&notice, "F2", "L1"), None);
    }
}
