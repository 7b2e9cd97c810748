//! Issue 20, findings 4 and 5: a host or a path spelled another way names
//! the same server, and a deny written for one spelling holds for every
//! spelling the browser would send. Real Chromium; the denied server logs
//! every connection and request line it receives.

mod common;

use common::{blocked_soon, call, engine_with, ok};
use engine::config::Rule;
use engine::{Engine, ErrorCode};
use serde_json::json;
use testkit::{DeniedServer, TestSite};

fn denying(patterns: Vec<String>) -> Engine {
    engine_with(move |c| {
        for pattern in patterns {
            c.policy.rules.push(Rule {
                pattern,
                action: "deny".into(),
                origin: None,
            })
        }
    })
}

/// Finding 4: `localhost.` (a trailing dot) and `[::ffff:127.0.0.1]` (an
/// IPv4-mapped IPv6 address) reach the host a rule denies as `localhost`
/// and `127.0.0.1`; navigating there is refused and the server receives no
/// request.
#[tokio::test]
async fn a_host_denied_in_one_spelling_is_denied_in_every_spelling() {
    let site = TestSite::start().await;
    let denied = DeniedServer::start().await;
    let port = denied.port;
    let engine = denying(vec![
        format!("http://localhost:{port}/*"),
        format!("http://127.0.0.1:{port}/*"),
    ]);
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/index.html")}),
    )
    .await;
    for url in [
        format!("http://localhost.:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://LocalHost.:{port}/x"),
        format!("http://2130706433:{port}/"),
    ] {
        let e = call(&engine, "browser_navigate", json!({"url": url}))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::PermissionDenied, "{url}: {e}");
        assert!(e.message.contains("policy.rules["), "{url}: {e}");
    }
    // The page's own navigations are judged at the request stage the same way.
    for target in [
        format!("http://[::ffff:127.0.0.1]:{port}/by-page"),
        format!("http://localhost.:{port}/by-page-too"),
    ] {
        let blocked = blocked_after(&engine, &target).await;
        assert!(
            blocked.iter().any(|u| u.contains("by-page")),
            "{target}: {blocked:?}"
        );
    }
    // No request: the request stage refused every one. (The browser may
    // still open a bare connection ahead of a navigation, finding 14: the
    // egress gate, not the URL judge, closes that door.)
    let seen = denied.seen();
    assert_eq!(seen.requests, Vec::<String>::new(), "host spellings: {seen:?}");
}

/// Finding 5: `//secret/x`, `\secret\x` and `%73ecret/x` reach a path a
/// rule denies as `/secret/*` (servers merge slashes and decode
/// unreserved escapes); navigating there is refused and the server never
/// receives the request. Other paths on the server stay allowed.
#[tokio::test]
async fn a_path_denied_in_one_spelling_is_denied_in_every_spelling() {
    let site = TestSite::start().await;
    let denied = DeniedServer::start().await;
    let engine = denying(vec![format!("http://{}/secret/*", denied.host())]);
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/index.html")}),
    )
    .await;
    let base = format!("http://{}", denied.host());
    for path in [
        "//secret/x",
        "/\\secret\\x",
        "/%73ecret/x",
        "/public/%2e%2e//%73ecret/x",
    ] {
        let url = format!("{base}{path}");
        let e = call(&engine, "browser_navigate", json!({"url": url}))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::PermissionDenied, "{url}: {e}");
    }
    let blocked = blocked_after(&engine, &format!("{base}//secret/by-page")).await;
    assert!(blocked.iter().any(|u| u.contains("by-page")), "{blocked:?}");
    ok(
        &engine,
        "browser_navigate",
        json!({"url": format!("{base}/public/x")}),
    )
    .await;
    let seen = denied.seen();
    assert!(
        seen.requests.iter().any(|r| r == "GET /public/x HTTP/1.1"),
        "{seen:?}"
    );
    assert!(
        !seen
            .requests
            .iter()
            .any(|r| r.to_ascii_lowercase().contains("ecret")),
        "a denied path was requested: {seen:?}"
    );
}

/// Sets `location.href` to `target` from the page and returns the URLs
/// the request stage reported blocked, from that call's result or the
/// next calls' (the navigation may be blocked just after it returns).
async fn blocked_after(engine: &Engine, target: &str) -> Vec<String> {
    let set = format!("location.href = {}; 1", serde_json::to_string(target).unwrap());
    let first = ok(engine, "browser_evaluate", json!({"expression": set})).await;
    blocked_soon(engine, &first).await
}

