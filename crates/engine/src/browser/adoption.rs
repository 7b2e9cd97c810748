//! `[browser] adopt_tabs`: on a browser cdpilot attached to, the first
//! session that opens there takes the browser's own tabs (its default
//! context) instead of a browser context of its own, as a person's agent
//! expects of the tab that is already there (issue 45). One session at a
//! time: a second one, while the first holds them, gets a context of its
//! own as usual, so no two sessions ever share tabs. Owns that one claim
//! per browser; the session's context holds it and lets it go when it
//! ends.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Whether the browser's tabs may be adopted, and whether a session holds
/// them now.
#[derive(Debug, Default)]
pub struct DefaultTabs {
    /// `adopt_tabs` is on for this browser (attached by `cdp_url` or an
    /// endpoint; never one cdpilot launched, a Grid's or the user's own).
    on: bool,
    /// A session holds the tabs (its [`Claim`] is alive).
    taken: Arc<AtomicBool>,
}

/// A session's hold on the browser's tabs; dropped with its context.
#[derive(Debug)]
pub struct Claim(Arc<AtomicBool>);

impl Drop for Claim {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

impl DefaultTabs {
    pub fn new(on: bool) -> DefaultTabs {
        DefaultTabs {
            on,
            taken: Arc::default(),
        }
    }

    /// The claim, when adopting is on and no session holds the tabs.
    pub fn claim(&self) -> Option<Claim> {
        if !self.on {
            return None;
        }
        self.taken
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .ok()
            .map(|_| Claim(self.taken.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_session_at_a_time_holds_the_tabs() {
        assert!(DefaultTabs::new(false).claim().is_none());
        let tabs = DefaultTabs::new(true);
        let first = tabs.claim().expect("the first session adopts");
        assert!(tabs.claim().is_none(), "a second one gets its own context");
        drop(first);
        assert!(tabs.claim().is_some(), "free again once the first ended");
    }
}
