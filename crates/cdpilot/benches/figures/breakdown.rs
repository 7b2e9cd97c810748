//! `-- breakdown`: where the milliseconds of a snapshot, a click and the
//! first navigate (the browser's start) go, step by step, from the server's
//! `CDPILOT_TIMINGS` file.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use testkit::snapshot::ref_of as ref_on_line;
use testkit::TestSite;

use crate::common::*;

/// One call's steps from the server's timings file: the summed wall time
/// of each step (a step may run once per frame), by name.
type Steps = BTreeMap<String, f64>;

/// Reads the timings file from line `from` on; returns the calls it closes
/// (a call ends with its `dispatch` line) and the next line to read.
fn calls_in(path: &std::path::Path, from: usize) -> (Vec<(Steps, Vec<String>)>, usize) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let mut calls = Vec::new();
    let mut steps = Steps::new();
    let mut order = Vec::new();
    let mut next = from;
    for (i, line) in lines.iter().enumerate().skip(from) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let (Some(step), Some(took)) = (v["step"].as_str(), v["ms"].as_f64()) else {
            continue;
        };
        if !steps.contains_key(step) {
            order.push(step.to_owned());
        }
        *steps.entry(step.to_owned()).or_default() += took;
        if step == "dispatch" {
            calls.push((std::mem::take(&mut steps), std::mem::take(&mut order)));
            next = i + 1;
        }
    }
    (calls, next)
}

/// Prints the median of each step over `calls`, with the client's wall
/// times, and what MCP adds (wall minus the dispatch).
fn print_steps(title: &str, calls: &[(Steps, Vec<String>)], walls: &[Duration]) {
    println!("\n{title} ({} calls; medians)", calls.len());
    let mut order: Vec<String> = Vec::new();
    for (_, steps) in calls {
        for s in steps {
            if !order.contains(s) {
                order.push(s.clone());
            }
        }
    }
    let median_of = |values: Vec<f64>| {
        let mut values = values;
        values.sort_by(|a, b| a.partial_cmp(b).unwrap());
        values.get(values.len() / 2).copied().unwrap_or(0.0)
    };
    for step in &order {
        let values = calls
            .iter()
            .map(|(c, _)| c.get(step).copied().unwrap_or(0.0))
            .collect();
        println!("  {step:<28} {:>9.2} ms", median_of(values));
    }
    let wall = median(walls.to_vec());
    let dispatch = median_of(calls.iter().map(|(c, _)| c["dispatch"]).collect());
    println!("  {:<28} {:>9.2} ms", "client wall", wall.as_secs_f64() * 1000.0);
    println!(
        "  {:<28} {:>9.2} ms",
        "MCP (wall − dispatch)",
        wall.as_secs_f64() * 1000.0 - dispatch
    );
}

