//! Issue 34, finding 9 and "Also seen": the hand-off's doors. Its live
//! view and the person's audit records carry the tab's URL redacted (a
//! secret the agent typed into a GET form); its routes sit behind the
//! guard (a rebinding `Host`, another site's `Origin`) on serve's listener
//! and on `cdpilot mcp`'s on-demand one; its ids are not guessable; a
//! refusal of the URL rules shows on the page though nothing repaints; an
//! MCP client with no elicitation gets the link at once; and a process of
//! another user gets nothing from either listener without the link.

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use testkit::http_mcp::http;
use testkit::TestSite;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

use super::support::serve::Serve;
use super::{split, Agent};

type Live = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The next JSON message of the live socket that `wanted` accepts, within 20 s.
async fn next_live(socket: &mut Live, wanted: impl Fn(&Value) -> bool) -> Option<Value> {
    let read = async {
        while let Some(Ok(message)) = socket.next().await {
            if let Message::Text(text) = message {
                let data: Value = serde_json::from_str(text.as_str()).unwrap();
                if wanted(&data) {
                    return Some(data);
                }
            }
        }
        None
    };
    tokio::time::timeout(Duration::from_secs(20), read)
        .await
        .ok()
        .flatten()
}

async fn send(socket: &mut Live, event: Value) {
    socket.send(Message::text(event.to_string())).await.unwrap();
}

/// `curl` run as another unprivileged user (nobody) when the tests run as
/// root (they do here and in CI); as this user otherwise, a neighbour at
/// least as strong. Its stdout, then the status on the last line.
async fn neighbour_curl(args: &[&str]) -> (String, String) {
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    let mut command = if root {
        let mut c = tokio::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "curl"]);
        c
    } else {
        tokio::process::Command::new("curl")
    };
    let output = command
        .args(["-s", "-N", "--max-time", "3", "-w", "\n%{http_code}"])
        .args(args)
        .output()
        .await
        .expect("curl");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let (body, status) = text.rsplit_once('\n').unwrap_or(("", &text));
    (body.to_owned(), status.to_owned())
}

const UPGRADE: [&str; 8] = [
    "-H",
    "Connection: Upgrade",
    "-H",
    "Upgrade: websocket",
    "-H",
    "Sec-WebSocket-Version: 13",
    "-H",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
];

