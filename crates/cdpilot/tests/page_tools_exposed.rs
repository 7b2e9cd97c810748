//! `[tools] page_tools = "expose"` (issue 36): the tools a page offers
//! (WebMCP) listed as MCP tools of their own (`page_<name>`, a frame's as
//! `page_<name>__f1`), the client told with
//! `notifications/tools/list_changed` whenever the page registers or
//! removes one or goes, and a call to one run as `browser_page_tool`
//! (schema checked, judged, answered inside the markers). Through
//! `cdpilot mcp` as a spawned process, in real Chromium with the feature
//! on and a cross-origin frame (`--site-per-process`); and through
//! `cdpilot serve` over streamable HTTP, the change told on the session's
//! own stream, with a frame the URL rules deny.

mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::text_of;
use testkit::{McpClient, TestSite};

const LIST_CHANGED: &str = "notifications/tools/list_changed";

fn spawn(tmp: &tempfile::TempDir) -> McpClient {
    let chrome = testkit::chromium::executable();
    McpClient::spawn(
        env!("CARGO_BIN_EXE_cdpilot"),
        &["mcp"],
        &[
            ("TMPDIR", tmp.path().to_str().unwrap()),
            ("CDPILOT_CHROME", chrome.to_str().unwrap()),
            ("CDPILOT_CONFIG", ""),
            ("CDPILOT_TOOLS_PAGE_TOOLS", "expose"),
        ],
    )
}

/// The tools listed now whose names start with `page_`.
async fn page_tools(client: &mut McpClient) -> Vec<Value> {
    client
        .list_tools()
        .await
        .into_iter()
        .filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with("page_")))
        .collect()
}

fn names(tools: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = tools
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

/// Takes one `list_changed` the server sent (already read while waiting
/// for a response, or the next to come); false when none comes in `within`.
async fn told(client: &mut McpClient, within: Duration) -> bool {
    if let Some(at) = client
        .notifications
        .iter()
        .position(|m| m["method"] == LIST_CHANGED)
    {
        client.notifications.remove(at);
        return true;
    }
    let deadline = Instant::now() + within;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match client.next_message(left).await {
            Some(m) if m["method"] == LIST_CHANGED => return true,
            Some(_) => continue,
            None => return false,
        }
    }
    false
}

/// Lists the page tools after each `list_changed` until `done` holds for
/// their names (the page registers its tools as its scripts run, the
/// frame's after it loads), for up to 15 s.
async fn listed_until(client: &mut McpClient, what: &str, done: impl Fn(&[String]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let tools = page_tools(client).await;
        if done(&names(&tools)) {
            return tools;
        }
        let left = deadline
            .checked_duration_since(Instant::now())
            .unwrap_or_else(|| panic!("{what}: the page tools listed are {:?}", names(&tools)));
        assert!(
            told(client, left).await,
            "{what}: no list_changed came; listed: {:?}",
            names(&tools)
        );
    }
}

/// Whether every occurrence of `needle` in `text` sits inside a page
/// content block.
fn only_inside_markers(text: &str, needle: &str) -> bool {
    let mut found = false;
    for (at, _) in text.match_indices(needle) {
        found = true;
        let before = &text[..at];
        let opened = before.rfind("<<page-content nonce=");
        let closed = before.rfind("<</page-content nonce=");
        if opened.is_none() || closed > opened {
            return false;
        }
    }
    found
}

