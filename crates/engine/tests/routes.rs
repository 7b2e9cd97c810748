//! Issue 44: the session's routes and the tab's network conditions, through
//! the one door in a real Chromium, with servers that log every request:
//! an API, a worker's fetch and a cross-origin frame's XHR answered by
//! routes (the servers saw none of them), images aborted (never
//! requested), a delayed response and a throttle measured by the page's own
//! clock, a HAR recorded by a session and replayed with the server stopped,
//! and routes on a denied URL refused (no fixture shown, nothing reached),
//! from the page, a cross-origin frame and a dedicated or shared worker; a
//! worker's routed requests listed, audited and traced with how they were
//! answered; a popup routed from its own document request.

mod common;

use base64::Engine as _;
use common::{call, ok};
use engine::config::Rule;
use engine::{Engine, ErrorCode};
use serde_json::{json, Value};
use testkit::{DeniedServer, TestSite};

/// An engine with the network and emulation tools on.
/// Sets a route in `engine`'s session (`rule`: `browser_network route`'s
/// arguments but the action).
async fn route(engine: &Engine, mut rule: Value) {
    rule["action"] = json!("route");
    ok(engine, "browser_network", rule).await;
}

/// A test site and an engine whose tab is at `path` of it.
async fn opened(path: &str) -> (TestSite, Engine) {
    let site = TestSite::start().await;
    let engine = engine();
    ok(&engine, "browser_navigate", json!({"url": site.url(path)})).await;
    (site, engine)
}

fn engine() -> Engine {
    engine_with(|_| {})
}

fn engine_with(adjust: impl FnOnce(&mut engine::Config)) -> Engine {
    common::engine_with(|c| {
        c.tools.caps = vec!["network".into(), "emulation".into()];
        adjust(c)
    })
}

/// Waits (within the call's own budget) for `text` in the page.
async fn wait_text(engine: &Engine, text: &str) {
    ok(
        engine,
        "browser_wait",
        json!({"text": text, "timeout_ms": 10_000}),
    )
    .await;
}

/// The time the page's own clock gives one fetch of `url`, or `"failed"`.
async fn fetch_ms(engine: &Engine, url: &str) -> Value {
    let expression = format!(
        "(async () => {{ const t = performance.now(); try {{ await (await fetch({url:?}, {{cache: 'no-store'}})).text(); }} catch (e) {{ return 'failed'; }} return performance.now() - t; }})()"
    );
    ok(engine, "browser_evaluate", json!({"expression": expression}))
        .await
        .data["value"]
        .clone()
}

/// What `fetch-worker.js`, run as a dedicated worker of the page (a shared
/// one with `shared`), said of its fetch of `url`: `got <body>` or
/// `failed`.
async fn worker_fetch(engine: &Engine, url: &str, shared: bool) -> Value {
    let expression = format!(
        "new Promise((resolve) => {{ const src = '/fetch-worker.js?url=' + encodeURIComponent({url:?}) + '&n=' + Math.random(); \
         if ({shared}) {{ const w = new SharedWorker(src); w.port.onmessage = (e) => resolve(e.data); w.port.start(); }} \
         else {{ const w = new Worker(src); w.onmessage = (e) => resolve(e.data); w.onerror = () => resolve('worker error'); }} }})"
    );
    ok(engine, "browser_evaluate", json!({"expression": expression}))
        .await
        .data["value"]
        .clone()
}

