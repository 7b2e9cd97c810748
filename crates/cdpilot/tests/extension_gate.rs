//! The extension's blocklist, canonical and complete (issue 34, finding
//! 2): the user blocks hosts as they would type them (an internationalised
//! name with capitals, a name with a trailing dot), and the agent tries
//! every way around: other spellings of the host (punycode, capitals, a
//! trailing dot, a subdomain), a blocked frame inside an allowed page, a
//! fetch and an image from it, a navigation the page starts itself, and a
//! popup. The agent's own navigations get a clean `permission_denied`; the
//! blocked host's server, which logs every connection, sees none.
//!
//! The names resolve to the denied server's loopback address through
//! Chromium's `--host-resolver-rules`.

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::extension::{paired_with, UserChrome};
use support::text_of;
use testkit::{DeniedServer, TestSite};

#[tokio::test]
async fn a_blocked_host_in_any_spelling_frame_or_page_started_navigation_gets_nothing() {
    let site = TestSite::start().await;
    let denied = DeniedServer::start().await;
    let port = denied.port;
    let (serve, chrome) = paired_with(
        "",
        &["--host-resolver-rules=MAP *.test 127.0.0.1, MAP *.test. 127.0.0.1"],
    )
    .await;
    // The user's blocklist, as typed in the options page.
    let options = chrome.extension_page("options.html").await;
    let saved = "(async () => { document.getElementById('blocklist').value = 'Bücher.test\\nblocked.test\\nFRAMED.test.'; document.getElementById('save-blocklist').click(); while (!document.getElementById('saved').textContent) await new Promise(r => setTimeout(r, 50)); return true; })()";
    assert_eq!(UserChrome::eval(&options, saved).await, true);
    // The worker has read it.
    let worker = chrome.worker().await;
    let until = Instant::now() + Duration::from_secs(10);
    while UserChrome::eval(&worker, "globalThis.cdpilot.blockedBy('http://framed.test/')").await
        != "framed.test"
    {
        assert!(Instant::now() < until, "the worker never read the blocklist");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let mut mcp = serve.mcp_client();
    assert_eq!(mcp.initialize().await.status, 200);
    let allowed = mcp
        .call("browser_navigate", json!({"url": site.url("/counter.html")}))
        .await;
    assert_eq!(allowed["isError"], false, "{allowed}");

    // The agent's own navigations, in other spellings: refused, cleanly.
    for url in [
        format!("http://bücher.test:{port}/idn-as-typed"),
        format!("http://xn--bcher-kva.test:{port}/idn-punycode"),
        format!("http://BLOCKED.test:{port}/capitals"),
        format!("http://blocked.test.:{port}/trailing-dot"),
        format!("http://deep.sub.blocked.test:{port}/subdomain"),
        format!("http://framed.test:{port}/entry-had-a-dot"),
    ] {
        let refused = mcp.call("browser_navigate", json!({"url": url})).await;
        assert_eq!(refused["isError"], true, "{url}: {refused}");
        let text = text_of(&refused);
        assert!(
            text.starts_with("permission_denied") && text.contains("blocked_in: extension"),
            "{url}: {text}"
        );
    }

    // What the allowed page starts: a frame, a fetch, an image, a popup.
    let tried = mcp
        .call(
            "browser_evaluate",
            json!({"expression": format!(
                "(async () => {{
                  const frame = document.createElement('iframe');
                  const loaded = new Promise(r => {{ frame.onload = () => r('load'); frame.onerror = () => r('error'); }});
                  frame.src = 'http://framed.test:{port}/frame';
                  document.body.append(frame);
                  const said = [await loaded];
                  said.push(await fetch('http://blocked.test.:{port}/fetch', {{mode: 'no-cors'}}).then(() => 'fetched', () => 'refused'));
                  said.push(await new Promise(r => {{ const i = new Image(); i.onload = () => r('image'); i.onerror = () => r('refused'); i.src = 'http://Bücher.test:{port}/image.png'; }}));
                  return said.join(' ');
                }})()"
            )}),
        )
        .await;
    assert_eq!(tried["isError"], false, "{tried}");
    let said = tried["structuredContent"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(said.ends_with("refused refused"), "{said}");
    let snapshot = text_of(&mcp.call("browser_snapshot", json!({})).await);
    assert!(
        !snapshot.contains("DENIED SERVER CONTENT"),
        "the blocked frame's text never reaches the snapshot: {snapshot}"
    );
    // A navigation the page starts itself.
    let started = mcp
        .call(
            "browser_evaluate",
            json!({"expression": format!("location.href = 'http://xn--bcher-kva.test.:{port}/by-page'; true")}),
        )
        .await;
    assert_eq!(started["isError"], false, "{started}");
    // Once the tab has settled (the blocked navigation ended in Chrome's
    // error page, or was never started), the server has seen nothing.
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let read = mcp
            .call("browser_evaluate", json!({"expression": "location.href"}))
            .await;
        let href = read["structuredContent"]["value"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if !href.contains("counter.html") || Instant::now() > until {
            assert!(
                !href.contains("by-page") || href.starts_with("chrome-error:"),
                "{href}"
            );
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    denied.assert_untouched("a host on the extension's blocklist");
}