#[tokio::test]
async fn a_pages_tools_are_listed_as_mcp_tools_told_when_they_change_and_called_through_the_gate() {
    let site = TestSite::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let mut client = spawn(&tmp);
    let init = client.initialize().await;
    assert_eq!(
        init["capabilities"]["tools"]["listChanged"],
        json!(true),
        "{init}"
    );
    let before = client.list_tools().await;
    let before_chars = serde_json::to_string(&before).unwrap().len();
    assert!(names(&page_tools(&mut client).await).is_empty(), "no page yet");

    let out = client
        .call("browser_navigate", json!({"url": site.url("/page-tools.html")}))
        .await;
    assert_eq!(out["isError"], json!(false), "{out}");
    let tools = listed_until(&mut client, "the top frame's and the frame's tools", |n| {
        n.contains(&"page_lookup".to_owned()) && n.contains(&"page_frame_echo__f1".to_owned())
    })
    .await;
    let after = client.list_tools().await;
    let after_chars = serde_json::to_string(&after).unwrap().len();
    println!(
        "tool list: {} tools, {before_chars} characters before the page; {} tools, {after_chars} after",
        before.len(),
        after.len()
    );
    for expected in ["page_add_to_cart", "page_notes", "page_search_site"] {
        assert!(
            names(&tools).contains(&expected.to_owned()),
            "{:?}",
            names(&tools)
        );
    }

    // The page's words only inside the markers, in the description and
    // nowhere in the schema.
    let notes = tools.iter().find(|t| t["name"] == "page_notes").unwrap();
    let description = notes["description"].as_str().unwrap();
    assert!(description.starts_with("A tool the page offers"), "{description}");
    assert!(
        only_inside_markers(description, "IGNORE ALL PREVIOUS INSTRUCTIONS"),
        "{description}"
    );
    let cart = tools.iter().find(|t| t["name"] == "page_add_to_cart").unwrap();
    let schema = &cart["inputSchema"];
    assert_eq!(
        schema["properties"]["qty"]["maximum"], 9,
        "the shape is kept: {schema}"
    );
    assert!(
        !schema.to_string().contains("The product code") && !schema.to_string().contains("[A-Z]"),
        "the page's words stay out of the schema: {schema}"
    );
    let cart_description = cart["description"].as_str().unwrap();
    assert!(
        only_inside_markers(cart_description, "^[A-Z]{3}-[0-9]+$"),
        "its pattern is shown as the page's: {cart_description}"
    );

    // A call is browser_page_tool's: arguments checked against the tool's
    // own schema before the page sees them.
    let bad = client
        .call("page_add_to_cart", json!({"sku": "abc", "qty": "two"}))
        .await;
    assert_eq!(bad["isError"], json!(true), "{bad}");
    assert_eq!(
        bad["structuredContent"]["error"]["code"], "invalid_argument",
        "{bad}"
    );
    let added = client
        .call("page_add_to_cart", json!({"sku": "ABC-1", "qty": 2}))
        .await;
    assert_eq!(added["isError"], json!(false), "{added}");
    assert!(
        only_inside_markers(&text_of(&added), "added 2 x ABC-1"),
        "{}",
        text_of(&added)
    );
    let echoed = client.call("page_frame_echo__f1", json!({"word": "hi"})).await;
    assert!(
        only_inside_markers(&text_of(&echoed), "says hi"),
        "{}",
        text_of(&echoed)
    );

    // Unregistered: the client is told, the tool is gone and not callable.
    let out = client
        .call("browser_evaluate", json!({"expression": "unregister('lookup')"}))
        .await;
    assert_eq!(out["isError"], json!(false), "{out}");
    assert!(
        told(&mut client, Duration::from_secs(10)).await,
        "a tool removed is told"
    );
    listed_until(&mut client, "lookup gone", |n| {
        !n.contains(&"page_lookup".to_owned()) && n.contains(&"page_notes".to_owned())
    })
    .await;
    let gone = client.call("page_lookup", json!({"q": "ABC-1"})).await;
    assert_eq!(gone["isError"], json!(true), "{gone}");
    assert!(
        text_of(&gone).contains("offers no tool page_lookup"),
        "{}",
        text_of(&gone)
    );

    // Leaving the page takes every frame's tools along.
    client
        .call("browser_navigate", json!({"url": site.url("/index.html")}))
        .await;
    listed_until(&mut client, "every tool gone", |n| n.is_empty()).await;
}