/// The line of `browser_network list` whose URL holds `needle`, and its
/// entry.
async fn listed(engine: &Engine, needle: &str) -> (String, Value) {
    let listed = ok(engine, "browser_network", json!({"action": "list"})).await;
    let line = listed.text.lines().find(|l| l.contains(needle));
    let entry = listed.data["requests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["url"].as_str().unwrap_or_default().contains(needle));
    match (line, entry) {
        (Some(line), Some(entry)) => (line.to_owned(), entry.clone()),
        _ => panic!("no request of {needle} listed:\n{}", listed.text),
    }
}

/// The requests the site received whose path starts with `prefix`.
fn received(site: &TestSite, prefix: &str) -> Vec<String> {
    site.received()
        .into_iter()
        .filter(|r| r.path.starts_with(prefix))
        .map(|r| format!("{} {}{}", r.method, r.origin, r.path))
        .collect()
}

#[tokio::test]
async fn routes_answer_the_page_its_worker_and_its_cross_origin_frame_and_the_server_sees_none() {
    let site = TestSite::start().await;
    let engine = engine();
    let items = json!({"items": ["fixture-1", "fixture-2"]});
    let api = ok(
        &engine,
        "browser_network",
        json!({"action": "route", "url": format!("{}/api/*", site.a), "answer": "fulfill", "json": items}),
    )
    .await;
    assert!(api.text.contains("Added route1: fulfill"), "{}", api.text);
    // The cross-origin frame's XHR (a POST to origin B's /json).
    route(
        &engine,
        json!({"url": format!("{}/json*", site.b), "answer": "fulfill",
               "json": {"user": "routed"}}),
    )
    .await;
    route(
        &engine,
        json!({"url": "*://*:*/pixel.png*", "type": "image", "answer": "abort", "error": "BlockedByClient"}),
    )
    .await;
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/routes.html")}),
    )
    .await;
    wait_text(&engine, "items fixture-1,fixture-2").await;
    wait_text(&engine, "worker says fixture-1,fixture-2").await;
    wait_text(&engine, "xhr done: routed").await;

    assert_eq!(
        received(&site, "/api"),
        Vec::<String>::new(),
        "the API was answered by the route"
    );
    assert_eq!(
        received(&site, "/json"),
        Vec::<String>::new(),
        "the frame's XHR too"
    );
    assert_eq!(
        received(&site, "/pixel.png"),
        Vec::<String>::new(),
        "the image was never requested"
    );
    assert!(
        site.a_received("/routes.html"),
        "the page itself came from the server"
    );

    let listed = ok(&engine, "browser_network", json!({"action": "list"})).await;
    let api_line = listed
        .text
        .lines()
        .find(|l| l.contains("/api/items"))
        .unwrap_or_default();
    assert!(
        api_line.contains("200") && api_line.contains("(by route1 fulfill)"),
        "{}",
        listed.text
    );
    let pixel = listed
        .text
        .lines()
        .find(|l| l.contains("pixel.png"))
        .unwrap_or_default();
    assert!(
        pixel.contains("failed") && pixel.contains("(by route3 abort)"),
        "{}",
        listed.text
    );

    let routes = ok(&engine, "browser_network", json!({"action": "routes"})).await;
    let hits: Vec<u64> = routes.data["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["hits"].as_u64().unwrap())
        .collect();
    assert!(
        hits.iter().all(|h| *h >= 1),
        "every route answered: {}",
        routes.text
    );
    assert!(hits[0] >= 2, "the page's fetch and the worker's: {}", routes.text);

    // Unrouted, the same page's requests go to the server again.
    let gone = ok(&engine, "browser_network", json!({"action": "unroute"})).await;
    assert!(
        gone.text.contains("Removed 3 route(s). No routes are set."),
        "{}",
        gone.text
    );
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/routes.html?again")}),
    )
    .await;
    wait_text(&engine, "items server").await;
    assert!(site.a_received("/api/items"), "{:?}", site.received());
}

#[tokio::test]
async fn a_route_never_answers_for_a_url_the_rules_deny() {
    let site = TestSite::start().await;
    let denied = DeniedServer::start().await;
    let engine = engine_with(|c| {
        c.policy.rules.push(Rule {
            pattern: format!("{}/*", site.b),
            action: "deny".into(),
            origin: None,
        })
    });
    // Every way to answer for origin B without the server: a fixture for
    // its documents and XHRs, and a HAR-like fulfil of the denied server.
    for url in [format!("{}/*", site.b), format!("http://{}/*", denied.host())] {
        route(
            &engine,
            json!({"url": url, "answer": "fulfill", "text": "<h1>FORGED</h1>",
                   "headers": {"content-type": "text/html"}}),
        )
        .await;
    }
    // The top document on a denied origin: refused, no fixture.
    let e = call(
        &engine,
        "browser_navigate",
        json!({"url": site.url_b("/index.html")}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::PermissionDenied, "{e}");
    // A cross-origin frame and its XHR on the denied origin (routes.html).
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/routes.html")}),
    )
    .await;
    wait_text(&engine, "items server").await;
    let fetched = fetch_ms(&engine, &format!("http://{}/x", denied.host())).await;
    assert_eq!(
        fetched, "failed",
        "a fetch of the denied server is not answered by the route"
    );
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    assert!(!snap.text.contains("FORGED"), "{}", snap.text);
    assert!(!snap.text.contains("xhr done"), "{}", snap.text);
    assert_eq!(site.received_by_b(), vec![], "the denied origin received nothing");
    assert_eq!(denied.seen().requests, Vec::<String>::new());
    assert_eq!(denied.seen().connections, 0);
}

