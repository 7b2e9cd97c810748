//! `/metrics` of `cdpilot serve` in Prometheus text format: calls by tool
//! and outcome, call durations, sessions open, started and ended.
//!
//! Owns the Prometheus registry. Calls are recorded by the transports at
//! their edge (one record per tool call, whichever front end made it);
//! sessions by [`super::sessions`].

use std::time::Duration;

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry, TextEncoder,
};

pub struct ServeMetrics {
    registry: Registry,
    /// `cdpilot_calls_total{tool,outcome}`: outcome `ok` or the error code.
    calls: IntCounterVec,
    /// `cdpilot_call_duration_seconds{tool}`.
    duration: HistogramVec,
    sessions_open: IntGauge,
    sessions_started: IntCounter,
    sessions_ended: IntCounter,
}

impl Default for ServeMetrics {
    fn default() -> Self {
        let registry = Registry::new();
        let calls = IntCounterVec::new(
            Opts::new(
                "cdpilot_calls_total",
                "Tool calls by tool and outcome (ok or the error code).",
            ),
            &["tool", "outcome"],
        )
        .expect("valid metric");
        let duration = HistogramVec::new(
            HistogramOpts::new("cdpilot_call_duration_seconds", "Duration of tool calls.")
                .buckets(vec![0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0]),
            &["tool"],
        )
        .expect("valid metric");
        let sessions_open =
            IntGauge::new("cdpilot_sessions_open", "Sessions open now.").expect("valid metric");
        let sessions_started =
            IntCounter::new("cdpilot_sessions_started_total", "Sessions started.").expect("valid metric");
        let sessions_ended =
            IntCounter::new("cdpilot_sessions_ended_total", "Sessions ended.").expect("valid metric");
        for metric in [
            Box::new(calls.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(duration.clone()),
            Box::new(sessions_open.clone()),
            Box::new(sessions_started.clone()),
            Box::new(sessions_ended.clone()),
        ] {
            registry.register(metric).expect("metric names are unique");
        }
        ServeMetrics {
            registry,
            calls,
            duration,
            sessions_open,
            sessions_started,
            sessions_ended,
        }
    }
}

impl ServeMetrics {
    /// One finished tool call; `outcome` is `ok` or the error code.
    pub fn call(&self, tool: &str, outcome: &str, elapsed: Duration) {
        // Unknown tool names come from clients: do not let them grow the label set.
        let tool = engine::tools::find(tool).map_or("unknown", |t| t.name);
        self.calls.with_label_values(&[tool, outcome]).inc();
        self.duration
            .with_label_values(&[tool])
            .observe(elapsed.as_secs_f64());
    }

    pub fn session_started(&self) {
        self.sessions_started.inc();
        self.sessions_open.inc();
    }

    pub fn session_ended(&self) {
        self.sessions_ended.inc();
        self.sessions_open.dec();
    }

    /// The Prometheus text exposition of everything.
    pub fn text(&self) -> String {
        let mut out = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut out)
            .expect("text encoding does not fail");
        String::from_utf8(out).expect("the text format is UTF-8")
    }
}
