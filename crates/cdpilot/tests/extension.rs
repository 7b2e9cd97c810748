//! The user's own Chrome through the cdpilot extension (issue 22): a real
//! `cdpilot serve --extension`, a real headless Chromium that loads the
//! unpacked extension from `extension/` (a fresh profile: "the user's
//! Chrome"), pages from the two-origin test site. The harness drives the
//! user's side (opening the pairing link, the popup's buttons, stopping the
//! service worker) through that Chromium's own DevTools pipe.

mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::extension::{connected_within, pair_link, paired, soon, status, UserChrome, EXTENSION_ID};
use support::serve::Serve;
use support::text_of;
use testkit::TestSite;

#[tokio::test]
async fn every_tool_works_through_the_relay_and_the_users_own_tab_is_left_alone() {
    let site = TestSite::start().await;
    let (serve, chrome) = paired("").await;
    // The user's own tab, open before the agent starts.
    let own = chrome.open(&site.url("/index.html")).await;

    let mut mcp = serve.mcp_client();
    assert_eq!(mcp.initialize().await.status, 200);
    let nav = mcp
        .call("browser_navigate", json!({"url": site.url("/counter.html")}))
        .await;
    assert_eq!(nav["isError"], false, "{nav}");
    let snapshot = text_of(&mcp.call("browser_snapshot", json!({})).await);
    let add = support::ref_on_line(&snapshot, "Add one");
    let click = mcp.call("browser_click", json!({"ref": add})).await;
    assert_eq!(click["isError"], false, "{click}");
    let name = support::ref_on_line(&snapshot, "Name");
    let typed = mcp
        .call("browser_type", json!({"ref": name, "text": "Ada"}))
        .await;
    assert_eq!(typed["isError"], false, "{typed}");
    let read = mcp
        .call(
            "browser_evaluate",
            json!({"expression": "document.getElementById('count').textContent + ' ' + document.getElementById('name').value"}),
        )
        .await;
    assert_eq!(
        read["structuredContent"]["value"], "Clicked 1 times Ada",
        "{read}"
    );

    // A cross-origin iframe (its own process): its content is in the snapshot.
    let frames = mcp
        .call("browser_navigate", json!({"url": site.url("/frames.html")}))
        .await;
    assert_eq!(frames["isError"], false, "{frames}");
    let snapshot = text_of(&mcp.call("browser_snapshot", json!({})).await);
    assert!(snapshot.contains("Child frame"), "{snapshot}");
    // A trusted click inside it (the frame's own child session).
    let child = support::ref_on_line(&snapshot, "Child button");
    let clicked = mcp.call("browser_click", json!({"ref": child})).await;
    assert_eq!(clicked["isError"], false, "{clicked}");
    let after = text_of(&mcp.call("browser_snapshot", json!({})).await);
    assert!(after.contains("Child clicked true"), "{after}");

    // A dialog, answered.
    let nav = mcp
        .call("browser_navigate", json!({"url": site.url("/dialogs.html")}))
        .await;
    assert_eq!(nav["isError"], false, "{nav}");
    let snapshot = text_of(&mcp.call("browser_snapshot", json!({})).await);
    let chain = support::ref_on_line(&snapshot, "Chain");
    let clicked = mcp.call("browser_click", json!({"ref": chain})).await;
    assert!(text_of(&clicked).contains("first"), "{clicked}");
    let answered = mcp.call("browser_dialog", json!({"action": "accept"})).await;
    assert_eq!(answered["isError"], false, "{answered}");

    // The agent's tabs are the only ones it can list; the user's tab is
    // where it was, in a window the agent never touched.
    let tabs = mcp.call("browser_tabs", json!({"action": "list"})).await;
    let listed = tabs["structuredContent"]["tabs"].as_array().unwrap().clone();
    assert_eq!(listed.len(), 1, "{tabs}");
    let targets = chrome.targets().await;
    let own_now = targets.iter().find(|t| t["targetId"] == own.as_str()).unwrap();
    assert_eq!(own_now["url"], site.url("/index.html"), "{own_now}");
    let user_tab_seen = site
        .received()
        .iter()
        .filter(|r| r.path.starts_with("/index.html"))
        .count();
    assert_eq!(user_tab_seen, 1, "the user's tab was loaded once, by the user");
    assert_eq!(status(&serve).await["sessions"], 1);
    // It all ran in the user's Chrome: the agent's tab is there, in a
    // window of its own (not the user's tab's), and serve launched no
    // browser of its own.
    let agent = targets
        .iter()
        .find(|t| t["url"] == site.url("/dialogs.html"))
        .unwrap_or_else(|| panic!("{targets:?}"));
    let window_of = |target: Value| {
        let browser = chrome.conn.browser();
        async move {
            let window = browser
                .send("Browser.getWindowForTarget", json!({"targetId": target}), soon())
                .await
                .unwrap();
            window["windowId"].as_i64().unwrap()
        }
    };
    assert_ne!(
        window_of(agent["targetId"].clone()).await,
        window_of(json!(own)).await,
        "the agent's tab is in a window of its own"
    );
    assert!(support::chromium_processes(serve.tmp.path()).is_empty());
}

