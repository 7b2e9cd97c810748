//! `/metrics` of `cdpilot serve` in Prometheus text format: calls by tool
//! and outcome, call durations, sessions open and started (here), and what
//! the engine counts (sessions ended by reason, timeouts, script
//! terminations, reconnects, policy verdicts, browser endpoints up).
//!
//! Owns the Prometheus registry. Sessions open and started are counted by
//! [`super::sessions`]; everything else is the engine's count, read at each
//! scrape (`EngineCounts`): calls by tool and outcome and their one
//! duration histogram from [`engine::metrics::Metrics::tool_calls`] (the
//! dispatch counts every call once, whichever front end made it, the
//! dashboard's included), the rest from
//! [`engine::metrics::Metrics::counters`], so the engine keeps one set of
//! numbers and no copy goes stale.

use std::sync::Arc;
use std::time::Duration;

use engine::Engine;
use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry,
    TextEncoder,
};

/// The call duration histogram's name and help.
const DURATION: (&str, &str) = ("cdpilot_call_duration_seconds", "Duration of tool calls.");

pub struct ServeMetrics {
    registry: Registry,
    sessions_open: IntGauge,
    sessions_started: IntCounter,
    /// Asked for the Selenium Grid's numbers at each scrape.
    engine: Arc<Engine>,
}

impl ServeMetrics {
    /// The metrics of a server on `engine`.
    pub fn new(engine: Arc<Engine>) -> Self {
        let registry = Registry::new();
        let sessions_open =
            IntGauge::new("cdpilot_sessions_open", "Sessions open now.").expect("valid metric");
        let sessions_started =
            IntCounter::new("cdpilot_sessions_started_total", "Sessions started.").expect("valid metric");
        for metric in [
            Box::new(sessions_open.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(sessions_started.clone()),
            Box::new(EngineCounts::new(engine.clone())),
        ] {
            registry.register(metric).expect("metric names are unique");
        }
        ServeMetrics {
            registry,
            sessions_open,
            sessions_started,
            engine,
        }
    }
    pub fn session_started(&self) {
        self.sessions_started.inc();
        self.sessions_open.inc();
    }

    /// A session's lease ended (its end, with the reason, is the engine's
    /// count).
    pub fn session_ended(&self) {
        self.sessions_open.dec();
    }

    /// The Prometheus text exposition of everything; with `[browser]
    /// grid`, the Grid's numbers too (its `/status` asked for up to 2 s).
    pub async fn text(&self) -> String {
        let mut families = self.registry.gather();
        if let Some(grid) = self.engine.grid_status(Duration::from_secs(2)).await {
            families.extend(grid_families(&grid));
        }
        let mut out = Vec::new();
        TextEncoder::new()
            .encode(&families, &mut out)
            .expect("text encoding does not fail");
        String::from_utf8(out).expect("the text format is UTF-8")
    }
}

/// The engine's counts, as Prometheus metrics made afresh at each scrape.
struct EngineCounts {
    engine: Arc<Engine>,
    /// The same metrics, empty: their descriptions, which a collector must
    /// give before it is registered.
    shape: EngineMetrics,
}

/// One set of the engine's metrics.
struct EngineMetrics {
    /// `cdpilot_calls_total{tool,outcome}`: outcome `ok` or the error code.
    calls: IntCounterVec,
    /// `cdpilot_call_duration_seconds{tool}`, empty: its description only
    /// (its samples are made from the engine's buckets, see
    /// [`duration_family`]).
    duration: HistogramVec,
    timeouts: IntCounter,
    terminations: IntCounter,
    reconnects: IntCounter,
    restarts: IntCounter,
    idle_closes: IntCounter,
    dropped: IntCounter,
    verdicts: IntCounterVec,
    sessions_ended: IntCounterVec,
    endpoints_up: IntGauge,
    endpoint_up: IntGaugeVec,
    endpoint_sessions: IntGaugeVec,
}

impl EngineMetrics {
    fn new() -> EngineMetrics {
        let counter = |name: &str, help: &str| IntCounter::new(name, help).expect("valid metric");
        let counters = |name: &str, help: &str, label: &str| {
            IntCounterVec::new(Opts::new(name, help), &[label]).expect("valid metric")
        };
        let gauges = |name: &str, help: &str| {
            IntGaugeVec::new(Opts::new(name, help), &["endpoint"]).expect("valid metric")
        };
        EngineMetrics {
            calls: IntCounterVec::new(
                Opts::new(
                    "cdpilot_calls_total",
                    "Tool calls by tool and outcome (ok or the error code).",
                ),
                &["tool", "outcome"],
            )
            .expect("valid metric"),
            duration: HistogramVec::new(
                HistogramOpts::new(DURATION.0, DURATION.1).buckets(engine::metrics::BUCKETS_S.to_vec()),
                &["tool"],
            )
            .expect("valid metric"),
            timeouts: counter(
                "cdpilot_timeouts_total",
                "Tool calls that ran out of their budget.",
            ),
            terminations: counter(
                "cdpilot_evaluate_terminations_total",
                "Scripts stopped with Runtime.terminateExecution (evaluate past its budget, or cancelled).",
            ),
            reconnects: counter(
                "cdpilot_browser_reconnects_total",
                "Connections to a live browser opened again after one dropped.",
            ),
            restarts: counter(
                "cdpilot_browser_restarts_total",
                "Browsers launched again after the previous one died.",
            ),
            idle_closes: counter(
                "cdpilot_browser_idle_closes_total",
                "Launched browsers closed after no session held them for [serve] browser_idle_restart_s.",
            ),
            dropped: counter(
                "cdpilot_cdp_messages_dropped_total",
                "Messages from the browser over the per-message limit (64 MiB), dropped unread.",
            ),
            verdicts: counters(
                "cdpilot_policy_verdicts_total",
                "URL policy verdicts by action (allow, ask, deny).",
                "action",
            ),
            sessions_ended: counters(
                "cdpilot_sessions_ended_total",
                "Sessions ended, by reason (idle, stopped, client_closed, browser_lost).",
                "reason",
            ),
            endpoints_up: IntGauge::new(
                "cdpilot_browser_endpoints_up",
                "Browser endpoints not taken out after a failure.",
            )
            .expect("valid metric"),
            endpoint_up: gauges(
                "cdpilot_browser_endpoint_up",
                "1 if this browser endpoint is up, 0 while it is taken out.",
            ),
            endpoint_sessions: gauges(
                "cdpilot_browser_endpoint_sessions",
                "Sessions placed on this browser endpoint.",
            ),
        }
    }

