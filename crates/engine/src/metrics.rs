//! Counters and duration histograms of what the engine did, per tool, plus
//! script terminations, cancellations and browser restarts. Read as JSON
//! (the MCP resource `cdpilot://metrics`, `--log-metrics` at exit).
//!
//! One small lock, held for microseconds to bump numbers. A session's
//! metrics may count into a parent as well (the engine's totals, which
//! `cdpilot serve`'s `/metrics` reads), so nothing is lost when a session
//! ends.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::ErrorCode;

/// Upper bounds (seconds, Prometheus' convention) of the duration
/// histogram's buckets; one more bucket counts everything slower. The one
/// histogram of call durations: `cdpilot serve`'s `/metrics` exports it
/// as `cdpilot_call_duration_seconds`.
pub const BUCKETS_S: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

/// Counts and durations of one session's calls (`cdpilot://metrics`).
#[derive(Default)]
pub struct Metrics {
    inner: Mutex<Totals>,
    /// Every count made here is made there too (the engine's totals).
    parent: Option<std::sync::Arc<Metrics>>,
}

/// The engine-wide counters `/metrics` exports (a copy).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Counters {
    /// Calls that ended with `timeout`.
    pub timeouts: u64,
    /// Scripts stopped with `Runtime.terminateExecution`.
    pub evaluate_terminations: u64,
    /// Connections to a live browser opened again.
    pub reconnects: u64,
    /// Browsers started again after one died.
    pub browser_restarts: u64,
    /// Launched browsers closed after no session held them for `[serve]
    /// browser_idle_restart_s`.
    pub browser_idle_closes: u64,
    /// Messages from browsers over the per-message limit, dropped unread
    /// (the process's: `cdp::transport::dropped_messages`).
    pub messages_dropped: u64,
    /// URL verdicts by action (`allow`, `ask`, `deny`).
    pub policy_verdicts: Vec<(String, u64)>,
    /// Sessions whose pages ended, by reason (`idle`, `browser_lost`, …).
    pub sessions_ended: Vec<(String, u64)>,
}

#[derive(Default, Serialize)]
struct Totals {
    tools: BTreeMap<&'static str, ToolStats>,
    /// Scripts stopped with Runtime.terminateExecution (evaluate past its
    /// budget, or cancelled).
    terminate_execution: u64,
    /// Calls stopped by the client's cancellation.
    cancellations: u64,
    /// Browsers started again after the previous one died.
    browser_restarts: u64,
    /// Launched browsers closed after no session held them for a while.
    browser_idle_closes: u64,
    /// Connections to a live browser opened again after one dropped.
    reconnects: u64,
    /// Audit records that could not be written to `[audit] file` (they are
    /// still in memory).
    audit_write_errors: u64,
    /// Traces that stopped by themselves (their budget, a write error: a
    /// full disk), the session going on.
    traces_stopped: u64,
    /// URL verdicts by action.
    policy_verdicts: BTreeMap<String, u64>,
    /// Sessions ended, by reason.
    sessions_ended: BTreeMap<&'static str, u64>,
}

#[derive(Default, Serialize)]
struct ToolStats {
    calls: u64,
    ok: u64,
    errors: BTreeMap<&'static str, u64>,
    timeouts: u64,
    total_ms: u64,
    max_ms: u64,
    /// Counts per bucket of `BUCKETS_S`, plus one for slower calls.
    histogram: Vec<u64>,
    /// Total duration in seconds (the histogram's sum).
    #[serde(skip)]
    total_s: f64,
}

/// One tool's calls, as `/metrics` exports them (a copy).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCalls {
    /// The tool's name (`unknown` for names no tool has).
    pub tool: &'static str,
    /// By outcome: `ok` or the error code.
    pub outcomes: Vec<(&'static str, u64)>,
    /// Counts per bucket of [`BUCKETS_S`] (not cumulative), plus one for
    /// slower calls.
    pub histogram: Vec<u64>,
    /// Their total duration in seconds.
    pub seconds: f64,
}

impl Metrics {
    /// Metrics that also count into `parent`.
    pub fn within(parent: std::sync::Arc<Metrics>) -> Metrics {
        Metrics {
            inner: Mutex::default(),
            parent: Some(parent),
        }
    }

    /// Applies `count` here and in the parent.
    fn count(&self, count: impl Fn(&mut Totals)) {
        count(&mut self.inner.lock().unwrap());
        if let Some(parent) = &self.parent {
            parent.count(count);
        }
    }

    /// Counts one call of `tool` that took `elapsed` and ended with `outcome`.
    pub fn record(&self, tool: &'static str, elapsed: Duration, outcome: Result<(), ErrorCode>) {
        self.count(|totals| totals.record(tool, elapsed, outcome));
    }

    /// Counts one URL verdict (`allow`, `ask`, `deny`).
    pub fn verdict(&self, action: &str) {
        self.count(|totals| *totals.policy_verdicts.entry(action.to_owned()).or_default() += 1);
    }

    /// Counts a session whose pages ended for `reason`.
    pub fn session_ended(&self, reason: &'static str) {
        self.count(|totals| *totals.sessions_ended.entry(reason).or_default() += 1);
    }

    /// A copy of every tool's calls (by outcome and duration bucket).
    pub fn tool_calls(&self) -> Vec<ToolCalls> {
        let totals = self.inner.lock().unwrap();
        totals
            .tools
            .iter()
            .map(|(tool, stats)| ToolCalls {
                tool,
                outcomes: (stats.ok > 0)
                    .then_some(("ok", stats.ok))
                    .into_iter()
                    .chain(stats.errors.iter().map(|(code, n)| (*code, *n)))
                    .collect(),
                histogram: stats.histogram.clone(),
                seconds: stats.total_s,
            })
            .collect()
    }

