//! Native dialogs under the supervisor, against real Chromium: detection in
//! every frame, answers the page receives, each policy, the watchdog, and
//! nothing hanging while a dialog blocks the page.

mod common;

use std::time::{Duration, Instant};

use common::{call, engine_with, ok, open, ref_of};
use engine::config::DialogPolicy;
use engine::ErrorCode;
use serde_json::json;
use testkit::TestSite;

#[tokio::test]
async fn a_click_that_opens_confirm_returns_at_once_and_the_answer_reaches_the_page() {
    let (_site, engine) = open("/").await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let ask = ref_of(&snap.text, "button \"Ask\"");

    let started = Instant::now();
    let out = ok(&engine, "browser_click", json!({"ref": ask})).await;
    // A click that waited behind the dialog would take its whole budget
    // (25 s); returning "at once" is anything well short of that (issue 8:
    // no bound tighter than the behaviour needs).
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(out.data["dialog_opened"]["type"], "confirm", "{}", out.text);
    assert_eq!(out.data["dialog_opened"]["message"], "Proceed?");

    // While it blocks the page: page actions say so, the supervisor's tools work.
    let e = call(&engine, "browser_click", json!({"ref": ask}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::DialogPending, "{e}");
    assert!(e.message.contains("Proceed?"), "{e}");
    let blocked = ok(&engine, "browser_snapshot", json!({})).await;
    assert_eq!(
        blocked.data["pending_dialogs"][0]["message"], "Proceed?",
        "{}",
        blocked.text
    );
    assert!(blocked.text.contains("pending_dialogs:"), "{}", blocked.text);
    ok(&engine, "browser_tabs", json!({"action": "list"})).await;
    ok(&engine, "browser_console", json!({})).await;

    ok(&engine, "browser_dialog", json!({"action": "accept"})).await;
    let after = ok(&engine, "browser_snapshot", json!({})).await;
    assert!(after.text.contains("text: confirmed true"), "{}", after.text);
    assert_eq!(
        after.data["recent_dialogs"][0]["closed_by"], "agent",
        "{}",
        after.text
    );

    ok(&engine, "browser_click", json!({"ref": ask})).await;
    ok(&engine, "browser_dialog", json!({"action": "dismiss"})).await;
    let after = ok(&engine, "browser_snapshot", json!({})).await;
    assert!(after.text.contains("text: confirmed false"), "{}", after.text);
    engine.shutdown().await;
}

#[tokio::test]
async fn alerts_from_same_origin_and_cross_origin_frames_are_detected() {
    let (site, engine) = open("/frames.html").await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let alerts: Vec<String> = snap
        .text
        .lines()
        .filter(|l| l.contains("button \"Child alert\""))
        .map(|l| ref_of(l, "Child alert"))
        .collect();
    assert_eq!(alerts.len(), 2, "{}", snap.text);
    let mut origins = Vec::new();
    for alert in alerts {
        let out = ok(&engine, "browser_click", json!({"ref": alert})).await;
        let message = out.data["dialog_opened"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(message.starts_with("alert from "), "{}", out.text);
        origins.push(message.trim_start_matches("alert from ").to_owned());
        ok(&engine, "browser_dialog", json!({"action": "dismiss"})).await;
    }
    origins.sort();
    let mut expected = vec![site.a.clone(), site.b.clone()];
    expected.sort();
    assert_eq!(
        origins, expected,
        "one alert from each frame, cross-origin included"
    );
    let after = ok(&engine, "browser_snapshot", json!({})).await;
    assert_eq!(after.data["recent_dialogs"].as_array().unwrap().len(), 2);
    assert!(after.data.get("pending_dialogs").is_none());
    assert!(
        after.data["frame_tree"]["children"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["is_oopif"] == true),
        "{}",
        after.text
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn auto_policies_answer_dialogs_and_record_it() {
    let site = TestSite::start().await;
    for (policy, expected) in [
        ("auto_accept", "confirmed true"),
        ("auto_dismiss", "confirmed false"),
    ] {
        let engine = engine_with(|c| c.dialogs.policy = policy.parse().unwrap());
        ok(&engine, "browser_navigate", json!({"url": site.url("/")})).await;
        let snap = ok(&engine, "browser_snapshot", json!({})).await;
        let out = ok(
            &engine,
            "browser_click",
            json!({"ref": ref_of(&snap.text, "button \"Ask\"")}),
        )
        .await;
        assert!(
            out.data.get("dialog_opened").is_none(),
            "{policy}: the click completes: {}",
            out.text
        );
        let after = ok(&engine, "browser_snapshot", json!({})).await;
        assert!(
            after.text.contains(&format!("text: {expected}")),
            "{policy}: {}",
            after.text
        );
        assert_eq!(
            after.data["recent_dialogs"][0]["closed_by"], "auto_policy",
            "{policy}"
        );
        engine.shutdown().await;
    }
}

#[tokio::test]
async fn the_watchdog_dismisses_an_unanswered_dialog() {
    let site = TestSite::start().await;
    let engine = engine_with(|c| c.dialogs.timeout_s = 1);
    ok(&engine, "browser_navigate", json!({"url": site.url("/")})).await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    // Taken before the click: the dialog opens after it, and the watchdog
    // waits its whole timeout (1 s) from then, so no close can be seen
    // sooner, however slow the machine (issue 8: the bound is the
    // behaviour's own, not a guess at how long the click takes).
    let clicked = Instant::now();
    ok(
        &engine,
        "browser_click",
        json!({"ref": ref_of(&snap.text, "button \"Ask\"")}),
    )
    .await;
    // The dialog's own record is the condition: snapshots keep working while
    // it blocks the page, so ask until the watchdog has closed it (its
    // timeout plus generous slack).
    let after = loop {
        let snap = ok(&engine, "browser_snapshot", json!({})).await;
        if snap.data.get("pending_dialogs").is_none() || clicked.elapsed() > Duration::from_secs(15) {
            break snap;
        }
    };
    assert!(
        clicked.elapsed() >= Duration::from_secs(1),
        "dismissed too early: {:?}",
        clicked.elapsed()
    );
    assert_eq!(
        after.data["recent_dialogs"][0]["closed_by"], "watchdog",
        "{}",
        after.text
    );
    assert!(after.text.contains("text: confirmed false"), "{}", after.text);
    engine.shutdown().await;
}

#[tokio::test]
async fn the_recent_ring_keeps_the_last_twenty() {
    let site = TestSite::start().await;
    let engine = engine_with(|c| c.dialogs.policy = DialogPolicy::AutoDismiss);
    ok(&engine, "browser_navigate", json!({"url": site.url("/")})).await;
    ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "for (let i = 0; i < 25; i++) alert('n' + i)"}),
    )
    .await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let recent = snap.data["recent_dialogs"].as_array().unwrap();
    assert_eq!(recent.len(), 20);
    assert_eq!(recent[19]["message"], "n24");
    assert_eq!(recent[0]["message"], "n5");
    engine.shutdown().await;
}

#[tokio::test]
async fn the_bridge_round_trips_alert_prompt_and_confirm() {
    let site = TestSite::start().await;
    let engine = engine_with(|c| c.dialogs.bridge = engine::config::Bridge::On);
    ok(&engine, "browser_navigate", json!({"url": site.url("/")})).await;

    let out = ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "alert('bridged hello'); window.after = 'ran'"}),
    )
    .await;
    assert_eq!(out.data["dialog_opened"]["type"], "alert", "{}", out.text);
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    assert_eq!(
        snap.data["pending_dialogs"][0]["bridged"], true,
        "it came through the bridge: {}",
        snap.text
    );
    ok(&engine, "browser_dialog", json!({"action": "accept"})).await;
    let after = ok(&engine, "browser_evaluate", json!({"expression": "window.after"})).await;
    assert_eq!(after.data["value"], "ran");

    ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "window.name2 = prompt('Your name?', 'x')"}),
    )
    .await;
    ok(
        &engine,
        "browser_dialog",
        json!({"action": "accept", "prompt_text": "Ada"}),
    )
    .await;
    assert_eq!(
        ok(&engine, "browser_evaluate", json!({"expression": "window.name2"}))
            .await
            .data["value"],
        "Ada"
    );

    ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "window.name3 = prompt('Your name?', 'x')"}),
    )
    .await;
    ok(&engine, "browser_dialog", json!({"action": "dismiss"})).await;
    assert_eq!(
        ok(&engine, "browser_evaluate", json!({"expression": "window.name3"}))
            .await
            .data["value"],
        json!(null)
    );

    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let ask = ref_of(&snap.text, "button \"Ask\"");
    let opened = ok(&engine, "browser_click", json!({"ref": ask})).await;
    assert_eq!(
        opened.data["dialog_opened"]["message"], "Proceed?",
        "{}",
        opened.text
    );
    ok(&engine, "browser_dialog", json!({"action": "accept"})).await;
    assert!(ok(&engine, "browser_snapshot", json!({}))
        .await
        .text
        .contains("text: confirmed true"));
    ok(&engine, "browser_click", json!({"ref": ask})).await;
    ok(&engine, "browser_dialog", json!({"action": "dismiss"})).await;
    let last = ok(&engine, "browser_snapshot", json!({})).await;
    assert!(last.text.contains("text: confirmed false"), "{}", last.text);
    let recent = last.data["recent_dialogs"].as_array().unwrap();
    assert_eq!(recent.len(), 5);
    assert!(
        recent
            .iter()
            .all(|d| d["bridged"] == true && d["closed_by"] == "agent"),
        "{}",
        last.text
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn a_beforeunload_dialog_is_surfaced_and_accepting_it_leaves() {
    let (site, engine) = open("/leave.html").await;
    // Chrome asks before leaving only pages the user interacted with.
    ok(&engine, "browser_click", json!({"selector": "button"})).await;
    let out = ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/form.html")}),
    )
    .await;
    assert_eq!(out.data["dialog_opened"]["type"], "beforeunload", "{}", out.text);
    ok(&engine, "browser_dialog", json!({"action": "accept"})).await;
    ok(&engine, "browser_wait", json!({"url": "*/form.html"})).await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    assert_eq!(snap.data["title"], "Form");
    engine.shutdown().await;
}

