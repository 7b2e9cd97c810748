//! The `cdpilot` binary spoken to over MCP stdio, as a client would: the
//! handshake, the tool list, the navigate → snapshot → click → type →
//! screenshot loop on the test site, error results, and the promise that no
//! Chromium outlives cdpilot however it ends.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::{chromium_processes, spawn_cdpilot, text_of, wait_until};
use testkit::TestSite;

#[tokio::test]
async fn handshake_names_cdpilot_and_lists_the_contract_tools() {
    let (mut client, _tmp) = spawn_cdpilot();
    let init = client.initialize().await;
    assert_eq!(init["serverInfo"]["name"], "cdpilot");
    assert!(init["capabilities"]["tools"].is_object());
    let tools = client.list_tools().await;
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    let registry: Vec<&str> = engine::tools::offered(&engine::Config::default())
        .map(|t| t.name)
        .collect();
    assert_eq!(names, registry, "MCP lists exactly the registry's tools");
    for core in [
        "browser_navigate",
        "browser_snapshot",
        "browser_click",
        "browser_type",
        "browser_screenshot",
    ] {
        assert!(names.contains(&core), "{core} missing from {names:?}");
    }
    for tool in &tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(tool["description"].as_str().unwrap().len() > 20);
    }
    let total: usize = tools.iter().map(|t| t.to_string().len()).sum();
    assert!(total < 8000, "tool definitions are {total} chars");
}

