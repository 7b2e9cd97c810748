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

/// The spellings of `value` a result, an event or a log may carry, made
/// here independently of cdpilot's own list.
fn spellings(value: &str) -> Vec<(&'static str, String)> {
    use base64::Engine as _;
    let pct = |keep: &dyn Fn(u8) -> bool, plus: bool| -> String {
        value
            .bytes()
            .map(|b| match b {
                b' ' if plus => "+".to_owned(),
                b if keep(b) => (b as char).to_string(),
                b => format!("%{b:02X}"),
            })
            .collect()
    };
    let json = serde_json::to_string(value).unwrap();
    let debug = format!("{value:?}");
    vec![
        ("raw", value.to_owned()),
        (
            "form (+)",
            pct(&|b| b.is_ascii_alphanumeric() || b"*-._".contains(&b), true),
        ),
        (
            "component (%20)",
            pct(&|b| b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b), false),
        ),
        (
            "url query",
            pct(&|b| b > 0x20 && b < 0x7f && !b"\"<>`#%{}|^".contains(&b), false),
        ),
        (
            "url display",
            pct(&|b| b > 0x20 && b < 0x7f && !b"%&=+#?/;:@$,\\".contains(&b), true),
        ),
        ("json", json[1..json.len() - 1].to_owned()),
        ("rust debug", debug[1..debug.len() - 1].to_owned()),
        (
            "html",
            value
                .replace('&', "&amp;")
                .replace('"', "&quot;")
                .replace('<', "&lt;")
                .replace('>', "&gt;"),
        ),
        ("base64", base64::engine::general_purpose::STANDARD.encode(value)),
    ]
}

