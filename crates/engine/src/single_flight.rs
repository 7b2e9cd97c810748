//! Work that many callers may ask for at once but that must run once: the
//! browser's start or reconnect, attaching one target.
//!
//! The work runs as its own task, so a caller whose budget runs out (or who
//! is cancelled) stops waiting without stopping it or leaving it half done;
//! later callers join the same flight. No lock is held while it runs: the
//! slot's lock guards only taking or storing the shared future.

use std::future::Future;
use std::sync::Mutex;

use futures_util::future::{BoxFuture, FutureExt, Shared};

use crate::{ActionError, Budget};

type Flight<T> = Shared<BoxFuture<'static, Result<T, ActionError>>>;

pub struct SingleFlight<T: Clone + Send + Sync + 'static> {
    /// The flight under way (or the last one, until someone starts anew).
    slot: Mutex<Option<Flight<T>>>,
}

impl<T: Clone + Send + Sync + 'static> Default for SingleFlight<T> {
    fn default() -> Self {
        SingleFlight {
            slot: Mutex::new(None),
        }
    }
}

impl<T: Clone + Send + Sync + 'static> SingleFlight<T> {
    /// Lets go of a finished flight's result (what it made is dropped
    /// unless someone else holds it); a flight under way is left alone.
    pub fn forget_finished(&self) {
        let mut slot = self.slot.lock().unwrap();
        if slot.as_ref().is_some_and(|f| f.peek().is_some()) {
            *slot = None;
        }
    }

    /// The result of the last flight, once it finished (kept until
    /// forgotten): what callers that ran out of time left behind. A flight
    /// whose callers all gave up finishes unwatched; it is looked at here.
    pub fn finished(&self) -> Option<Result<T, ActionError>> {
        let flight = self.slot.lock().unwrap().clone()?;
        flight.now_or_never()
    }

    /// Joins the flight under way, or starts `work` as a new one, and waits
    /// for it within `budget`. A finished flight is never joined: each call
    /// after one has finished starts afresh (callers check for a usable
    /// result before asking).
    pub async fn run<F>(
        &self,
        step: &str,
        budget: &Budget,
        work: impl FnOnce() -> F,
    ) -> Result<T, ActionError>
    where
        F: Future<Output = Result<T, ActionError>> + Send + 'static,
    {
        let flight = {
            let mut slot = self.slot.lock().unwrap();
            match slot.as_ref() {
                Some(flight) if flight.peek().is_none() => flight.clone(),
                _ => {
                    let task = tokio::spawn(work());
                    let flight = async move {
                        task.await
                            .unwrap_or_else(|e| Err(ActionError::internal(format!("the task stopped: {e}"))))
                    }
                    .boxed()
                    .shared();
                    *slot = Some(flight.clone());
                    flight
                }
            }
        };
        budget.run(step, flight).await
    }

    /// The flight under way, if any, for a shutdown that must wait for it.
    pub fn in_flight(&self) -> Option<impl Future<Output = Result<T, ActionError>>> {
        let slot = self.slot.lock().unwrap();
        slot.as_ref().filter(|f| f.peek().is_none()).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn concurrent_callers_share_one_run_and_a_caller_out_of_time_does_not_stop_it() {
        let flight = Arc::new(SingleFlight::<u32>::default());
        let runs = Arc::new(AtomicUsize::new(0));
        let work = |runs: Arc<AtomicUsize>| {
            move || async move {
                runs.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_secs(5)).await;
                Ok(7)
            }
        };
        let short = Budget::with_timeout(Duration::from_secs(1));
        let long = Budget::with_timeout(Duration::from_secs(60));
        let (a, b) = tokio::join!(
            flight.run("starting", &short, work(runs.clone())),
            flight.run("starting", &long, work(runs.clone())),
        );
        assert_eq!(a.unwrap_err().code, crate::ErrorCode::Timeout);
        assert_eq!(b.unwrap(), 7);
        assert_eq!(runs.load(Ordering::SeqCst), 1, "one run for both callers");
        // A finished flight is not joined again: the next call runs anew.
        let again = flight.run("starting", &long, work(runs.clone())).await;
        assert_eq!((again.unwrap(), runs.load(Ordering::SeqCst)), (7, 2));
    }
}