#[tokio::test]
async fn a_delay_offline_and_a_throttle_are_what_the_page_measures() {
    let (site, engine) = opened("/index.html").await;
    let json_url = site.url("/json");
    route(
        &engine,
        json!({"url": format!("{json_url}*"), "type": "fetch", "answer": "delay", "delay_ms": 800}),
    )
    .await;
    let slow = fetch_ms(&engine, &json_url).await.as_f64().expect("a time");
    assert!(slow >= 750.0, "a delayed response is slow to the page: {slow} ms");
    assert!(
        site.a_received("/json"),
        "a delayed request still reaches the server"
    );
    ok(
        &engine,
        "browser_network",
        json!({"action": "unroute", "id": "route1"}),
    )
    .await;

    let offline = ok(
        &engine,
        "browser_network",
        json!({"action": "conditions", "offline": true}),
    )
    .await;
    assert!(offline.text.contains("offline"), "{}", offline.text);
    assert_eq!(
        fetch_ms(&engine, &json_url).await,
        "failed",
        "offline: the fetch fails"
    );
    // browser_emulate reads and writes the same state.
    let emulated = ok(&engine, "browser_emulate", json!({"offline": false})).await;
    assert!(
        emulated.text.contains("the network: the browser's own network"),
        "{}",
        emulated.text
    );

    let throttled = ok(
        &engine,
        "browser_network",
        json!({"action": "conditions", "latency_ms": 600, "download_kbps": 4000}),
    )
    .await;
    assert!(throttled.text.contains("600 ms latency"), "{}", throttled.text);
    let latent = fetch_ms(&engine, &json_url).await.as_f64().expect("a time");
    assert!(
        latent >= 550.0,
        "the throttle's latency is what the page waits: {latent} ms"
    );
    let emulated = ok(&engine, "browser_emulate", json!({"color_scheme": "dark"})).await;
    assert!(
        emulated.text.contains("600 ms latency"),
        "one state, told by both: {}",
        emulated.text
    );

    let preset = ok(
        &engine,
        "browser_network",
        json!({"action": "conditions", "preset": "Slow 3G"}),
    )
    .await;
    assert_eq!(preset.data["conditions"]["latency_ms"], 2000.0, "{}", preset.text);
    let cleared = ok(
        &engine,
        "browser_network",
        json!({"action": "conditions", "preset": "none"}),
    )
    .await;
    assert!(
        cleared.text.contains("the browser's own network"),
        "{}",
        cleared.text
    );
    let fast = fetch_ms(&engine, &json_url).await.as_f64().expect("a time");
    assert!(fast < 550.0, "cleared: no added latency ({fast} ms)");
}

/// A HAR 1.2 file of what a session saw, built from `browser_network`
/// (list, then get with body): the run's record.
async fn record_har(engine: &Engine) -> Value {
    let listed = ok(engine, "browser_network", json!({"action": "list"})).await;
    let mut entries = Vec::new();
    for r in listed.data["requests"].as_array().unwrap() {
        let id = r["id"].as_str().unwrap();
        let got = ok(
            engine,
            "browser_network",
            json!({"action": "get", "id": id, "body": true}),
        )
        .await;
        let Some(body) = got.data["response"]["body"].as_str() else {
            continue;
        };
        let headers: Vec<Value> = got.data["response"]["headers"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(name, value)| json!({"name": name, "value": value}))
            .collect();
        entries.push(json!({
            "startedDateTime": "2026-12-02T00:00:00.000Z", "time": 1,
            "request": {"method": r["method"], "url": r["url"], "httpVersion": "HTTP/1.1", "headers": [],
                        "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
            "response": {"status": r["status"], "statusText": "", "httpVersion": "HTTP/1.1", "headers": headers,
                         "cookies": [], "content": {"size": body.len(), "mimeType": "text/html",
                         "text": base64::engine::general_purpose::STANDARD.encode(body), "encoding": "base64"},
                         "redirectURL": "", "headersSize": -1, "bodySize": -1},
            "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0},
        }));
    }
    json!({"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": entries}})
}

