//! A tab's renderer crash (`Target.targetCrashed`): the page ran out of
//! memory (over `[browser] tab_memory_mb`, the per-renderer V8 heap
//! ceiling) or its process was ended. Calls running in the tab answer
//! `tab_crashed` at once (the crashed renderer would never answer them),
//! and so does every later call in it until a `browser_navigate` loads a
//! page in a new renderer (Chrome keeps the target and its session).
//!
//! Owns the tab's crashed flag; the target manager sets it, the session
//! reads and clears it.

use tokio::sync::watch;

use crate::{ActionError, ErrorCode};

/// Whether the tab's renderer has crashed since its last navigation.
pub struct Crash {
    crashed: watch::Sender<bool>,
}

impl Default for Crash {
    fn default() -> Self {
        Crash {
            crashed: watch::Sender::new(false),
        }
    }
}

impl Crash {
    /// The renderer crashed: calls waiting on it stop.
    pub fn mark(&self) {
        self.crashed.send_replace(true);
    }

    /// A navigation gives the tab a new renderer.
    pub fn clear(&self) {
        self.crashed.send_replace(false);
    }

    pub fn is_crashed(&self) -> bool {
        *self.crashed.borrow()
    }

    /// Resolves when the renderer crashes (at once if it has).
    pub async fn happened(&self) {
        let mut crashed = self.crashed.subscribe();
        if crashed.wait_for(|c| *c).await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    /// The `tab_crashed` error, with the model's next step.
    pub fn error() -> ActionError {
        ActionError::new(
            ErrorCode::TabCrashed,
            "the page in this tab crashed (it went over the tab's memory ceiling, [browser] tab_memory_mb, or its renderer process ended); the call could not finish",
            "Load a page again with browser_navigate (the tab gets a new renderer), or open another tab with browser_tabs action new. Other tabs are not affected.",
        )
    }
}