/// Issue 34, finding 9: the live socket's `view.url` and the person's
/// audit records carried the tab's URL with what the agent typed into a
/// GET form; the hand-off routes answered a rebinding `Host` and opened
/// the live socket for another site's `Origin`; ids counted up (`h1`).
/// And a neighbour gets nothing from serve's port without a credential.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_handoff_shows_and_audits_the_url_redacted_behind_the_guard_with_unguessable_ids() {
    const SECRET: &str = "pa ss&w0rd-42";
    std::env::set_var("CDPILOT_TEST_HANDOFF_SECRET", SECRET);
    let site = TestSite::start().await;
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let config = format!(
        "[secrets]\nPW = {{ env = \"CDPILOT_TEST_HANDOFF_SECRET\" }}\n[audit]\nfile = \"{}\"\n",
        audit.display()
    );
    let serve = Serve::start(&config, &[]).await;
    let mut agent = Agent::open(&serve).await;
    agent
        .ok("1", "browser_navigate", json!({"url": site.url("/index.html")}))
        .await;
    let form = "document.body.insertAdjacentHTML('beforeend', `<form action='/index.html' method=get><input id=q name=q aria-label=Query></form>`); 1";
    agent
        .ok("2", "browser_evaluate", json!({"expression": form}))
        .await;
    agent
        .ok(
            "3",
            "browser_type",
            json!({"selector": "#q", "text": "{{secret:PW}}", "submit": true}),
        )
        .await;
    agent
        .ok("4", "browser_wait", json!({"url": "**/index.html?q=*"}))
        .await;

    let first = agent.hand_off("h", json!({"reason": "Check the form"})).await;
    // Every door found open is listed (not only the first) before the test fails.
    let mut open = Vec::new();
    let mut door = |held: bool, what: String| {
        if !held {
            open.push(what);
        }
    };
    let id = first["id"].as_str().unwrap().to_owned();
    door(
        id.len() >= 33 && id != "h1",
        format!("a guessable hand-off id: {id}"),
    );
    let link = first["url"].as_str().unwrap().to_owned();
    let (path, token) = split(&link, &serve.authority);

    // The guard: a rebinding Host, another site's Origin on the socket.
    let port = serve.authority.rsplit_once(':').unwrap().1;
    let rebinding = format!("evil.example:{port}");
    let rebound = http(&serve.authority, "GET", &path, &[("Host", &rebinding)], "").await;
    door(rebound.status == 403, format!("a rebinding Host got {rebound:?}"));
    let live = format!("ws://{}{path}/live?t={token}", serve.authority);
    let mut cross = live.as_str().into_client_request().unwrap();
    cross
        .headers_mut()
        .insert("origin", "http://evil.example".parse().unwrap());
    door(
        tokio_tungstenite::connect_async(cross).await.is_err(),
        "another site's page opened the live view".into(),
    );

    // The view names the URL redacted.
    let (mut socket, _) = tokio_tungstenite::connect_async(live.as_str()).await.unwrap();
    let view = next_live(&mut socket, |d| d.get("view").is_some())
        .await
        .expect("the view");
    let url = view["view"]["url"].as_str().unwrap().to_owned();
    door(
        url.contains("{{secret:PW}}"),
        format!("the view's URL is not redacted: {view}"),
    );
    // The person clicks (audited with the tab's URL) once the viewport is known.
    next_live(&mut socket, |d| d.get("frame").is_some())
        .await
        .expect("a frame");
    send(
        &mut socket,
        json!({"type": "mouse", "action": "down", "x": 5, "y": 5, "button": "left", "clicks": 1}),
    )
    .await;
    send(
        &mut socket,
        json!({"type": "mouse", "action": "up", "x": 5, "y": 5, "button": "left", "clicks": 1}),
    )
    .await;

    // A neighbour (another user) gets nothing from serve's port without
    // the token, nor from the hand-off's routes without the link.
    let base = format!("http://{}", serve.authority);
    for (method, route) in [
        ("GET", "/v1/dashboard/state"),
        ("POST", "/mcp"),
        ("GET", "/v1/schema"),
        ("GET", "/metrics"),
        ("GET", "/v1/extension/status"),
    ] {
        let (body, status) = neighbour_curl(&["-X", method, &format!("{base}{route}")]).await;
        door(
            status == "401",
            format!("a neighbour's {method} {route}: {status} {body}"),
        );
    }
    let (body, status) = neighbour_curl(&[&format!("{base}/")]).await;
    door(
        !body.contains(&serve.token) && !body.contains(&agent.session) && !body.contains(&token),
        format!("a neighbour's GET / ({status}) carries a secret: {body}"),
    );
    let mut args: Vec<String> = UPGRADE.iter().map(|s| s.to_string()).collect();
    args.push(format!(
        "{base}/v1/dashboard/screencast?session={}&tab=t1",
        agent.session
    ));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (body, _) = neighbour_curl(&args).await;
    door(
        !body.contains("/9j/"),
        format!("a neighbour's live view got a frame: {body}"),
    );
    for guess in [
        format!("{base}/handoff/h1"),
        format!("{base}/handoff/h2/live?t=x"),
        format!("{base}{path}/live?t=wrong"),
    ] {
        let (body, status) = neighbour_curl(&[&guess]).await;
        door(status == "410", format!("a neighbour's {guess}: {status} {body}"));
    }

    send(&mut socket, json!({"type": "give_up"})).await;
    let declined = agent.response("h").await;
    assert_eq!(declined["error"]["code"], "handoff_declined", "{declined}");

    // The person's audit records (the file: the dashboard's state is
    // redacted as a whole on its way out) name the URL redacted.
    let until = Instant::now() + Duration::from_secs(20);
    let written = loop {
        let written = std::fs::read_to_string(&audit).unwrap_or_default();
        if written.contains("person: give up") {
            break written;
        }
        assert!(Instant::now() < until, "no person's record in {written}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(written.contains("person: click"), "{written}");
    for spelling in [SECRET, "pa+ss%26w0rd-42", "pa%20ss%26w0rd-42"] {
        door(
            !url.contains(spelling),
            format!("the live view's URL carries {spelling}: {url}"),
        );
        door(
            !written.contains(spelling),
            format!("the audit carries {spelling}: {written}"),
        );
    }

    // Ids are not counted: the next one shares nothing guessable.
    let second = agent
        .hand_off("h2", json!({"reason": "Again", "timeout_ms": 1000}))
        .await;
    let other = second["id"].as_str().unwrap();
    door(other.len() >= 33 && other != id, format!("ids {id} then {other}"));
    let late = agent.response("h2").await;
    assert_eq!(late["error"]["code"], "timeout", "{late}");
    assert!(open.is_empty(), "doors found open: {open:#?}");
}

/// Issue 34, "Also seen": the person's navigation refused by the URL rules
/// sometimes never showed on the hand-off page. The view went out only
/// with a screencast frame, and a refused navigation commits nothing and
/// repaints nothing: when the frame of the person's input came before the
/// refusal was recorded, no frame ever carried it. Here the navigation
/// comes from a key, which repaints nothing at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_navigation_shows_on_the_handoff_page_though_nothing_repaints() {
    let site = TestSite::start().await;
    let denied = testkit::DeniedServer::start().await;
    let rule = format!(
        "[[policy.rules]]\npattern = \"http://{}/*\"\naction = \"deny\"\n",
        denied.host()
    );
    let serve = Serve::start(&rule, &[]).await;
    let mut agent = Agent::open(&serve).await;
    agent
        .ok("1", "browser_navigate", json!({"url": site.url("/index.html")}))
        .await;
    let away = format!(
        "document.addEventListener('keydown', () => {{ location.href = {}; }}); 1",
        json!(denied.url("/secret"))
    );
    agent
        .ok("2", "browser_evaluate", json!({"expression": away}))
        .await;
    let handoff = agent.hand_off("h", json!({"reason": "Press a key"})).await;
    let (path, token) = split(handoff["url"].as_str().unwrap(), &serve.authority);
    let live = format!("ws://{}{path}/live?t={token}", serve.authority);
    let (mut socket, _) = tokio_tungstenite::connect_async(live.as_str()).await.unwrap();
    next_live(&mut socket, |d| d.get("frame").is_some())
        .await
        .expect("a first frame");
    for action in ["down", "up"] {
        send(
            &mut socket,
            json!({"type": "key", "action": action, "key": "x", "code": "KeyX", "text": "x", "key_code": 88}),
        )
        .await;
    }
    let refused = next_live(&mut socket, |d| {
        d["view"]["refused"].as_array().is_some_and(|r| !r.is_empty())
    })
    .await
    .expect("the refusal shown within 20 s");
    assert_eq!(
        refused["view"]["refused"][0]["url"],
        denied.url("/secret"),
        "{refused}"
    );
    denied.assert_untouched("a navigation the person's key started");
    send(&mut socket, json!({"type": "give_up"})).await;
    let declined = agent.response("h").await;
    assert_eq!(declined["error"]["code"], "handoff_declined", "{declined}");
}