    /// Every metric made by incrementing (not the duration histogram).
    fn collectors(&self) -> [&dyn Collector; 12] {
        [
            &self.dropped,
            &self.calls,
            &self.timeouts,
            &self.terminations,
            &self.reconnects,
            &self.restarts,
            &self.idle_closes,
            &self.verdicts,
            &self.sessions_ended,
            &self.endpoints_up,
            &self.endpoint_up,
            &self.endpoint_sessions,
        ]
    }
}

impl EngineCounts {
    fn new(engine: Arc<Engine>) -> EngineCounts {
        EngineCounts {
            engine,
            shape: EngineMetrics::new(),
        }
    }
}

impl Collector for EngineCounts {
    fn desc(&self) -> Vec<&Desc> {
        self.shape
            .collectors()
            .into_iter()
            .chain([&self.shape.duration as &dyn Collector])
            .flat_map(|c| c.desc())
            .collect()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let now = EngineMetrics::new();
        let tools = self.engine.metrics().tool_calls();
        for tool in &tools {
            for (outcome, n) in &tool.outcomes {
                now.calls.with_label_values(&[tool.tool, outcome]).inc_by(*n);
            }
        }
        let counters = self.engine.metrics().counters();
        now.timeouts.inc_by(counters.timeouts);
        now.terminations.inc_by(counters.evaluate_terminations);
        now.reconnects.inc_by(counters.reconnects);
        now.restarts.inc_by(counters.browser_restarts);
        now.idle_closes.inc_by(counters.browser_idle_closes);
        now.dropped.inc_by(counters.messages_dropped);
        for (action, n) in &counters.policy_verdicts {
            now.verdicts.with_label_values(&[action]).inc_by(*n);
        }
        for (reason, n) in &counters.sessions_ended {
            now.sessions_ended.with_label_values(&[reason]).inc_by(*n);
        }
        let endpoints = self.engine.browser_endpoints();
        now.endpoints_up
            .set(endpoints.iter().filter(|e| e.up).count() as i64);
        for endpoint in &endpoints {
            now.endpoint_up
                .with_label_values(&[&endpoint.url])
                .set(endpoint.up as i64);
            now.endpoint_sessions
                .with_label_values(&[&endpoint.url])
                .set(endpoint.sessions as i64);
        }
        let mut families: Vec<MetricFamily> =
            now.collectors().into_iter().flat_map(|c| c.collect()).collect();
        families.push(duration_family(&tools));
        families
    }
}

/// `cdpilot_call_duration_seconds{tool}` from the engine's histogram (its
/// buckets are counted per bucket; Prometheus' are cumulative).
fn duration_family(tools: &[engine::metrics::ToolCalls]) -> MetricFamily {
    use prometheus::proto::{Bucket, Histogram, LabelPair, Metric, MetricType};
    let metrics = tools
        .iter()
        .map(|tool| {
            let mut cumulative = 0;
            let buckets = engine::metrics::BUCKETS_S
                .iter()
                .zip(&tool.histogram)
                .map(|(bound, n)| {
                    cumulative += n;
                    let mut bucket = Bucket::default();
                    bucket.set_upper_bound(*bound);
                    bucket.set_cumulative_count(cumulative);
                    bucket
                })
                .collect();
            let mut histogram = Histogram::default();
            histogram.set_bucket(buckets);
            histogram.set_sample_count(tool.histogram.iter().sum());
            histogram.set_sample_sum(tool.seconds);
            let mut label = LabelPair::default();
            label.set_name("tool".into());
            label.set_value(tool.tool.into());
            let mut metric = Metric::default();
            metric.set_label(vec![label]);
            metric.set_histogram(histogram);
            metric
        })
        .collect();
    let mut family = MetricFamily::default();
    family.set_name(DURATION.0.into());
    family.set_help(DURATION.1.into());
    family.set_field_type(MetricType::HISTOGRAM);
    family.set_metric(metrics);
    family
}

/// The Selenium Grid's numbers as metric families (made afresh per scrape).
fn grid_families(grid: &engine::GridStatus) -> Vec<MetricFamily> {
    let gauge = |name: &str, help: &str, value: f64| {
        let g = prometheus::Gauge::new(name, help).expect("valid metric");
        g.set(value);
        g.collect()
    };
    let mut families = Vec::new();
    families.extend(gauge(
        "cdpilot_grid_sessions_open",
        "Selenium Grid sessions this server made and has not deleted.",
        grid.sessions_open as f64,
    ));
    let made = IntCounter::new(
        "cdpilot_grid_sessions_total",
        "Selenium Grid sessions made since start.",
    )
    .expect("valid metric");
    made.inc_by(grid.sessions_made);
    families.extend(made.collect());
    families.extend(gauge(
        "cdpilot_grid_requests_waiting",
        "New-session requests of this server the Grid has not answered yet (queued or starting).",
        grid.requests_waiting as f64,
    ));
    if let Some(queued) = grid.queued_at_hub {
        families.extend(gauge(
            "cdpilot_grid_queue_size",
            "New-session requests in the Grid's queue (every client's).",
            queued as f64,
        ));
    }
    // A summary without quantiles: the sum and count of the waits.
    let wait = prometheus::Counter::new(
        "cdpilot_grid_queue_wait_seconds_sum",
        "Seconds new-session requests waited for the Grid's answer (queue and browser start), summed.",
    )
    .expect("valid metric");
    wait.inc_by(grid.wait_seconds_sum);
    families.extend(wait.collect());
    let count = IntCounter::new(
        "cdpilot_grid_queue_wait_seconds_count",
        "New-session requests the Grid answered.",
    )
    .expect("valid metric");
    count.inc_by(grid.wait_count);
    families.extend(count.collect());
    let nodes = IntGaugeVec::new(
        Opts::new(
            "cdpilot_grid_node_sessions",
            "Sessions on each Grid node, from the hub's /status (every client's).",
        ),
        &["node"],
    )
    .expect("valid metric");
    for (node, sessions) in &grid.nodes {
        nodes.with_label_values(&[node]).set(*sessions as i64);
    }
    families.extend(nodes.collect());
    families
}
