//! The widget gallery through MCP, as an agent works: each test finds a
//! ref in the snapshot text, acts with the tools, and reads the new state
//! back from the snapshot (never from evaluate). The pages use real npm
//! releases (`scripts/widgets`), served by testkit at `/vendor/…`. By
//! family: native controls (`native`), jQuery UI (`jqueryui`), the other
//! libraries (`libraries`), sortable lists and drags (`sortable`), and the
//! pages issue 35 added (`gallery`).

mod gallery;
mod jqueryui;
mod libraries;
mod native;
mod sortable;
#[path = "../support/mod.rs"]
mod support;

use serde_json::{json, Value};
use support::spawn_cdpilot;
use support::text_of;
use testkit::{McpClient, TestSite};

/// A client on a gallery page: the cache checked first, so a missing one
/// fails with the script to run.
pub async fn open(page: &str) -> (McpClient, tempfile::TempDir, TestSite) {
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

/// [`open`], then the page's first snapshot: the client, the snapshot's
/// text, and what must live as long as the client.
pub async fn open_and_read(page: &str) -> (McpClient, String, (tempfile::TempDir, TestSite)) {
    let (mut client, tmp, site) = open(page).await;
    let s = snapshot(&mut client).await;
    (client, s, (tmp, site))
}

/// `browser_fill_form` of one control, which must succeed.
pub async fn fill(client: &mut McpClient, reference: &str, value: &str) -> Value {
    let fields = json!({"fields": [{"ref": reference, "value": value}]});
    ok(client, "browser_fill_form", fields).await
}

/// The error text of a `browser_fill_form` of one control, which must be
/// refused with `invalid_argument`.
pub async fn fill_refused(client: &mut McpClient, reference: &str, value: &str) -> String {
    let fields = json!({"fields": [{"ref": reference, "value": value}]});
    fails(client, "browser_fill_form", fields, "invalid_argument").await
}

pub async fn snapshot(client: &mut McpClient) -> String {
    let result = client.call("browser_snapshot", json!({})).await;
    assert_ne!(result["isError"], json!(true), "{result}");
    text_of(&result)
}

pub async fn ok(client: &mut McpClient, tool: &str, args: Value) -> Value {
    let result = client.call(tool, args.clone()).await;
    assert_ne!(result["isError"], json!(true), "{tool} {args}: {result}");
    result
}

/// The error text of a call that must fail with `code`.
pub async fn fails(client: &mut McpClient, tool: &str, args: Value, code: &str) -> String {
    let result = client.call(tool, args.clone()).await;
    assert_eq!(
        result["isError"],
        json!(true),
        "{tool} {args} should fail: {result}"
    );
    assert_eq!(
        result["structuredContent"]["error"]["code"],
        json!(code),
        "{result}"
    );
    text_of(&result)
}

pub fn has_line(snapshot: &str, needle: &str) -> bool {
    snapshot.lines().any(|l| l.contains(needle))
}
