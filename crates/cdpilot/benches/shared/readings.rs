//! What the benches read from the machine and their settings: a process's
//! RSS, the load average printed beside every figure, a percentile of
//! sorted samples, and a setting from the environment.

use std::time::Duration;

/// A setting from the environment variable `name`, else `default`.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Process `pid`'s resident memory in MiB (0 when it is gone).
pub fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib: u64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    kib as f64 / 1024.0
}

/// `/proc/loadavg`'s 1-, 5- and 15-minute figures.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `p` (0–1) percentile of `sorted` (zero when empty).
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

/// Process `pid`'s resident memory by kind in MiB: (anonymous — the heap,
/// thread stacks —, file-backed — the binary's code pages it touched), from
/// `/proc/PID/status` (0 when it is gone).
pub fn rss_parts_mib(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| -> f64 {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0) as f64
            / 1024.0
    };
    (field("RssAnon:"), field("RssFile:"))
}
