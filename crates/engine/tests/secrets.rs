//! Secrets the model never sees (issue 9): `{{secret:NAME}}` is typed as
//! the real value, and no result, error, console line or audit record
//! carries that value back.

mod common;

use common::{call_in, engine_with, ok_in};
use engine::config::SecretConfig;
use engine::ErrorCode;
use serde_json::json;

const VALUE: &str = "s3cr3t-Value-42!";

/// Issue 9: there were no secrets; the model had to be handed the value.
#[tokio::test]
async fn a_secret_typed_through_its_placeholder_reaches_the_field_and_never_comes_back() {
    std::env::set_var("CDPILOT_TEST_SECRET_PW", VALUE);
    std::env::set_var("CDPILOT_TEST_SECRET_BANK", "bank-only-secret");
    let site = testkit::TestSite::start().await;
    let bank_origin = site.url_b("/").trim_end_matches('/').to_owned();
    let engine = engine_with(|c| {
        c.secrets.insert(
            "PW".into(),
            SecretConfig {
                env: "CDPILOT_TEST_SECRET_PW".into(),
                origins: vec![],
            },
        );
        c.secrets.insert(
            "BANK".into(),
            SecretConfig {
                env: "CDPILOT_TEST_SECRET_BANK".into(),
                origins: vec![bank_origin],
            },
        );
    });
    let session = engine.session();
    let mut seen = Vec::new();
    let mut ok = |out: engine::ActionOutput| {
        seen.push(format!("{}\n{}", out.text, out.data));
        out
    };
    ok(ok_in(
        session,
        "browser_navigate",
        json!({"url": site.url("/index.html")}),
    )
    .await);
    let page = "document.body.insertAdjacentHTML('beforeend', '<input id=pw aria-label=Password>');
        const i = document.getElementById('pw');
        i.addEventListener('input', () => { console.log('typed ' + i.value); });
        1";
    ok(ok_in(session, "browser_evaluate", json!({"expression": page})).await);
    ok(ok_in(
        session,
        "browser_type",
        json!({"selector": "#pw", "text": "{{secret:PW}}"}),
    )
    .await);

    // The field holds the real value: its length and checksum say so
    // without reading it back.
    let sum: u32 = VALUE.chars().map(|c| c as u32).sum();
    let check = ok(ok_in(
        session,
        "browser_evaluate",
        json!({"expression": "(() => { const v = document.getElementById('pw').value; return v.length + ':' + [...v].reduce((a, c) => a + c.charCodeAt(0), 0); })()"}),
    )
    .await);
    assert_eq!(
        check.data["value"],
        format!("{}:{sum}", VALUE.len()),
        "{:?}",
        check.data
    );

    // Reading it back, any way, gives the placeholder.
    let read = ok(ok_in(
        session,
        "browser_evaluate",
        json!({"expression": "document.getElementById('pw').value"}),
    )
    .await);
    assert_eq!(read.data["value"], "{{secret:PW}}", "{:?}", read.data);
    ok(ok_in(session, "browser_snapshot", json!({})).await);
    let console = ok(ok_in(session, "browser_console", json!({})).await);
    assert!(console.text.contains("typed {{secret:PW}}"), "{}", console.text);
    let error = call_in(
        session,
        "browser_evaluate",
        json!({"expression": "throw new Error(document.getElementById('pw').value)"}),
    )
    .await
    .unwrap_err();
    seen.push(error.to_string());

    // A secret bound to the other origin is refused here.
    let refused = call_in(
        session,
        "browser_type",
        json!({"selector": "#pw", "text": "{{secret:BANK}}"}),
    )
    .await
    .unwrap_err();
    assert_eq!(refused.code, ErrorCode::PermissionDenied, "{refused}");

    for text in &seen {
        assert!(!text.contains(VALUE), "the value came back: {text}");
    }
    let audit = engine.audit().to_json(None).to_string();
    assert!(!audit.contains(VALUE), "the audit has the value: {audit}");
    assert!(audit.contains("{{secret:PW}}"), "{audit}");
}
