//! `cdpilot serve` in front of a real Selenium Grid 4 on loopback (issue
//! 23): a hub and two nodes with two Chromium slots each, started by
//! `testkit::grid` (installed by scripts/ensure-grid). One Grid serves the
//! whole scenario, step by step, since Java takes seconds to start and the
//! steps need the slots to themselves.

mod support;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::ref_on_line;
use support::serve::{Client, Serve};
use testkit::grid::Grid;
use testkit::http_mcp::http;
use testkit::TestSite;

/// A library engine on `grid` (the test browser flags), adjusted.
fn grid_engine(grid: &Grid, adjust: impl FnOnce(&mut engine::Config)) -> engine::Engine {
    let mut config = engine::Config::default();
    config.browser.grid = grid.url().to_owned();
    config.browser.args = vec!["--site-per-process".into(), "--no-sandbox".into()];
    adjust(&mut config);
    engine::Engine::start(config).expect("a valid configuration")
}

async fn call(
    engine: &engine::Engine,
    tool: &str,
    args: Value,
) -> Result<engine::ActionOutput, engine::ActionError> {
    engine::dispatch::call(engine.session(), tool, args, Default::default()).await
}

fn config(grid: &Grid) -> String {
    // Chromium on the node runs as this user (root in CI): no sandbox.
    format!(
        "[browser]\ngrid = \"{}\"\nargs = [\"--site-per-process\", \"--no-sandbox\"]\n",
        grid.url()
    )
}

async fn get(serve: &Serve, path: &str) -> String {
    let bearer = format!("Bearer {}", serve.token);
    let reply = http(&serve.authority, "GET", path, &[("Authorization", &bearer)], "").await;
    assert_eq!(reply.status, 200, "{reply:?}");
    reply.body
}

fn samples(text: &str) -> HashMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (name, value) = l.rsplit_once(' ')?;
            Some((name.to_owned(), value.parse().ok()?))
        })
        .collect()
}

/// Which node (its URI) each open cdpilot session runs on, from the
/// dashboard's state.
async fn nodes_of(serve: &Serve) -> HashMap<String, String> {
    let state: Value = serde_json::from_str(&get(serve, "/v1/dashboard/state").await).unwrap();
    state["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| {
            Some((
                s["id"].as_str()?.to_owned(),
                s["grid"]["node"].as_str()?.to_owned(),
            ))
        })
        .collect()
}

