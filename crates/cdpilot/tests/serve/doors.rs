//! Issue 34, the listeners' doors: every route of every listener cdpilot
//! opens (`cdpilot serve`'s, `cdpilot mcp`'s on-demand hand-off listener,
//! `cdpilot trace view`'s timeline: issue 43),
//! enumerated from the table its router is made of, refuses a rebinding
//! `Host`, another site's `Origin` and a request without its credential,
//! and says it may not be framed; no cookie opens or locks the dashboard.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use server::serve::routes::{Credential, Declared, Routes};
use testkit::http_mcp::{http, HttpReply};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

use crate::support::serve::Serve;

const TOKEN: &str = "the-right-token";

/// The routes that ask no credential: static files the same for everyone.
/// A route added as `Public` fails this test until it is named here.
const PUBLIC: [&str; 8] = [
    "/",
    "/dashboard/app.js",
    "/dashboard/style.css",
    "/healthz",
    "/handoff/page.js",
    "/timeline",
    "/dashboard/timeline.js",
    "/dashboard/timeline.css",
];

/// A path of `declared` that its pattern matches (`{id}` an id no hand-off has).
fn concrete(declared: &Declared) -> String {
    declared
        .path
        .replace("{id}", "h0123456789abcdef0123456789abcdef")
        .replace("{n}", "1")
        .replace("{name}", "20260101T000000Z-s")
}

fn assert_no_framing(reply: &HttpReply, what: &str) {
    assert_eq!(reply.header("x-frame-options"), Some("DENY"), "{what}: {reply:?}");
    assert_eq!(
        reply.header("content-security-policy"),
        Some("frame-ancestors 'none'"),
        "{what}: {reply:?}"
    );
}

/// The headers of a WebSocket upgrade (so a socket would open if the guard
/// let the request through).
const UPGRADE: [(&str, &str); 4] = [
    ("Connection", "Upgrade"),
    ("Upgrade", "websocket"),
    ("Sec-WebSocket-Version", "13"),
    ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
];

/// Sends every route of `table` (served at `authority`) the three attacks.
/// `token`: the listener's bearer token, sent with the Host and Origin
/// attacks so only they can be the reason for the refusal.
async fn attack_every_route(authority: &str, table: &[Declared], token: Option<&str>) {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let port = authority.rsplit_once(':').unwrap().1;
    let rebinding = format!("evil.example:{port}");
    for declared in table {
        let path = concrete(declared);
        for method in &declared.methods {
            let method = method.as_str();
            let what = format!("{method} {path} ({:?})", declared.credential);
            let mut with: Vec<(&str, &str)> = UPGRADE.to_vec();
            if let Some(bearer) = &bearer {
                with.push(("Authorization", bearer));
            }
            // A page of a name that resolves to 127.0.0.1 (DNS rebinding).
            let mut headers = with.clone();
            headers.push(("Host", &rebinding));
            let reply = http(authority, method, &path, &headers, "").await;
            assert_eq!(reply.status, 403, "rebinding Host, {what}: {reply:?}");
            assert_no_framing(&reply, &what);
            // Another site's page.
            let mut headers = with.clone();
            headers.push(("Origin", "http://evil.example"));
            let reply = http(authority, method, &path, &headers, "").await;
            assert_eq!(reply.status, 403, "cross-site Origin, {what}: {reply:?}");
            assert_no_framing(&reply, &what);
            // No credential (and a cookie holding the right token, which
            // must count for nothing).
            let cookie = format!("cdpilot_token={TOKEN}");
            let headers = [("Cookie", cookie.as_str())];
            match declared.credential {
                Credential::Bearer => {
                    let reply = http(authority, method, &path, &headers, "").await;
                    assert_eq!(reply.status, 401, "no credential, {what}: {reply:?}");
                    assert_no_framing(&reply, &what);
                }
                Credential::HandoffLink => {
                    let reply = http(authority, method, &path, &headers, "").await;
                    assert_eq!(reply.status, 410, "no hand-off link, {what}: {reply:?}");
                    assert_no_framing(&reply, &what);
                }
                Credential::Public => {
                    assert!(
                        PUBLIC.contains(&declared.path),
                        "{what} asks no credential: name it in PUBLIC if it is a static file"
                    );
                    let first = http(authority, method, &path, &headers, "").await;
                    let again = http(authority, method, &path, &[], "").await;
                    assert_eq!(first.status, 200, "{what}: {first:?}");
                    assert_eq!(first.body, again.body, "{what} is not a static file");
                    assert_no_framing(&first, &what);
                }
                Credential::FirstMessage => {
                    refused_at_first_message(authority, &path, &what).await;
                }
            }
        }
    }
    // A path nobody declared: refused like a bearer route.
    let reply = http(authority, "GET", "/nowhere", &[], "").await;
    assert_eq!(reply.status, 401, "an undeclared path: {reply:?}");
    assert_no_framing(&reply, "an undeclared path");
}