#[tokio::test]
async fn a_har_recorded_by_a_session_replays_the_page_with_the_server_stopped() {
    let (site, engine) = opened("/routes.html").await;
    wait_text(&engine, "items server").await;
    wait_text(&engine, "xhr done: ada").await;
    let har = record_har(&engine).await;
    let output = engine.config().files.output_dir();
    std::fs::create_dir_all(&output).unwrap();
    std::fs::write(output.join("run.har"), har.to_string()).unwrap();
    let page = site.url("/routes.html");
    drop(site);

    let replay = ok(
        &engine,
        "browser_network",
        json!({"action": "har", "file": "run.har", "not_found": "fail"}),
    )
    .await;
    assert!(
        replay.text.contains("requests it does not hold fail"),
        "{}",
        replay.text
    );
    ok(&engine, "browser_navigate", json!({"url": page})).await;
    // The page and its API, as recorded. (What the tab's request log holds
    // no body of, a worker's requests, a cross-origin frame's document,
    // an image, is not in a HAR made from it: those fail here, as
    // `not_found` says.)
    wait_text(&engine, "items server").await;
    let listed = ok(&engine, "browser_network", json!({"action": "list"})).await;
    let doc = listed
        .text
        .lines()
        .rfind(|l| l.contains("routes.html"))
        .unwrap_or_default();
    assert!(doc.contains("(by route1 har)"), "{}", listed.text);
}

#[tokio::test]
async fn bad_routes_are_refused_naming_the_field_and_nothing_is_routed() {
    let engine = engine();
    let bad = [
        (
            json!({"action": "route", "url": "http://[oops/*", "answer": "abort"}),
            "url",
        ),
        (json!({"action": "reroute"}), "reroute"),
        (
            json!({"action": "route", "url": "*://*/*", "answer": "fulfill", "status": 700}),
            "status",
        ),
        (
            json!({"action": "route", "url": "*://*/*", "answer": "fulfill", "text": "{nope",
                   "headers": {"Content-Type": "application/json"}}),
            "not JSON",
        ),
        (
            json!({"action": "route", "url": "*://*/*", "answer": "fulfill", "headers": {"x-a": "1\r\nset-cookie: a=b"}}),
            "headers.x-a",
        ),
        (
            json!({"action": "route", "url": "*://*/*", "answer": "abort", "error": "Nope"}),
            "error",
        ),
        (
            json!({"action": "route", "url": "*://*/*", "answer": "delay"}),
            "delay_ms",
        ),
        (
            json!({"action": "route", "url": "*://*/*", "answer": "abort", "delay_ms": 5}),
            "delay_ms",
        ),
        (
            json!({"action": "route", "url": "*://*/*", "answer": "fulfill", "file": "../etc/passwd"}),
            "..",
        ),
        (
            json!({"action": "conditions", "preset": "Carrier pigeon"}),
            "preset",
        ),
        (json!({"action": "list", "answer": "abort"}), "answer"),
        (json!({"action": "unroute", "id": "route9"}), "route9"),
    ];
    for (args, names) in bad {
        let e = call(&engine, "browser_network", args.clone()).await.unwrap_err();
        assert!(
            matches!(e.code, ErrorCode::InvalidArgument | ErrorCode::PermissionDenied),
            "{args}: {e}"
        );
        assert!(e.message.contains(names), "{args}: the error names {names}: {e}");
    }
    // Files that are not HAR 1.2: foreign, truncated.
    let output = engine.config().files.output_dir();
    std::fs::create_dir_all(&output).unwrap();
    std::fs::write(
        output.join("foreign.har"),
        r#"{"log": {"version": "2.0", "entries": []}}"#,
    )
    .unwrap();
    std::fs::write(
        output.join("cut.har"),
        r#"{"log": {"version": "1.2", "entries": [{"request""#,
    )
    .unwrap();
    for (file, says) in [
        ("foreign.har", "1.2"),
        ("cut.har", "not a HAR"),
        ("missing.har", "missing.har"),
    ] {
        let e = call(&engine, "browser_network", json!({"action": "har", "file": file}))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{file}: {e}");
        assert!(
            e.message.contains(says) && e.message.contains(file),
            "{file}: {e}"
        );
    }
    let routes = ok(&engine, "browser_network", json!({"action": "routes"})).await;
    assert_eq!(routes.text, "No routes are set.", "nothing was routed half-way");
}

