//! Counters and duration histograms of what the engine did, per tool, plus
//! script terminations, cancellations and browser restarts. Read as JSON
//! (the MCP resource `cdpilot://metrics`, `--log-metrics` at exit).
//!
//! One small lock, held for microseconds to bump numbers.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::ErrorCode;

/// Upper bounds (ms) of the duration histogram's buckets; the last bucket
/// counts everything slower.
pub const BUCKETS_MS: &[u64] = &[5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000];

/// Counts and durations of one session's calls (`cdpilot://metrics`).
#[derive(Default)]
pub struct Metrics {
    inner: Mutex<Totals>,
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
    /// Connections to a live browser opened again after one dropped.
    reconnects: u64,
    /// Audit records that could not be written to `[audit] file` (they are
    /// still in memory).
    audit_write_errors: u64,
}

#[derive(Default, Serialize)]
struct ToolStats {
    calls: u64,
    ok: u64,
    errors: BTreeMap<&'static str, u64>,
    timeouts: u64,
    total_ms: u64,
    max_ms: u64,
    /// Counts per bucket of `BUCKETS_MS`, plus one for slower calls.
    histogram_ms: Vec<u64>,
}

impl Metrics {
    /// Counts one call of `tool` that took `elapsed` and ended with `outcome`.
    pub fn record(&self, tool: &'static str, elapsed: Duration, outcome: Result<(), ErrorCode>) {
        let ms = elapsed.as_millis() as u64;
        let mut totals = self.inner.lock().unwrap();
        let stats = totals.tools.entry(tool).or_default();
        if stats.histogram_ms.is_empty() {
            stats.histogram_ms = vec![0; BUCKETS_MS.len() + 1];
        }
        stats.calls += 1;
        stats.total_ms += ms;
        stats.max_ms = stats.max_ms.max(ms);
        let bucket = BUCKETS_MS
            .iter()
            .position(|b| ms <= *b)
            .unwrap_or(BUCKETS_MS.len());
        stats.histogram_ms[bucket] += 1;
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

    /// Counts a script stopped with `Runtime.terminateExecution`.
    pub fn script_terminated(&self) {
        self.inner.lock().unwrap().terminate_execution += 1;
    }

    /// Counts a reconnect to a live browser.
    pub fn reconnected(&self) {
        self.inner.lock().unwrap().reconnects += 1;
    }

    /// Counts an audit record that could not be written to the audit file.
    pub fn audit_write_failed(&self) {
        self.inner.lock().unwrap().audit_write_errors += 1;
    }

    /// Counts a browser started again after the previous one died.
    pub fn browser_restarted(&self) {
        self.inner.lock().unwrap().browser_restarts += 1;
    }

    /// The totals as JSON.
    pub fn to_json(&self) -> Value {
        let totals = self.inner.lock().unwrap();
        let mut value = serde_json::to_value(&*totals).unwrap_or_default();
        value["histogram_buckets_ms"] = serde_json::json!(BUCKETS_MS);
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
        m.record("browser_wait", Duration::from_secs(60), Err(ErrorCode::Canceled));
        m.script_terminated();
        let j = m.to_json();
        assert_eq!(j["tools"]["browser_click"]["calls"], 2);
        assert_eq!(j["tools"]["browser_click"]["ok"], 1);
        assert_eq!(j["tools"]["browser_click"]["timeouts"], 1);
        assert_eq!(j["tools"]["browser_click"]["errors"]["timeout"], 1);
        assert_eq!(j["tools"]["browser_click"]["histogram_ms"][0], 1);
        assert_eq!(j["tools"]["browser_click"]["histogram_ms"][4], 1);
        assert_eq!(j["tools"]["browser_wait"]["histogram_ms"][BUCKETS_MS.len()], 1);
        assert_eq!(j["cancellations"], 1);
        assert_eq!(j["terminate_execution"], 1);
    }
}