/// The local host's other spellings (issue 34, finding 3): each one the
/// attacker page tries, on the denied server's port.
const LOCAL_SPELLINGS: [&str; 14] = [
    "0.0.0.0",
    "0",
    "0x0",
    "0.0.0.0.",
    "[::]",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[::ffff:0.0.0.0]",
    "2130706433",
    "0177.0.0.1",
    "127.0.0.2",
    "127.1",
    "a.localhost",
];

/// A page expression that tries every channel to `http://HOST:PORT/` for
/// each of `hosts` (an iframe, an image, `fetch`, a WebSocket, an
/// EventSource) and resolves once each attempt has settled (or after 8 s).
fn every_channel(hosts: &[String], port: u16) -> String {
    let targets = serde_json::to_string(hosts).unwrap();
    format!(
        r#"(async () => {{
  const cap = (p) => Promise.race([p, new Promise((r) => setTimeout(() => r('timeout'), 8000))]);
  const tries = [];
  for (const host of {targets}) {{
    const base = `http://${{host}}:{port}`;
    tries.push(cap(new Promise((r) => {{ const f = document.createElement('iframe'); f.onload = f.onerror = () => r('frame'); f.src = base + '/frame'; document.body.appendChild(f); }})));
    tries.push(cap(new Promise((r) => {{ const i = new Image(); i.onload = i.onerror = () => r('image'); i.src = base + '/image.png'; }})));
    tries.push(cap(fetch(base + '/fetch', {{mode: 'no-cors'}}).then(() => 'fetched', () => 'failed')));
    tries.push(cap(new Promise((r) => {{ try {{ const w = new WebSocket(`ws://${{host}}:{port}/socket`); w.onopen = w.onerror = () => r('ws'); }} catch (e) {{ r('ws threw'); }} }})));
    tries.push(cap(new Promise((r) => {{ const s = new EventSource(base + '/events'); s.onopen = s.onerror = () => {{ s.close(); r('es'); }}; }})));
  }}
  return (await Promise.all(tries)).length;
}})()"#
    )
}

/// Issue 34, finding 3: with the denied server's port denied as
/// `127.0.0.1` and `localhost`, every other spelling of the local host
/// (the unspecified addresses, IPv6 loopback, IPv4-mapped forms, other
/// IPv4 spellings, `127/8`, `*.localhost`) is refused: navigating there is
/// an error, and an iframe, an image, `fetch`, a WebSocket and an
/// EventSource from the page reach nothing. The server listens on every
/// address (`[::]`), as a service bound to all interfaces does.
#[tokio::test]
async fn every_spelling_of_the_local_host_is_refused_from_every_channel() {
    let site = TestSite::start().await;
    let denied = DeniedServer::start_everywhere().await;
    let port = denied.port;
    let engine = denying(vec![
        format!("http://127.0.0.1:{port}/*"),
        format!("http://localhost:{port}/*"),
    ]);
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/index.html")}),
    )
    .await;
    for host in LOCAL_SPELLINGS {
        let url = format!("http://{host}:{port}/navigated");
        let e = call(&engine, "browser_navigate", json!({"url": url}))
            .await
            .expect_err(&url);
        assert!(
            matches!(e.code, ErrorCode::PermissionDenied | ErrorCode::NavigationFailed),
            "{url}: {e}"
        );
        denied.assert_untouched(&format!("navigate {url}"));
    }
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/index.html")}),
    )
    .await;
    let hosts: Vec<String> = LOCAL_SPELLINGS.iter().map(|h| h.to_string()).collect();
    let out = ok(
        &engine,
        "browser_evaluate",
        json!({"expression": every_channel(&hosts, port), "timeout_ms": 30000}),
    )
    .await;
    let blocked = blocked_soon(&engine, &out).await;
    assert!(!blocked.is_empty(), "nothing reported blocked: {}", out.text);
    denied.assert_untouched("a page's iframes, images, fetches, WebSockets, EventSources");
}

