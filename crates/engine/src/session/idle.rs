//! A session's idle expiry (`[session] idle_timeout_s`, rolling): a session
//! that sees no call for that long has its context disposed (its browser
//! context closed with its tabs; the default context's tabs are let go, not
//! closed: they are the user's), and its next call starts a new one and
//! says so.
//!
//! Owns the idle clock and the count of calls in flight. Expiring takes the
//! context out of the session's slot under that slot's lock, after checking
//! that no call is in flight, and a call counts itself in flight under the
//! same lock before it looks at the slot: so a call never has its context
//! disposed under it. The timer task is the session's: it holds no strong
//! reference to the session and is aborted when the session is dropped.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use tokio::task::AbortHandle;

use super::Context;
use crate::events::{EndReason, Lifecycle};
use crate::Budget;

/// The session's slot for its context, shared with the timer.
pub(super) type ContextSlot = Arc<Mutex<Option<Arc<Context>>>>;

/// How long disposing an expired context may take.
const DISPOSE_BUDGET: Duration = Duration::from_secs(5);

pub(super) struct Idle {
    /// `idle_timeout_s`; `None`: sessions never expire.
    timeout: Option<Duration>,
    state: Arc<Clock>,
    /// The timer task, started on the first call (a runtime is there by
    /// then); aborted when the session goes.
    timer: OnceLock<AbortHandle>,
}

struct Clock {
    /// When the last call ended (or the session was made).
    last_call: Mutex<Instant>,
    /// Calls running now: a session in use is never idle.
    in_flight: AtomicUsize,
    /// The context was disposed for idleness and the next call has not
    /// said so yet.
    expired: AtomicBool,
    /// Poked when a call ends, so the timer counts from then.
    call_ended: Notify,
    /// Told when the session's pages end for idleness (`session_ended`).
    lifecycle: Arc<Lifecycle>,
}

/// A call in flight; dropping it ends the call on the idle clock.
pub(super) struct InFlight {
    clock: Arc<Clock>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        *self.clock.last_call.lock().unwrap() = Instant::now();
        self.clock.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.clock.call_ended.notify_one();
    }
}

impl Clock {
    /// Takes the context out of `slot` if the session has been idle for
    /// `timeout` with no call in flight; the caller disposes it.
    fn expire(&self, slot: &ContextSlot, timeout: Duration) -> Option<Arc<Context>> {
        let mut slot = slot.lock().unwrap();
        let idle = self.last_call.lock().unwrap().elapsed() >= timeout;
        if !idle || self.in_flight.load(Ordering::SeqCst) > 0 {
            return None;
        }
        let context = slot.take()?;
        self.expired.store(true, Ordering::SeqCst);
        self.lifecycle.ended(EndReason::Idle);
        Some(context)
    }
}

impl Idle {
    pub fn new(timeout_s: u64, lifecycle: Arc<Lifecycle>) -> Idle {
        Idle {
            timeout: (timeout_s > 0).then(|| Duration::from_secs(timeout_s)),
            state: Arc::new(Clock {
                last_call: Mutex::new(Instant::now()),
                in_flight: AtomicUsize::new(0),
                expired: AtomicBool::new(false),
                call_ended: Notify::new(),
                lifecycle,
            }),
            timer: OnceLock::new(),
        }
    }

    /// A call begins: an idle context is disposed first (the timer may not
    /// have run yet), and the answer says whether the session had expired
    /// since the previous call, which the call's result must say.
    pub async fn begin(&self, slot: &ContextSlot) -> (InFlight, bool) {
        let Some(timeout) = self.timeout else {
            self.state.in_flight.fetch_add(1, Ordering::SeqCst);
            return (
                InFlight {
                    clock: self.state.clone(),
                },
                false,
            );
        };
        self.start_timer(slot, timeout);
        let stale = self.state.expire(slot, timeout);
        self.state.in_flight.fetch_add(1, Ordering::SeqCst);
        let call = InFlight {
            clock: self.state.clone(),
        };
        if let Some(context) = stale {
            context.dispose(&Budget::with_timeout(DISPOSE_BUDGET)).await;
        }
        (call, self.state.expired.swap(false, Ordering::SeqCst))
    }

    /// Starts the timer that disposes the context once the session has
    /// been idle for `timeout`, if it is not running.
    fn start_timer(&self, slot: &ContextSlot, timeout: Duration) {
        self.timer.get_or_init(|| {
            let clock = self.state.clone();
            let slot = slot.clone();
            tokio::spawn(async move {
                loop {
                    let deadline = *clock.last_call.lock().unwrap() + timeout;
                    tokio::select! {
                        _ = tokio::time::sleep_until(deadline.into()) => {}
                        // A call ended: count from then.
                        _ = clock.call_ended.notified() => continue,
                    }
                    match clock.expire(&slot, timeout) {
                        Some(context) => {
                            tracing::info!(
                                "session idle for {}s: its context is disposed",
                                timeout.as_secs()
                            );
                            context.dispose(&Budget::with_timeout(DISPOSE_BUDGET)).await;
                        }
                        // In use, or nothing left to dispose: wait for a call.
                        None if clock.last_call.lock().unwrap().elapsed() >= timeout => {
                            clock.call_ended.notified().await;
                        }
                        None => {}
                    }
                }
            })
            .abort_handle()
        });
    }
}

impl Drop for Idle {
    fn drop(&mut self) {
        if let Some(timer) = self.timer.get() {
            timer.abort();
        }
    }
}