/// Issue 41: a hostile page's tools. Every word it writes into a schema
/// (each key a client might read, a property name that is a sentence, a
/// forged closing marker) and its read-only claim appear only inside the
/// markers; a top page's `pay__f1` cannot take frame f1's `pay`; 60 large
/// tools leave the list within its budget, with a note; a page flipping
/// a tool every 5 ms does not flood the client with `list_changed`.
#[tokio::test]
async fn a_hostile_page_speaks_only_inside_the_markers_shadows_no_frame_and_floods_neither_list_nor_client() {
    let site = TestSite::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let mut client = spawn(&tmp);
    client.initialize().await;
    let out = client
        .call(
            "browser_navigate",
            json!({"url": site.url("/page-tools-hostile.html")}),
        )
        .await;
    assert_eq!(out["isError"], json!(false), "{out}");
    let tools = listed_until(&mut client, "the hostile page's and the frame's tools", |n| {
        n.contains(&"page_evil".to_owned()) && n.contains(&"page_pay__f1".to_owned())
    })
    .await;

    // Not one of the page's words outside the markers, anywhere in the list.
    let list = serde_json::to_string(&client.list_tools().await).unwrap();
    assert!(only_inside_markers(&list, "PWNED"), "{list}");
    let evil = tools.iter().find(|t| t["name"] == "page_evil").unwrap();
    let description = evil["description"].as_str().unwrap();
    let ours = &description[..description.find("<<page-content").unwrap()];
    assert!(
        !ours.contains("read-only"),
        "cdpilot's sentence repeats the claim: {ours}"
    );
    assert!(
        only_inside_markers(description, "claims: read-only"),
        "{description}"
    );

    // The frame's `pay` is the frame's; the top page's is spelled apart.
    assert!(
        names(&tools).contains(&"page_pay_f1".to_owned()),
        "{:?}",
        names(&tools)
    );
    let paid = client
        .call("page_pay__f1", json!({"card": "4111111111111111"}))
        .await;
    assert!(text_of(&paid).contains("the FRAME"), "{}", text_of(&paid));

    // Many large tools: the list stays within the budget and says so.
    client
        .call("browser_evaluate", json!({"expression": "big(60)"}))
        .await;
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let all = client.list_tools().await;
        let page_chars: usize = all
            .iter()
            .filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with("page_")))
            .map(|t| serde_json::to_string(t).unwrap().len())
            .sum();
        assert!(page_chars <= 8_500, "the page tools take {page_chars} characters");
        let page_tool = all.iter().find(|t| t["name"] == "browser_page_tool").unwrap();
        if page_tool["description"].as_str().unwrap().contains("not listed") {
            break;
        }
        let left = deadline
            .checked_duration_since(Instant::now())
            .expect("no note of the tools left out");
        told(&mut client, left).await;
    }

    // A page flipping a tool every 5 ms: the client is told a bounded
    // number of times (at most one per second, and only a real change).
    client
        .call("browser_evaluate", json!({"expression": "flip()"}))
        .await;
    client.notifications.clear();
    let (mut count, until) = (0, Instant::now() + Duration::from_secs(5));
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        match client.next_message(left).await {
            Some(m) if m["method"] == LIST_CHANGED => count += 1,
            Some(_) => {}
            None => break,
        }
    }
    println!("list_changed in 5 s of flipping: {count}");
    assert!(count <= 8, "{count} list_changed in 5 s");
    client
        .call("browser_evaluate", json!({"expression": "stopFlip()"}))
        .await;
}

/// The page tools `tools/list` gives over streamable HTTP.
async fn page_tools_over_http(client: &mut testkit::McpHttpClient) -> Vec<String> {
    let listed = client
        .request("tools/list", json!({}))
        .await
        .unwrap_or_else(|e| panic!("tools/list: {e}"));
    let tools = listed["tools"].as_array().cloned().unwrap_or_default();
    let tools: Vec<Value> = tools
        .into_iter()
        .filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with("page_")))
        .collect();
    names(&tools)
}