/// Two WebSocket sessions on a paired server, each with a page open in
/// the user's Chrome (`a` on the first origin, `b` on the second), and
/// the extension's popup that lists them.
struct TwoInThePopup {
    _site: TestSite,
    _serve: Serve,
    _chrome: UserChrome,
    a: support::serve::Ws,
    b: support::serve::Ws,
    popup: cdp::Session,
}

async fn two_in_the_popup() -> TwoInThePopup {
    let site = TestSite::start().await;
    let (serve, chrome) = paired("").await;
    let (a, b) = two_sessions(&serve, &site).await;
    let popup = chrome.popup().await;
    TwoInThePopup {
        _site: site,
        _serve: serve,
        _chrome: chrome,
        a,
        b,
        popup,
    }
}

/// Two WebSocket sessions, each with a page open in the user's Chrome.
async fn two_sessions(serve: &Serve, site: &TestSite) -> (support::serve::Ws, support::serve::Ws) {
    let mut a = serve.ws().await;
    a.open(&serve.token).await;
    let nav = a
        .call("1", "browser_navigate", json!({"url": site.url("/counter.html")}))
        .await;
    assert!(nav.get("result").is_some(), "{nav}");
    let mut b = serve.ws().await;
    b.open(&serve.token).await;
    let nav = b
        .call("1", "browser_navigate", json!({"url": site.url_b("/form.html")}))
        .await;
    assert!(nav.get("result").is_some(), "{nav}");
    (a, b)
}

#[tokio::test]
async fn stop_all_in_the_popup_ends_a_waiting_call_at_once_and_the_sessions() {
    // Every part is bound (none left to `..`, dropped at once): the server and the
    // browser live to the end of the test.
    let TwoInThePopup {
        _site,
        _serve: serve,
        _chrome: chrome,
        mut a,
        mut b,
        popup,
    } = two_in_the_popup().await;

    // The popup lists both sessions (the screenshot is kept for the note).
    let rows = "new Promise(r => { const go = () => document.querySelectorAll('tr[data-context]').length >= 2 ? r(document.querySelectorAll('tr[data-context]').length) : setTimeout(go, 50); go(); })";
    assert_eq!(UserChrome::eval(&popup, rows).await, 2);
    let shot = popup
        .send("Page.captureScreenshot", json!({"format": "png"}), soon())
        .await
        .unwrap();
    let png = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        shot["data"].as_str().unwrap(),
    )
    .unwrap();
    let out = std::env::temp_dir().join("cdpilot-extension-popup.png");
    std::fs::write(&out, png).unwrap();
    eprintln!("popup screenshot: {}", out.display());

    // A 20 s wait in flight when the user presses Stop all.
    a.send(json!({"type": "request", "id": "w", "tool": "browser_wait", "arguments": {"text": "never there"}, "timeout_ms": 20000}))
        .await;
    // The wait has started when its tab's session answers nothing else first.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pressed = Instant::now();
    UserChrome::eval(&popup, "document.getElementById('stop-all').click(); true").await;
    let mut answered = None;
    let mut ended = None;
    while answered.is_none() || ended.is_none() {
        let Some(message) = a.next().await else { break };
        if message["type"] == "response" && message["id"] == "w" {
            answered = Some((pressed.elapsed(), message.clone()));
        }
        if message["event"] == "session_ended" {
            ended = Some(message.clone());
        }
    }
    let (after, answer) = answered.expect("the wait answered");
    eprintln!("Stop all → the 20 s wait answered after {after:?}: {answer}");
    assert!(after < Duration::from_secs(5), "{after:?}");
    assert!(answer.get("error").is_some(), "{answer}");
    let ended = ended.expect("session_ended");
    assert_eq!(ended["data"]["reason"], "stopped_by_user", "{ended}");
    // The other session ended too; its next call finds no session.
    let mut b_ended = None;
    while let Some(Some(message)) = b.next_within(Duration::from_secs(10)).await {
        if message["event"] == "session_ended" {
            b_ended = Some(message);
            break;
        }
    }
    assert_eq!(b_ended.expect("b ended")["data"]["reason"], "stopped_by_user");
    let session_b = serve.ws().await;
    drop(session_b);
    let mut again = serve.ws().await;
    again
        .send(json!({"type": "hello", "protocol_version": 1, "token": serve.token, "session": "s-gone"}))
        .await;
    assert_eq!(again.next().await.unwrap()["reason"], "session_not_found");
    // The agent's tabs close (the extension closes them right after it
    // told the server).
    let mut pages = Vec::new();
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        pages = chrome.agent_pages().await;
        if pages.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(pages.is_empty(), "{pages:?}");
}

