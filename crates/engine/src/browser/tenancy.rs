//! Who uses a browser now: every session's context, and a context being
//! opened, holds a [`Tenancy`] of the browser it lives in (issue 24).
//!
//! A launched browser keeps much of the memory its closed sessions used
//! (Chromium's allocator keeps what it freed); the browser slot closes one
//! that nobody held for `[serve] browser_idle_restart_s` (`slot.rs`), and
//! the next session launches a new one. Retiring a browser here is what
//! keeps a session opening at that moment off it: the check that nobody
//! holds it and the mark that it is retired are one step under one lock,
//! and a retired browser gives out no tenancy, so a session that got the
//! browser just before asks the slot again (which launches the next one).
//! Owns only the count; it never closes anything.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// The tenancies of one browser.
pub struct Tenants {
    /// Locked for microseconds, never across an await.
    state: Mutex<State>,
    /// Says each change of the count (the idle watcher waits for zero);
    /// `None` until the first tenancy.
    held: watch::Sender<Option<usize>>,
}

struct State {
    /// Tenancies given out and not dropped yet.
    held: usize,
    /// When the count last fell to zero; `None` until the first tenancy
    /// ends: a browser just launched is not idle before its first session
    /// took it (however short the period, the session that launched it
    /// gets it).
    idle_since: Option<Instant>,
    /// No tenancy is given out any more: the browser is being closed.
    retired: bool,
}

impl Default for Tenants {
    fn default() -> Self {
        Tenants {
            state: Mutex::new(State {
                held: 0,
                idle_since: None,
                retired: false,
            }),
            held: watch::Sender::new(None),
        }
    }
}

impl Tenants {
    /// A tenancy, unless the browser was retired (then the caller asks its
    /// slot for the browser again).
    pub fn enter(self: &Arc<Self>) -> Option<Tenancy> {
        let mut state = self.state.lock().unwrap();
        if state.retired {
            return None;
        }
        state.held += 1;
        self.held.send_replace(Some(state.held));
        Some(Tenancy {
            tenants: self.clone(),
        })
    }

    /// Retires the browser if nobody has held it for `idle`: true once
    /// retired (from then on [`enter`](Self::enter) gives out nothing).
    pub fn retire_if_idle(&self, idle: Duration) -> bool {
        let mut state = self.state.lock().unwrap();
        let idle_for = state.idle_since.map(|since| since.elapsed());
        if state.held == 0 && idle_for.is_some_and(|d| d >= idle) {
            state.retired = true;
        }
        state.retired
    }

    /// Whether the browser was retired.
    pub fn is_retired(&self) -> bool {
        self.state.lock().unwrap().retired
    }

    /// Waits until nobody holds the browser for `idle`, then retires it.
    /// Returns when it is retired (by this wait or anyone else).
    pub async fn retire_when_idle(&self, idle: Duration) {
        let mut held = self.held.subscribe();
        loop {
            if self.retire_if_idle(idle) {
                return;
            }
            // Held now (or never yet): wait for the count to fall to zero.
            if held.wait_for(|n| *n == Some(0)).await.is_err() {
                return;
            }
            let Some(since) = self.state.lock().unwrap().idle_since else {
                continue;
            };
            // Woken early by a new tenancy: the loop sees it and waits again.
            tokio::select! {
                () = tokio::time::sleep_until(since + idle) => {}
                _ = held.wait_for(|n| n.is_some_and(|n| n > 0)) => {}
            }
        }
    }
}

/// One user of a browser: a session's context (or its opening). Dropping
/// the last starts the browser's idle clock.
pub struct Tenancy {
    tenants: Arc<Tenants>,
}

impl Drop for Tenancy {
    fn drop(&mut self) {
        let mut state = self.tenants.state.lock().unwrap();
        state.held -= 1;
        if state.held == 0 {
            state.idle_since = Some(Instant::now());
        }
        self.tenants.held.send_replace(Some(state.held));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_browser_is_retired_only_after_nobody_held_it_for_the_idle_period() {
        let tenants = Arc::new(Tenants::default());
        let idle = Duration::from_secs(60);
        let first = tenants.enter().expect("a tenancy");
        let waiting = tokio::spawn({
            let tenants = tenants.clone();
            async move { tenants.retire_when_idle(idle).await }
        });
        tokio::time::sleep(Duration::from_secs(120)).await;
        assert!(!tenants.is_retired(), "held: not retired");
        drop(first);
        tokio::time::sleep(Duration::from_secs(30)).await;
        // A session comes and goes within the period: the clock starts again.
        drop(tenants.enter().expect("a tenancy"));
        tokio::time::sleep(Duration::from_secs(45)).await;
        assert!(!tenants.is_retired(), "idle 45 s of 60: not retired");
        tokio::time::sleep(Duration::from_secs(20)).await;
        assert!(tenants.is_retired(), "idle 65 s: retired");
        waiting.await.unwrap();
        assert!(
            tenants.enter().is_none(),
            "a retired browser gives out no tenancy"
        );
    }

    #[test]
    fn a_tenancy_taken_before_the_check_keeps_the_browser() {
        let tenants = Arc::new(Tenants::default());
        assert!(
            !tenants.retire_if_idle(Duration::ZERO),
            "never held yet: its first session has not taken it"
        );
        let held = tenants.enter().expect("a tenancy");
        assert!(!tenants.retire_if_idle(Duration::ZERO));
        drop(held);
        assert!(tenants.retire_if_idle(Duration::ZERO));
        assert!(tenants.enter().is_none());
    }
}
