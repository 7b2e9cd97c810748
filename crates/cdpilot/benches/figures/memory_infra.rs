//! What Chromium says it holds, by process and allocator: one memory dump
//! of its own accounting (`memory-infra`: `Tracing.start` with the
//! `disabled-by-default-memory-infra` category, `Tracing.requestMemoryDump`)
//! read over a browser-level CDP connection. The sessions bench's `infra`
//! run prints it at its three stages (issue 24).

use std::collections::BTreeMap;
use std::time::Duration;

use cdp::Connection;
use serde_json::{json, Value};

/// One process of the dump: its kind and what it holds, in bytes.
#[derive(Debug, Default, Clone)]
pub struct ProcessDump {
    pub pid: u64,
    /// `Browser`, `Renderer`, `GPU Process`, the utility's service name…
    pub name: String,
    /// Chromium's "memory footprint" of the process (its private memory,
    /// swap included): what its task manager shows.
    pub private_footprint: u64,
    /// Each allocator dump's `size` by name (`malloc`, `partition_alloc`,
    /// `v8`, `blink_gc`, `net`, `sqlite`, `discardable`, `cc`, `skia`,
    /// `font_caches`…). Top-level dumps and a few chosen children; they
    /// overlap (`net` and `sqlite` are objects inside `malloc`).
    pub allocators: BTreeMap<String, u64>,
}

/// The allocator dumps printed below the top level: the ones whose split
/// says where memory went.
const CHILDREN: &[&str] = &[
    "malloc/allocated_objects",
    "partition_alloc/allocated_objects",
    "v8/main/heap",
    "v8/main/malloc",
    "v8/utility/heap",
    "blink_gc/main/heap",
    "net/url_request_context",
    "net/http_network_session_0x",
];

/// Requests one deterministic (a garbage collection first), detailed memory
/// dump of every process and reads it back.
pub async fn dump(conn: &Connection) -> Vec<ProcessDump> {
    let browser = conn.browser();
    let deadline = || tokio::time::Instant::now() + Duration::from_secs(60);
    let mut events = conn.events(Some(""));
    browser
        .send(
            "Tracing.start",
            json!({
                "traceConfig": {
                    "includedCategories": ["disabled-by-default-memory-infra"],
                    "excludedCategories": ["*"],
                    "memoryDumpConfig": {"triggers": []},
                },
                "transferMode": "ReturnAsStream",
            }),
            deadline(),
        )
        .await
        .expect("Tracing.start");
    let dumped = browser
        .send(
            "Tracing.requestMemoryDump",
            json!({"deterministic": true, "levelOfDetail": "detailed"}),
            deadline(),
        )
        .await
        .expect("Tracing.requestMemoryDump");
    assert_eq!(dumped["success"], json!(true), "memory dump: {dumped}");
    browser
        .send("Tracing.end", json!({}), deadline())
        .await
        .expect("Tracing.end");
    let stream = loop {
        let event = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .expect("Tracing.tracingComplete within 60 s")
            .expect("connection open");
        if event.method == "Tracing.tracingComplete" {
            let params: Value = serde_json::from_str(event.params()).unwrap_or_default();
            break params["stream"].as_str().unwrap_or_default().to_owned();
        }
    };
    let mut text = Vec::new();
    loop {
        let chunk = browser
            .send("IO.read", json!({"handle": stream, "size": 1 << 20}), deadline())
            .await
            .expect("IO.read");
        let data = chunk["data"].as_str().unwrap_or_default();
        if chunk["base64Encoded"] == json!(true) {
            use base64::Engine as _;
            text.extend(
                base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .unwrap_or_default(),
            );
        } else {
            text.extend_from_slice(data.as_bytes());
        }
        if chunk["eof"] == json!(true) {
            break;
        }
    }
    let _ = browser
        .send("IO.close", json!({"handle": stream}), deadline())
        .await;
    parse(&serde_json::from_slice(&text).expect("a JSON trace"))
}

