//! `cdpilot mcp --auto-connect`: the user's running Chrome, found through
//! the `DevToolsActivePort` file it wrote into its profile, driven over MCP
//! stdio in a browser context of the session's own, the user's tabs never
//! attached; and each way of not finding it (no directory, no file, a
//! stale file) saying what the user must do.

mod support;

use std::path::Path;
use std::time::Duration;

use cdp::launch::{launch, BrowserProcess, Debugging, LaunchOptions};
use cdp::protocol::target::{CreateTarget, GetTargets, TargetInfo};
use serde_json::{json, Value};
use support::{spawn_cdpilot_with, text_of};
use testkit::TestSite;

/// The "user's" Chrome: headless, a DevTools port, its profile in `profile`
/// (where it writes `DevToolsActivePort`).
async fn users_chrome(profile: &Path) -> BrowserProcess {
    let options = LaunchOptions {
        user_data_dir: Some(profile.to_owned()),
        ..testkit::chromium::launch_options(Debugging::Port)
    };
    launch(&options, Duration::from_secs(30)).await.expect("launch")
}

/// The browser's page targets, asked over a connection of the test's own
/// (which attaches to nothing).
async fn pages(conn: &cdp::Connection) -> Vec<TargetInfo> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let targets = conn
        .browser()
        .call(GetTargets {}, deadline)
        .await
        .expect("getTargets");
    targets
        .target_infos
        .into_iter()
        .filter(|t| t.kind == "page")
        .collect()
}

/// Opens a tab as the user would (the default context).
async fn user_opens(conn: &cdp::Connection, url: &str) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let create = CreateTarget {
        url: url.into(),
        browser_context_id: None,
    };
    conn.browser()
        .call(create, deadline)
        .await
        .expect("createTarget")
        .target_id
}

fn error_text(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    text_of(result)
}

