//! What a trace costs (issue 43): a click and a snapshot, each call's
//! median, on a one-button page (`counter.html`) and on the 5,000-control
//! page (`/controls/5000`), with tracing off, on without screenshots, and
//! on (the default: a JPEG after each call that acts, the responses'
//! bodies), and on with `[trace] video` (the screencast's frames kept
//! between steps); then the trace's size per 100 steps. Each twice: back to back
//! (the next call waits for the step the last one is still writing) and
//! with [`PAUSE`] between calls, as a model thinks (a step with a
//! screenshot is written after its call answered). Run alone:
//! `cargo bench -p cdpilot --bench figures -- trace`.

use std::path::Path;
use std::time::Instant;

use serde_json::json;
use testkit::TestSite;

use crate::common::*;

/// Calls of each kind a run measures.
const CALLS: usize = 30;

/// The time between calls in the second half of a run: less than a model
/// takes to answer.
const PAUSE: std::time::Duration = std::time::Duration::from_millis(300);

pub async fn figures(site: &TestSite) {
    println!(
        "\nTracing (medians of {CALLS} each)                 back to back: click  snapshot | {} ms apart: click  snapshot | trace per 100 steps",
        PAUSE.as_millis()
    );
    for (page, button) in [
        ("/counter.html", "button \"Add one\""),
        ("/controls/5000", "button \"Buy 1\""),
    ] {
        for mode in ["off", "on, no screenshots", "on", "on, video"] {
            let tmp = tempfile::tempdir().unwrap();
            let traces = tmp.path().join("traces");
            let config = tmp.path().join("cdpilot.toml");
            let screenshots = mode != "on, no screenshots";
            let video = mode == "on, video";
            std::fs::write(
                &config,
                format!("[trace]\nscreenshots = {screenshots}\nvideo = {video}\n"),
            )
            .unwrap();
            let mut args = vec!["--config", config.to_str().unwrap()];
            let dir = traces.display().to_string();
            if mode != "off" {
                args.extend(["--trace", dir.as_str()]);
            }
            let mut client = spawn_with(&args, &[]);
            client.initialize().await;
            client
                .call("browser_navigate", json!({"url": site.url(page)}))
                .await;
            let snap = client.call("browser_snapshot", json!({})).await;
            let text = snap["content"][0]["text"].as_str().unwrap_or_default().to_owned();
            let target = testkit::snapshot::ref_of(&text, button);
            let mut medians = Vec::new();
            for pause in [std::time::Duration::ZERO, PAUSE] {
                let (mut clicks, mut snapshots) = (Vec::new(), Vec::new());
                for _ in 0..CALLS {
                    tokio::time::sleep(pause).await;
                    let began = Instant::now();
                    client.call("browser_click", json!({"ref": target})).await;
                    clicks.push(began.elapsed());
                    tokio::time::sleep(pause).await;
                    let began = Instant::now();
                    client.call("browser_snapshot", json!({})).await;
                    snapshots.push(began.elapsed());
                }
                medians.push(format!("{:>10} {:>9}", ms(median(clicks)), ms(median(snapshots))));
            }
            shutdown(client).await;
            let size = match mode {
                "off" => String::new(),
                _ => {
                    let (bytes, steps) = size_and_steps(&traces);
                    format!("{:.0} KB", bytes as f64 / 1024.0 * 100.0 / steps.max(1) as f64)
                }
            };
            println!("  {page:<16} {mode:<20} {} | {} | {size}", medians[0], medians[1]);
        }
    }
}

/// The bytes under `base` and the steps its trace holds.
fn size_and_steps(base: &Path) -> (u64, usize) {
    let mut bytes = 0;
    let mut steps = 0;
    let mut stack = vec![base.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            bytes += entry.metadata().map_or(0, |m| m.len());
            if path.file_name().is_some_and(|n| n == "trace.jsonl") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                steps += text
                    .lines()
                    .filter(|l| l.starts_with("{\"kind\":\"step\""))
                    .count();
            }
        }
    }
    (bytes, steps)
}