/// `-- breakdown`: where the milliseconds go, step by step.
pub async fn figures(site: &TestSite, parts: &[&str]) {
    let dir = tempfile::tempdir().expect("temp dir");
    println!("cdpilot step timings (CDPILOT_TIMINGS; release build)");
    let wanted = |part: &str| parts.is_empty() || parts.contains(&part);

    // The first navigate of a fresh server: the browser's start.
    let mut calls = Vec::new();
    let mut walls = Vec::new();
    for i in 0..if wanted("launch") { 5 } else { 0 } {
        let path = dir.path().join(format!("launch-{i}.jsonl"));
        let timings = [("CDPILOT_TIMINGS", path.to_str().unwrap())];
        walls.push(first_navigate(site, &timings, Duration::ZERO).await);
        calls.extend(calls_in(&path, 0).0);
    }
    if wanted("launch") {
        print_steps("first navigate incl. browser launch", &calls, &walls);
    }

    let path = dir.path().join("run.jsonl");
    let mut client = spawn_with(&[], &[("CDPILOT_TIMINGS", path.to_str().unwrap())]);
    client.initialize().await;
    let mut read = 0;
    for count in [5_000usize, 20_000] {
        if !wanted("snapshot") {
            break;
        }
        client
            .call(
                "browser_navigate",
                json!({"url": site.url(&format!("/controls/{count}"))}),
            )
            .await;
        read = calls_in(&path, read).1;
        let mut walls = Vec::new();
        for _ in 0..7 {
            let began = Instant::now();
            client
                .call("browser_snapshot", json!({"max_elements": 1_000_000}))
                .await;
            walls.push(began.elapsed());
        }
        let (calls, next) = calls_in(&path, read);
        read = next;
        print_steps(&format!("full snapshot, {count} controls"), &calls, &walls);
        // The floor (issue 46): an in-page TreeWalker visiting every
        // element, through the same MCP round trip.
        let walker = "(() => { const w = document.createTreeWalker(document.documentElement, NodeFilter.SHOW_ELEMENT); let n = 0; while (w.nextNode()) n++; return n; })()";
        let mut floor = Vec::new();
        for _ in 0..7 {
            let began = Instant::now();
            client
                .call("browser_evaluate", json!({"expression": walker}))
                .await;
            floor.push(began.elapsed());
        }
        read = calls_in(&path, read).1;
        let (floor, wall) = (median(floor), median(walls));
        println!(
            "  TreeWalker over every element through MCP: {:.2} ms; the snapshot is {:.1}x it",
            floor.as_secs_f64() * 1000.0,
            wall.as_secs_f64() / floor.as_secs_f64()
        );
        // A fresh document's first snapshot (nothing to reuse), at once
        // after the navigate and after the second a model takes to read
        // its answer, in which the scan the navigate started runs.
        for (pause, when) in [
            (Duration::ZERO, ""),
            (Duration::from_secs(1), " 1 s after the navigate"),
        ] {
            let mut firsts = Vec::new();
            let mut first_calls = Vec::new();
            for i in 0..5 {
                let url = site.url(&format!("/controls/{count}?first={i}&pause={}", pause.as_secs()));
                client.call("browser_navigate", json!({"url": url})).await;
                tokio::time::sleep(pause).await;
                read = calls_in(&path, read).1;
                let began = Instant::now();
                client
                    .call("browser_snapshot", json!({"max_elements": 1_000_000}))
                    .await;
                firsts.push(began.elapsed());
                let (calls, next) = calls_in(&path, read);
                read = next;
                first_calls.extend(calls);
            }
            print_steps(
                &format!("first full snapshot of a fresh document{when}, {count} controls"),
                &first_calls,
                &firsts,
            );
            let first = median(firsts);
            println!(
                "  first full snapshot of a fresh document{when}: {:.2} ms ({:.1}x the TreeWalker)",
                first.as_secs_f64() * 1000.0,
                first.as_secs_f64() / floor.as_secs_f64()
            );
        }
    }

    for (label, page, needle) in [
        ("small page", "/".to_owned(), "button \"Trusted click\""),
        (
            "5,000-control page",
            "/controls/5000".to_owned(),
            "button \"Buy 2500\"",
        ),
    ] {
        if !wanted("click") {
            break;
        }
        client
            .call("browser_navigate", json!({"url": site.url(&page)}))
            .await;
        let snap = text_of(
            &client
                .call("browser_snapshot", json!({"max_elements": 1_000_000}))
                .await,
        );
        read = calls_in(&path, read).1;
        let reference = ref_on_line(&snap, needle);
        let mut walls = Vec::new();
        for _ in 0..15 {
            let began = Instant::now();
            client.call("browser_click", json!({"ref": reference})).await;
            walls.push(began.elapsed());
        }
        let (calls, next) = calls_in(&path, read);
        read = next;
        print_steps(&format!("click by ref, {label}"), &calls, &walls);
    }

    let (mut first, mut second) = (Vec::new(), Vec::new());
    let (mut first_walls, mut second_walls) = (Vec::new(), Vec::new());
    for i in 0..if wanted("frames") { 5 } else { 0 } {
        client
            .call(
                "browser_navigate",
                json!({"url": site.url(&format!("/frames5.html?n={i}"))}),
            )
            .await;
        read = calls_in(&path, read).1;
        for (calls, walls) in [(&mut first, &mut first_walls), (&mut second, &mut second_walls)] {
            let began = Instant::now();
            client.call("browser_snapshot", json!({})).await;
            walls.push(began.elapsed());
            let (got, next) = calls_in(&path, read);
            read = next;
            calls.extend(got);
        }
    }
    if wanted("frames") {
        print_steps("five cross-origin iframes, first snapshot", &first, &first_walls);
        print_steps(
            "five cross-origin iframes, second snapshot",
            &second,
            &second_walls,
        );
    }
    shutdown(client).await;
}