#[tokio::test]
async fn auto_connect_drives_the_running_chrome_in_a_context_of_its_own_and_leaves_the_users_tabs_alone() {
    let site = TestSite::start().await;
    let profile = tempfile::tempdir().unwrap();
    let chrome = users_chrome(profile.path()).await;
    let written = profile.path().join("DevToolsActivePort");
    assert!(
        support::wait_until(Duration::from_secs(10), || written.exists()).await,
        "Chromium writes DevToolsActivePort into its profile"
    );
    let user = cdp::Connection::connect(chrome.ws_url()).await.expect("connect");
    let own = user_opens(&user, &site.url("/index.html?users-own")).await;
    support::wait_until(Duration::from_secs(10), || {
        site.a_received("/index.html?users-own")
    })
    .await;

    let (mut mcp, _tmp) = spawn_cdpilot_with(&[
        "--auto-connect",
        "--user-data-dir",
        profile.path().to_str().unwrap(),
    ]);
    mcp.initialize().await;
    let nav = mcp
        .call("browser_navigate", json!({"url": site.url("/form.html")}))
        .await;
    assert_eq!(nav["isError"], false, "{nav}");
    let snapshot = text_of(&mcp.call("browser_snapshot", json!({})).await);
    support::ref_on_line(&snapshot, "textbox \"Email\"");

    // The user opens another tab while the agent works: it loads (nothing
    // holds it paused) and nobody attaches to it.
    let later = user_opens(&user, &site.url("/index.html?opened-later")).await;
    assert!(
        support::wait_until(Duration::from_secs(10), || site
            .a_received("/index.html?opened-later"))
        .await,
        "the tab the user opened later loaded"
    );

    let tabs = mcp.call("browser_tabs", json!({"action": "list"})).await;
    let listed = tabs["structuredContent"]["tabs"].as_array().unwrap().clone();
    assert_eq!(listed.len(), 1, "only the agent's tab is listed: {tabs}");
    assert!(
        listed[0]["url"].as_str().unwrap().ends_with("/form.html"),
        "{tabs}"
    );

    // A tab the agent's page opens joins its session (in its context).
    let home = mcp
        .call("browser_navigate", json!({"url": site.url("/index.html?agents")}))
        .await;
    assert_eq!(home["isError"], false, "{home}");
    let snapshot = text_of(&mcp.call("browser_snapshot", json!({})).await);
    let link = support::ref_on_line(&snapshot, "link \"Form in a new tab\"");
    let clicked = mcp.call("browser_click", json!({"ref": link})).await;
    assert_eq!(clicked["isError"], false, "{clicked}");
    let mut listed = Vec::new();
    for _ in 0..50 {
        let tabs = mcp.call("browser_tabs", json!({"action": "list"})).await;
        listed = tabs["structuredContent"]["tabs"].as_array().unwrap().clone();
        if listed.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        listed.len(),
        2,
        "the agent's tab and the one its page opened: {listed:?}"
    );

    let now = pages(&user).await;
    for id in [&own, &later] {
        let tab = now
            .iter()
            .find(|t| &t.target_id == id)
            .expect("the user's tab is still open");
        assert!(!tab.attached, "nobody attached to the user's tab: {tab:?}");
        assert_eq!(
            tab.browser_context_id,
            now.iter()
                .find(|t| t.target_id == own)
                .unwrap()
                .browser_context_id
        );
    }
    let own_now = now.iter().find(|t| t.target_id == own).unwrap();
    assert_eq!(own_now.url, site.url("/index.html?users-own"));
    let agents = now
        .iter()
        .find(|t| t.url.ends_with("/index.html?agents"))
        .expect("the agent's tab");
    assert_ne!(
        agents.browser_context_id, own_now.browser_context_id,
        "the agent's tab is in a browser context of its own"
    );
    let loads = site
        .received()
        .iter()
        .filter(|r| r.path == "/index.html?users-own")
        .count();
    assert_eq!(loads, 1, "the user's tab was loaded once, by the user");

    // The session ends with the client: its context and tab go, the user's stay.
    mcp.close_stdin();
    let mut agent_left = true;
    for _ in 0..100 {
        let now = pages(&user).await;
        agent_left = now
            .iter()
            .any(|t| t.url.ends_with("/form.html") || t.url.ends_with("?agents"));
        if !agent_left {
            assert!(now.iter().any(|t| t.target_id == own), "the user's tab stays");
            break;
        }
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    assert!(!agent_left, "the agent's tab closed with its session");
    user.close();
    chrome.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_missing_profile_a_missing_file_and_a_stale_file_each_say_what_to_do() {
    // No such profile directory.
    let nowhere = std::env::temp_dir().join(format!("cdpilot-no-profile-{}", std::process::id()));
    let (mut mcp, _tmp) =
        spawn_cdpilot_with(&["--auto-connect", "--user-data-dir", nowhere.to_str().unwrap()]);
    mcp.initialize().await;
    let text = error_text(&mcp.call("browser_snapshot", json!({})).await);
    assert!(text.contains("browser_disconnected"), "{text}");
    assert!(
        text.contains(&format!("{} does not exist", nowhere.display())),
        "{text}"
    );
    assert!(text.contains("--user-data-dir"), "{text}");

    // `cdpilot doctor` says the same, the error's next step as its fix.
    let doctor = std::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
        .args([
            "doctor",
            "--auto-connect",
            "--user-data-dir",
            nowhere.to_str().unwrap(),
        ])
        .env("CDPILOT_CONFIG", "")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&doctor.stdout);
    assert_eq!(doctor.status.code(), Some(1), "{said}");
    assert!(said.contains("[FAIL] attaches and loads a page"), "{said}");
    assert!(
        said.contains("Fix: Pass --user-data-dir the profile directory"),
        "{said}"
    );

    // A profile without the file: remote debugging is off.
    let profile = tempfile::tempdir().unwrap();
    let (mut mcp, _tmp) = spawn_cdpilot_with(&[
        "--auto-connect",
        "--user-data-dir",
        profile.path().to_str().unwrap(),
    ]);
    mcp.initialize().await;
    let text = error_text(&mcp.call("browser_snapshot", json!({})).await);
    assert!(
        text.contains(&profile.path().join("DevToolsActivePort").display().to_string()),
        "{text}"
    );
    assert!(text.contains("chrome://inspect/#remote-debugging"), "{text}");
    assert!(text.contains("--remote-debugging-port"), "{text}");

    // A file left by a Chrome that has exited: its port refuses.
    let closed = TestSite::closed_port();
    std::fs::write(
        profile.path().join("DevToolsActivePort"),
        format!("{}\n/devtools/browser/0a1b2c\n", closed.port),
    )
    .unwrap();
    let text = error_text(&mcp.call("browser_snapshot", json!({})).await);
    assert!(text.contains(&format!("names port {}", closed.port)), "{text}");
    assert!(
        text.contains("has exited or turned remote debugging off"),
        "{text}"
    );
    assert!(text.contains("Start Chrome again"), "{text}");
}
