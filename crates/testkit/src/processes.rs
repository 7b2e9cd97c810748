//! Looking at processes from a test: which live ones match, and waiting
//! (bounded) for a condition that offers no event to await, such as a
//! process we did not spawn exiting.

use std::path::Path;
use std::time::Duration;

/// Pids of live processes whose command line mentions `dir`.
pub fn mentioning(dir: &Path) -> Vec<u32> {
    matching(|cmdline, _| cmdline.contains(dir.to_str().unwrap()))
}

/// Pids of live processes in session `sid` (Chromium leads its own).
pub fn in_session(sid: u32) -> Vec<u32> {
    matching(|_, stat| stat_field(stat, 3) == Some(sid))
}

/// Pids of live children of `parent`.
pub fn children_of(parent: u32) -> Vec<u32> {
    matching(|_, stat| stat_field(stat, 1) == Some(parent))
}

/// Whether process `pid` has exited for good: every thread of it is done
/// (a zombie or gone). Only then is everything it held closed, pipes
/// included: a killed process's main thread shows 'Z' (and an empty
/// command line) while its other threads are still closing its files.
pub fn exited(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return true;
    };
    tasks.flatten().all(|task| {
        std::fs::read_to_string(task.path().join("stat")).map_or(true, |stat| {
            stat.rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().next())
                .is_none_or(|state| state == "Z" || state == "X")
        })
    })
}

/// Field `n` after the command name in `/proc/PID/stat` (1: ppid, 2: pgrp,
/// 3: session).
fn stat_field(stat: &str, n: usize) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    if state == "Z" {
        return None; // a zombie is gone in all but name
    }
    fields.nth(n - 1)?.parse().ok()
}

/// Pids whose `(cmdline, stat)` satisfy `matches`.
pub fn matching(matches: impl Fn(&str, &str) -> bool) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            !cmdline.is_empty() && matches(&cmdline, &stat)
        })
        .collect()
}

/// Re-checks `condition` every 50 ms until it holds or `limit` passes.
/// (Processes we did not spawn offer no exit event to await.)
pub async fn wait_until(limit: Duration, condition: impl Fn() -> bool) -> bool {
    let mut tick = tokio::time::interval(Duration::from_millis(50));
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        tick.tick().await;
        if condition() {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
    }
}
