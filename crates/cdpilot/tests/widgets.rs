//! The widget gallery through MCP, as an agent works: each test finds a
//! ref in the snapshot text, acts with the tools, and reads the new state
//! back from the snapshot (never from evaluate). The pages use real npm
//! releases (`scripts/widgets`), served by testkit at `/vendor/…`.

mod support;

use serde_json::{json, Value};
use support::{ref_on_line, spawn_cdpilot, text_of};
use testkit::{McpClient, TestSite};

/// A client on a gallery page: the cache checked first, so a missing one
/// fails with the script to run.
async fn open(page: &str) -> (McpClient, tempfile::TempDir, TestSite) {
    testkit::vendor::require();
    let site = TestSite::start().await;
    let (mut client, tmp) = spawn_cdpilot();
    client.initialize().await;
    let nav = client
        .call("browser_navigate", json!({"url": site.url(page)}))
        .await;
    assert_ne!(nav["isError"], json!(true), "{nav}");
    (client, tmp, site)
}

async fn snapshot(client: &mut McpClient) -> String {
    let result = client.call("browser_snapshot", json!({})).await;
    assert_ne!(result["isError"], json!(true), "{result}");
    text_of(&result)
}

async fn ok(client: &mut McpClient, tool: &str, args: Value) -> Value {
    let result = client.call(tool, args.clone()).await;
    assert_ne!(result["isError"], json!(true), "{tool} {args}: {result}");
    result
}

#[tokio::test]
async fn dump() {
    for page in ["widget-jqueryui.html", "widget-flatpickr.html", "widget-nouislider.html", "widget-tomselect.html", "widget-sortablejs.html", "widget-quill.html", "widget-jstree.html", "widget-native.html"] {
        let (mut client, _tmp, _site) = open(page).await;
        let s = snapshot(&mut client).await;
        println!("==== {page}\n{s}");
        let c = client.call("browser_console", json!({"level": "all"})).await;
        println!("console: {}", text_of(&c));
    }
}
