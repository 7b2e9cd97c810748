//! The groups beyond core over MCP stdio: `--caps` turns them on in
//! tools/list, and their results reach the model as text and
//! structuredContent.

mod support;

use serde_json::json;
use support::{spawn_cdpilot_with, text_of};

#[tokio::test]
async fn caps_turn_on_the_extra_groups_and_their_tools_answer_over_mcp() {
    let site = testkit::TestSite::start().await;
    let (mut client, _tmp) = spawn_cdpilot_with(&["--caps", "network,emulation"]);
    client.initialize().await;
    let names: Vec<String> = client
        .list_tools()
        .await
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    assert!(names.contains(&"browser_network".to_owned()), "{names:?}");
    assert!(names.contains(&"browser_emulate".to_owned()), "{names:?}");
    assert!(
        !names.contains(&"browser_pdf".to_owned()),
        "pdf is not in the caps: {names:?}"
    );

    let nav = client
        .call("browser_navigate", json!({"url": site.url("network.html")}))
        .await;
    assert_eq!(nav["isError"], false, "{nav}");
    let waited = client.call("browser_wait", json!({"text": "xhr done"})).await;
    assert_eq!(waited["isError"], false, "{waited}");
    let listed = client
        .call("browser_network", json!({"action": "list", "type": "xhr"}))
        .await;
    assert!(text_of(&listed).contains("/json?from=frame"), "{listed}");
    assert_eq!(
        listed["structuredContent"]["requests"][0]["status"], 200,
        "{listed}"
    );

    let off = client.call("browser_pdf", json!({})).await;
    assert_eq!(off["isError"], true, "{off}");
    assert!(text_of(&off).contains("pdf group"), "{off}");
}
