//! The timeline (issue 43), in a second real headless Chromium that plays
//! a person: `cdpilot serve` traces a session driven over the WebSocket
//! API on a hostile page (its title, text, button and console lines are
//! markup); the person opens `/timeline` while the session is live, reads
//! the steps back (tool, the target's role and name, outcome), moves the
//! selection with the arrow keys and sees the screenshot, snapshot,
//! console and requests of the selected step; a new call appears without
//! a reload; nothing of the page became markup; when the session ends the
//! open timeline says so and the trace stays listed. Then `cdpilot trace view
//! DIR` serves the same trace behind its own token, and the WebSocket
//! API replays it by name in a fresh session. A screenshot of the
//! timeline goes to `$CDPILOT_TIMELINE_PNG` (default `/tmp/timeline.png`).

mod support;

use std::io::BufRead;

use base64::Engine as _;
use serde_json::{json, Value};
use support::person::PersonsBrowser;
use support::serve::Serve;
use testkit::TestSite;

async fn ws_ok(ws: &mut support::serve::Ws, id: &str, tool: &str, arguments: Value) -> Value {
    let response = ws.call(id, tool, arguments).await;
    assert!(response.get("error").is_none(), "{tool}: {response}");
    response["result"].clone()
}

/// The steps as the list shows them: `[step, text]`, and the selected one.
async fn steps(viewer: &PersonsBrowser) -> (Vec<(u64, String)>, Value) {
    let read = viewer
        .value(
            "({steps: [...document.querySelectorAll('#steps li[data-step]')].map(li => [Number(li.dataset.step), li.innerText]), \
              selected: (document.querySelector('#steps li.selected') || {dataset: {}}).dataset.step || null})",
        )
        .await;
    let list = read["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s[0].as_u64().unwrap(), s[1].as_str().unwrap().to_owned()))
        .collect();
    (list, read["selected"].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_trace_reads_as_a_timeline_scrubbed_with_the_keys_and_nothing_of_the_page_becomes_markup() {
    let site = TestSite::start().await;
    let traces = tempfile::tempdir().unwrap();
    let config = format!("[trace]\ndir = \"{}\"\n", traces.path().display());
    let serve = Serve::start(&config, &[]).await;

    let mut agent = serve.ws().await;
    agent.open(&serve.token).await;
    ws_ok(
        &mut agent,
        "1",
        "browser_navigate",
        json!({"url": site.url("/hostile-timeline.html")}),
    )
    .await;
    let snapshot = ws_ok(&mut agent, "2", "browser_snapshot", json!({})).await;
    let button = support::ref_on_line(snapshot["text"].as_str().unwrap(), "button \"<b");
    ws_ok(&mut agent, "3", "browser_click", json!({"ref": button})).await;

    // The dashboard's state names the live session's trace (its row links it).
    let bearer = format!("Bearer {}", serve.token);
    let state = testkit::http_mcp::http(
        &serve.authority,
        "GET",
        "/v1/dashboard/state",
        &[("Authorization", &bearer)],
        "",
    )
    .await;
    let state: Value = serde_json::from_str(&state.body).unwrap();
    let named = state["sessions"][0]["trace"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        named.ends_with(&state["sessions"][0]["id"].as_str().unwrap().replace('/', "_")),
        "{state}"
    );

    // The person opens the timeline of the live session.
    let viewer = PersonsBrowser::new("timeline", |_| {});
    viewer
        .ok(
            "browser_navigate",
            json!({"url": format!("http://{}/timeline#token={}", serve.authority, serve.token)}),
        )
        .await;
    viewer.wait_text("still being written").await;
    let (list, selected) = steps(&viewer).await;
    assert_eq!(list.len(), 3, "{list:?}");
    assert!(
        list[0].1.contains("navigate") && list[0].1.contains("ok"),
        "{list:?}"
    );
    assert!(list[1].1.contains("snapshot"), "{list:?}");
    // The click's target by its role and name, the name as the page wrote it.
    assert!(
        list[2].1.contains("click") && list[2].1.contains("button \"<b id=timeline-bold>Go</b>\""),
        "{list:?}"
    );
    assert_eq!(selected, "1");

    // The keys move the selection, and the detail follows it.
    viewer.ok("browser_press_key", json!({"key": "ArrowDown"})).await;
    viewer.ok("browser_press_key", json!({"key": "ArrowDown"})).await;
    let (_, selected) = steps(&viewer).await;
    assert_eq!(selected, "3");
    viewer.wait_text("Step 3: browser_click").await;
    viewer.ok("browser_press_key", json!({"key": "ArrowUp"})).await;
    let (_, selected) = steps(&viewer).await;
    assert_eq!(selected, "2");
    viewer.ok("browser_press_key", json!({"key": "End"})).await;
    viewer.wait_text("after step 3").await;
    let shown = viewer
        .value(
            "({shot: document.querySelector('#shot').naturalWidth || 0, \
              snapshot: document.querySelector('#snapshot').textContent, \
              console: document.querySelector('#console tbody').innerText, \
              requests: document.querySelector('#requests tbody').innerText})",
        )
        .await;
    assert!(shown["snapshot"].as_str().unwrap().contains("Hostile"), "{shown}");
    assert!(
        shown["console"]
            .as_str()
            .unwrap()
            .contains("<img id=timeline-console"),
        "{shown}"
    );
    assert!(
        shown["requests"]
            .as_str()
            .unwrap()
            .contains("hostile-timeline.html"),
        "{shown}"
    );

    // A new call of the live session appears without a reload, selected
    // (the selection was on the last step, so it follows).
    ws_ok(&mut agent, "4", "browser_press_key", json!({"key": "Tab"})).await;
    viewer.wait_text("Step 4: browser_press_key").await;
    let (list, selected) = steps(&viewer).await;
    assert_eq!((list.len(), selected), (4, json!("4")), "{list:?}");
    // The screenshot of the step the selection is on has loaded by now.
    viewer.wait_text("after step 4").await;

    // Nothing of the page became markup or ran.
    let injected = viewer
        .value(
            "[window.pwned === undefined, \
              document.querySelectorAll('#timeline-evil, #timeline-bold, #timeline-console, script:not([src])').length, \
              document.body.innerText.includes('<img id=timeline-evil')]",
        )
        .await;
    assert_eq!(
        injected,
        json!([true, 0, true]),
        "the timeline rendered page text as markup"
    );

    let png = viewer
        .ok("browser_screenshot", json!({"format": "png", "full_page": true}))
        .await;
    let image = png.image.expect("a screenshot");
    let path = std::env::var("CDPILOT_TIMELINE_PNG").unwrap_or_else(|_| "/tmp/timeline.png".into());
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(image.base64)
        .unwrap();
    assert!(bytes.starts_with(b"\x89PNG"));
    let _ = std::fs::write(&path, bytes);

    // The session ends (its client goes): the open timeline says the trace
    // ended, and it stays on the shelf, finished.
    drop(agent);
    viewer.wait_text("ended (session_ended)").await;

    // `cdpilot trace view` serves the same trace behind a token of its own.
    let mut view = std::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
        .args(["trace", "view"])
        .arg(traces.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = view.stdout.take().unwrap();
    let link = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        std::io::BufReader::new(stdout).read_line(&mut line).unwrap();
        line.trim().to_owned()
    })
    .await
    .unwrap();
    let (base, token) = link
        .split_once("/timeline#token=")
        .unwrap_or_else(|| panic!("{link}"));
    let authority = base.trim_start_matches("http://");
    let bearer = format!("Bearer {token}");
    let get = |path: String| {
        let bearer = bearer.clone();
        async move { testkit::http_mcp::http(authority, "GET", &path, &[("Authorization", &bearer)], "").await }
    };
    let listed = get("/v1/timeline/traces".into()).await;
    assert_eq!(listed.status, 200, "{listed:?}");
    let listed: Value = serde_json::from_str(&listed.body).unwrap();
    assert_eq!(listed["traces"][0]["steps"], 4, "{listed}");
    assert_eq!(
        (&listed["traces"][0]["live"], &listed["traces"][0]["end"]),
        (&json!(false), &json!("session_ended")),
        "{listed}"
    );
    // A live timeline's look again asks only for what it has not read.
    let name = listed["traces"][0]["name"].as_str().unwrap().to_owned();
    for (from, steps, said) in [(3, 1, 3), (0, 4, 0), (99, 0, 4)] {
        let read = get(format!("/v1/timeline/traces/{name}?from={from}")).await;
        assert_eq!(read.status, 200, "{read:?}");
        if from == 3 {
            assert!(read.body.contains("browser_press_key"), "{read:?}");
        }
        let read: Value = serde_json::from_str(&read.body).unwrap();
        assert_eq!(
            (
                read["steps"].as_array().unwrap().len(),
                &read["from"],
                &read["total"]
            ),
            (steps, &json!(said), &json!(4)),
            "from={from}: {read}"
        );
    }
    let bad = get(format!("/v1/timeline/traces/{name}?from=-1")).await;
    let said: Value = serde_json::from_str(&bad.body).unwrap_or_else(|_| panic!("{bad:?}"));
    assert_eq!(
        (bad.status, &said["error"]["code"]),
        (400, &json!("invalid_argument")),
        "{bad:?}"
    );
    let serve_token = format!("Bearer {}", serve.token);
    let other = testkit::http_mcp::http(
        authority,
        "GET",
        "/v1/timeline/traces",
        &[("Authorization", &serve_token)],
        "",
    )
    .await;
    assert_eq!(other.status, 401, "another server's token: {other:?}");
    let _ = view.kill();
    let _ = view.wait();

    // The same trace replayed over the WebSocket API, by its name, in a
    // fresh session: the one replay `cdpilot replay` runs.
    let name = listed["traces"][0]["name"].as_str().unwrap().to_owned();
    assert_eq!(name, named);
    let mut replayer = serve.ws().await;
    replayer.open(&serve.token).await;
    replayer
        .send(json!({"type": "replay", "id": "r1", "trace": name}))
        .await;
    let report = loop {
        let message = replayer.next().await.expect("the socket stays open");
        if message["type"] == "response" && message["id"] == "r1" {
            break message;
        }
    };
    let result = &report["result"];
    assert_eq!(result["stopped"], Value::Null, "{report:#}");
    assert_eq!(result["steps"].as_array().map(Vec::len), Some(4), "{report:#}");
    assert_eq!(
        result["steps"][2]["refs"]["/ref"]["was"],
        button.as_str(),
        "{report:#}"
    );
    assert_eq!(result["answers_differ"], json!([]), "{report:#}");
    // The replay is itself traced: serve's shelf has its trace too.
    let shelf = testkit::http_mcp::http(
        &serve.authority,
        "GET",
        "/v1/timeline/traces",
        &[("Authorization", &serve_token)],
        "",
    )
    .await;
    let shelf: Value = serde_json::from_str(&shelf.body).unwrap();
    let traced: Vec<u64> = shelf["traces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["steps"].as_u64().unwrap())
        .collect();
    assert_eq!(traced.len(), 2, "{shelf}");
    assert!(traced.iter().all(|steps| *steps == 4), "{shelf}");
    // A name that is not on the shelf (a path, say) is refused, nothing run.
    replayer
        .send(json!({"type": "replay", "id": "r2", "trace": "../../etc"}))
        .await;
    let refused = loop {
        let message = replayer.next().await.expect("the socket stays open");
        if message["type"] == "response" && message["id"] == "r2" {
            break message;
        }
    };
    assert_eq!(refused["error"]["code"], "invalid_argument", "{refused}");
}
