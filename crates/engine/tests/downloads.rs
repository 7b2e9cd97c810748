//! Downloads (issue 12): a click that starts one saves the file into
//! `[files] output_dir` and says so; the browser never prompts.

mod common;

use common::{engine_with, ok};
use serde_json::json;

#[tokio::test]
async fn a_click_that_downloads_saves_the_file_with_its_bytes_and_name() {
    let site = testkit::TestSite::start().await;
    let out_dir = std::env::temp_dir().join(format!("cdpilot-downloads-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out_dir);
    let dir = out_dir.display().to_string();
    let engine = engine_with(|c| c.files.output_dir = dir);
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/downloads.html")}),
    )
    .await;

    // A link answered with Content-Disposition: attachment.
    let out = ok(&engine, "browser_click", json!({"selector": "#attachment"})).await;
    let download = &out.data["download"];
    assert_eq!(download["filename"], "report.csv", "{}", out.text);
    let path = std::path::PathBuf::from(download["path"].as_str().unwrap());
    assert!(path.starts_with(out_dir.canonicalize().unwrap()), "{path:?}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "id,name\n1,Ada\n");
    assert_eq!(download["bytes"], 14);
    assert_eq!(out.data["navigated"], false, "the tab stays on its page");

    // The same file again gets a name of its own.
    let again = ok(&engine, "browser_click", json!({"selector": "#attachment"})).await;
    assert_eq!(again.data["download"]["filename"], "report.csv");
    assert!(
        again.data["download"]["path"]
            .as_str()
            .unwrap()
            .ends_with("report (2).csv"),
        "{}",
        again.text
    );

    // A link with a download attribute, and a file the page makes itself.
    let named = ok(&engine, "browser_click", json!({"selector": "#attribute"})).await;
    assert_eq!(named.data["download"]["filename"], "named.html", "{}", named.text);
    let made = ok(&engine, "browser_click", json!({"selector": "#blob"})).await;
    assert_eq!(made.data["download"]["filename"], "page.txt", "{}", made.text);
    let made_path = made.data["download"]["path"].as_str().unwrap();
    assert_eq!(std::fs::read_to_string(made_path).unwrap(), "made in the page");

    // A click that downloads nothing says nothing about downloads.
    let plain = ok(&engine, "browser_click", json!({"selector": "#nothing"})).await;
    assert!(plain.data.get("download").is_none(), "{}", plain.data);
    engine.shutdown().await;
    let _ = std::fs::remove_dir_all(&out_dir);
}

/// A session with a browser context of its own (serve's sessions) saves
/// its downloads the same way: the behaviour is set per context.
#[tokio::test]
async fn a_session_with_its_own_browser_context_saves_downloads_too() {
    let site = testkit::TestSite::start().await;
    let out_dir = std::env::temp_dir().join(format!("cdpilot-downloads-ctx-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out_dir);
    let dir = out_dir.display().to_string();
    let engine = engine_with(|c| c.files.output_dir = dir);
    let session = engine.new_session();
    common::ok_in(
        &session,
        "browser_navigate",
        json!({"url": site.url("/downloads.html")}),
    )
    .await;
    let out = common::ok_in(&session, "browser_click", json!({"selector": "#attachment"})).await;
    let path = out.data["download"]["path"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", out.text));
    assert_eq!(std::fs::read_to_string(path).unwrap(), "id,name\n1,Ada\n");
    session.close(&common::budget()).await;
    engine.shutdown().await;
    let _ = std::fs::remove_dir_all(&out_dir);
}
