//! Where a session's downloads go: its browser context is told, once per
//! connection, to save every download into `[files] output_dir` (created
//! here) and to report them, so no download ever waits on a prompt. The
//! action that started one (`tab_tools::download`) names the file and reports it.

use std::path::Path;
use std::sync::atomic::Ordering;

use cdp::protocol::browser::SetDownloadBehavior;

use super::Context;
use crate::error::Failure;
use crate::{ActionError, Budget};

impl Context {
    /// Sends `Browser.setDownloadBehavior` for this context unless the
    /// current connection already has it. A browser that refuses it is
    /// logged and not asked again: actions still work.
    pub(super) async fn save_downloads_in(&self, dir: &Path, budget: &Budget) -> Result<(), ActionError> {
        let generation = self.browser.link().generation;
        if self.downloads_for.load(Ordering::SeqCst) == generation + 1 {
            return Ok(());
        }
        // Absolute, as the browser wants it; Chromium creates the
        // directory with the first download, so none appears until then.
        let dir = match std::path::absolute(dir) {
            Ok(dir) => dir,
            Err(e) => {
                tracing::warn!("downloads are not saved: {}: {e}", dir.display());
                return Ok(());
            }
        };
        let behavior = SetDownloadBehavior {
            behavior: "allowAndName".into(),
            browser_context_id: self.id.clone(),
            download_path: Some(dir.display().to_string()),
            events_enabled: true,
        };
        let browser = self.browser.connection().browser();
        let telling = budget.cdp("setting where downloads go", &browser, behavior);
        match crate::timing::timed("session.downloads", telling).await {
            Ok(_) => {}
            // The call's own trouble (its budget, the connection) is the
            // call's to report; the next call tries again.
            Err(e) if e.failure.ends_the_call() || e.failure == Failure::Disconnected => return Err(e),
            // A browser (or a relay) that refuses it: actions still work,
            // downloads follow the browser's own settings. Not asked again.
            Err(e) => tracing::warn!("downloads are not saved into {}: {e}", dir.display()),
        }
        self.downloads_for.store(generation + 1, Ordering::SeqCst);
        Ok(())
    }
}
