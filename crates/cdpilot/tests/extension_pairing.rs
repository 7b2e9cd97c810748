//! Pairing from the dashboard: its "Pair a Chrome" button shows the same
//! one-time link `cdpilot pair` prints, and its "Your Chrome" line follows
//! `GET /v1/extension/status` (not paired → paired and connected). The
//! person's Chrome is the one the extension is loaded in: it opens the
//! dashboard, clicks the button (trusted input), and opens the link. And a
//! pairing outlives the serve that made it: restarted on the same address,
//! it knows the extension's token (kept hashed), which reconnects by
//! itself.

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::extension::{connected_within, paired, soon, status, UserChrome, EXTENSION_ID};
use support::serve::Serve;

/// Waits until `expression` (in page `session`) is true.
async fn until_true(session: &cdp::Session, expression: &str) {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        if UserChrome::eval(session, expression).await == true {
            return;
        }
        assert!(Instant::now() < until, "not true within 20 s: {expression}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_dashboards_pair_button_shows_a_link_that_pairs_and_the_state_follows() {
    let serve = Serve::start("", &["--extension"]).await;
    let chrome = UserChrome::start().await;
    let tab = chrome
        .open(&format!("http://{}/?token={}", serve.authority, serve.token))
        .await;
    let dashboard = chrome.session(&tab).await;
    until_true(
        &dashboard,
        "document.querySelector('#chrome-state')?.textContent === 'not paired'",
    )
    .await;
    assert_eq!(
        UserChrome::eval(&dashboard, "document.querySelector('#chrome-hint').hidden").await,
        true,
        "no hint: this serve runs with --extension"
    );

    // A person's click on the button.
    let rect = UserChrome::eval(
        &dashboard,
        "(() => { const b = document.querySelector('#pair'); b.scrollIntoView({block: 'center'}); const r = b.getBoundingClientRect(); return {x: r.x + r.width / 2, y: r.y + r.height / 2}; })()",
    )
    .await;
    for kind in ["mousePressed", "mouseReleased"] {
        dashboard
            .send(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": rect["x"], "y": rect["y"], "button": "left", "clickCount": 1}),
                soon(),
            )
            .await
            .unwrap();
    }
    until_true(
        &dashboard,
        "!document.querySelector('#pairing').hidden && !!document.querySelector('#pair-link').value",
    )
    .await;
    let link = UserChrome::eval(&dashboard, "document.querySelector('#pair-link').value").await;
    let link = link.as_str().unwrap().to_owned();
    assert!(
        link.starts_with(&format!(
            "chrome-extension://{EXTENSION_ID}/pair.html#server=ws://{}&code=",
            serve.authority
        )),
        "{link}"
    );
    if let Ok(path) = std::env::var("CDPILOT_PAIR_PNG") {
        let shot = dashboard
            .send("Page.captureScreenshot", json!({}), soon())
            .await
            .unwrap();
        use base64::Engine as _;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap();
        std::fs::write(path, png).unwrap();
    }
    let ttl = UserChrome::eval(&dashboard, "document.querySelector('#pair-ttl').textContent").await;
    assert_eq!(ttl, "5 minutes");

    let pairing = chrome.open(&link).await;
    let pairing = chrome.session(&pairing).await;
    let said = "new Promise(r => { const go = () => { const s = document.getElementById('status'); s && s.className ? r(s.className + ': ' + s.textContent) : setTimeout(go, 50); }; go(); })";
    let said = UserChrome::eval(&pairing, said).await;
    assert!(said.as_str().unwrap().starts_with("ok"), "{said}");
    assert!(connected_within(&serve, Duration::from_secs(10)).await);
    let now = status(&serve).await;
    assert_eq!(now["paired"], true, "{now}");
    assert_eq!(now["enabled"], true, "{now}");
    until_true(
        &dashboard,
        "document.querySelector('#chrome-state').textContent === 'paired · connected · 0 sessions' && document.querySelector('#pairing').hidden",
    )
    .await;

    // A WebSocket client's session in the paired Chrome: the popup names it
    // by its hello's client, the dashboard counts it.
    let mut ws = serve.ws().await;
    ws.open(&serve.token).await;
    let nav = ws.call("1", "browser_snapshot", json!({})).await;
    assert!(nav.get("error").is_none(), "{nav}");
    let popup = chrome.popup().await;
    until_true(
        &popup,
        "document.querySelector('#sessions tr[data-context] td')?.textContent === 'test'",
    )
    .await;
    until_true(
        &dashboard,
        "document.querySelector('#chrome-state').textContent === 'paired · connected · 1 session'",
    )
    .await;
}

#[tokio::test]
async fn a_serve_restarted_on_its_address_keeps_the_pairing() {
    let site = testkit::TestSite::start().await;
    let (serve, chrome) = paired("").await;
    let token = serve.token.clone();
    let serve = serve.restart("", &["--extension", "--token", &token]).await;
    assert!(
        connected_within(&serve, Duration::from_secs(15)).await,
        "the extension came back with the token it kept, without a new link"
    );
    assert_eq!(status(&serve).await["paired"], true);
    let mut ws = serve.ws().await;
    ws.open(&serve.token).await;
    let nav = ws
        .call(
            "1",
            "browser_navigate",
            json!({"url": site.url("/index.html?after-restart")}),
        )
        .await;
    assert!(nav.get("result").is_some(), "{nav}");
    assert!(site.a_received("/index.html?after-restart"));
    let kept = std::fs::read_to_string(serve.tmp.path().join("state/extension-tokens")).unwrap();
    assert_eq!(kept.lines().count(), 1, "{kept}");
    assert!(
        kept.lines()
            .all(|l| l.len() == 64 && l.chars().all(|c| c.is_ascii_hexdigit())),
        "SHA-256 hashes only: {kept}"
    );
    drop(chrome);
}
