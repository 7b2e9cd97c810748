//! Issue 12's second half, in real Chromium on the two-origin site:
//! browser_network, browser_storage, browser_pdf, browser_emulate here;
//! snapshot `find` and `diff`, screenshot `annotate` and `path` in
//! `snapshot`.

#[path = "../common/mod.rs"]
mod common;
mod snapshot;

use std::path::PathBuf;

use common::{call, call_in, ok, ok_in};
use engine::{Engine, ErrorCode};
use serde_json::json;

/// A fresh output directory for one test.
fn output_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cdpilot-extras-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// An engine with every group on, writing under `dir`.
fn engine_in(dir: &std::path::Path) -> Engine {
    let dir = dir.display().to_string();
    common::engine_with(move |c| {
        c.tools.caps = vec!["all".into()];
        c.files.output_dir = dir;
    })
}

#[tokio::test]
async fn network_lists_an_xhr_from_a_cross_origin_iframe_and_returns_its_json_body() {
    let site = testkit::TestSite::start().await;
    let engine = engine_in(&output_dir("network"));
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("network.html")}),
    )
    .await;
    ok(&engine, "browser_wait", json!({"text": "xhr done: ada"})).await;

    let listed = ok(
        &engine,
        "browser_network",
        json!({"action": "list", "type": "xhr"}),
    )
    .await;
    let requests = listed.data["requests"].as_array().unwrap().clone();
    let xhr = requests
        .iter()
        .find(|r| r["url"].as_str().unwrap().starts_with(&site.url_b("json")))
        .unwrap_or_else(|| panic!("the iframe's XHR is not listed:\n{}", listed.text));
    assert_eq!(
        (xhr["method"].as_str(), xhr["status"].as_i64()),
        (Some("POST"), Some(200))
    );
    assert!(listed.text.contains("/json?from=frame"), "{}", listed.text);
    // The whole list has the page, the frame's document and the XHR.
    let all = ok(&engine, "browser_network", json!({"action": "list"})).await;
    assert!(
        all.data["requests"].as_array().unwrap().len() >= 3,
        "{}",
        all.text
    );
    let filtered = ok(
        &engine,
        "browser_network",
        json!({"action": "list", "filter": "network-frame"}),
    )
    .await;
    assert_eq!(
        filtered.data["requests"].as_array().unwrap().len(),
        1,
        "{}",
        filtered.text
    );

    let id = xhr["id"].as_str().unwrap();
    let got = ok(
        &engine,
        "browser_network",
        json!({"action": "get", "id": id, "body": true}),
    )
    .await;
    let response = &got.data["response"];
    let body: serde_json::Value = serde_json::from_str(response["body"].as_str().unwrap()).unwrap();
    assert_eq!(body, json!({"user": "ada", "items": [1, 2, 3]}));
    assert_eq!(response["body_truncated"], false);
    assert_eq!(got.data["request"]["post_data"], r#"{"ask":"user"}"#);
    let content_type = response["headers"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        .map(|(_, v)| v.as_str().unwrap().to_owned());
    assert_eq!(content_type.as_deref(), Some("application/json"));
    // Without body: headers only.
    let bare = ok(&engine, "browser_network", json!({"action": "get", "id": id})).await;
    assert!(bare.data["response"].get("body").is_none());

    let e = call(
        &engine,
        "browser_network",
        json!({"action": "get", "id": "r99999"}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = call(
        &engine,
        "browser_network",
        json!({"action": "list", "type": "bogus"}),
    )
    .await
    .unwrap_err();
    assert!(e.message.contains("bogus"), "{e}");

    // A failed request is listed as failed.
    let closed = testkit::TestSite::closed_port();
    let refused = format!(
        "fetch('http://127.0.0.1:{}/nothing').then(() => 'ok', () => 'refused')",
        closed.port
    );
    let fetched = ok(&engine, "browser_evaluate", json!({"expression": refused})).await;
    assert_eq!(fetched.data["value"], "refused");
    // Chrome's network service reports the failure on its own schedule:
    // the page's promise may settle before `loadingFailed` arrives, so the
    // list is asked again until it shows (bounded).
    let asked = std::time::Instant::now();
    let nothing = loop {
        let failed = ok(
            &engine,
            "browser_network",
            json!({"action": "list", "failed": true}),
        )
        .await;
        let found = failed.data["requests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["url"].as_str().unwrap().ends_with("/nothing"))
            .cloned();
        match found {
            Some(request) => break request,
            None if asked.elapsed() < std::time::Duration::from_secs(10) => {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await
            }
            None => panic!("{}", failed.text),
        }
    };
    assert!(nothing["failed"].as_str().unwrap().contains("ERR_"), "{nothing}");

    // A binary body is reported by its size only (an image the page
    // shows: Chrome keeps its bytes).
    let img = "new Promise((done) => { const i = new Image(); i.onload = () => done(i.naturalWidth); i.src = '/pixel.png'; })";
    let shown = ok(&engine, "browser_evaluate", json!({"expression": img})).await;
    assert_eq!(shown.data["value"], 1);
    let pixel = ok(
        &engine,
        "browser_network",
        json!({"action": "list", "filter": "pixel.png"}),
    )
    .await;
    let id = pixel.data["requests"][0]["id"].as_str().unwrap().to_owned();
    let got = ok(
        &engine,
        "browser_network",
        json!({"action": "get", "id": id, "body": true}),
    )
    .await;
    assert!(got.data["response"].get("body").is_none(), "{}", got.text);
    assert_eq!(
        got.data["response"]["body_bytes"],
        testkit::site::PIXEL_PNG.len(),
        "{}",
        got.text
    );
    // A body the page read as a blob is not kept by Chrome: said so.
    let blob = "fetch('/pixel.png?blob').then(r => r.blob()).then(b => b.size)";
    ok(&engine, "browser_evaluate", json!({"expression": blob})).await;
    let listed = ok(
        &engine,
        "browser_network",
        json!({"action": "list", "filter": "pixel.png?blob"}),
    )
    .await;
    let id = listed.data["requests"][0]["id"].as_str().unwrap().to_owned();
    let got = ok(
        &engine,
        "browser_network",
        json!({"action": "get", "id": id, "body": true}),
    )
    .await;
    let response = &got.data["response"];
    assert!(
        response.get("body_bytes").is_some() || response.get("body_unavailable").is_some(),
        "{}",
        got.text
    );

    // A body over 64 KB comes back cut, and says so.
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("controls/3000")}),
    )
    .await;
    let docs = ok(
        &engine,
        "browser_network",
        json!({"action": "list", "type": "document", "filter": "controls/3000"}),
    )
    .await;
    let id = docs.data["requests"][0]["id"].as_str().unwrap().to_owned();
    let big = ok(
        &engine,
        "browser_network",
        json!({"action": "get", "id": id, "body": true}),
    )
    .await;
    assert_eq!(
        big.data["response"]["body_truncated"],
        true,
        "{}",
        &big.text[..300]
    );
    assert_eq!(big.data["response"]["body"].as_str().unwrap().len(), 64 * 1024);
}

#[tokio::test]
async fn extra_groups_are_off_until_caps_turn_them_on() {
    let engine = common::engine();
    let e = call(&engine, "browser_network", json!({"action": "list"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(e.message.contains("network group"), "{e}");
}

#[tokio::test]
async fn cookies_stay_in_their_session_and_a_saved_state_logs_a_fresh_session_in() {
    let site = testkit::TestSite::start().await;
    let dir = output_dir("storage");
    let engine = engine_in(&dir);
    let (a, b) = (engine.new_session(), engine.new_session());
    ok_in(&a, "browser_navigate", json!({"url": site.url("logged-in.html")})).await;
    let cookie = json!({"name": "session", "value": "abc123", "url": site.url("")});
    ok_in(
        &a,
        "browser_storage",
        json!({"action": "set_cookie", "cookie": cookie}),
    )
    .await;
    ok_in(
        &a,
        "browser_evaluate",
        json!({"expression": "localStorage.setItem('token', 'ada'); 1"}),
    )
    .await;
    let mine = ok_in(
        &a,
        "browser_storage",
        json!({"action": "cookies", "url": site.url("logged-in.html")}),
    )
    .await;
    assert!(mine.text.contains("session=abc123"), "{}", mine.text);
    // Another session's context has none of it.
    ok_in(&b, "browser_navigate", json!({"url": site.url("logged-in.html")})).await;
    let theirs = ok_in(&b, "browser_storage", json!({"action": "cookies"})).await;
    assert_eq!(theirs.data["cookies"], json!([]), "{}", theirs.text);
    ok_in(&a, "browser_navigate", json!({"url": site.url("logged-in.html")})).await;
    ok_in(&a, "browser_wait", json!({"text": "logged in as ada"})).await;

    let saved = ok_in(
        &a,
        "browser_storage",
        json!({"action": "save", "path": "state.json"}),
    )
    .await;
    let path = dir.join("state.json");
    assert_eq!(saved.data["path"], path.display().to_string());
    let file: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(file["cookies"][0]["name"], "session", "{file}");
    let origin = &file["origins"][0];
    assert_eq!(origin["origin"], site.a, "{file}");
    assert_eq!(
        origin["local_storage"],
        json!([{"name": "token", "value": "ada"}])
    );

    // clear_cookies logs session a out; load brings it back.
    ok_in(&a, "browser_storage", json!({"action": "clear_cookies"})).await;
    ok_in(&a, "browser_navigate", json!({"url": site.url("logged-in.html")})).await;
    ok_in(&a, "browser_wait", json!({"text": "logged out"})).await;
    ok_in(
        &a,
        "browser_storage",
        json!({"action": "load", "path": "state.json"}),
    )
    .await;
    ok_in(&a, "browser_navigate", json!({"url": site.url("logged-in.html")})).await;
    ok_in(&a, "browser_wait", json!({"text": "logged in as ada"})).await;

    // [browser] storage_state: a fresh engine's session starts logged in.
    let state = path.display().to_string();
    let dir2 = output_dir("storage2");
    let fresh = common::engine_with(|c| {
        c.tools.caps = vec!["storage".into()];
        c.files.output_dir = dir2.display().to_string();
        c.browser.storage_state = state;
    });
    ok(
        &fresh,
        "browser_navigate",
        json!({"url": site.url("logged-in.html")}),
    )
    .await;
    ok(&fresh, "browser_wait", json!({"text": "logged in as ada"})).await;

    // Bad input: a file that is not a saved state, a path outside.
    std::fs::write(dir.join("notes.json"), r#"{"hello": "world"}"#).unwrap();
    let e = call_in(
        &a,
        "browser_storage",
        json!({"action": "load", "path": "notes.json"}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(e.message.contains("not a saved storage state"), "{e}");
    let e = call_in(
        &a,
        "browser_storage",
        json!({"action": "save", "path": "../escape.json"}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::PermissionDenied);
    let e = call_in(
        &a,
        "browser_storage",
        json!({"action": "set_cookie", "cookie": {"name": "x", "value": "1"}}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    a.close(&common::budget()).await;
    b.close(&common::budget()).await;
}

#[tokio::test]
async fn pdf_is_written_under_the_output_directory() {
    let site = testkit::TestSite::start().await;
    let dir = output_dir("pdf");
    let engine = engine_in(&dir);
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("article.html")}),
    )
    .await;
    let out = ok(&engine, "browser_pdf", json!({"path": "article.pdf"})).await;
    let path = dir.join("article.pdf");
    assert_eq!(out.data["path"], path.display().to_string());
    let bytes = std::fs::read(&path).unwrap();
    assert!(bytes.starts_with(b"%PDF"), "{:?}", &bytes[..8.min(bytes.len())]);
    assert_eq!(out.data["bytes"], bytes.len());
    assert!(out.data["pages"].as_u64().unwrap() >= 1, "{}", out.text);
    let e = call(&engine, "browser_pdf", json!({"path": "/etc/cdpilot.pdf"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::PermissionDenied);
}

#[tokio::test]
async fn emulate_width_390_makes_the_media_query_match() {
    let site = testkit::TestSite::start().await;
    let engine = engine_in(&output_dir("emulate"));
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("media.html")}),
    )
    .await;
    let before = ok(&engine, "browser_snapshot", json!({})).await;
    assert!(before.text.contains("wide layout") && !before.text.contains("narrow layout"));
    let out = ok(
        &engine,
        "browser_emulate",
        json!({"width": 390, "height": 844, "device_scale_factor": 2, "mobile": true, "color_scheme": "dark",
               "locale": "fr-FR", "timezone": "Asia/Tokyo", "geolocation": {"latitude": 48.85, "longitude": 2.35}}),
    )
    .await;
    assert_eq!(
        out.data["viewport"],
        json!({"width": 390, "height": 844}),
        "{}",
        out.text
    );
    let after = ok(&engine, "browser_snapshot", json!({})).await;
    assert!(
        after.text.contains("narrow layout") && !after.text.contains("wide layout"),
        "{}",
        after.text
    );
    let seen = ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "[matchMedia('(prefers-color-scheme: dark)').matches, navigator.language, Intl.DateTimeFormat().resolvedOptions().timeZone, devicePixelRatio]"}),
    )
    .await;
    assert_eq!(seen.data["value"], json!([true, "fr-FR", "Asia/Tokyo", 2]));
    // Lasts for the tab: a reload keeps it; a later call changes one part.
    ok(&engine, "browser_navigate", json!({"history": "reload"})).await;
    let out = ok(&engine, "browser_emulate", json!({"height": 600})).await;
    assert_eq!(out.data["viewport"], json!({"width": 390, "height": 600}));
    // Offline: the next navigation fails; back online it works.
    ok(&engine, "browser_emulate", json!({"offline": true})).await;
    let e = call(
        &engine,
        "browser_navigate",
        json!({"url": site.url("index.html")}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::NavigationFailed, "{e}");
    ok(&engine, "browser_emulate", json!({"offline": false})).await;
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("index.html")}),
    )
    .await;
    for bad in [
        json!({"width": 10}),
        json!({"device_scale_factor": 9}),
        json!({"geolocation": {"latitude": 91, "longitude": 0}}),
        json!({}),
        json!({"timezone": "Not/A_Zone"}),
    ] {
        let e = call(&engine, "browser_emulate", bad.clone()).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{bad}: {e}");
    }
}
