//! Hover, keys, select options, the console ring, and no automation tells,
//! against real Chromium on the two-origin test site.

mod common;

use common::{call, ok, open, ref_of, title};
use engine::ErrorCode;
use serde_json::json;

#[tokio::test]
async fn hover_keys_and_select_options() {
    let (_site, engine) = open("/inputs.html").await;
    ok(&engine, "browser_hover", json!({"selector": "#menu"})).await;
    assert_eq!(title(&engine).await, "hovered");

    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let field = ref_of(&snap.text, "textbox \"Field\"");
    ok(&engine, "browser_type", json!({"ref": field, "text": "hello"})).await;
    ok(&engine, "browser_press_key", json!({"key": "Backspace"})).await;
    ok(&engine, "browser_press_key", json!({"key": "Control+a"})).await;
    ok(&engine, "browser_press_key", json!({"key": "Z"})).await;
    let value = ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "document.getElementById('field').value"}),
    )
    .await;
    assert_eq!(
        value.data["value"], "Z",
        "Backspace, then Control+a selecting all, then Z replacing it"
    );
    let keys = ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "document.getElementById('keys').textContent"}),
    )
    .await;
    assert_eq!(keys.data["value"], "Backspace Control(ctrl) a(ctrl) Z ");

    let size = ref_of(&snap.text, "combobox \"Size\"");
    let out = ok(
        &engine,
        "browser_select_option",
        json!({"ref": size, "values": ["Large"]}),
    )
    .await;
    // The contract changed (TOOLS.md v2, issue 8): `selected` lists values,
    // `labels` the labels beside them (this asserted `selected: ["Large"]`).
    assert_eq!(out.data["selected"], json!(["l"]));
    assert_eq!(out.data["labels"], json!(["Large"]));
    let log = ok(&engine, "browser_evaluate", json!({"expression": "window.log"})).await;
    assert_eq!(log.data["value"], json!(["input:l", "change:l"]));
    ok(
        &engine,
        "browser_select_option",
        json!({"ref": size, "values": ["m"]}),
    )
    .await;
    let toppings = ref_of(&snap.text, "listbox \"Toppings\"");
    let out = ok(
        &engine,
        "browser_select_option",
        json!({"ref": toppings, "values": ["c", "Olives"]}),
    )
    .await;
    assert_eq!(out.data["selected"], json!(["c", "o"]));
    assert_eq!(out.data["labels"], json!(["Cheese", "Olives"]));

    let e = call(
        &engine,
        "browser_select_option",
        json!({"ref": size, "values": ["Huge"]}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(e.message.contains("Huge") && e.message.contains("Medium"), "{e}");
    let e = call(
        &engine,
        "browser_select_option",
        json!({"ref": size, "values": ["s", "m"]}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = call(
        &engine,
        "browser_select_option",
        json!({"ref": field, "values": ["x"]}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::ElementNotInteractable);
    let e = call(&engine, "browser_press_key", json!({"key": "Hyper+q"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    engine.shutdown().await;
}

#[tokio::test]
async fn console_keeps_messages_and_exceptions() {
    let (_site, engine) = open("/inputs.html").await;
    let all = ok(&engine, "browser_console", json!({})).await;
    let messages = all.data["messages"].as_array().unwrap();
    assert!(
        messages
            .iter()
            .any(|m| m["level"] == "warning" && m["text"] == "inputs page loaded"),
        "{}",
        all.text
    );
    assert!(
        messages
            .iter()
            .any(|m| m["level"] == "error" && m["text"] == "something failed 42"),
        "{}",
        all.text
    );
    assert!(
        messages
            .iter()
            .any(|m| m["text"].as_str().unwrap().contains("uncaught on purpose")),
        "{}",
        all.text
    );
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let shown = snap.data["console_errors"].as_array().unwrap();
    assert!(
        shown.iter().all(|m| m["level"] == "error") && shown.len() >= 2,
        "{}",
        snap.text
    );
    assert!(snap.text.contains("console_errors:"), "{}", snap.text);
    let errors = ok(
        &engine,
        "browser_console",
        json!({"level": "error", "clear": true}),
    )
    .await;
    assert!(errors.data["messages"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["level"] == "error"));
    let after = ok(&engine, "browser_console", json!({})).await;
    assert_eq!(after.data["messages"], json!([]));
    engine.shutdown().await;
}

#[tokio::test]
async fn no_automation_tells_in_the_page_or_its_cross_origin_frame() {
    let (site, engine) = open("/frames.html").await;
    let wd = ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "[navigator.webdriver, navigator.userAgent]"}),
    )
    .await;
    assert_eq!(wd.data["value"][0], false);
    assert!(
        !wd.data["value"][1].as_str().unwrap().contains("Headless"),
        "{}",
        wd.data
    );
    // The frames report from their own first script, so the disguise was in
    // place before any page code ran (the OOPIF through its own session).
    // Their scripts ran before the parent's load event, which navigate awaited.
    let console = ok(&engine, "browser_console", json!({})).await;
    let lines: Vec<&str> = console.data["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["text"].as_str())
        .collect();
    let cross = lines
        .iter()
        .find(|l| l.starts_with(&format!("child {}", site.b)))
        .unwrap_or_else(|| panic!("{lines:?}"));
    let parent = lines.iter().find(|l| l.starts_with("parent")).unwrap();
    for line in [cross, parent] {
        assert!(line.contains("webdriver=false"), "{line}");
        assert!(!line.contains("HeadlessChrome"), "{line}");
    }
    engine.shutdown().await;
}

#[tokio::test]
async fn checkboxes_and_right_clicks() {
    let (_site, engine) = open("/form.html").await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let agree = ref_of(&snap.text, "checkbox \"I agree\"");
    ok(&engine, "browser_click", json!({"ref": agree})).await;
    let after = ok(&engine, "browser_snapshot", json!({})).await;
    assert!(
        after.text.contains("checkbox \"I agree\" [ref=") && after.text.contains("[checked]"),
        "{}",
        after.text
    );
    ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "document.addEventListener('contextmenu', (e) => { e.preventDefault(); document.title = 'context ' + e.button + ' ' + e.isTrusted })"}),
    )
    .await;
    ok(&engine, "browser_click", json!({"ref": agree, "button": "right"})).await;
    assert_eq!(title(&engine).await, "context 2 true");
    engine.shutdown().await;
}