#[tokio::test]
async fn a_domain_on_the_extensions_blocklist_is_refused_and_its_server_sees_nothing() {
    let site = TestSite::start().await;
    // cdpilot's own URL rules apply on top of the extension's blocklist.
    let (serve, chrome) =
        paired("[[policy.rules]]\npattern = \"http://127.0.0.1:*/denied*\"\naction = \"deny\"\n").await;
    // The user blocks `localhost` (the test site's second origin) in the
    // options page.
    let options = chrome.extension_page("options.html").await;
    let saved = "(async () => { document.getElementById('blocklist').value = 'localhost'; document.getElementById('save-blocklist').click(); while (!document.getElementById('saved').textContent) await new Promise(r => setTimeout(r, 50)); return (await chrome.storage.local.get('blocklist')).blocklist; })()";
    assert_eq!(UserChrome::eval(&options, saved).await, json!(["localhost"]));

    let mut mcp = serve.mcp_client();
    assert_eq!(mcp.initialize().await.status, 200);
    let allowed = mcp
        .call("browser_navigate", json!({"url": site.url("/counter.html")}))
        .await;
    assert_eq!(allowed["isError"], false, "{allowed}");
    let refused = mcp
        .call("browser_navigate", json!({"url": site.url_b("/form.html")}))
        .await;
    assert_eq!(refused["isError"], true, "{refused}");
    let text = text_of(&refused);
    assert!(text.starts_with("permission_denied"), "{text}");
    assert!(
        text.contains("blocked_in: extension") && text.contains("localhost"),
        "{text}"
    );
    assert!(
        site.received_by_b().is_empty(),
        "the blocked origin saw nothing: {:?}",
        site.received_by_b().iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    // A cdpilot rule refuses through the relay too, before the request
    // leaves the user's Chrome.
    let denied = mcp
        .call("browser_navigate", json!({"url": site.url("/denied.html")}))
        .await;
    assert_eq!(denied["isError"], true, "{denied}");
    assert_eq!(
        denied["structuredContent"]["error"]["code"], "permission_denied",
        "{denied}"
    );
    assert!(
        denied["structuredContent"]["error"].get("data").is_none(),
        "{denied}"
    );
    // …and at the request stage (the tab's Fetch, through chrome.debugger):
    // a navigation the page starts itself.
    let started = mcp
        .call(
            "browser_evaluate",
            json!({"expression": "location.href = '/denied.html?by-page'; true"}),
        )
        .await;
    assert_eq!(started["isError"], false, "{started}");
    // The refusal is reported in this result or a later one; the tab
    // stays on its page.
    let blocked = |r: &Value| {
        r["structuredContent"]["blocked"]
            .to_string()
            .contains("/denied.html?by-page")
    };
    let mut seen = blocked(&started);
    for _ in 0..20 {
        if seen {
            break;
        }
        let stayed = mcp
            .call("browser_evaluate", json!({"expression": "location.pathname"}))
            .await;
        assert_eq!(stayed["structuredContent"]["value"], "/counter.html", "{stayed}");
        seen = blocked(&stayed);
    }
    assert!(seen, "the page's own navigation was reported blocked: {started}");
    assert!(
        !site.a_received("/denied.html"),
        "the denied page's server saw nothing"
    );
    // The session goes on where it was.
    let read = mcp
        .call("browser_evaluate", json!({"expression": "location.pathname"}))
        .await;
    assert_eq!(read["structuredContent"]["value"], "/counter.html", "{read}");
    // The refusal is in the extension's audit log.
    let audit = "chrome.storage.local.get('audit').then(a => new Promise(r => { const go = () => chrome.storage.local.get('audit').then(a => (a.audit || []).some(e => e.outcome === 'domain_blocked') ? r(true) : setTimeout(go, 100)); go(); }))";
    assert_eq!(UserChrome::eval(&options, audit).await, true);
}

#[tokio::test]
async fn a_stopped_service_worker_fails_the_call_in_flight_and_the_relay_comes_back() {
    let site = TestSite::start().await;
    let (serve, chrome) = paired("").await;
    let mut ws = serve.ws().await;
    ws.open(&serve.token).await;
    let nav = ws
        .call("1", "browser_navigate", json!({"url": site.url("/counter.html")}))
        .await;
    assert!(nav.get("result").is_some(), "{nav}");

    ws.send(json!({"type": "request", "id": "w", "tool": "browser_wait", "arguments": {"text": "never there"}, "timeout_ms": 20000}))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Chrome ends the extension's worker (as it does an idle one).
    let worker = chrome
        .targets()
        .await
        .into_iter()
        .find(|t| t["type"] == "service_worker" && t["url"].as_str().unwrap().contains(EXTENSION_ID))
        .expect("the extension's service worker");
    let stopped_at = Instant::now();
    chrome
        .conn
        .browser()
        .send(
            "Target.closeTarget",
            json!({"targetId": worker["targetId"]}),
            soon(),
        )
        .await
        .unwrap();
    let answer = loop {
        let message = ws.next().await.expect("open");
        if message["type"] == "response" && message["id"] == "w" {
            break message;
        }
    };
    eprintln!(
        "worker stopped → the wait answered after {:?}: {answer}",
        stopped_at.elapsed()
    );
    assert_eq!(answer["error"]["code"], "browser_disconnected", "{answer}");
    assert!(stopped_at.elapsed() < Duration::from_secs(10));

    // The worker starts again at its next event (here: the user opens a
    // tab) and the relay reconnects with the stored token.
    chrome.open("about:blank").await;
    assert!(
        connected_within(&serve, Duration::from_secs(30)).await,
        "the relay is back"
    );
    eprintln!("relay back after {:?}", stopped_at.elapsed());
    // The session goes on in its tab.
    let read = ws
        .call(
            "2",
            "browser_evaluate",
            json!({"expression": "location.pathname"}),
        )
        .await;
    assert_eq!(read["result"]["value"], "/counter.html", "{read}");
    let snapshot = ws.snapshot("3").await;
    assert!(snapshot.contains("Add one"), "{snapshot}");
}

#[tokio::test]
async fn a_subframe_navigation_keeps_the_tab_and_a_runaway_script_is_terminated() {
    let site = TestSite::start().await;
    let (serve, _chrome) = paired("").await;
    let mut mcp = serve.mcp_client();
    assert_eq!(mcp.initialize().await.status, 200);
    let nav = mcp
        .call("browser_navigate", json!({"url": site.url("/frames.html")}))
        .await;
    assert_eq!(nav["isError"], false, "{nav}");
    let first = text_of(&mcp.call("browser_snapshot", json!({})).await);
    assert!(first.contains("Child frame"), "{first}");
    // Both frames navigate (the cross-origin one to another page of its
    // origin, the same-origin one too); the tab stays attached.
    let moved = mcp
        .call(
            "browser_evaluate",
            json!({"expression": format!("document.getElementById('cross').src = '{}'; document.getElementById('same').src = '/counter.html'; true", site.url_b("/counter.html"))}),
        )
        .await;
    assert_eq!(moved["isError"], false, "{moved}");
    // browser_wait reads the main frame only: the frames' new documents
    // are awaited through snapshots.
    let until = Instant::now() + Duration::from_secs(20);
    let snapshot = loop {
        let snapshot = text_of(&mcp.call("browser_snapshot", json!({})).await);
        if snapshot.matches("Add one").count() == 2 || Instant::now() > until {
            break snapshot;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(!snapshot.contains("Child frame"), "{snapshot}");
    let parent = support::ref_on_line(&snapshot, "Parent button");
    let clicked = mcp.call("browser_click", json!({"ref": parent})).await;
    assert_eq!(clicked["isError"], false, "{clicked}");
    let title = mcp
        .call("browser_evaluate", json!({"expression": "document.title"}))
        .await;
    assert_eq!(
        title["structuredContent"]["value"], "parent clicked true",
        "{title}"
    );
    // A click inside the cross-origin frame's new document.
    let add = snapshot.lines().filter(|l| l.contains("Add one")).count();
    assert_eq!(add, 2, "both frames show the counter: {snapshot}");

    // A runaway script: the call ends within its budget and the page
    // answers again afterwards.
    let began = Instant::now();
    let runaway = mcp
        .call(
            "browser_evaluate",
            json!({"expression": "while (true) {}", "timeout_ms": 3000}),
        )
        .await;
    eprintln!(
        "runaway evaluate answered after {:?}: {}",
        began.elapsed(),
        text_of(&runaway)
    );
    assert_eq!(runaway["isError"], true, "{runaway}");
    let after = mcp.call("browser_evaluate", json!({"expression": "1 + 1"})).await;
    assert_eq!(after["structuredContent"]["value"], 2, "{after}");
}

#[tokio::test]
async fn stop_in_the_popup_ends_one_session_and_the_other_goes_on() {
    // Every part is bound (none left to `..`, dropped at once): the server and the
    // browser live to the end of the test.
    let TwoInThePopup {
        _site,
        _serve,
        _chrome,
        mut a,
        mut b,
        popup,
    } = two_in_the_popup().await;
    // The row of b's session: its domain is the second origin's.
    let stop_b = "new Promise(r => { const go = () => { const row = [...document.querySelectorAll('tr[data-context]')].find(tr => tr.textContent.includes('localhost')); if (!row) return setTimeout(go, 50); row.querySelector('button.stop').click(); r(true); }; go(); })";
    assert_eq!(UserChrome::eval(&popup, stop_b).await, true);
    let ended = loop {
        let message = b.next().await.expect("b hears why it ended");
        if message["event"] == "session_ended" {
            break message;
        }
    };
    assert_eq!(ended["data"]["reason"], "stopped_by_user", "{ended}");
    let snapshot = a.snapshot("2").await;
    assert!(snapshot.contains("Add one"), "{snapshot}");
}

#[tokio::test]
async fn a_pairing_link_to_a_non_loopback_server_is_refused_in_the_browser() {
    let serve = Serve::start("", &["--extension"]).await;
    let chrome = UserChrome::start().await;
    let link = pair_link(&serve);
    let code = link.rsplit_once("code=").unwrap().1;
    // Someone hands the user a link to their own server.
    let forged =
        format!("chrome-extension://{EXTENSION_ID}/pair.html#server=ws://203.0.113.7:8931&code={code}");
    let page = chrome.open(&forged).await;
    let page = chrome.session(&page).await;
    let said = "new Promise(r => { const go = () => { const s = document.getElementById('status'); s && s.className ? r(s.className + ': ' + s.textContent) : setTimeout(go, 50); }; go(); })";
    let said = UserChrome::eval(&page, said).await;
    let said = said.as_str().unwrap();
    assert!(
        said.starts_with("error") && said.contains("not a loopback address"),
        "{said}"
    );
    assert_eq!(status(&serve).await["connected"], false);
    // The real link still pairs (the code was not spent elsewhere).
    let page = chrome.open(&link).await;
    let page = chrome.session(&page).await;
    let said = "new Promise(r => { const go = () => { const s = document.getElementById('status'); s && s.className ? r(s.className) : setTimeout(go, 50); }; go(); })";
    assert_eq!(UserChrome::eval(&page, said).await, "ok");
    assert!(connected_within(&serve, Duration::from_secs(10)).await);
}

/// The agent's second tab opens behind its first, in the agent's window
/// (`active: false`, unfocused): hidden, it draws nothing, and a click into
/// its cross-origin frame used to wait out its whole budget. The click
/// makes it the tab its window shows (`chrome.tabs.update`, not Chrome's
/// own bringToFront, which would focus the window) and lands.
#[tokio::test]
async fn a_click_in_the_agents_tab_behind_another_brings_it_forward_and_lands() {
    let site = TestSite::start().await;
    let (serve, _chrome) = paired("").await;
    let mut mcp = serve.mcp_client();
    assert_eq!(mcp.initialize().await.status, 200);
    let nav = mcp
        .call("browser_navigate", json!({"url": site.url("/index.html")}))
        .await;
    assert_eq!(nav["isError"], false, "{nav}");
    let opened = mcp
        .call(
            "browser_tabs",
            json!({"action": "new", "url": site.url("/frames.html")}),
        )
        .await;
    assert_eq!(opened["isError"], false, "{opened}");
    let visibility = json!({"expression": "document.visibilityState"});
    let read = mcp.call("browser_evaluate", visibility.clone()).await;
    assert_eq!(read["structuredContent"]["value"], "hidden", "{read}");

    let snapshot = text_of(&mcp.call("browser_snapshot", json!({})).await);
    let child = support::ref_on_line(&snapshot, "Child button");
    let clicked = mcp
        .call("browser_click", json!({"ref": child, "timeout_ms": 10_000}))
        .await;
    assert_eq!(clicked["isError"], false, "{clicked}");
    let after = text_of(&mcp.call("browser_snapshot", json!({})).await);
    assert!(after.contains("Child clicked true"), "{after}");
    let read = mcp.call("browser_evaluate", visibility).await;
    assert_eq!(read["structuredContent"]["value"], "visible", "{read}");
}
