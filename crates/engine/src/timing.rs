//! Step timings: where the milliseconds of the slow paths go (a snapshot,
//! a click, the browser's start).
//!
//! Each step is a `tracing` span named `step` under the target
//! [`TARGET`], with the step's name in its `step` field; a measurement made
//! elsewhere (the serializer's own time inside the page) is an event with
//! `step` and `ms`. The binary writes them out with `CDPILOT_TIMINGS=<file>`
//! (one JSON line per step: its name and wall time); without a subscriber
//! listening to the target they cost a branch each.

use std::future::Future;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tracing::Instrument;

/// The tracing target of every step span and measurement.
pub const TARGET: &str = "cdpilot::timing";

/// A span for one step; its wall time is from creation to close.
pub fn span(step: &'static str) -> tracing::Span {
    tracing::info_span!(target: TARGET, "step", step)
}

/// Runs `work` as the step `step`.
pub async fn timed<F: Future>(step: &'static str, work: F) -> F::Output {
    work.instrument(span(step)).await
}

/// Reports a step measured outside a span (in the page, say).
pub fn record(step: &'static str, took: Duration) {
    tracing::info!(target: TARGET, step, ms = took.as_secs_f64() * 1000.0);
}

/// Seconds since the epoch: the clock every recorded timestamp is written
/// in (dialogs opened and closed, console messages, a document's start).
pub fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
