//! Downloads an action started: watched from before the action, waited for
//! to complete when the page asked for one, then renamed from the guid
//! Chromium saved it under to its own file name in `[files] output_dir`
//! (set per browser context by the session) and reported as
//! `download: {path, filename, bytes}`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use cdp::protocol::browser::{DownloadProgress, DownloadWillBegin};
use cdp::protocol::network::ResponseReceived;
use cdp::EventStream;
use serde_json::{json, Value};

use crate::tab::Tab;
use crate::{ActionError, Budget};

/// How long a download the page asked for may take to start (the browser
/// reports it within a round trip; the rest is slack for a busy machine).
const START_WAIT: Duration = Duration::from_secs(10);

/// The browser's download events, and the tab's own, from before the action.
pub struct DownloadWatch {
    /// The browser session's: where `Browser.download*` arrive.
    events: EventStream,
    /// The tab's: a document answered as an attachment shows here before
    /// its frame stops loading, while the browser's download notice may
    /// come later.
    page: EventStream,
}

impl DownloadWatch {
    /// Starts watching. Make it before the action that may download.
    pub fn start(tab: &Tab) -> DownloadWatch {
        DownloadWatch {
            events: tab.session.connection().browser().events(),
            page: tab.session.events(),
        }
    }

    /// The download the action started, saved and named: one that already
    /// began in one of the tab's frames, or, when the page asked for one
    /// (`expected`), the next to begin. `None` when there was none.
    pub async fn finish(
        mut self,
        tab: &Tab,
        expected: bool,
        budget: &Budget,
    ) -> Result<Option<Value>, ActionError> {
        let ours = |event: &cdp::Event| {
            event
                .decode::<DownloadWillBegin>()
                .filter(|b| tab.state(|s| s.frames().get(&b.frame_id).is_some()))
        };
        let attachment = std::iter::from_fn(|| self.page.try_recv().ok()).any(|e| is_attachment(&e));
        let expected = expected || attachment;
        let begun = std::iter::from_fn(|| self.events.try_recv().ok()).find_map(|e| ours(&e));
        let begun = match begun {
            Some(begun) => Some(begun),
            None if !expected => return Ok(None),
            None => {
                let limit = START_WAIT.min(budget.remaining());
                let events = &mut self.events;
                let wait = async {
                    while let Some(event) = events.recv().await {
                        if let Some(begun) = ours(&event) {
                            return Ok(begun);
                        }
                    }
                    Err(ActionError::disconnected())
                };
                budget
                    .run("waiting for the download to start", async {
                        // The page may have refused it after all (a handler
                        // that cancels, a blocked URL): the click stands.
                        tokio::time::timeout(limit, wait).await.ok().transpose()
                    })
                    .await?
            }
        };
        let Some(begun) = begun else {
            return Ok(None);
        };
        let events = &mut self.events;
        let guid = begun.guid.clone();
        let done = budget
            .run("waiting for the download to finish", async {
                while let Some(event) = events.recv().await {
                    match event.decode::<DownloadProgress>() {
                        Some(p) if p.guid == guid && p.state != "inProgress" => return Ok(p),
                        _ => {}
                    }
                }
                Err(ActionError::disconnected())
            })
            .await?;
        let filename = file_name(&begun.suggested_filename);
        if done.state != "completed" {
            return Ok(Some(json!({ "filename": filename, "canceled": true })));
        }
        let saved = done.file_path.map(PathBuf::from).ok_or_else(|| {
            ActionError::internal(format!(
                "the download of {filename} finished without saying where it was saved"
            ))
        })?;
        let path = free_path(saved.parent().unwrap_or(Path::new(".")), &filename);
        std::fs::rename(&saved, &path).map_err(|e| {
            ActionError::internal(format!("cannot name the download {}: {e}", path.display()))
        })?;
        let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or_default();
        Ok(Some(
            json!({ "path": path.display().to_string(), "filename": filename, "bytes": bytes }),
        ))
    }
}

/// Whether `event` is a document answered as an attachment (which the
/// browser turns into a download).
fn is_attachment(event: &cdp::Event) -> bool {
    event
        .decode::<ResponseReceived>()
        .filter(|r| r.kind == "Document")
        .and_then(|r| {
            let disposition = r.response.header("content-disposition")?;
            crate::tab::download::file_name(disposition, &r.response.url)
        })
        .is_some()
}

/// A download's own name, safe as one file name (no directories, no
/// hidden or empty names).
fn file_name(suggested: &str) -> String {
    let base = suggested.rsplit(['/', '\\']).next().unwrap_or_default();
    let cleaned: String = base.chars().filter(|c| !c.is_control()).collect();
    let cleaned = cleaned.trim().trim_start_matches('.').to_owned();
    if cleaned.is_empty() {
        "download".to_owned()
    } else {
        cleaned
    }
}

/// `dir/name`, or `dir/stem (2).ext` and so on when that is taken.
fn free_path(dir: &Path, name: &str) -> PathBuf {
    let first = dir.join(name);
    if !first.exists() {
        return first;
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, format!(".{ext}")),
        _ => (name, String::new()),
    };
    (2..)
        .map(|n| dir.join(format!("{stem} ({n}){ext}")))
        .find(|p| !p.exists())
        .expect("some name is free")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn download_names_stay_inside_the_output_directory() {
        assert_eq!(file_name("report.csv"), "report.csv");
        assert_eq!(file_name("../../etc/passwd"), "passwd");
        assert_eq!(file_name("..\\evil.bat"), "evil.bat");
        assert_eq!(file_name(".bashrc"), "bashrc");
        assert_eq!(file_name(""), "download");
    }

    #[test]
    fn a_taken_name_gets_a_number() {
        let dir = std::env::temp_dir().join(format!("cdpilot-dl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(free_path(&dir, "a.csv"), dir.join("a.csv"));
        std::fs::write(dir.join("a.csv"), "1").unwrap();
        assert_eq!(free_path(&dir, "a.csv"), dir.join("a (2).csv"));
        std::fs::write(dir.join("a (2).csv"), "1").unwrap();
        assert_eq!(free_path(&dir, "a.csv"), dir.join("a (3).csv"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
