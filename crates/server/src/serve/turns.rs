//! A session's calls take turns: at most [`RUNNING`] run at once, at most
//! [`WAITING`] more wait for a turn (first come, first served), and a call
//! beyond that is refused `busy` at once — never left to time out — so a
//! client that sends calls faster than they are served holds a bounded
//! amount of the server, and no other session notices (each session has
//! its own turns).
//!
//! Owns one session's count of running calls and its line of waiting ones.
//! A turn is taken synchronously ([`Turns::take`]), so a transport that
//! reads requests in order (the WebSocket API) admits them in that order;
//! a finished call hands its slot straight to the first caller still
//! waiting. The lock is held for a few instructions, never across an await.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use engine::{ActionError, ErrorCode};
use tokio::sync::oneshot;

/// Calls of one session that run at once (overlapping calls are part of the
/// contract: a snapshot while a hand-off waits, a model's parallel calls).
pub const RUNNING: usize = 4;
/// Calls of one session that may wait for a turn beyond those running.
pub const WAITING: usize = 8;

/// One session's turns.
#[derive(Default)]
pub struct Turns {
    line: Mutex<Line>,
}

#[derive(Default)]
struct Line {
    running: usize,
    /// Waiting callers, first come first; a dropped one's sender is closed.
    waiting: VecDeque<oneshot::Sender<()>>,
}

impl Line {
    /// Hands a finished call's slot to the first caller still waiting, or
    /// gives it back.
    fn release(&mut self) {
        while let Some(next) = self.waiting.pop_front() {
            if next.send(()).is_ok() {
                return;
            }
        }
        self.running -= 1;
    }
}

impl Turns {
    /// A turn for one call: at once if fewer than [`RUNNING`] run, a place
    /// in line if fewer than [`WAITING`] wait, else `busy`.
    pub fn take(self: &Arc<Self>) -> Result<Turn, ActionError> {
        let mut line = self.line.lock().unwrap();
        if line.running < RUNNING {
            line.running += 1;
            return Ok(Turn {
                turns: self.clone(),
                waiting: None,
                held: true,
            });
        }
        line.waiting.retain(|w| !w.is_closed());
        if line.waiting.len() >= WAITING {
            return Err(busy());
        }
        let (tx, rx) = oneshot::channel();
        line.waiting.push_back(tx);
        Ok(Turn {
            turns: self.clone(),
            waiting: Some(rx),
            held: false,
        })
    }

    /// Calls running and waiting now.
    pub fn counts(&self) -> (usize, usize) {
        let line = self.line.lock().unwrap();
        let waiting = line.waiting.iter().filter(|w| !w.is_closed()).count();
        (line.running, waiting)
    }
}

/// The `busy` refusal.
fn busy() -> ActionError {
    ActionError::new(
        ErrorCode::Busy,
        format!(
            "this session already has {RUNNING} calls running and {WAITING} waiting; the call was not run"
        ),
        "Wait for an answer to a call you sent before sending more, then send this one again.",
    )
}

/// One call's turn: held while the call runs; dropping it (the call ended,
/// or was cancelled while waiting) lets the next caller in.
pub struct Turn {
    turns: Arc<Turns>,
    waiting: Option<oneshot::Receiver<()>>,
    held: bool,
}

impl Turn {
    /// Waits until this call's turn has come (at once if it already has).
    pub async fn ready(&mut self) {
        if let Some(rx) = self.waiting.as_mut() {
            // The sender is dropped only after a send or with the session's
            // turns, which this turn holds: the answer is always a send.
            let _ = rx.await;
            self.waiting = None;
            self.held = true;
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let mut line = self.turns.line.lock().unwrap();
        if let Some(mut rx) = self.waiting.take() {
            // Left the line: unless the slot was handed over just now (the
            // release sends under this lock), there is nothing to give back.
            if rx.try_recv().is_ok() {
                self.held = true;
            }
            drop(rx);
        }
        if self.held {
            line.release();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn calls_beyond_the_running_and_waiting_are_busy_and_the_line_moves_in_order() {
        let turns = Arc::new(Turns::default());
        let mut held: Vec<Turn> = (0..RUNNING).map(|_| turns.take().unwrap()).collect();
        let mut line: Vec<Turn> = (0..WAITING).map(|_| turns.take().unwrap()).collect();
        assert_eq!(turns.take().err().map(|e| e.code), Some(ErrorCode::Busy));
        assert_eq!(turns.counts(), (RUNNING, WAITING));

        // One leaves the line while waiting: its place is free again.
        drop(line.remove(3));
        assert_eq!(turns.counts(), (RUNNING, WAITING - 1));
        line.insert(3, turns.take().unwrap());
        let last = line.remove(3);
        line.push(last);

        // A running call ends: the first in line gets its turn, not another.
        drop(held.remove(0));
        let mut first = line.remove(0);
        tokio::time::timeout(std::time::Duration::from_secs(5), first.ready())
            .await
            .expect("the first in line got the freed slot");
        let mut second = line.remove(0);
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(50), second.ready()).await;
        assert!(waiting.is_err(), "only one slot was freed");
        drop(first);
        tokio::time::timeout(std::time::Duration::from_secs(5), second.ready())
            .await
            .expect("the second in line got the next slot");
        drop(second);
        drop(line);
        drop(held);
        assert_eq!(turns.counts(), (0, 0));
    }
}