/// Issue 44: a dedicated worker's requests pause in its frame's request
/// stage, so the routes answer them; they are also listed by
/// `browser_network` (from the worker's own session), with how the route
/// answered, and so is the audit record of the call and the trace.
#[tokio::test]
async fn a_workers_requests_are_routed_listed_audited_and_traced_with_how_they_were_answered() {
    let site = TestSite::start().await;
    let engine = engine_with(|c| c.tools.caps.push("trace".into()));
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/index.html")}),
    )
    .await;
    let pattern = format!("{}/api/*", site.a);
    route(
        &engine,
        json!({"url": pattern, "answer": "fulfill", "text": "from the route"}),
    )
    .await;
    route(
        &engine,
        json!({"url": format!("{}/json*", site.a), "answer": "abort"}),
    )
    .await;
    let traced = ok(&engine, "browser_trace", json!({"action": "start"})).await;
    let dir = std::path::PathBuf::from(traced.data["dir"].as_str().unwrap());

    assert_eq!(
        worker_fetch(&engine, &site.url("/api/dedicated"), false).await,
        "got from the route"
    );
    assert_eq!(
        worker_fetch(&engine, &site.url("/json?from=worker"), false).await,
        "failed"
    );
    assert_eq!(
        received(&site, "/api"),
        Vec::<String>::new(),
        "the routes answered"
    );
    assert_eq!(received(&site, "/json"), Vec::<String>::new(), "aborted");

    let (line, entry) = listed(&engine, "/api/dedicated").await;
    assert!(
        line.contains(" 200 ") && line.contains("(by route1 fulfill)"),
        "{line}"
    );
    assert_eq!(
        (&entry["routed"], &entry["route"], &entry["pattern"]),
        (&json!("fulfill"), &json!("route1"), &json!(pattern)),
        "{entry}"
    );
    let (line, entry) = listed(&engine, "/json?from=worker").await;
    assert!(
        line.contains("failed") && line.contains("(by route2 abort)"),
        "{line}"
    );
    assert_eq!(entry["routed"], "abort", "{entry}");

    // The audit: the call during which the worker fetched says so.
    let audited: Vec<Value> = engine
        .audit()
        .records()
        .iter()
        .flat_map(|r| r.routed.clone())
        .collect();
    let by_route = |route: &str| {
        audited
            .iter()
            .filter(|r| r["route"] == route)
            .flat_map(|r| r["urls"].as_array().unwrap().clone())
            .collect::<Vec<Value>>()
    };
    assert!(
        by_route("route1").contains(&json!(site.url("/api/dedicated"))),
        "{audited:?}"
    );
    assert!(
        by_route("route2").contains(&json!(site.url("/json?from=worker"))),
        "{audited:?}"
    );
    assert!(audited
        .iter()
        .all(|r| r["pattern"].is_string() && r["requests"].as_u64() >= Some(1)));

    // The trace: its requests and its HAR say how they were answered.
    ok(&engine, "browser_trace", json!({"action": "stop"})).await;
    let lines: Vec<Value> = std::fs::read_to_string(dir.join("trace.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let traced: Vec<&Value> = lines
        .iter()
        .flat_map(|l| l["requests"].as_array().into_iter().flatten())
        .filter(|r| r["url"].as_str().unwrap_or_default().contains("/api/dedicated"))
        .collect();
    assert!(
        traced
            .iter()
            .any(|r| r["routed"] == "fulfill" && r["route"] == "route1" && r["pattern"] == json!(pattern)),
        "{traced:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l["routed"].as_array().is_some_and(|r| !r.is_empty())),
        "a step names what was routed"
    );
    let har: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("har.json")).unwrap()).unwrap();
    let entry = har["log"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| {
            e["request"]["url"]
                .as_str()
                .unwrap_or_default()
                .contains("/json?from=worker")
        })
        .unwrap_or_else(|| panic!("{har}"));
    assert_eq!(entry["_cdpilotRouted"]["answer"], "abort", "{entry}");
}

