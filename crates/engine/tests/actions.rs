//! The five foundation tools against real headless Chromium on the
//! two-origin test site: navigate, snapshot, click, type, screenshot, and
//! their failure paths.

mod common;

use common::{call, engine, engine_with, ok, open, ref_of, title};
use engine::ErrorCode;
use serde_json::json;
use testkit::TestSite;

#[tokio::test]
async fn navigate_reports_real_url_title_and_status() {
    let site = TestSite::start().await;
    let engine = engine();
    let out = ok(&engine, "browser_navigate", json!({"url": site.url("/")})).await;
    assert_eq!(out.data["url"], site.url("/"));
    assert_eq!(out.data["title"], "cdpilot test home");
    assert_eq!(out.data["status"], 200);
    assert!(out.data.get("redirected_from").is_none());

    let target = site.url("/form.html");
    let redirect = site.url(&format!("/redirect?to={target}"));
    let out = ok(&engine, "browser_navigate", json!({"url": redirect})).await;
    assert_eq!(out.data["url"], target);
    assert_eq!(out.data["redirected_from"], redirect);

    let out = ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/status/404")}),
    )
    .await;
    assert_eq!(out.data["status"], 404);
    engine.shutdown().await;
}

#[tokio::test]
async fn navigate_history_back_forward_reload() {
    let (site, engine) = open("/").await;
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/form.html")}),
    )
    .await;
    let back = ok(&engine, "browser_navigate", json!({"history": "back"})).await;
    assert_eq!(back.data["url"], site.url("/"));
    let forward = ok(
        &engine,
        "browser_navigate",
        json!({"history": "forward", "wait_until": "domcontentloaded"}),
    )
    .await;
    assert_eq!(forward.data["url"], site.url("/form.html"));
    let reload = ok(&engine, "browser_navigate", json!({"history": "reload"})).await;
    assert_eq!(reload.data["url"], site.url("/form.html"));
    let e = call(&engine, "browser_navigate", json!({"history": "forward"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    engine.shutdown().await;
}

#[tokio::test]
async fn navigate_failures_have_contract_codes_and_the_session_survives() {
    let site = TestSite::start().await;
    let engine = engine();
    let e = call(&engine, "browser_navigate", json!({"url": "javascript:alert(1)"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = call(&engine, "browser_navigate", json!({})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(e.message.contains("url"), "{e}");
    let e = call(&engine, "browser_navigate", json!({"url": 42}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let closed = TestSite::closed_port();
    let e = call(
        &engine,
        "browser_navigate",
        json!({"url": format!("http://127.0.0.1:{}/", closed.port)}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::NavigationFailed, "{e}");
    assert!(e.message.contains("ERR_CONNECTION_REFUSED"), "{e}");
    let out = ok(&engine, "browser_navigate", json!({"url": site.url("/")})).await;
    assert_eq!(out.data["title"], "cdpilot test home");
    engine.shutdown().await;
}

/// Issue 8: `policy.schemes` was parsed but http and https were hard-coded,
/// so `schemes = ["https"]` still opened http pages.
#[tokio::test]
async fn a_url_outside_policy_schemes_is_refused_by_navigate_and_tabs_new() {
    let site = TestSite::start().await;
    let https_only = engine_with(|c| c.policy.schemes = vec!["https".into()]);
    let engine = &https_only;
    let e = call(engine, "browser_navigate", json!({"url": site.url("/")}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
    assert!(
        e.message.contains("http:") && e.message.contains("allowed schemes: https"),
        "{e}"
    );
    let e = call(
        engine,
        "browser_tabs",
        json!({"action": "new", "url": site.url("/")}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
    // Refused before anything was sent: no tab was opened, none navigated.
    let list = ok(engine, "browser_tabs", json!({"action": "list"})).await;
    let tabs = list.data["tabs"].as_array().unwrap();
    assert_eq!(tabs.len(), 1, "{tabs:?}");
    assert!(!tabs[0]["url"].as_str().unwrap().starts_with("http"), "{tabs:?}");
    https_only.shutdown().await;

    // The default (http, https) refuses the schemes that run or read
    // things instead of loading a page.
    let defaults = common::engine();
    let engine = &defaults;
    for url in [
        "data:text/html,<h1>hi</h1>",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "view-source:http://127.0.0.1/",
    ] {
        let scheme = url.split(':').next().unwrap();
        for (tool, args) in [
            ("browser_navigate", json!({"url": url})),
            ("browser_tabs", json!({"action": "new", "url": url})),
        ] {
            let e = call(engine, tool, args).await.unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{tool} {url}: {e}");
            assert!(
                e.message.contains(&format!("{scheme}:"))
                    && e.message.contains("allowed schemes: http, https"),
                "{tool} {url}: {e}"
            );
        }
    }
    defaults.shutdown().await;
}

/// Issue 8: a `visibility: visible` child of a `visibility: hidden` parent
/// (menus, tooltips, carousels) was left out of the snapshot with its
/// parent, so it had no ref although it is visible and clickable.
#[tokio::test]
async fn a_visible_child_of_a_visibility_hidden_parent_gets_a_ref_and_clicks() {
    let (_site, engine) = open("/visibility.html").await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let button = ref_of(&snap.text, "button \"Next slide\"");
    assert!(snap.text.contains("text: Shown tooltip words"), "{}", snap.text);
    for gone in [
        "Hidden menu words",
        "Hidden menu button",
        "navigation",
        "Skipped words",
        "Skipped button",
    ] {
        assert!(!snap.text.contains(gone), "{gone:?} in:\n{}", snap.text);
    }
    ok(&engine, "browser_click", json!({"ref": button})).await;
    let after = ok(&engine, "browser_snapshot", json!({})).await;
    assert!(
        after.text.contains("text: clicked trusted=true"),
        "{}",
        after.text
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn click_by_ref_is_trusted_input() {
    let (_site, engine) = open("/").await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let button = ref_of(&snap.text, "button \"Trusted click\"");
    let out = ok(&engine, "browser_click", json!({"ref": button})).await;
    assert_eq!(out.data["navigated"], false);
    assert_eq!(title(&engine).await, "clicked 1 trusted=true");
    // The same ref still works on a later snapshot of the same document.
    ok(&engine, "browser_snapshot", json!({})).await;
    ok(&engine, "browser_click", json!({"ref": button, "click_count": 2})).await;
    assert_eq!(title(&engine).await, "clicked 3 trusted=true");
    engine.shutdown().await;
}

#[tokio::test]
async fn clicking_a_link_navigates_and_old_refs_go_stale() {
    let (site, engine) = open("/").await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let link = ref_of(&snap.text, "link \"Go to form\"");
    let button = ref_of(&snap.text, "button \"Trusted click\"");
    let out = ok(&engine, "browser_click", json!({"ref": link})).await;
    assert_eq!(out.data["navigated"], true, "{}", out.text);
    assert_eq!(out.data["url"], site.url("/form.html"));
    let e = call(&engine, "browser_click", json!({"ref": button}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ElementStale, "{e}");
    assert!(e.to_string().contains("browser_snapshot"));
    engine.shutdown().await;
}

#[tokio::test]
async fn unknown_and_malformed_refs() {
    let (_site, engine) = open("/").await;
    ok(&engine, "browser_snapshot", json!({})).await;
    let e = call(&engine, "browser_click", json!({"ref": "e999"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::RefUnknown, "{e}");
    let e = call(&engine, "browser_click", json!({"ref": "button"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
    let e = call(&engine, "browser_click", json!({"selector": "#nope"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ElementNotFound, "{e}");
    let e = call(&engine, "browser_click", json!({"selector": "[[["}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
    ok(&engine, "browser_click", json!({"selector": "#trusted"})).await;
    assert_eq!(title(&engine).await, "clicked 1 trusted=true");
    engine.shutdown().await;
}

#[tokio::test]
async fn type_clears_reports_value_and_submits() {
    let (_site, engine) = open("/form.html").await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    assert!(snap.text.contains("textbox \"Email\""), "{}", snap.text);
    assert!(snap.text.contains("value=\"old@example.com\""), "{}", snap.text);
    let email = ref_of(&snap.text, "textbox \"Email\"");
    let out = ok(
        &engine,
        "browser_type",
        json!({"ref": email, "text": "new@example.com"}),
    )
    .await;
    assert_eq!(out.data["value"], "new@example.com");
    let out = ok(
        &engine,
        "browser_type",
        json!({"ref": email, "text": ".org", "clear": false}),
    )
    .await;
    assert_eq!(out.data["value"], "new@example.com.org");
    let out = ok(
        &engine,
        "browser_type",
        json!({"ref": email, "text": "a@b.c", "submit": true}),
    )
    .await;
    assert_eq!(out.data["value"], "a@b.c");
    assert_eq!(title(&engine).await, "submitted a@b.c");
    let notes = ref_of(&snap.text, "textbox \"Notes\"");
    let out = ok(&engine, "browser_type", json!({"ref": notes, "text": ""})).await;
    assert_eq!(out.data["value"], "");
    let agree = ref_of(&snap.text, "checkbox \"I agree\"");
    let e = call(&engine, "browser_type", json!({"ref": agree, "text": "x"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ElementNotInteractable);
    engine.shutdown().await;
}

#[tokio::test]
async fn snapshot_shows_roles_names_states_and_hides_hidden() {
    let (_site, engine) = open("/snapshot.html").await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let t = &snap.text;
    for expected in [
        "URL: ",
        "Title: Snapshot fixture",
        "navigation \"Main\"",
        "link \"Home\" [ref=",
        // A heading has a name but nothing to act on: no ref (issue 21).
        "heading \"Roles and names\" [level=1]",
        "text: Plain paragraph text.",
        "button \"Close dialog\" [ref=",
        "img \"Company logo\" [ref=",
        "searchbox \"Search\" [ref=",
        "checkbox \"Remember me\" [ref=",
        "[checked]",
        "button \"Disabled action\" [ref=",
        "[disabled]",
        "button \"Custom button\" [ref=",
        "textbox \"Labelled by span\" [ref=",
    ] {
        assert!(t.contains(expected), "missing {expected:?} in:\n{t}");
    }
    for hidden in [
        "Hidden by attribute",
        "Hidden by display",
        "Hidden from a11y",
        "Invisible",
    ] {
        assert!(!t.contains(hidden), "{hidden:?} shown in:\n{t}");
    }
    assert_eq!(snap.data["truncated"], false);
    let capped = ok(&engine, "browser_snapshot", json!({"max_elements": 3})).await;
    assert_eq!(capped.data["truncated"], true);
    assert!(
        capped.text.contains("[truncated after 3 elements"),
        "{}",
        capped.text
    );
    let scoped = ok(&engine, "browser_snapshot", json!({"selector": "nav"})).await;
    assert!(
        scoped.text.contains("link \"Home\"") && !scoped.text.contains("Roles and names"),
        "{}",
        scoped.text
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn screenshots_viewport_full_page_element_and_jpeg() {
    let (_site, engine) = open("/").await;
    let shot = ok(&engine, "browser_screenshot", json!({})).await;
    let image = shot.image.expect("an image");
    assert_eq!(image.mime_type, "image/png");
    assert!(shot.data["width"].as_u64().unwrap() > 100, "{}", shot.data);
    let jpeg = ok(
        &engine,
        "browser_screenshot",
        json!({"format": "jpeg", "quality": 50, "full_page": true}),
    )
    .await;
    assert_eq!(jpeg.image.unwrap().mime_type, "image/jpeg");
    assert!(jpeg.data["height"].as_u64().unwrap() > 0, "{}", jpeg.data);
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let button = ref_of(&snap.text, "button \"Trusted click\"");
    let element = ok(&engine, "browser_screenshot", json!({"ref": button})).await;
    let (w, h) = (
        element.data["width"].as_u64().unwrap(),
        element.data["height"].as_u64().unwrap(),
    );
    assert!(w > 10 && w < 400 && h > 5 && h < 100, "element shot {w}x{h}");
    let e = call(&engine, "browser_screenshot", json!({"quality": 50}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    engine.shutdown().await;
}

#[tokio::test]
async fn refs_resolve_to_stable_backend_node_ids() {
    let (_site, engine) = open("/form.html").await;
    let first = ok(&engine, "browser_snapshot", json!({})).await;
    let email = ref_of(&first.text, "textbox \"Email\"");
    let send = ref_of(&first.text, "button \"Send\"");
    let node = engine.ref_node(&email, &common::budget()).await.unwrap();
    assert!(node > 0);
    assert_ne!(node, engine.ref_node(&send, &common::budget()).await.unwrap());
    let second = ok(&engine, "browser_snapshot", json!({})).await;
    assert_eq!(
        ref_of(&second.text, "textbox \"Email\""),
        email,
        "same element, same ref"
    );
    assert_eq!(engine.ref_node(&email, &common::budget()).await.unwrap(), node);
    engine.shutdown().await;
}

#[tokio::test]
async fn push_state_keeps_refs_and_a_scripted_navigation_is_reported() {
    let (site, engine) = open("/spa.html").await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let next = ref_of(&snap.text, "button \"Next route\"");
    let out = ok(&engine, "browser_click", json!({"ref": next})).await;
    assert_eq!(out.data["navigated"], false, "{}", out.text);
    assert_eq!(out.data["url"], site.url("/spa/two"));
    // Same document: the ref from before the route change still works.
    ok(&engine, "browser_click", json!({"ref": next})).await;

    ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "document.querySelector('button').onclick = () => { location.href = '/form.html' }"}),
    )
    .await;
    let out = ok(&engine, "browser_click", json!({"ref": next})).await;
    assert_eq!(out.data["navigated"], true, "{}", out.text);
    assert_eq!(out.data["url"], site.url("/form.html"));
    engine.shutdown().await;
}

#[tokio::test]
async fn a_covered_button_names_its_cover_and_a_disabled_one_says_so() {
    let (site, engine) = open("/covered.html").await;
    let e = call(&engine, "browser_click", json!({"selector": "#under"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ElementNotInteractable, "{e}");
    assert!(e.message.contains("id=\"cover\""), "{e}");
    assert!(e.message.contains("Cookie overlay"), "{e}");
    assert_eq!(
        title(&engine).await,
        "Covered",
        "the covered button must not have been clicked"
    );
    ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "document.getElementById('cover').remove()"}),
    )
    .await;
    ok(&engine, "browser_click", json!({"selector": "#under"})).await;
    assert_eq!(title(&engine).await, "clicked under");

    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/snapshot.html")}),
    )
    .await;
    let e = call(
        &engine,
        "browser_click",
        json!({"selector": "button[disabled]", "timeout_ms": 1000}),
    )
    .await
    .unwrap_err();
    // Waited for within the budget; at its end, the condition and the state.
    assert_eq!(e.code, ErrorCode::Timeout, "{e}");
    assert!(
        e.message.contains("stayed disabled") && e.message.contains("disabled attribute"),
        "{e}"
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn an_element_that_appears_late_is_waited_for() {
    let (_site, engine) = open("/").await;
    ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "const b = document.getElementById('trusted'); b.style.display = 'none'; setTimeout(() => b.style.display = '', 300)"}),
    )
    .await;
    ok(&engine, "browser_click", json!({"selector": "#trusted"})).await;
    assert_eq!(title(&engine).await, "clicked 1 trusted=true");
    engine.shutdown().await;
}

#[tokio::test]
async fn a_button_in_a_shadow_root_is_snapshotted_and_clicked() {
    let (_site, engine) = open("/shadow.html").await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    assert!(snap.text.contains("text: Inside the shadow"), "{}", snap.text);
    assert!(snap.text.contains("text: Slotted note"), "{}", snap.text);
    let button = ref_of(&snap.text, "button \"Shadow button\"");
    ok(&engine, "browser_click", json!({"ref": button})).await;
    assert_eq!(title(&engine).await, "shadow clicked true");
    engine.shutdown().await;
}

/// Issue 42, finding 1: the button's `mouseover` raises a fixed "Delete
/// account" overlay over it. The press is checked after the pointer
/// arrived: nothing is pressed, and the answer names the overlay. A hover
/// says what is under the pointer now.
#[tokio::test]
async fn a_button_whose_hover_raises_an_overlay_is_not_pressed_and_the_overlay_is_named() {
    let (_site, engine) = open("/hover-trap.html").await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let save = ref_of(&snap.text, "button \"Save draft\"");
    let e = call(&engine, "browser_click", json!({"ref": save}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ElementNotInteractable, "{e}");
    assert!(e.message.contains("button \"Delete account\""), "{e}");
    assert_eq!(title(&engine).await, "Hover trap", "nothing was pressed");
    // `force` skips the waits, never the check of what is at the point.
    let e = call(&engine, "browser_click", json!({"ref": save, "force": true}))
        .await
        .unwrap_err();
    assert!(e.message.contains("button \"Delete account\""), "{e}");
    assert_eq!(title(&engine).await, "Hover trap", "nothing was pressed");
    let hovered = ok(&engine, "browser_hover", json!({"ref": save})).await;
    assert!(
        hovered.text.contains("button \"Delete account\""),
        "{}",
        hovered.text
    );
    engine.shutdown().await;
}

/// Issue 42: a click's answer says what the page's record shows. A press
/// a capture handler above the button stopped is not called a click; a
/// click on a button that does nothing says nothing changed.
#[tokio::test]
async fn a_clicks_answer_claims_only_what_the_page_received() {
    let (_site, engine) = open("/hover-trap.html").await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let guarded = ref_of(&snap.text, "button \"Guarded\"");
    let out = ok(&engine, "browser_click", json!({"ref": guarded})).await;
    assert!(
        out.text.contains("stopped the press before it reached it"),
        "{}",
        out.text
    );
    assert_eq!(out.data["reached"], false, "{}", out.data);
    let idle = ref_of(&snap.text, "button \"Does nothing\"");
    let out = ok(&engine, "browser_click", json!({"ref": idle})).await;
    assert!(out.text.contains("nothing on the page changed"), "{}", out.text);
    assert_eq!(out.data["changed"], false, "{}", out.data);
    engine.shutdown().await;
}

/// Issue 42: the focus checked before typing. Name's focus handler hands
/// the focus to Search: nothing is typed, and the answer names Search.
#[tokio::test]
async fn typing_into_a_field_whose_focus_moves_away_types_nothing_and_names_where_it_went() {
    let (_site, engine) = open("/hover-trap.html").await;
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    let name = ref_of(&snap.text, "textbox \"Name\"");
    let e = call(&engine, "browser_type", json!({"ref": name, "text": "Ada"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ElementNotInteractable, "{e}");
    assert!(e.message.contains("textbox \"Search\""), "{e}");
    let typed = ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "document.getElementById('name').value + '|' + document.getElementById('search').value"}),
    )
    .await;
    assert_eq!(typed.data["value"], "|", "nothing was typed anywhere");
    engine.shutdown().await;
}
