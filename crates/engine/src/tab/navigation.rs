//! Waiting for the tab's main frame to get somewhere: a document reaching
//! a lifecycle point (load, DOMContentLoaded, network idle), or the URL
//! matching what the caller wants. Actions that may navigate (navigate,
//! click, wait) start a [`Navigations`] watch before they act and ask it
//! afterwards, so no event can slip past between the two.
//!
//! Owns only the watch's event subscription; what the tab knows about its
//! document stays in [`TabState`](super::TabState), which this reads.

use cdp::protocol::{network, page};
use cdp::{Event, EventStream};

use super::{download, Tab};
use crate::args::WaitUntil;
use crate::{ActionError, Budget};

/// The main frame's navigation events from the moment it was made.
pub struct Navigations<'t> {
    tab: &'t Tab,
    /// The tab's own session's events (iframes navigate on theirs).
    events: EventStream,
}

impl Tab {
    /// Starts watching the main frame's navigations. Make it before the
    /// action that may navigate.
    pub fn navigations(&self) -> Navigations<'_> {
        Navigations {
            tab: self,
            events: self.session.events(),
        }
    }
}

impl Navigations<'_> {
    /// Waits until the main frame reaches `wait_until` for `loader`
    /// (`Some("")` for a same-document navigation, which needs no wait;
    /// `None` when the loader is not known yet and is taken from the next
    /// main-frame commit). Returns the loader that loaded.
    pub async fn loaded(
        &mut self,
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
        let main_frame = self.tab.state(|s| s.main_frame_id.clone());
        let mut loader = loader;
        let events = &mut self.events;
        budget
            .run(&step, async {
                while let Some(event) = events.recv().await {
                    if reached(&event, &main_frame, &mut loader, wanted) {
                        return Ok(());
                    }
                }
                Err(ActionError::disconnected())
            })
            .await?;
        Ok(loader)
    }

    /// Waits until the main frame's URL matches: the current one, or the
    /// next one a navigation (cross-document or not) gives it. Returns it.
    pub async fn url_matching(
        &mut self,
        matches: impl Fn(&str) -> bool,
        budget: &Budget,
    ) -> Result<String, ActionError> {
        let (main_frame, url) = self.tab.state(|s| (s.main_frame_id.clone(), s.url.clone()));
        if matches(&url) {
            return Ok(url);
        }
        let events = &mut self.events;
        budget
            .run("waiting for the URL", async {
                while let Some(event) = events.recv().await {
                    let url = if let Some(navigated) = event.decode::<page::FrameNavigated>() {
                        Some(navigated.frame)
                            .filter(|f| f.id == main_frame)
                            .map(|f| f.url)
                    } else if let Some(within) = event.decode::<page::NavigatedWithinDocument>() {
                        Some(within).filter(|w| w.frame_id == main_frame).map(|w| w.url)
                    } else {
                        None
                    };
                    if let Some(url) = url.filter(|u| matches(u)) {
                        return Ok(url);
                    }
                }
                Err(ActionError::disconnected())
            })
            .await
    }

    /// The file name, when the events seen so far show that the main
    /// frame's navigation `loader` was answered with a download rather than
    /// a page. Reads only what has arrived (it never waits): ask once the
    /// navigation command has failed, as its events precede its answer.
    pub fn download(&mut self, loader: &str) -> Option<String> {
        let main_frame = self.tab.state(|s| s.main_frame_id.clone());
        while let Ok(event) = self.events.try_recv() {
            if let Some(file) = download_in(&event, &main_frame, loader) {
                return Some(file);
            }
        }
        None
    }
}

/// Whether `event` completes the wait for `wanted` on `main_frame`, learning
/// the `loader` from the main frame's commit when it is not known yet.
fn reached(event: &Event, main_frame: &str, loader: &mut Option<String>, wanted: &str) -> bool {
    if let Some(navigated) = event.decode::<page::FrameNavigated>() {
        if loader.is_none() && navigated.frame.id == main_frame {
            *loader = Some(navigated.frame.loader_id).filter(|l| !l.is_empty());
        }
        false
    } else if let Some(stopped) = event.decode::<page::FrameStoppedLoading>() {
        // Loading stopped before anything committed: the navigation was
        // cancelled, became a download, or got a 204.
        loader.is_none() && stopped.frame_id == main_frame
    } else if let Some(within) = event.decode::<page::NavigatedWithinDocument>() {
        loader.is_none() && within.frame_id == main_frame
    } else if let Some(lifecycle) = event.decode::<page::LifecycleEvent>() {
        lifecycle.name == wanted
            && lifecycle.frame_id == main_frame
            && loader.as_deref() == Some(lifecycle.loader_id.as_str())
    } else {
        false
    }
}

/// The file name, when `event` shows that the main frame's navigation
/// (`loader`) was answered with a download rather than a page: a document
/// response with `Content-Disposition: attachment`, or Chrome's own
/// download notice (sent once download events are enabled).
fn download_in(event: &Event, main_frame: &str, loader: &str) -> Option<String> {
    if let Some(notice) = event.decode::<page::DownloadWillBegin>() {
        return (notice.frame_id == main_frame).then_some(notice.suggested_filename);
    }
    let received = event.decode::<network::ResponseReceived>()?;
    if received.kind != "Document" || received.loader_id != loader {
        return None;
    }
    let disposition = received.response.header("content-disposition")?;
    download::file_name(disposition, &received.response.url)
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    fn event(method: &str, params: Value) -> Event {
        Event::new("", method, &params)
    }

    fn document(loader: &str, headers: Value) -> Event {
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

    #[test]
    fn a_wait_for_the_next_load_learns_its_loader_from_the_main_frames_commit() {
        let mut loader = None;
        let lifecycle = |loader: &str, name: &str| {
            event(
                "Page.lifecycleEvent",
                json!({"frameId": "F1", "loaderId": loader, "name": name}),
            )
        };
        assert!(!reached(&lifecycle("L0", "load"), "F1", &mut loader, "load"));
        let child = event(
            "Page.frameNavigated",
            json!({"frame": {"id": "C", "parentId": "F1", "loaderId": "LC"}}),
        );
        assert!(!reached(&child, "F1", &mut loader, "load"));
        assert_eq!(loader, None);
        let main = event(
            "Page.frameNavigated",
            json!({"frame": {"id": "F1", "loaderId": "L1"}}),
        );
        assert!(!reached(&main, "F1", &mut loader, "load"));
        assert_eq!(loader.as_deref(), Some("L1"));
        assert!(!reached(
            &lifecycle("L1", "DOMContentLoaded"),
            "F1",
            &mut loader,
            "load"
        ));
        assert!(reached(&lifecycle("L1", "load"), "F1", &mut loader, "load"));
        // Once a document committed, its stopping is not the end of the wait.
        let stopped = event("Page.frameStoppedLoading", json!({"frameId": "F1"}));
        assert!(!reached(&stopped, "F1", &mut loader, "load"));
        assert!(reached(&stopped, "F1", &mut None, "load"));
    }
}