/// A socket whose first message carries no credential hears nothing of
/// the server (no `ack`, no frame) and is closed.
async fn refused_at_first_message(authority: &str, path: &str, what: &str) {
    let mut request = format!("ws://{authority}{path}").into_client_request().unwrap();
    request
        .headers_mut()
        .insert("cookie", format!("cdpilot_token={TOKEN}").parse().unwrap());
    let (mut socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .unwrap_or_else(|e| panic!("{what}: the upgrade itself: {e}"));
    let hello = serde_json::json!({"type": "hello", "protocol_version": 1});
    socket.send(Message::text(hello.to_string())).await.unwrap();
    let heard = tokio::time::timeout(Duration::from_secs(20), async {
        let mut heard = Vec::new();
        while let Some(Ok(message)) = socket.next().await {
            if let Message::Text(text) = message {
                heard.push(text.as_str().to_owned());
            }
        }
        heard
    })
    .await
    .unwrap_or_else(|_| panic!("{what}: the socket stayed open without a credential"));
    // A refusal (`reject`, `error: bad_token…`), or a challenge the socket
    // then closes on; never an `ack`, a session or a frame.
    for text in &heard {
        match serde_json::from_str::<serde_json::Value>(text) {
            Ok(said) => assert!(
                said["type"] != "ack" && said.get("session").is_none() && said.get("frame").is_none(),
                "{what}: heard {text} without a credential"
            ),
            Err(_) => assert!(
                text.starts_with("error:"),
                "{what}: heard {text} without a credential"
            ),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_of_every_listener_refuses_a_rebinding_host_a_cross_site_origin_and_no_credential() {
    let mut config = engine::Config::default();
    config.browser.executable = testkit::chromium::executable().display().to_string();
    let engine = Arc::new(engine::Engine::new(config));

    // `cdpilot serve`'s listener, made as `serve::run_with` makes it.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let local = listener.local_addr().unwrap();
    let guard = Arc::new(server::serve::auth::Guard::new(TOKEN.into(), local, Vec::new()));
    let metrics = Arc::new(server::serve::metrics::ServeMetrics::new(engine.clone()));
    let state = server::serve::state::ServeState::new(engine.clone(), guard, metrics.clone());
    let routes: Routes = server::serve::app(&state, metrics, local);
    let table = routes.table().to_vec();
    for path in [
        "/v1/ws",
        "/mcp",
        "/v1/dashboard/state",
        "/handoff/{id}/live",
        "/v1/extension",
        "/v1/timeline/traces/{name}",
    ] {
        assert!(table.iter().any(|d| d.path == path), "{path} is not in {table:?}");
    }
    tokio::spawn(routes.serve_on(listener));
    attack_every_route(&local.to_string(), &table, Some(TOKEN)).await;

    // `cdpilot mcp`'s hand-off listener, made as it makes it on demand.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let local = listener.local_addr().unwrap();
    let routes = server::serve::dashboard::handoff::on_demand_routes(engine.handoffs().clone(), local);
    let table = routes.table().to_vec();
    assert!(table.iter().any(|d| d.path == "/handoff/{id}/live"), "{table:?}");
    tokio::spawn(routes.serve_on(listener));
    attack_every_route(&local.to_string(), &table, None).await;

    // `cdpilot trace view`'s listener (issue 43), made as `timeline::view`
    // makes it, over a shelf holding one trace (so a name it knows is tried).
    let shelf_dir = tempfile::tempdir().unwrap();
    let trace = shelf_dir.path().join("20260101T000000Z-s");
    std::fs::create_dir_all(trace.join("shots")).unwrap();
    std::fs::write(trace.join("trace.jsonl"), "").unwrap();
    std::fs::write(trace.join("shots/0001.jpg"), [0xff, 0xd8]).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let local = listener.local_addr().unwrap();
    let guard = Arc::new(server::serve::auth::Guard::new(TOKEN.into(), local, Vec::new()));
    let shelf = server::serve::dashboard::timeline::Shelf::new(vec![shelf_dir.path().to_owned()], |v| v);
    let routes = server::serve::dashboard::timeline::routes(Arc::new(shelf), guard);
    let table = routes.table().to_vec();
    assert!(
        table
            .iter()
            .any(|d| d.path == "/v1/timeline/traces/{name}/shots/{n}"),
        "{table:?}"
    );
    tokio::spawn(routes.serve_on(listener));
    attack_every_route(&local.to_string(), &table, Some(TOKEN)).await;
}

/// Issue 34, finding 8: the dashboard's login cookie carried serve's token
/// to every port of the host, and a wrong cookie (which any page of the
/// host can set) was checked before the bearer header, locking the person
/// out. No cookie is set, none opens a route, none locks one.
#[tokio::test]
async fn no_cookie_carries_the_token_opens_the_dashboard_or_locks_it() {
    let serve = Serve::start("", &["--token", TOKEN]).await;
    let login = http(&serve.authority, "GET", &format!("/?token={TOKEN}"), &[], "").await;
    assert_eq!(login.header("set-cookie"), None, "{login:?}");
    assert!(!login.body.contains(TOKEN), "{login:?}");

    let right_cookie = format!("cdpilot_token={TOKEN}");
    let opened = http(
        &serve.authority,
        "GET",
        "/v1/dashboard/state",
        &[("Cookie", &right_cookie)],
        "",
    )
    .await;
    assert_eq!(opened.status, 401, "a cookie opened the state: {opened:?}");

    let bearer = format!("Bearer {TOKEN}");
    for path in ["/v1/dashboard/state", "/v1/schema", "/v1/extension/status"] {
        let locked = http(
            &serve.authority,
            "GET",
            path,
            &[
                ("Cookie", "cdpilot_token=set-by-another-page"),
                ("Authorization", &bearer),
            ],
            "",
        )
        .await;
        assert_eq!(locked.status, 200, "a wrong cookie locked {path} out: {locked:?}");
    }
}