/// The processes of a JSON trace's memory dump events (`"ph": "v"`),
/// named by its `process_name` metadata.
fn parse(trace: &Value) -> Vec<ProcessDump> {
    let events = trace["traceEvents"]
        .as_array()
        .or_else(|| trace.as_array())
        .cloned()
        .unwrap_or_default();
    let mut names: BTreeMap<u64, String> = BTreeMap::new();
    let mut dumps: BTreeMap<u64, ProcessDump> = BTreeMap::new();
    let hex = |v: &Value| {
        v["value"]
            .as_str()
            .and_then(|s| u64::from_str_radix(s, 16).ok())
            .unwrap_or(0)
    };
    for event in &events {
        let pid = event["pid"].as_u64().unwrap_or(0);
        match event["ph"].as_str() {
            Some("M")
                if event["name"] == "process_labels"
                    && std::env::var_os("CDPILOT_INFRA_LABELS").is_some() =>
            {
                println!("    pid {pid}: labels {}", event["args"]["labels"]);
            }
            Some("M") if event["name"] == "process_name" => {
                names.insert(pid, event["args"]["name"].as_str().unwrap_or("").to_owned());
            }
            Some("v") => {
                let dumped = &event["args"]["dumps"];
                let entry = dumps.entry(pid).or_insert_with(|| ProcessDump {
                    pid,
                    ..Default::default()
                });
                if let Some(totals) = dumped.get("process_totals") {
                    let footprint = totals["private_footprint_bytes"]
                        .as_str()
                        .and_then(|s| u64::from_str_radix(s, 16).ok());
                    if let Some(f) = footprint {
                        entry.private_footprint = f;
                    }
                }
                for (name, dump) in dumped["allocators"].as_object().into_iter().flatten() {
                    let wanted = !name.contains('/')
                        || CHILDREN.iter().any(|c| {
                            name.starts_with(c) && name.matches('/').count() == c.matches('/').count()
                        });
                    let size = hex(&dump["attrs"]["size"]);
                    if wanted && size > 0 {
                        let key = if name.starts_with("net/http_network_session_0x") {
                            "net/http_network_session".to_owned()
                        } else {
                            name.clone()
                        };
                        *entry.allocators.entry(key).or_default() += size;
                    }
                }
            }
            _ => {}
        }
    }
    dumps
        .into_values()
        .map(|mut d| {
            d.name = names.get(&d.pid).cloned().unwrap_or_else(|| "?".into());
            d
        })
        .collect()
}

/// A process kind for grouping: renderers together, each service alone.
fn kind(name: &str) -> String {
    match name {
        n if n.contains("network") || n.contains("Network") => "network service".into(),
        n if n.contains("Storage") || n.contains("storage") => "storage service".into(),
        "Browser" => "browser".into(),
        "Renderer" => "renderer".into(),
        "GPU Process" => "gpu".into(),
        other => other.to_owned(),
    }
}

/// Per kind: how many processes, their footprint and each allocator, in
/// bytes (summed over the kind's processes).
pub type Summary = BTreeMap<String, (usize, u64, BTreeMap<String, u64>)>;

pub fn summarize(dumps: &[ProcessDump]) -> Summary {
    let mut out: Summary = BTreeMap::new();
    for d in dumps {
        let entry = out.entry(kind(&d.name)).or_default();
        entry.0 += 1;
        entry.1 += d.private_footprint;
        for (name, size) in &d.allocators {
            *entry.2.entry(name.clone()).or_default() += size;
        }
    }
    out
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Prints a summary: a line per process kind, its footprint and its
/// allocators of at least 0.5 MiB, largest first.
pub fn print(label: &str, summary: &Summary) {
    let total: u64 = summary.values().map(|k| k.1).sum();
    println!("{label}: Chromium's footprint {:.1} MiB", mib(total));
    for (kind, (count, footprint, allocators)) in summary {
        let mut parts: Vec<(&String, &u64)> = allocators.iter().filter(|(_, s)| **s >= 512 * 1024).collect();
        parts.sort_by_key(|p| std::cmp::Reverse(*p.1));
        let parts: Vec<String> = parts
            .iter()
            .map(|(n, s)| format!("{n} {:.1}", mib(**s)))
            .collect();
        println!(
            "  {kind} ×{count}: {:.1} MiB [{}]",
            mib(*footprint),
            parts.join(", ")
        );
    }
}

/// What changed from `a` to `b` per kind (footprint and allocators moving
/// by at least 0.5 MiB), in MiB, divided by `per` (1: the plain change).
pub fn print_change(label: &str, a: &Summary, b: &Summary, per: usize) {
    let per = per.max(1) as f64;
    let total = |s: &Summary| s.values().map(|k| k.1).sum::<u64>() as f64;
    println!(
        "{label}: {:+.1} MiB",
        (total(b) - total(a)) / per / (1024.0 * 1024.0)
    );
    let kinds: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let empty = (0, 0, BTreeMap::new());
    for kind in kinds {
        let (ka, kb) = (a.get(kind).unwrap_or(&empty), b.get(kind).unwrap_or(&empty));
        let names: std::collections::BTreeSet<&String> = ka.2.keys().chain(kb.2.keys()).collect();
        let mut moved: Vec<(String, f64)> = names
            .into_iter()
            .map(|n| {
                let d = *kb.2.get(n).unwrap_or(&0) as f64 - *ka.2.get(n).unwrap_or(&0) as f64;
                (n.clone(), d / per / (1024.0 * 1024.0))
            })
            .filter(|(_, d)| d.abs() >= 0.5 / per.clamp(1.0, 8.0))
            .collect();
        moved.sort_by(|x, y| y.1.abs().total_cmp(&x.1.abs()));
        let moved: Vec<String> = moved.iter().map(|(n, d)| format!("{n} {d:+.1}")).collect();
        println!(
            "  {kind} ×{}→{}: {:+.1} MiB [{}]",
            ka.0,
            kb.0,
            (kb.1 as f64 - ka.1 as f64) / per / (1024.0 * 1024.0),
            moved.join(", ")
        );
    }
}