/// Waits (bounded) until `condition` on the Grid holds; how long it took.
async fn until(
    grid: &Grid,
    limit: Duration,
    what: &str,
    condition: impl Fn(&[(String, Vec<String>)], usize) -> bool,
) -> Duration {
    let started = Instant::now();
    loop {
        let sessions = grid.sessions().await;
        if condition(&sessions, grid.queued().await) {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < limit,
            "{what}: not within {limit:?}; the Grid: {sessions:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn total(sessions: &[(String, Vec<String>)]) -> usize {
    sessions.iter().map(|(_, s)| s.len()).sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_on_a_grid_of_two_nodes_places_queues_frees_survives_a_node_and_deletes_at_sigterm() {
    let site = TestSite::start().await;
    let mut grid = Grid::hub_and_nodes(2).await;
    let mut serve = Serve::start(&config(&grid), &[]).await;

    // Four sessions land two and two on the nodes, each in its own browser.
    let mut clients = Vec::new();
    for _ in 0..4 {
        clients.push(Client::open(&serve).await);
    }
    let first_calls = clients.iter_mut().enumerate().map(|(n, c)| {
        let url = site.url(&format!("/index.html?s={n}"));
        // A first call includes the node starting a browser: on a loaded
        // machine four at once take a while.
        async move {
            c.ok("1", "browser_navigate", json!({"url": url, "timeout_ms": 120000}))
                .await
        }
    });
    futures_util::future::join_all(first_calls).await;
    let per_node: Vec<usize> = grid.sessions().await.iter().map(|(_, s)| s.len()).collect();
    assert_eq!(per_node, [2, 2], "sessions per node");
    for (n, c) in clients.iter_mut().enumerate() {
        let script =
            format!("localStorage.getItem('who') + '/' + (localStorage.setItem('who', '{n}'), '{n}')");
        let seen = c.ok("2", "browser_evaluate", json!({"expression": script})).await;
        assert_eq!(
            seen["value"],
            format!("null/{n}"),
            "session {n} saw another's storage: {seen}"
        );
    }
    let m = samples(&get(&serve, "/metrics").await);
    assert_eq!(m["cdpilot_grid_sessions_open"], 4.0, "{m:?}");
    let on_nodes: f64 = [0, 1]
        .iter()
        .map(|n| m[&format!("cdpilot_grid_node_sessions{{node=\"{}\"}}", grid.node_url(*n))])
        .sum();
    assert_eq!(on_nodes, 4.0, "{m:?}");
    let nodes = nodes_of(&serve).await;
    assert_eq!(
        nodes.len(),
        4,
        "the dashboard names each session's node: {nodes:?}"
    );

    // With every slot taken, a call waits within its budget and says why;
    // its request stays queued, and the slot it later gets is given back
    // (its session is gone by then).
    let library = grid_engine(&grid, |_| {});
    let waited = call(
        &library,
        "browser_navigate",
        json!({"url": site.url("/index.html"), "timeout_ms": 3000}),
    )
    .await
    .expect_err("no slot free");
    assert_eq!(waited.code, engine::ErrorCode::Timeout, "{waited}");
    assert!(
        waited.message.contains("waiting for a free Grid slot"),
        "{waited}"
    );
    assert!(waited.next_step.contains("queue"), "{}", waited.next_step);
    drop(library);
    // A capability no node offers: the Grid's refusal, coded.
    let firefox = grid_engine(&grid, |c| {
        c.browser
            .grid_capabilities
            .insert("browserName".into(), "firefox".into());
    });
    let refused = call(
        &firefox,
        "browser_navigate",
        json!({"url": site.url("/index.html")}),
    )
    .await
    .expect_err("no node runs firefox");
    assert_eq!(refused.code, engine::ErrorCode::BrowserDisconnected, "{refused}");
    assert!(
        refused.message.contains("refused the new session") && refused.message.contains(grid.url()),
        "{refused}"
    );
    drop(firefox);

    // A fifth session waits in the Grid's queue and runs when one ends.
    let mut fifth = Client::open(&serve).await;
    let url = site.url("/index.html?s=5");
    let waiting = tokio::spawn(async move {
        let response = fifth
            .call("1", "browser_navigate", json!({"url": url, "timeout_ms": 90000}))
            .await;
        (fifth, response)
    });
    until(
        &grid,
        Duration::from_secs(30),
        "the fifth request queued",
        |_, queued| queued == 2,
    )
    .await;
    let m = samples(&get(&serve, "/metrics").await);
    assert_eq!(m["cdpilot_grid_requests_waiting"], 1.0, "{m:?}");
    assert_eq!(m["cdpilot_grid_queue_size"], 2.0, "{m:?}");
    let mut closed = clients.remove(0);
    closed.ws.socket.close(None).await.ok();
    let (mut fifth, response) = waiting.await.unwrap();
    assert!(
        response["result"].is_object(),
        "the fifth session ran: {response}"
    );
    assert_eq!(total(&grid.sessions().await), 4);

    // Closing a session frees its Grid slot at once.
    let closed = clients.remove(0);
    let mut ws = closed.ws;
    ws.socket.close(None).await.ok();
    let freed = until(
        &grid,
        Duration::from_secs(5),
        "a closed session's slot freed",
        |s, _| total(s) == 3,
    )
    .await;
    eprintln!("a closed session's Grid slot was free after {freed:?}");

    // The acceptance path through the Grid.
    let c = &mut fifth;
    eprintln!("step: the acceptance path");
    c.ok("2", "browser_navigate", json!({"url": site.url("/frames.html")}))
        .await;
    let snap = c.ok("3", "browser_snapshot", json!({})).await;
    let text = snap["text"].as_str().unwrap_or_default().to_owned();
    let child = ref_on_line(&text, "Child button");
    assert!(
        child.starts_with('f'),
        "the cross-origin frame's button has a frame ref: {child}"
    );
    // The first input into the cross-origin frame lands (it once was
    // lost now and then: engine/tests/oopif_input.rs).
    let clicked = c.ok("4", "browser_click", json!({"ref": child})).await;
    let snap = c.ok("5", "browser_snapshot", json!({})).await;
    assert!(
        snap.to_string().contains("Child clicked true"),
        "{clicked}\n{snap}"
    );
    let alert = ref_on_line(&text, "Child alert");
    let clicked = c.call("6", "browser_click", json!({"ref": alert})).await;
    // The alert may open after the click has answered (the frame's
    // process gets the input late): the event is what says it opened.
    assert!(
        clicked["result"].is_object() || clicked["error"]["code"] == "dialog_pending",
        "{clicked}"
    );
    eprintln!("step: dialog");
    let opened = match tokio::time::timeout(Duration::from_secs(20), c.event("dialog_opened")).await {
        Ok(opened) => opened,
        Err(_) => {
            let snap = c.call("6a", "browser_snapshot", json!({})).await;
            panic!("no dialog_opened 20 s after the click; its answer: {clicked}\nthe page: {snap}");
        }
    };
    assert_eq!(opened["data"]["type"], "alert", "{opened}");
    assert!(opened.to_string().contains("alert from"), "{opened}");
    c.ok("7", "browser_dialog", json!({"action": "accept"})).await;
    eprintln!("step: runaway evaluate");
    let runaway = c
        .call(
            "8",
            "browser_evaluate",
            json!({"expression": "while (true) {}", "timeout_ms": 2000}),
        )
        .await;
    assert_eq!(runaway["error"]["code"], "timeout", "{runaway}");
    eprintln!("step: after the runaway: {runaway}");
    let after = c
        .ok("9", "browser_evaluate", json!({"expression": "1 + 1"}))
        .await;
    assert_eq!(
        after["value"], 2,
        "the tab is usable after the runaway script: {after}"
    );

    // Killing a node: its sessions hear browser_lost, and their next call
    // runs on the other node (which has a slot free for each).
    let nodes = nodes_of(&serve).await;
    let mut everyone: Vec<Client> = clients.into_iter().chain([fifth]).collect();
    let victim_node = nodes[&everyone[0].session].clone();
    let (mut lost, kept): (Vec<Client>, Vec<Client>) =
        everyone.drain(..).partition(|c| nodes[&c.session] == victim_node);
    // Free the other node's slots for the lost sessions.
    for c in kept {
        let mut ws = c.ws;
        ws.socket.close(None).await.ok();
    }
    // Bounded by the close's own budget (5 s) plus the Grid's delete
    // (chromedriver quitting Chrome), with slack for a loaded machine.
    until(
        &grid,
        Duration::from_secs(20),
        "the other node's slots freed",
        |s, _| total(s) == lost.len(),
    )
    .await;
    let victim = (0..2)
        .find(|n| grid.node_url(*n) == victim_node)
        .expect("a node of ours");
    eprintln!("step: killing {victim_node}");
    grid.kill_node(victim);
    for c in lost.iter_mut() {
        let ended = c.event("session_ended").await;
        assert_eq!(ended["data"]["reason"], "browser_lost", "{ended}");
    }
    eprintln!("step: the lost sessions' next calls");
    for c in lost.iter_mut() {
        let again = c
            .ok(
                "10",
                "browser_navigate",
                json!({"url": site.url("/index.html?again"), "timeout_ms": 60000}),
            )
            .await;
        assert_eq!(again["browser_restarted"], true, "{again}");
    }
    let nodes = nodes_of(&serve).await;
    for c in &lost {
        assert_ne!(nodes[&c.session], victim_node, "moved off the dead node");
    }
    let m = samples(&get(&serve, "/metrics").await);
    assert!(
        m[r#"cdpilot_sessions_ended_total{reason="browser_lost"}"#] >= lost.len() as f64,
        "{m:?}"
    );

    // SIGTERM: every Grid session cdpilot made is deleted (the dead
    // node's stale slots aside, which the hub lists until it purges it).
    let alive = |s: &[(String, Vec<String>)]| -> usize {
        s.iter()
            .filter(|(node, _)| *node != victim_node)
            .map(|(_, s)| s.len())
            .sum()
    };
    assert_eq!(alive(&grid.sessions().await), lost.len());
    eprintln!("step: SIGTERM");
    let status = serve.terminate().await;
    assert!(status.success(), "{status:?}");
    // cdpilot waited for its DELETEs before exiting; the hub's `/status`
    // follows its nodes a moment later (as for a closed session above).
    until(
        &grid,
        Duration::from_secs(5),
        "Grid sessions left after cdpilot's SIGTERM",
        |s, _| alive(s) == 0,
    )
    .await;
    drop(lost);
}

#[tokio::test]
async fn an_unreachable_hub_is_a_coded_error_naming_it() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut config = engine::Config::default();
    config.browser.grid = format!("http://127.0.0.1:{port}");
    let engine = engine::Engine::start(config).unwrap();
    let error = call(&engine, "browser_navigate", json!({"url": "http://127.0.0.1:1/"}))
        .await
        .expect_err("nothing listens there");
    assert_eq!(error.code, engine::ErrorCode::BrowserDisconnected, "{error}");
    assert!(
        error.message.contains("cannot reach the Selenium Grid") && error.message.contains(&port.to_string()),
        "{error}"
    );
    assert!(error.next_step.contains("[browser] grid"), "{}", error.next_step);
}

#[tokio::test]
async fn bad_grid_settings_stop_the_start_naming_the_key() {
    for (flags, key) in [
        (vec!["--grid", "ftp://hub:4444"], "browser.grid"),
        (
            vec!["--grid", "http://hub:4444", "--cdp-url", "ws://127.0.0.1:9/x"],
            "browser.grid",
        ),
    ] {
        let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
            .arg("serve")
            .args(&flags)
            .env("CDPILOT_CONFIG", "")
            .output()
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{flags:?} started");
        assert!(stderr.contains(key), "{flags:?}: {stderr}");
    }
    for (text, key) in [
        (
            "[browser]\ngrid = \"http://h:4444\"\ngrid_capabilities = \"linux\"\n",
            "grid_capabilities",
        ),
        (
            "[browser]\ngrid = \"http://h:4444\"\ngrid_capabilities = { \"goog:chromeOptions\" = 1 }\n",
            "goog:chromeOptions",
        ),
        (
            "[browser]\ngrid_headers = { Authorization = \"x\" }\n",
            "browser.grid",
        ),
        ("[browser]\ngrid = \"ws://h:4444\"\n", "browser.grid"),
    ] {
        let error = engine::Config::parse(text)
            .and_then(|c| engine::startup::check(&c))
            .err()
            .unwrap_or_else(|| panic!("{text} was taken"));
        assert!(error.contains(key), "{text}: {error}");
    }
}

#[tokio::test]
async fn a_grid_without_cdp_is_a_coded_error_and_its_session_is_deleted() {
    let grid = Grid::standalone_with(&["--enable-cdp", "false"]).await;
    let engine = grid_engine(&grid, |_| {});
    let error = call(
        &engine,
        "browser_navigate",
        json!({"url": "http://127.0.0.1:1/", "timeout_ms": 120000}),
    )
    .await
    .expect_err("no se:cdp to attach to");
    assert_eq!(error.code, engine::ErrorCode::BrowserDisconnected, "{error}");
    assert!(error.message.contains("no se:cdp"), "{error}");
    // The session the Grid made is not left holding the slot.
    until(
        &grid,
        Duration::from_secs(10),
        "the unusable session deleted",
        |s, _| total(s) == 0,
    )
    .await;
}