/// Issue 20, findings 6, 7 and 8: a secret with spaces, `&`, `"` and `\`
/// goes through a GET form (URL-encoded in the URL), a POST body, a
/// dialog, script that escapes and encodes it, and an error; no result,
/// error, event, watcher's overview or audit record carries it in any
/// spelling. A secret bound to the top page's origin is refused in a
/// cross-origin iframe of that page.
#[tokio::test]
async fn a_secret_leaves_in_no_spelling_on_any_channel() {
    const TRICKY: &str = "pa ss&w\"o\\rd 42";
    std::env::set_var("CDPILOT_TEST_SECRET_TRICKY", TRICKY);
    std::env::set_var("CDPILOT_TEST_SECRET_HOME", "home-only-9f2");
    let site = testkit::TestSite::start().await;
    let home = site.url("/").trim_end_matches('/').to_owned();
    let engine = engine_with(|c| {
        c.tools.caps = vec!["all".into()];
        c.secrets.insert(
            "PW".into(),
            SecretConfig {
                env: "CDPILOT_TEST_SECRET_TRICKY".into(),
                origins: vec![],
            },
        );
        c.secrets.insert(
            "HOME".into(),
            SecretConfig {
                env: "CDPILOT_TEST_SECRET_HOME".into(),
                origins: vec![home],
            },
        );
    });
    let session = engine.session();
    let mut events = session.events().subscribe();
    let seen = std::cell::RefCell::new(Vec::<String>::new());
    let record =
        |what: &str, r: Result<engine::ActionOutput, engine::ActionError>| -> Option<engine::ActionOutput> {
            match r {
                Ok(out) => {
                    seen.borrow_mut()
                        .push(format!("{what}: {}\n{}", out.text, out.data));
                    Some(out)
                }
                Err(e) => {
                    seen.borrow_mut().push(format!("{what}: {e} {}", e.next_step));
                    None
                }
            }
        };

    // Finding 6: bound to the top page's origin, refused in its
    // cross-origin iframe, allowed in its same-origin one.
    record(
        "nav",
        call_in(
            session,
            "browser_navigate",
            json!({"url": site.url("/frames.html")}),
        )
        .await,
    );
    let snap = record("snap", call_in(session, "browser_snapshot", json!({})).await).unwrap();
    let field = |title: &str| {
        let at = snap.text.find(title).expect("the frame is in the snapshot");
        common::ref_of(&snap.text[at..], "textbox \"Child field\"")
    };
    let (cross, same) = (field("Cross-origin frame"), field("Same-origin frame"));
    let e = call_in(
        session,
        "browser_type",
        json!({"ref": cross, "text": "{{secret:HOME}}"}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::PermissionDenied, "{e}");
    assert!(e.message.contains(&site.b), "names the frame's origin: {e}");
    record(
        "same",
        call_in(
            session,
            "browser_type",
            json!({"ref": same, "text": "{{secret:HOME}}"}),
        )
        .await,
    )
    .expect("the same-origin frame takes it");

    // Finding 7: a GET form puts it in the URL, a POST form in a body.
    record(
        "nav",
        call_in(
            session,
            "browser_navigate",
            json!({"url": site.url("/index.html")}),
        )
        .await,
    );
    let page = "document.body.insertAdjacentHTML('beforeend', `
        <form id=g action='/index.html' method=get><input id=q name=q aria-label=Query></form>
        <form id=p action='/json' method=post><input id=b name=b aria-label=Body><input type=checkbox id=c aria-label=Check></form>`); 1";
    record(
        "eval",
        call_in(session, "browser_evaluate", json!({"expression": page})).await,
    );
    record(
        "type",
        call_in(
            session,
            "browser_type",
            json!({"selector": "#b", "text": "{{secret:PW}}"}),
        )
        .await,
    );
    record(
        "fill",
        call_in(
            session,
            "browser_fill_form",
            json!({"fields": [
                {"selector": "#b", "value": "{{secret:PW}}"},
                {"selector": "#c", "value": "{{secret:PW}}"},
            ]}),
        )
        .await,
    );
    for expression in [
        "document.getElementById('b').value",
        "JSON.stringify(document.getElementById('b').value)",
        "encodeURIComponent(document.getElementById('b').value)",
        "btoa(document.getElementById('b').value)",
        "(() => { const d = document.createElement('div'); d.textContent = document.getElementById('b').value; return d.innerHTML; })()",
        "new URLSearchParams({v: document.getElementById('b').value}).toString()",
        "({nested: [document.getElementById('b').value]})",
    ] {
        record("eval", call_in(session, "browser_evaluate", json!({"expression": expression})).await);
    }
    record(
        "error",
        call_in(
            session,
            "browser_evaluate",
            json!({"expression": "throw new Error(JSON.stringify(document.getElementById('b').value))"}),
        )
        .await,
    );
    record(
        "post",
        call_in(
            session,
            "browser_evaluate",
            json!({"expression": "document.getElementById('p').submit(); 1"}),
        )
        .await,
    );
    record(
        "wait",
        call_in(session, "browser_wait", json!({"url": "**/json*"})).await,
    );
    record(
        "back",
        call_in(
            session,
            "browser_navigate",
            json!({"url": site.url("/index.html")}),
        )
        .await,
    );
    record(
        "eval",
        call_in(session, "browser_evaluate", json!({"expression": page})).await,
    );
    record(
        "get",
        call_in(
            session,
            "browser_type",
            json!({"selector": "#q", "text": "{{secret:PW}}", "submit": true}),
        )
        .await,
    );
    record(
        "wait",
        call_in(session, "browser_wait", json!({"url": "**/index.html?q=*"})).await,
    );
    record(
        "tabs",
        call_in(session, "browser_tabs", json!({"action": "list"})).await,
    );
    record("snap", call_in(session, "browser_snapshot", json!({})).await);
    let listed = record(
        "network",
        call_in(session, "browser_network", json!({"action": "list"})).await,
    )
    .unwrap();
    for request in listed.data["requests"].as_array().into_iter().flatten() {
        let id = request["id"].clone();
        record(
            "request",
            call_in(
                session,
                "browser_network",
                json!({"action": "get", "id": id, "body": true}),
            )
            .await,
        );
    }
    // Finding 8: a dialog that echoes it (events, the watcher's view).
    record("alert", call_in(session, "browser_evaluate", json!({"expression": "setTimeout(() => alert('got ' + decodeURIComponent(location.search.slice(3).replace(/\\+/g, ' '))), 0); 1"})).await);
    record("wait", call_in(session, "browser_snapshot", json!({})).await);
    let overview = session.overview();
    seen.borrow_mut().push(format!(
        "overview: {}",
        serde_json::to_string(&overview.tabs).unwrap()
    ));
    seen.borrow_mut().push(format!(
        "overview dialogs: {}",
        serde_json::to_string(&overview.dialogs).unwrap()
    ));
    assert!(!overview.dialogs.is_empty(), "the dialog is pending");
    record(
        "dialog",
        call_in(session, "browser_dialog", json!({"action": "accept"})).await,
    );

    let mut seen = seen.into_inner();
    while let Ok(event) = events.try_recv() {
        seen.push(format!("event {}: {}", event.name(), event.data()));
    }
    assert!(
        seen.iter().any(|s| s.starts_with("event dialog_opened")),
        "{seen:#?}"
    );
    assert!(
        seen.iter()
            .any(|s| s.starts_with("event navigated") && s.contains("{{secret:PW}}")),
        "{seen:#?}"
    );
    seen.push(format!("audit: {}", engine.audit().to_json(None)));
    let mut leaks = Vec::new();
    let mut all = spellings(TRICKY);
    // Each URL spelling escaped once more, as a JSON or Rust string shows it.
    for (form, spelling) in all.clone() {
        let json = serde_json::to_string(&spelling).unwrap();
        all.push((form, json[1..json.len() - 1].to_owned()));
        let debug = format!("{spelling:?}");
        all.push((form, debug[1..debug.len() - 1].to_owned()));
    }
    for (form, spelling) in all {
        for text in &seen {
            if text.contains(&spelling) {
                leaks.push(format!("{form} ({spelling}) in {text}"));
            }
        }
    }
    assert!(leaks.is_empty(), "the secret left:\n{}", leaks.join("\n"));
}
