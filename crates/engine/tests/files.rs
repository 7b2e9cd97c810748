//! Issue 20, findings 11 and 13: files stay where the user put them.
//! Uploads need a configured root; links planted inside the output
//! directory carry no write and no read; no error quotes a file. Real
//! Chromium on the test site.

mod common;

use std::path::PathBuf;

use common::{call, engine_with, ok};
use engine::ErrorCode;
use serde_json::json;

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cdpilot-files-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Finding 11: uploads defaulted to the working directory, so a server
/// started in `$HOME` handed out `~/.ssh/id_rsa`. With no `[files]
/// upload_roots` an upload is refused naming the key, and the page gets
/// nothing, even for a file in the working directory.
#[tokio::test]
async fn with_no_upload_roots_an_upload_is_refused_naming_the_key() {
    let (_site, engine) = common::open("/forms.html").await;
    let here = std::env::current_dir().unwrap().join("Cargo.toml");
    assert!(here.is_file());
    for path in [here.display().to_string(), "Cargo.toml".to_owned()] {
        let e = call(
            &engine,
            "browser_upload",
            json!({"selector": "#one", "paths": [path]}),
        )
        .await
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::PermissionDenied, "{e}");
        assert!(e.message.contains("[files] upload_roots"), "{e}");
    }
    let files = ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "document.getElementById('one').files.length"}),
    )
    .await;
    assert_eq!(files.data["value"], 0, "the page got no file");
}

/// Finding 13: a link inside the output directory pointing elsewhere (to
/// a file, or to a directory) carried the screenshot, the PDF and the
/// saved storage state out of it, and a load read through it. Each is
/// refused and the file elsewhere is untouched; a load of a file that is
/// not a state never quotes it.
#[tokio::test]
async fn links_inside_the_output_directory_carry_no_write_and_no_read() {
    let site = testkit::TestSite::start().await;
    let base = scratch("links");
    let (out, elsewhere) = (base.join("out"), base.join("elsewhere"));
    std::fs::create_dir_all(&out).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    let victim = elsewhere.join("authorized_keys");
    std::fs::write(&victim, "ssh-ed25519 precious").unwrap();
    for name in ["shot.png", "page.pdf", "state.json"] {
        std::os::unix::fs::symlink(&victim, out.join(name)).unwrap();
    }
    std::os::unix::fs::symlink(&elsewhere, out.join("dir")).unwrap();
    let dir = out.display().to_string();
    let engine = engine_with(move |c| {
        c.tools.caps = vec!["all".into()];
        c.files.output_dir = dir;
    });
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/index.html")}),
    )
    .await;
    let attempts = [
        ("browser_screenshot", json!({"path": "shot.png"})),
        ("browser_screenshot", json!({"path": "dir/new.png"})),
        ("browser_pdf", json!({"path": "page.pdf"})),
        ("browser_pdf", json!({"path": "dir/sub/new.pdf"})),
        ("browser_storage", json!({"action": "save", "path": "state.json"})),
        (
            "browser_storage",
            json!({"action": "save", "path": "dir/state.json"}),
        ),
        ("browser_storage", json!({"action": "load", "path": "state.json"})),
        (
            "browser_storage",
            json!({"action": "load", "path": "dir/authorized_keys"}),
        ),
    ];
    for (tool, args) in attempts {
        let e = call(&engine, tool, args.clone()).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::PermissionDenied, "{tool} {args}: {e}");
        assert!(e.message.contains("symbolic link"), "{tool} {args}: {e}");
        assert!(!e.message.contains("precious"), "{tool} {args}: {e}");
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "ssh-ed25519 precious");
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        1,
        "nothing new elsewhere"
    );
    // A plain file in the directory that is not a state: refused, unquoted.
    std::fs::write(
        out.join("notes.json"),
        r#"{"cookies": "hunter2 & more", "origins": []}"#,
    )
    .unwrap();
    let e = call(
        &engine,
        "browser_storage",
        json!({"action": "load", "path": "notes.json"}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
    assert!(!e.message.contains("hunter2"), "the file is quoted: {e}");
    // Plain names still work.
    let saved = ok(&engine, "browser_screenshot", json!({"path": "fine.png"})).await;
    assert!(out.join("fine.png").is_file(), "{}", saved.text);
    let _ = std::fs::remove_dir_all(&base);
}
