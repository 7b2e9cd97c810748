//! A session's place for its trace: none yet, one being written, or
//! stopped. Started by the session's first call when `[trace] dir` is set,
//! or by `browser_trace start`; stopped by `browser_trace stop`, by its
//! budget or a write error, and when the session ends (its `Drop`).
//!
//! Also owns the steps still being written: a call that acts answers
//! before its screenshot is taken, and its step is written by a task the
//! session's next call (and its close) waits for first, so every picture
//! shows the page the call left and the steps stay in call order.

use std::path::Path;
use std::sync::{Arc, Mutex};

use super::{Stopped, Trace};
use crate::config::TraceConfig;

/// One session's trace, if any.
#[derive(Default)]
pub struct Slot {
    state: Mutex<State>,
    /// Steps being written after their call answered (each says whether
    /// it stopped the trace).
    writing: Mutex<Vec<tokio::task::JoinHandle<Option<Stopped>>>>,
}

#[derive(Default)]
enum State {
    /// No call yet: `[trace] dir` may start one.
    #[default]
    Unstarted,
    On(Arc<Trace>),
    /// Stopped (or never to start): only `browser_trace start` starts one.
    Off,
}

impl Slot {
    /// The trace this call goes into: the one being written, or a new one
    /// under `[trace] dir` at the session's first call. A trace that cannot
    /// start is an error (said once); the session goes on untraced.
    pub fn for_call(&self, config: &TraceConfig, session: &str) -> Result<Option<Arc<Trace>>, String> {
        let mut state = self.state.lock().unwrap();
        match &*state {
            State::On(trace) if trace.is_on() => Ok(Some(trace.clone())),
            State::On(_) | State::Off => {
                *state = State::Off;
                Ok(None)
            }
            State::Unstarted if config.dir.is_empty() => {
                *state = State::Off;
                Ok(None)
            }
            State::Unstarted => match Trace::start(Path::new(&config.dir), session, config.max_bytes()) {
                Ok(trace) => {
                    let trace = Arc::new(trace);
                    *state = State::On(trace.clone());
                    Ok(Some(trace))
                }
                Err(e) => {
                    *state = State::Off;
                    Err(format!("starting a trace in [trace] dir {:?}: {e}", config.dir))
                }
            },
        }
    }

    /// Starts a trace under `base` (or says the one being written).
    pub fn start(&self, base: &Path, session: &str, max_bytes: u64) -> std::io::Result<(Arc<Trace>, bool)> {
        let mut state = self.state.lock().unwrap();
        if let State::On(trace) = &*state {
            if trace.is_on() {
                return Ok((trace.clone(), false));
            }
        }
        let trace = Arc::new(Trace::start(base, session, max_bytes)?);
        *state = State::On(trace.clone());
        Ok((trace, true))
    }

    /// Writes a step in the background: `write` runs now, and
    /// [`Slot::settle`] waits for it.
    pub fn defer(&self, write: impl std::future::Future<Output = Option<Stopped>> + Send + 'static) {
        let task = tokio::spawn(write);
        self.writing.lock().unwrap().push(task);
    }

    /// Waits for every step still being written; what stopped the trace
    /// (its budget, a write error), if one did.
    pub async fn settle(&self) -> Vec<Stopped> {
        let tasks = std::mem::take(&mut *self.writing.lock().unwrap());
        let mut stopped = Vec::new();
        for task in tasks {
            if let Ok(Some(why)) = task.await {
                stopped.push(why);
            }
        }
        stopped
    }

    /// The trace being written, if one is.
    pub fn current(&self) -> Option<Arc<Trace>> {
        match &*self.state.lock().unwrap() {
            State::On(trace) if trace.is_on() => Some(trace.clone()),
            _ => None,
        }
    }

    /// Stops the trace being written for `reason`; returns it.
    pub fn stop(&self, reason: &str) -> Option<Arc<Trace>> {
        let previous = std::mem::replace(&mut *self.state.lock().unwrap(), State::Off);
        match previous {
            State::On(trace) => {
                trace.stop(reason);
                Some(trace)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The next call waits for the step the last one is still writing (its
    /// screenshot shows the page that call left), and hears once what
    /// stopped the trace.
    #[tokio::test]
    async fn settle_waits_for_every_step_still_being_written() {
        let slot = Arc::new(Slot::default());
        let (written, write) = tokio::sync::oneshot::channel::<()>();
        slot.defer(async move {
            write.await.ok();
            Some(Stopped {
                dir: "/t".into(),
                reason: "budget".into(),
            })
        });
        let settling = tokio::spawn({
            let slot = slot.clone();
            async move { slot.settle().await }
        });
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(!settling.is_finished(), "settled before the step was written");
        written.send(()).unwrap();
        let stopped = settling.await.unwrap();
        assert_eq!(stopped.len(), 1);
        assert_eq!(stopped[0].reason, "budget");
        assert!(slot.settle().await.is_empty(), "said once");
    }
}