    /// A copy of the counters `/metrics` exports.
    pub fn counters(&self) -> Counters {
        let totals = self.inner.lock().unwrap();
        Counters {
            timeouts: totals.tools.values().map(|t| t.timeouts).sum(),
            evaluate_terminations: totals.terminate_execution,
            reconnects: totals.reconnects,
            browser_restarts: totals.browser_restarts,
            browser_idle_closes: totals.browser_idle_closes,
            messages_dropped: cdp::transport::dropped_messages(),
            policy_verdicts: totals
                .policy_verdicts
                .iter()
                .map(|(k, v)| (k.clone(), *v))
                .collect(),
            sessions_ended: totals
                .sessions_ended
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
        }
    }
}

impl Totals {
    fn record(&mut self, tool: &'static str, elapsed: Duration, outcome: Result<(), ErrorCode>) {
        let ms = elapsed.as_millis() as u64;
        let seconds = elapsed.as_secs_f64();
        let totals = self;
        let stats = totals.tools.entry(tool).or_default();
        if stats.histogram.is_empty() {
            stats.histogram = vec![0; BUCKETS_S.len() + 1];
        }
        stats.calls += 1;
        stats.total_ms += ms;
        stats.total_s += seconds;
        stats.max_ms = stats.max_ms.max(ms);
        let bucket = BUCKETS_S
            .iter()
            .position(|b| seconds <= *b)
            .unwrap_or(BUCKETS_S.len());
        stats.histogram[bucket] += 1;
        match outcome {
            Ok(()) => stats.ok += 1,
            Err(code) => {
                *stats.errors.entry(code.as_str()).or_default() += 1;
                if code == ErrorCode::Timeout {
                    stats.timeouts += 1;
                }
                if code == ErrorCode::Canceled {
                    totals.cancellations += 1;
                }
            }
        }
    }
}

impl Metrics {
    /// Counts a script stopped with `Runtime.terminateExecution`.
    pub fn script_terminated(&self) {
        self.count(|totals| totals.terminate_execution += 1);
    }

    /// Counts a reconnect to a live browser.
    pub fn reconnected(&self) {
        self.count(|totals| totals.reconnects += 1);
    }

    /// Counts an audit record that could not be written to the audit file.
    pub fn audit_write_failed(&self) {
        self.count(|totals| totals.audit_write_errors += 1);
    }

    /// Counts a trace that stopped by itself (its budget, a write error).
    pub fn trace_stopped(&self) {
        self.count(|totals| totals.traces_stopped += 1);
    }

    /// Counts a browser started again after the previous one died.
    pub fn browser_restarted(&self) {
        self.count(|totals| totals.browser_restarts += 1);
    }

    /// Counts a launched browser closed because no session held it for
    /// `[serve] browser_idle_restart_s`.
    pub fn browser_idle_closed(&self) {
        self.count(|totals| totals.browser_idle_closes += 1);
    }

    /// The totals as JSON.
    pub fn to_json(&self) -> Value {
        let totals = self.inner.lock().unwrap();
        let mut value = serde_json::to_value(&*totals).unwrap_or_default();
        value["histogram_buckets_s"] = serde_json::json!(BUCKETS_S);
        // The process's, whichever session's browser sent them.
        value["cdp_messages_dropped"] = cdp::transport::dropped_messages().into();
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_counted_by_tool_outcome_and_bucket() {
        let m = Metrics::default();
        m.record("browser_click", Duration::from_millis(3), Ok(()));
        m.record(
            "browser_click",
            Duration::from_millis(70),
            Err(ErrorCode::Timeout),
        );
        m.record("browser_wait", Duration::from_secs(90), Err(ErrorCode::Canceled));
        m.script_terminated();
        m.verdict("deny");
        let j = m.to_json();
        assert_eq!(j["tools"]["browser_click"]["calls"], 2);
        assert_eq!(j["tools"]["browser_click"]["ok"], 1);
        assert_eq!(j["tools"]["browser_click"]["timeouts"], 1);
        assert_eq!(j["tools"]["browser_click"]["errors"]["timeout"], 1);
        assert_eq!(j["tools"]["browser_click"]["histogram"][0], 1);
        assert_eq!(j["tools"]["browser_click"]["histogram"][4], 1);
        assert_eq!(j["tools"]["browser_wait"]["histogram"][BUCKETS_S.len()], 1);
        let click = &m.tool_calls()[0];
        assert_eq!(click.tool, "browser_click");
        assert_eq!(click.outcomes, [("ok", 1), ("timeout", 1)]);
        assert!((click.seconds - 0.073).abs() < 1e-9, "{click:?}");
        assert_eq!(j["cancellations"], 1);
        assert_eq!(j["terminate_execution"], 1);
        assert_eq!(j["policy_verdicts"]["deny"], 1);
    }

    #[test]
    fn a_sessions_counts_reach_its_parent() {
        let parent = std::sync::Arc::new(Metrics::default());
        let child = Metrics::within(parent.clone());
        child.record("browser_click", Duration::from_millis(3), Err(ErrorCode::Timeout));
        child.script_terminated();
        child.verdict("allow");
        child.session_ended("idle");
        drop(child);
        let counters = parent.counters();
        assert_eq!(counters.timeouts, 1);
        assert_eq!(counters.evaluate_terminations, 1);
        assert_eq!(counters.policy_verdicts, [("allow".to_string(), 1)]);
        assert_eq!(counters.sessions_ended, [("idle".to_string(), 1)]);
    }
}