/// Issue 44: a route on a URL the rules deny answers neither a worker's
/// (dedicated or shared) fetch of it nor a cross-origin frame's: each is
/// refused, the denied server sees nothing, and the route counts no hit
/// (it once counted the requests it matched, refused ones included).
#[tokio::test]
async fn a_route_never_answers_a_worker_or_a_cross_origin_frame_for_a_denied_url() {
    let site = TestSite::start().await;
    let denied = DeniedServer::start().await;
    let engine = engine_with(|c| {
        c.policy.rules.push(Rule {
            pattern: format!("http://{}/*", denied.host()),
            action: "deny".into(),
            origin: None,
        })
    });
    route(
        &engine,
        json!({"url": format!("http://{}/*", denied.host()), "answer": "fulfill",
               "text": "FORGED"}),
    )
    .await;
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/routes.html")}),
    )
    .await;
    wait_text(&engine, "xhr done: ada").await;
    let target = denied.url("/secret");
    assert_eq!(
        worker_fetch(&engine, &target, false).await,
        "failed",
        "a worker's fetch"
    );
    assert_eq!(
        worker_fetch(&engine, &target, true).await,
        "failed",
        "a shared worker's"
    );
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let frame = snap.data["frame_tree"]["children"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["is_oopif"] == true)
        .unwrap_or_else(|| panic!("{}", snap.text))["frame_id"]
        .clone();
    let expression = format!(
        "(async () => {{ try {{ return 'got ' + await (await fetch({target:?})).text(); }} catch (e) {{ return 'failed'; }} }})()"
    );
    let in_frame = ok(
        &engine,
        "browser_evaluate",
        json!({"expression": expression, "frame": frame}),
    )
    .await;
    assert_eq!(in_frame.data["value"], "failed", "the cross-origin frame's fetch");
    assert_eq!(denied.seen().requests, Vec::<String>::new());
    assert_eq!(denied.seen().connections, 0);
    let routes = ok(&engine, "browser_network", json!({"action": "routes"})).await;
    assert_eq!(
        routes.data["routes"][0]["hits"], 0,
        "the route answered none: {}",
        routes.text
    );
}

/// Issue 44: a popup the page opens (`window.open`) between calls follows
/// the session's routes from its own document request: the route answers
/// it and the server sees nothing (it used to get them only at the next
/// call in it, after its document had loaded from the server).
#[tokio::test]
async fn a_popup_follows_the_sessions_routes_from_its_first_request() {
    let (site, engine) = opened("/index.html").await;
    route(
        &engine,
        json!({"url": format!("{}/popup-doc*", site.a), "answer": "fulfill",
               "text": "<title>Routed</title><h1>fixture popup</h1><img src=\"/api/popup-image\">",
               "headers": {"content-type": "text/html"}}),
    )
    .await;
    route(
        &engine,
        json!({"url": format!("{}/api/*", site.a), "answer": "abort"}),
    )
    .await;
    let opened = "new Promise((resolve) => { const w = window.open('/popup-doc.html'); \
        const done = () => { if (w.location.pathname === '/popup-doc.html') resolve(w.document.body.innerText); }; \
        w.addEventListener('load', done); setTimeout(() => resolve('no load: ' + w.location.href), 8000); })";
    let said = ok(&engine, "browser_evaluate", json!({"expression": opened})).await;
    assert_eq!(said.data["value"], "fixture popup", "{}", said.text);
    assert_eq!(
        received(&site, "/popup-doc"),
        Vec::<String>::new(),
        "the route answered the popup"
    );
    assert_eq!(
        received(&site, "/api"),
        Vec::<String>::new(),
        "its image was aborted"
    );
}