// Issue 8: a failed or cancelled `browser_dialog` answer left the dialog
// marked as being answered, and the watchdog then skipped it forever.
#[tokio::test]
async fn a_cancelled_answer_leaves_the_dialog_to_the_watchdog() {
    let site = TestSite::start().await;
    let engine = engine_with(|c| c.dialogs.timeout_s = 2);
    ok(&engine, "browser_navigate", json!({"url": site.url("/")})).await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let out = ok(
        &engine,
        "browser_click",
        json!({"ref": ref_of(&snap.text, "button \"Ask\"")}),
    )
    .await;
    assert_eq!(out.data["dialog_opened"]["type"], "confirm", "{}", out.text);
    let clicked = Instant::now();

    // The client cancels the answer: it gets `canceled`, the dialog stays.
    let cancel = tokio_util::sync::CancellationToken::new();
    cancel.cancel();
    let answer = engine::ToolCall::new("browser_dialog", json!({"action": "accept"})).cancelled_by(cancel);
    let e = engine.call(answer).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::Canceled, "{e}");
    let still = ok(&engine, "browser_snapshot", json!({})).await;
    assert_eq!(
        still.data["pending_dialogs"][0]["message"], "Proceed?",
        "{}",
        still.text
    );

    // The watchdog's timeout (2 s) plus generous slack.
    let after = loop {
        let snap = ok(&engine, "browser_snapshot", json!({})).await;
        if snap.data.get("pending_dialogs").is_none() || clicked.elapsed() > Duration::from_secs(20) {
            break snap;
        }
    };
    assert_eq!(
        after.data["recent_dialogs"][0]["closed_by"], "watchdog",
        "{}",
        after.text
    );
    assert!(after.text.contains("text: confirmed false"), "{}", after.text);
    engine.shutdown().await;
}

