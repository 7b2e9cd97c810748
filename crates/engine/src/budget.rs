//! One deadline and one cancellation per call, drawn on by every step.
//!
//! A `Budget` is made once per tool call (from `timeout_ms` and the client's
//! cancellation) and passed by reference into every wait: each CDP command
//! gets only the time that is left, and [`Budget::run`] races any other
//! future against both the deadline and the cancellation. A timeout names the
//! step that ran out and how long the whole call waited.

use std::future::Future;
use std::time::Duration;

use cdp::{CdpError, Command, Session};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::error::Failure;
use crate::ActionError;
#[cfg(test)]
use crate::ErrorCode;

/// What one call may spend: a deadline and a cancellation token, passed by
/// reference into every wait (nothing below it has a timeout of its own).
#[derive(Debug, Clone)]
pub struct Budget {
    started: Instant,
    deadline: Instant,
    cancel: CancellationToken,
}

impl Budget {
    /// A budget of `timeout` from now, ended early when `cancel` fires.
    pub fn new(timeout: Duration, cancel: CancellationToken) -> Budget {
        let started = Instant::now();
        Budget {
            started,
            deadline: started + timeout,
            cancel,
        }
    }

    /// A budget nobody cancels (library use, tests).
    pub fn with_timeout(timeout: Duration) -> Budget {
        Self::new(timeout, CancellationToken::new())
    }

    /// When the budget runs out.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Time spent since the budget was made.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Time left before the deadline (zero once past it).
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// The call's cancellation (a longer step of the same call, such as a
    /// hand-off a navigate starts by itself, is cancelled with it).
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Whether the caller cancelled the call.
    pub fn is_canceled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Fails with `canceled` or `timeout` if the call may not go on; checked
    /// before every command so nothing is sent after a cancel.
    pub fn check(&self, step: &str) -> Result<(), ActionError> {
        if self.cancel.is_cancelled() {
            return Err(self.canceled(step));
        }
        if self.remaining().is_zero() {
            return Err(self.timed_out(step));
        }
        Ok(())
    }

    /// Runs `future` until it finishes, the deadline passes, or the call is
    /// cancelled, whichever comes first.
    pub async fn run<T>(
        &self,
        step: &str,
        future: impl Future<Output = Result<T, ActionError>>,
    ) -> Result<T, ActionError> {
        self.check(step)?;
        tokio::select! {
            biased;
            _ = self.cancel.cancelled() => Err(self.canceled(step)),
            result = tokio::time::timeout_at(self.deadline, future) => {
                result.unwrap_or_else(|_| Err(self.timed_out(step)))
            }
        }
    }

    /// Sends one typed CDP command with what is left of the budget.
    pub async fn cdp<C: Command>(
        &self,
        step: &str,
        session: &Session,
        command: C,
    ) -> Result<C::Response, ActionError> {
        self.run(step, async {
            session
                .call(command, self.deadline)
                .await
                .map_err(|e| self.map_cdp(step, e))
        })
        .await
    }

    /// Maps a CDP error, turning the command's own deadline into the call's
    /// `timeout` (it was the call's budget that ran out).
    pub fn map_cdp(&self, step: &str, error: CdpError) -> ActionError {
        match error {
            CdpError::Timeout { .. } => self.timed_out(step),
            other => ActionError::from_cdp(step, other),
        }
    }

    /// The `timeout` error for `step`, saying how much of the budget it waited.
    pub fn timed_out(&self, step: &str) -> ActionError {
        ActionError::of(
            Failure::Timeout {
                step: step.to_owned(),
                after: self.elapsed(),
            },
            format!(
                "{step} did not finish; the call waited {}ms of its {}ms budget",
                self.elapsed().as_millis(),
                (self.deadline - self.started).as_millis()
            ),
            "Take a browser_snapshot to see the page, then retry (with a larger timeout_ms if the page is slow).",
        )
    }

    /// The `canceled` error for `step`.
    pub fn canceled(&self, step: &str) -> ActionError {
        ActionError::of(
            Failure::Canceled {
                step: step.to_owned(),
            },
            format!("the call was cancelled by the client during {step}"),
            "Nothing more was sent for it; the tab is usable.",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_step_past_the_deadline_is_a_timeout_naming_the_step() {
        let budget = Budget::with_timeout(Duration::from_millis(100));
        let result: Result<(), _> = budget.run("waiting for load", std::future::pending()).await;
        let error = result.unwrap_err();
        assert_eq!(error.code, ErrorCode::Timeout);
        assert!(
            error
                .message
                .starts_with("waiting for load did not finish; the call waited 100ms"),
            "{}",
            error.message
        );
    }

    #[tokio::test(start_paused = true)]
    async fn cancellation_wins_over_a_pending_step() {
        let cancel = CancellationToken::new();
        let budget = Budget::new(Duration::from_secs(60), cancel.clone());
        // The cancel comes from another task while the step is pending.
        let canceller = cancel.clone();
        tokio::spawn(async move { canceller.cancel() });
        let result = budget
            .run("waiting", std::future::pending::<Result<(), ActionError>>())
            .await;
        assert_eq!(result.unwrap_err().code, ErrorCode::Canceled);
        assert!(
            budget.elapsed() < Duration::from_secs(60),
            "it did not wait for the deadline"
        );
        assert_eq!(budget.check("next").unwrap_err().code, ErrorCode::Canceled);
    }
}