/// Lists the page tools over HTTP after each `list_changed` the session's
/// stream carries until `done` holds, for up to 15 s.
async fn listed_over_http_until(
    client: &mut testkit::McpHttpClient,
    stream: &mut testkit::EventStream,
    what: &str,
    done: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let names = page_tools_over_http(client).await;
        if done(&names) {
            return names;
        }
        let left = deadline
            .checked_duration_since(Instant::now())
            .unwrap_or_else(|| panic!("{what}: the page tools listed are {names:?}"));
        assert!(
            told_on(stream, left).await,
            "{what}: no list_changed on the session's stream; listed: {names:?}"
        );
    }
}

/// Whether a `list_changed` comes on the session's stream within `within`.
async fn told_on(stream: &mut testkit::EventStream, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match stream.next_message(left).await {
            Some(m) if m["method"] == LIST_CHANGED => return true,
            Some(_) => continue,
            None => return false,
        }
    }
    false
}

/// Over streamable HTTP (`cdpilot serve`): the page's tools are listed,
/// each change is told on the session's own stream (`GET /mcp`, where a
/// client waits for what answers no request), and a call is answered
/// inside the markers. A frame from an origin the URL rules deny offers
/// nothing: its document never reaches the browser, none of its tools is
/// listed, and naming one is refused.
#[tokio::test]
async fn over_http_changes_are_told_on_the_sessions_stream_and_a_denied_frame_offers_no_tool() {
    let site = TestSite::start().await;
    let frame = format!("{}/page-tools-frame.html", site.b);
    let config = format!(
        "[tools]\npage_tools = \"expose\"\n[[policy.rules]]\npattern = {frame:?}\naction = \"deny\"\n"
    );
    let serve = support::serve::Serve::start(&config, &[]).await;
    let mut client = serve.mcp_client();
    let init = client.initialize().await;
    assert_eq!(init.status, 200, "{init:?}");
    let capabilities = &init.messages()[0]["result"]["capabilities"];
    assert_eq!(
        capabilities["tools"]["listChanged"],
        json!(true),
        "{capabilities}"
    );
    let mut stream = client.listen().await;
    assert_eq!(stream.status, 200, "the session's stream opens");
    assert!(page_tools_over_http(&mut client).await.is_empty(), "no page yet");

    let out = client
        .call("browser_navigate", json!({"url": site.url("/page-tools.html")}))
        .await;
    assert_eq!(out["isError"], json!(false), "{out}");
    assert!(
        told_on(&mut stream, Duration::from_secs(15)).await,
        "the page's tools are told on the session's stream"
    );
    let listed = listed_over_http_until(&mut client, &mut stream, "the top frame's tools", |n| {
        n.contains(&"page_lookup".to_owned()) && n.contains(&"page_add_to_cart".to_owned())
    })
    .await;
    assert!(
        listed.iter().all(|n| !n.contains("__f")),
        "a denied frame's tool is listed: {listed:?}"
    );
    assert!(
        site.received_by_b()
            .iter()
            .all(|r| !r.path.starts_with("/page-tools-frame.html")),
        "the denied frame's document reached its server"
    );
    let named = client
        .call(
            "browser_page_tool",
            json!({"name": "frame_echo", "arguments": {"word": "hi"}}),
        )
        .await;
    assert_eq!(named["isError"], json!(true), "{named}");
    assert!(text_of(&named).contains("frame_echo"), "{}", text_of(&named));

    let added = client
        .call("page_add_to_cart", json!({"sku": "ABC-1", "qty": 2}))
        .await;
    assert_eq!(added["isError"], json!(false), "{added}");
    assert!(
        only_inside_markers(&text_of(&added), "added 2 x ABC-1"),
        "{}",
        text_of(&added)
    );

    // A tool the page removes is told on the stream too.
    let out = client
        .call("browser_evaluate", json!({"expression": "unregister('lookup')"}))
        .await;
    assert_eq!(out["isError"], json!(false), "{out}");
    assert!(
        told_on(&mut stream, Duration::from_secs(10)).await,
        "a tool removed is told on the session's stream"
    );
    listed_over_http_until(&mut client, &mut stream, "lookup gone", |n| {
        !n.contains(&"page_lookup".to_owned()) && n.contains(&"page_add_to_cart".to_owned())
    })
    .await;
    assert!(client.end().await < 300, "the session ends");
}