/// Issue 34, "Also seen": through an MCP client that declared no
/// elicitation the link reached nobody and the call waited out its budget.
/// Now the result names the link at once, and calling browser_handoff again
/// on the tab waits for the person. The on-demand listener sits behind the
/// guard, and a neighbour gets nothing from it without the link.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_mcp_without_elicitation_the_caller_gets_the_link_at_once_and_waits_with_a_second_call() {
    let site = TestSite::start().await;
    let (mut client, _tmp) = super::support::spawn_cdpilot();
    client
        .request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "no-elicitation", "version": "0"}
            }),
        )
        .await
        .expect("initialize");
    client.notify("notifications/initialized", json!({})).await;
    client
        .call("browser_navigate", json!({"url": site.url("/index.html")}))
        .await;

    let asked = Instant::now();
    let handed = client
        .call(
            "browser_handoff",
            json!({"reason": "Log in", "timeout_ms": 600000}),
        )
        .await;
    let took = asked.elapsed();
    assert_ne!(handed["isError"], true, "{handed}");
    // Its budget is 10 minutes; it answered without waiting for anyone.
    assert!(took < Duration::from_secs(60), "answered after {took:?}");
    let result = &handed["structuredContent"];
    let link = result["link"].as_str().expect("the link").to_owned();
    let text = super::support::text_of(&handed);
    assert!(text.contains(&link), "{text}");
    assert!(text.contains("browser_handoff again"), "{text}");
    assert_eq!(result["by"], "caller", "{handed}");

    let rest = link.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_once('/').unwrap();
    let (path, token) = path.split_once('#').unwrap();
    let path = format!("/{path}");
    let page = http(authority, "GET", &path, &[], "").await;
    assert_eq!(page.status, 200, "{page:?}");
    let port = authority.rsplit_once(':').unwrap().1;
    let rebound = http(
        authority,
        "GET",
        &path,
        &[("Host", &format!("evil.example:{port}"))],
        "",
    )
    .await;
    assert_eq!(rebound.status, 403, "the on-demand listener's guard: {rebound:?}");
    assert_eq!(rebound.header("x-frame-options"), Some("DENY"), "{rebound:?}");

    // A neighbour: no page for a guessed id, no live view with a wrong token.
    let base = format!("http://{authority}");
    for guess in [format!("{base}/handoff/h1"), format!("{base}{path}/live?t=wrong")] {
        let (body, status) = neighbour_curl(&[&guess]).await;
        assert_eq!(status, "410", "a neighbour's {guess}: {body}");
    }
    let (_, status) = neighbour_curl(&[&format!("{base}/v1/dashboard/state")]).await;
    assert_eq!(status, "401", "the hand-off listener serves nothing else");

    // While the person holds the tab, acting tools say how to wait.
    let refused = client.call("browser_click", json!({"selector": "a"})).await;
    assert_eq!(
        refused["structuredContent"]["error"]["code"], "tab_in_handoff",
        "{refused}"
    );

    // The person presses Done (through the page's socket); the second call
    // waits for them and hears it.
    let waiting = client
        .send_request(
            "tools/call",
            json!({"name": "browser_handoff", "arguments": {"reason": "Log in"}}),
        )
        .await;
    let live = format!("ws://{authority}{path}/live?t={token}");
    let (mut socket, _) = tokio_tungstenite::connect_async(live.as_str()).await.unwrap();
    send(&mut socket, json!({"type": "done"})).await;
    let done = client.response(waiting).await.expect("a tool result");
    assert_ne!(done["isError"], true, "{done}");
    assert_eq!(done["structuredContent"]["by"], "person", "{done}");
    assert_eq!(http(authority, "GET", &path, &[], "").await.status, 410);
}