/// Issue 34, finding 3: a deny written with a name refuses the addresses
/// the name resolves to, whatever the page writes: `localhost` (also the
/// local host's other spellings) and the machine's own name (which
/// resolves through the system's resolver; its addresses are refused at
/// the denied port, and no other name of the rules covers them).
#[tokio::test]
async fn a_deny_written_with_a_name_refuses_its_addresses() {
    let site = TestSite::start().await;
    let denied = DeniedServer::start_everywhere().await;
    let port = denied.port;
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|n| n.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let addresses: Vec<String> = match tokio::net::lookup_host((name.as_str(), port)).await {
        Ok(found) => found
            .map(|a| match a.ip() {
                std::net::IpAddr::V6(v6) => format!("[{v6}]"),
                v4 => v4.to_string(),
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    if addresses.is_empty() {
        eprintln!("the machine's name {name:?} does not resolve: only `localhost` is tried");
    }
    let engine = denying(vec![format!("http://localhost:{port}/*")]);
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/index.html")}),
    )
    .await;
    let mut hosts = vec!["127.0.0.1".to_owned()];
    hosts.extend(addresses.iter().cloned());
    let out = ok(
        &engine,
        "browser_evaluate",
        json!({"expression": every_channel(&hosts, port), "timeout_ms": 30000}),
    )
    .await;
    let blocked = blocked_soon(&engine, &out).await;
    assert!(!blocked.is_empty(), "nothing reported blocked: {}", out.text);
    denied.assert_untouched("a deny written as localhost");
    if addresses.is_empty() {
        return;
    }
    // The machine's name, denied on another port: a listener there sees
    // nothing from the page's attempts on the name's addresses.
    drop(engine);
    let named = DeniedServer::start_everywhere().await;
    let engine = denying(vec![format!("http://{name}:{}/*", named.port)]);
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/index.html")}),
    )
    .await;
    let out = ok(
        &engine,
        "browser_evaluate",
        json!({"expression": every_channel(&addresses, named.port), "timeout_ms": 30000}),
    )
    .await;
    let blocked = blocked_soon(&engine, &out).await;
    assert!(
        blocked
            .iter()
            .any(|u| addresses.iter().any(|a| u.contains(a.as_str()))),
        "the name's addresses were not refused: {blocked:?}"
    );
    named.assert_untouched(&format!("a deny written as {name}: {addresses:?}"));
}

/// Issue 41, finding 4, as the attacker: a dedicated worker's `fetch()`
/// of a path-denied URL written another way (a doubled slash, a
/// percent-encoded letter, another spelling of the local host) reached
/// the server; only the plain spelling was refused (the worker's
/// blocklist takes patterns as written). The egress gate sees the whole
/// URL of a plain-http request and judges it in every spelling: the
/// server (listening on every address) sees only the allowed control.
#[tokio::test]
async fn a_workers_fetch_of_a_path_denied_url_is_refused_in_every_spelling() {
    let site = TestSite::start().await;
    let denied = DeniedServer::start_everywhere().await;
    let port = denied.port;
    let engine = denying(vec![format!("http://127.0.0.1:{port}/secret/*")]);
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/index.html")}),
    )
    .await;
    let urls: Vec<String> = [
        "127.0.0.1:{P}/secret/w0",
        "127.0.0.1:{P}//secret/w1",
        "127.0.0.1:{P}/%73ecret/w2",
        "127.0.0.1:{P}/s%65cret/w3",
        "127.1:{P}/secret/w4",
        "0x7f.0.0.1:{P}/secret/w5",
        "[::ffff:127.0.0.1]:{P}/secret/w6",
        "localhost.:{P}/secret/w7",
        "localhost:{P}/secret/w8",
        "[::1]:{P}/secret/w9",
        "127.0.0.1:{P}/public/ok",
    ]
    .iter()
    .map(|u| format!("http://{}", u.replace("{P}", &port.to_string())))
    .collect();
    let expression = format!(
        r#"new Promise((done) => {{
  const source = `Promise.all(${{JSON.stringify({urls:?})}}.map((u) => fetch(u, {{mode: 'no-cors'}}).then(() => 'fetched', () => 'failed'))).then((r) => postMessage(r))`;
  const w = new Worker(URL.createObjectURL(new Blob([source], {{type: 'text/javascript'}})));
  w.onmessage = (e) => done(e.data);
}})"#
    );
    let out = ok(
        &engine,
        "browser_evaluate",
        json!({"expression": expression, "timeout_ms": 30000}),
    )
    .await;
    let outcomes = out.data["value"].as_array().cloned().unwrap_or_default();
    assert_eq!(outcomes.len(), urls.len(), "{}", out.text);
    assert_eq!(outcomes.last().unwrap(), "fetched", "the control: {}", out.text);
    let seen = denied.seen();
    assert_eq!(
        seen.requests,
        vec!["GET /public/ok HTTP/1.1".to_owned()],
        "a worker's path-denied request reached the server"
    );
}