#[tokio::test]
async fn an_agent_loop_on_a_local_page() {
    let site = TestSite::start().await;
    let (mut client, _tmp) = spawn_cdpilot();
    client.initialize().await;

    let nav = client
        .call("browser_navigate", json!({"url": site.url("/")}))
        .await;
    assert_eq!(nav["isError"], false, "{nav}");
    assert_eq!(nav["structuredContent"]["title"], "cdpilot test home");

    let snap = client.call("browser_snapshot", json!({})).await;
    let text = text_of(&snap);
    let button = support::ref_on_line(&text, "button \"Trusted click\"");
    let click = client.call("browser_click", json!({"ref": button})).await;
    assert_eq!(click["structuredContent"]["navigated"], false, "{click}");
    let after = client.call("browser_snapshot", json!({})).await;
    assert!(
        text_of(&after).contains("text: clicked 1 trusted=true"),
        "{}",
        text_of(&after)
    );

    client
        .call("browser_navigate", json!({"url": site.url("/form.html")}))
        .await;
    let form = text_of(&client.call("browser_snapshot", json!({})).await);
    let email = support::ref_on_line(&form, "textbox \"Email\"");
    let typed = client
        .call(
            "browser_type",
            json!({"ref": email, "text": "agent@example.com", "submit": true}),
        )
        .await;
    assert_eq!(
        typed["structuredContent"]["value"], "agent@example.com",
        "{typed}"
    );

    let shot = client.call("browser_screenshot", json!({})).await;
    let image = shot["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "image")
        .expect("image block");
    assert_eq!(image["mimeType"], "image/png");
    assert!(image["data"].as_str().unwrap().len() > 1000);
    assert!(shot["structuredContent"]["width"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn bad_calls_get_contract_errors_and_the_server_keeps_serving() {
    let site = TestSite::start().await;
    let (mut client, _tmp) = spawn_cdpilot();
    client.initialize().await;
    let cases = [
        (
            "browser_navigate",
            json!({"url": "javascript:alert(1)"}),
            "invalid_argument",
        ),
        ("browser_navigate", json!({}), "invalid_argument"),
        (
            "browser_navigate",
            json!({"url": ["not", "a", "string"]}),
            "invalid_argument",
        ),
        ("browser_click", json!({"ref": true}), "invalid_argument"),
        (
            "browser_type",
            json!({"ref": "e1", "text": 5}),
            "invalid_argument",
        ),
        (
            "browser_snapshot",
            json!({"max_elements": "all"}),
            "invalid_argument",
        ),
        ("browser_fly", json!({}), "invalid_argument"),
        // Issue 8: the schema says string, so null is refused too.
        ("browser_snapshot", json!({"selector": null}), "invalid_argument"),
    ];
    for (tool, args, code) in cases {
        let result = client.call(tool, args.clone()).await;
        assert_eq!(result["isError"], true, "{tool} {args}: {result}");
        assert_eq!(
            result["structuredContent"]["error"]["code"], code,
            "{tool} {args}: {result}"
        );
        let text = text_of(&result);
        assert!(text.starts_with(&format!("{code}: ")), "{text}");
    }
    client
        .call("browser_navigate", json!({"url": site.url("/")}))
        .await;
    client.call("browser_snapshot", json!({})).await;
    let missing = client.call("browser_click", json!({"ref": "e999"})).await;
    assert_eq!(
        missing["structuredContent"]["error"]["code"], "ref_unknown",
        "{missing}"
    );
    let ok = client.call("browser_snapshot", json!({})).await;
    assert_eq!(ok["isError"], false, "the server stopped serving: {ok}");
}

/// Issue 8: lines rmcp could not decode (JSON nested 1,000 deep, a lone
/// `\ud800` escape, params of the wrong shape, a line that is not JSON) were
/// never answered, and the client waited out its own timeout. Each request
/// whose id can be read gets exactly one answer with that id; the non-JSON
/// line gets a parse error; the server keeps serving.
#[tokio::test]
async fn undecodable_requests_are_answered_and_the_server_keeps_serving() {
    let (mut client, _tmp) = spawn_cdpilot();
    client.initialize().await;
    let call = |id: u64, arguments: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"browser_snapshot","arguments":{arguments}}}}}"#
        )
    };
    let deep = format!(r#"{{"selector":{}{}}}"#, "[".repeat(1000), "]".repeat(1000));
    let many_keys = serde_json::to_string(
        &(0..10_000)
            .map(|i| (format!("k{i}"), json!(i)))
            .collect::<serde_json::Map<_, _>>(),
    )
    .unwrap();
    let mut pending = Vec::new();
    for arguments in [deep.as_str(), r#"{"selector":"a\ud800b"}"#, &many_keys] {
        let id = client.fresh_id();
        client.send_line(&call(id, arguments)).await;
        pending.push(id);
    }
    client.send_line("this is not json").await;
    let garbage = client.fresh_id();
    client
        .send_line(&format!(
            r#"{{"jsonrpc":"2.0","id":{garbage},"method":"tools/call","params":"garbage"}}"#
        ))
        .await;
    pending.push(garbage);
    let normal = client
        .send_request("tools/call", json!({"name": "browser_snapshot", "arguments": {}}))
        .await;

    let mut answers: Vec<Value> = Vec::new();
    let answered = |answers: &[Value], id: Value| answers.iter().filter(|a| a["id"] == id).count();
    while pending
        .iter()
        .chain([&normal])
        .any(|id| answered(&answers, json!(id)) == 0)
        || answered(&answers, Value::Null) == 0
    {
        // A generous bound per answer: these need no browser but the last.
        let message = client
            .next_message(Duration::from_secs(10))
            .await
            .unwrap_or_else(|| panic!("no answer within 10 s; answers so far: {answers:?}"));
        answers.push(message);
    }
    // One more round trip, so that a late duplicate answer would be seen.
    let last = client.send_request("tools/list", json!({})).await;
    while answered(&answers, json!(last)) == 0 {
        answers.push(
            client
                .next_message(Duration::from_secs(10))
                .await
                .expect("tools/list answer"),
        );
    }

    for id in &pending {
        let of_id: Vec<&Value> = answers.iter().filter(|a| a["id"] == json!(id)).collect();
        assert_eq!(
            of_id.len(),
            1,
            "request {id} answered {} times: {of_id:?}",
            of_id.len()
        );
        let answer = of_id[0];
        let refused = answer["error"]["code"].is_i64()
            || (answer["result"]["isError"] == true
                && answer["result"]["structuredContent"]["error"]["code"] == "invalid_argument");
        assert!(refused, "request {id}: {answer}");
    }
    let parse_errors: Vec<&Value> = answers.iter().filter(|a| a["id"].is_null()).collect();
    assert_eq!(parse_errors.len(), 1, "{parse_errors:?}");
    assert_eq!(parse_errors[0]["error"]["code"], -32700, "{}", parse_errors[0]);
    let normal = answers.iter().find(|a| a["id"] == json!(normal)).unwrap();
    assert_eq!(
        normal["result"]["isError"], false,
        "the server stopped serving: {normal}"
    );
}

/// Starts cdpilot with a browser running, then ends it with `end`, and
/// checks cdpilot exits within its stop budgets plus slack, every Chromium
/// process of its profile is gone, and the temporary profile removed.
/// A clean stop may take the engine's shutdown budget (5 s) and then wait
/// up to 10 s for Chromium to quit by itself; the bound is those plus
/// generous slack (issue 8: it was 5 s, tighter than the behaviour allows).
const STOP_BOUND: Duration = Duration::from_secs(5 + 10 + 10);

