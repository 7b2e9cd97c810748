//! Issue 20, the browser's own doors, tried as an attacker would: a local
//! user looking for a DevTools port, and a hostile page opening popups,
//! prerenders and service workers towards a "denied" logging server that
//! must see nothing (no request, no connection).

mod common;

use std::collections::HashSet;
use std::time::Duration;

use cdp::launch::{launch, Debugging, LaunchOptions};
use common::{engine_with, ok};
use engine::config::Rule;
use engine::Engine;
use serde_json::json;
use testkit::processes::children_of;

/// Every process under `root` (itself included).
fn process_tree(root: u32) -> Vec<u32> {
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        tree.extend(children_of(tree[i]));
        i += 1;
    }
    tree
}

/// Inodes of the sockets `pids` hold open.
fn socket_inodes(pids: &[u32]) -> HashSet<u64> {
    let mut inodes = HashSet::new();
    for pid in pids {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let Ok(target) = std::fs::read_link(fd.path()) else {
                continue;
            };
            let target = target.to_string_lossy();
            if let Some(inode) = target.strip_prefix("socket:[").and_then(|s| s.strip_suffix(']')) {
                inodes.extend(inode.parse::<u64>().ok());
            }
        }
    }
    inodes
}

/// Inodes of listening TCP sockets (IPv4 and IPv6), with their local
/// address as the kernel prints it.
fn listening_tcp() -> Vec<(u64, String)> {
    let mut listening = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            if fields.len() > 9 && fields[3] == "0A" {
                if let Ok(inode) = fields[9].parse() {
                    listening.push((inode, fields[1].to_owned()));
                }
            }
        }
    }
    listening
}

/// The listening TCP sockets that belong to the process tree under `root`.
fn listeners_of(root: u32) -> Vec<String> {
    let inodes = socket_inodes(&process_tree(root));
    listening_tcp()
        .into_iter()
        .filter(|(inode, _)| inodes.contains(inode))
        .map(|(_, address)| address)
        .collect()
}

/// An engine whose rules deny `patterns` (everything else allowed).
pub fn denying(patterns: &[String]) -> Engine {
    let patterns = patterns.to_vec();
    engine_with(move |c| {
        for pattern in patterns {
            c.policy.rules.push(Rule {
                pattern,
                action: "deny".into(),
                origin: None,
            });
        }
    })
}

/// Issue 20, finding 10: a browser cdpilot launched listened on
/// `--remote-debugging-port=0`, so any local user could list every
/// session's tabs and run script in them. It is driven over the DevTools
/// pipe now: no process of its tree holds a listening TCP socket.
#[tokio::test]
async fn a_launched_browser_listens_on_no_tcp_port() {
    // The check itself, against a browser that does open a port.
    let with_port = launch(
        &LaunchOptions {
            executable: Some(testkit::chromium::executable()),
            headless: true,
            debugging: Debugging::Port,
            ..Default::default()
        },
        Duration::from_secs(30),
    )
    .await
    .expect("launch");
    let listeners = listeners_of(with_port.guard_pid().unwrap());
    assert!(!listeners.is_empty(), "a DevTools port is seen by this check");
    with_port.shutdown(Duration::from_secs(10)).await;

    let site = testkit::TestSite::start().await;
    let engine = common::engine();
    ok(&engine, "browser_navigate", json!({"url": site.url("/frames.html")})).await;
    ok(&engine, "browser_evaluate", json!({"expression": "1+1"})).await;
    let guard = engine.current_browser_guard_pid().await.expect("a launched browser");
    let tree = process_tree(guard);
    assert!(tree.len() > 3, "the browser's processes were found: {tree:?}");
    assert_eq!(
        listeners_of(guard),
        Vec::<String>::new(),
        "no process of the launched browser listens on TCP"
    );
}
