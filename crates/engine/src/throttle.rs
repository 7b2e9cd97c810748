//! Network conditions in DevTools' terms: the throttling presets (their
//! names and figures) and the words and JSON a tool reports a tab's
//! conditions in (`browser_network conditions`, `browser_emulate`). Pure.

use cdp::protocol::network::EmulateNetworkConditions;
use serde_json::{json, Value};

/// DevTools' throttling presets (the figures Chrome DevTools and Puppeteer's
/// `PredefinedNetworkConditions` use): name, latency ms, download and upload
/// bytes per second.
pub const PRESETS: &[(&str, f64, f64, f64)] = &[
    (
        "slow 3g",
        2000.0,
        500.0 * 1000.0 / 8.0 * 0.8,
        500.0 * 1000.0 / 8.0 * 0.8,
    ),
    (
        "fast 3g",
        562.5,
        1.6 * 1000.0 * 1000.0 / 8.0 * 0.9,
        750.0 * 1000.0 / 8.0 * 0.9,
    ),
    (
        "slow 4g",
        562.5,
        1.6 * 1000.0 * 1000.0 / 8.0 * 0.9,
        750.0 * 1000.0 / 8.0 * 0.9,
    ),
    (
        "fast 4g",
        165.0,
        9.0 * 1000.0 * 1000.0 / 8.0 * 0.9,
        1.5 * 1000.0 * 1000.0 / 8.0 * 0.9,
    ),
];

/// The tab's network conditions in words and as JSON.
pub fn describe(conditions: Option<EmulateNetworkConditions>) -> (String, Value) {
    let Some(c) = conditions else {
        return (
            "the browser's own network (no throttling, online)".into(),
            json!(null),
        );
    };
    let kbps = |bytes: f64| (bytes >= 0.0).then(|| (bytes * 8.0 / 1000.0).round());
    let preset = PRESETS
        .iter()
        .find(|(_, l, d, u)| *l == c.latency && *d == c.download_throughput && *u == c.upload_throughput)
        .map(|(name, ..)| *name);
    let mut words = Vec::new();
    if c.offline {
        words.push("offline".to_owned());
    }
    if let Some(name) = preset {
        words.push(format!("throttled as {name}"));
    }
    if c.latency > 0.0 {
        words.push(format!("{} ms latency", c.latency));
    }
    if let Some(k) = kbps(c.download_throughput) {
        words.push(format!("{k} kbit/s down"));
    }
    if let Some(k) = kbps(c.upload_throughput) {
        words.push(format!("{k} kbit/s up"));
    }
    let value = json!({
        "offline": c.offline, "preset": preset, "latency_ms": c.latency,
        "download_kbps": kbps(c.download_throughput), "upload_kbps": kbps(c.upload_throughput),
    });
    (words.join(", "), value)
}