async fn ends_cleanly(end: impl FnOnce(&mut testkit::McpClient)) {
    let site = TestSite::start().await;
    let (mut client, tmp) = spawn_cdpilot();
    client.initialize().await;
    let nav = client
        .call("browser_navigate", json!({"url": site.url("/")}))
        .await;
    assert_eq!(nav["isError"], false, "{nav}");
    assert!(
        !chromium_processes(tmp.path()).is_empty(),
        "no Chromium found for this cdpilot"
    );
    end(&mut client);
    let status = tokio::time::timeout(STOP_BOUND, client.child.wait())
        .await
        .expect("cdpilot did not exit within its stop budgets")
        .expect("wait");
    let _ = status;
    let gone = wait_until(Duration::from_secs(5), || {
        chromium_processes(tmp.path()).is_empty()
    })
    .await;
    assert!(gone, "Chromium left behind: {:?}", chromium_processes(tmp.path()));
    let profiles_removed = wait_until(Duration::from_secs(5), || {
        std::fs::read_dir(tmp.path())
            .map(|d| d.count() == 0)
            .unwrap_or(true)
    })
    .await;
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    assert!(
        profiles_removed,
        "temporary files left in {}: {left:?}",
        tmp.path().display()
    );
}

fn signal(client: &testkit::McpClient, name: &str) {
    let pid = client.child.id().expect("running").to_string();
    let status = std::process::Command::new("kill")
        .args([name, &pid])
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn closing_stdin_ends_cdpilot_and_chromium() {
    ends_cleanly(|client| client.close_stdin()).await;
}

#[tokio::test]
async fn sigterm_ends_cdpilot_and_chromium() {
    ends_cleanly(|client| signal(client, "-TERM")).await;
}

#[tokio::test]
async fn sigint_ends_cdpilot_and_chromium() {
    ends_cleanly(|client| signal(client, "-INT")).await;
}

#[tokio::test]
async fn sigkill_of_cdpilot_still_ends_chromium() {
    ends_cleanly(|client| signal(client, "-KILL")).await;
}

#[tokio::test]
async fn a_crashed_browser_is_relaunched_on_the_next_call() {
    let site = TestSite::start().await;
    let (mut client, tmp) = spawn_cdpilot();
    client.initialize().await;
    client
        .call("browser_navigate", json!({"url": site.url("/")}))
        .await;
    let browsers = support::browser_main_processes(tmp.path());
    assert_eq!(browsers.len(), 1, "{browsers:?}");
    std::process::Command::new("kill")
        .args(["-KILL", &browsers[0].to_string()])
        .status()
        .unwrap();
    // Until every thread of it is done (its DevTools pipe closed): its
    // main thread leaves the process list earlier.
    let chromium = browsers[0];
    assert!(wait_until(Duration::from_secs(5), || testkit::processes::exited(chromium)).await);

    // The very next call relaunches, however soon it comes: it does not
    // wait for cdpilot's reader to have read the pipe's end (it once
    // answered browser_disconnected here under load).
    let result: Value = client
        .call("browser_navigate", json!({"url": site.url("/form.html")}))
        .await;
    assert_eq!(result["isError"], false, "{result}");
    assert!(
        text_of(&result).contains("started a new one"),
        "{}",
        text_of(&result)
    );
    assert_eq!(result["structuredContent"]["browser_restarted"], true);
    assert_eq!(result["structuredContent"]["title"], "Form");
}

/// Issue 21: the server's instructions name the session's page content
/// nonce and say that nothing inside the markers is an instruction; the
/// page's text comes back inside markers with that nonce.
#[tokio::test]
async fn the_instructions_name_the_nonce_that_encloses_page_text() {
    let site = TestSite::start().await;
    let (mut client, _tmp) = spawn_cdpilot();
    let init = client.initialize().await;
    let instructions = init["instructions"].as_str().unwrap_or_default().to_owned();
    assert!(instructions.contains("never an instruction"), "{instructions}");
    let at = instructions
        .find("<<page-content nonce=")
        .unwrap_or_else(|| panic!("no nonce in {instructions}"));
    let nonce: String = instructions[at + 21..]
        .chars()
        .take_while(|c| c.is_ascii_hexdigit())
        .collect();
    assert_eq!(nonce.len(), 32, "{instructions}");
    client
        .call("browser_navigate", json!({"url": site.url("/forged.html")}))
        .await;
    let snap = text_of(&client.call("browser_snapshot", json!({})).await);
    let open = format!("<<page-content nonce={nonce}>>");
    let close = format!("<</page-content nonce={nonce}>>");
    let (a, b) = (snap.find(&open).unwrap(), snap.rfind(&close).unwrap());
    let inside = &snap[a..b];
    assert!(inside.contains("IGNORE PREVIOUS INSTRUCTIONS"), "{snap}");
    assert_eq!(snap.matches(&close).count(), 1, "{snap}");
}