// Issue 8: the answer to a dialog did not mention the dialog the page opened
// in reaction to it; only the next call did.
#[tokio::test]
async fn an_answer_names_the_dialog_the_page_opened_in_reaction() {
    let site = TestSite::start().await;
    for bridge in ["off", "on"] {
        let engine = engine_with(|c| c.dialogs.bridge = bridge.parse().expect("a bridge"));
        answers_name_the_next_dialog(&site, &engine).await;
        engine.shutdown().await;
    }
}

async fn answers_name_the_next_dialog(site: &TestSite, engine: &engine::Engine) {
    ok(
        engine,
        "browser_navigate",
        json!({"url": site.url("/dialogs.html")}),
    )
    .await;
    let snap = ok(engine, "browser_snapshot", json!({})).await;
    let chain = ref_of(&snap.text, "button \"Chain\"");
    for round in 0..3 {
        let out = ok(engine, "browser_click", json!({"ref": chain})).await;
        assert_eq!(out.data["dialog_opened"]["message"], "first", "{}", out.text);
        let first = out.data["dialog_opened"]["id"].as_str().unwrap().to_owned();

        let answer = ok(engine, "browser_dialog", json!({"action": "accept"})).await;
        assert_eq!(answer.data["dialog"]["id"], first.as_str(), "{}", answer.text);
        let next = &answer.data["dialog_opened"];
        assert_eq!(next["type"], "confirm", "round {round}: {}", answer.text);
        assert_eq!(next["message"], "Second?", "{}", answer.text);
        assert_ne!(next["id"], first.as_str(), "{}", answer.text);
        assert!(answer.text.contains("Second?"), "{}", answer.text);

        let last = ok(
            engine,
            "browser_dialog",
            json!({"action": "accept", "dialog_id": next["id"]}),
        )
        .await;
        assert!(last.data.get("dialog_opened").is_none(), "{}", last.text);
        let after = ok(engine, "browser_snapshot", json!({})).await;
        assert!(after.text.contains("text: second true"), "{}", after.text);
    }
}
