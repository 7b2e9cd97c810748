//! browser_extract on a real page: main content only, as Markdown, and
//! pages that concatenate to exactly the whole.

mod common;

use common::{call, ok, open};
use engine::ErrorCode;
use serde_json::json;

#[tokio::test]
async fn main_content_as_markdown_without_chrome_or_hidden_parts() {
    let (_site, engine) = open("/article.html").await;
    let out = ok(&engine, "browser_extract", json!({})).await;
    let md = out.data["content"].as_str().unwrap();
    for wanted in [
        "# The pilot's log",
        "[link](https://example.com/)",
        "**bold**",
        "## Details",
        "Alpha",
        "```rust",
        "Closing paragraph",
    ] {
        assert!(md.contains(wanted), "missing {wanted:?} in:\n{md}");
    }
    for unwanted in [
        "Menu link",
        "Site logo",
        "Copyright",
        "Related stories",
        "cookies",
        "Hidden paragraph",
        "Undisplayed",
    ] {
        assert!(!md.contains(unwanted), "{unwanted:?} kept in:\n{md}");
    }
    assert_eq!(out.data["input_truncated"], false);
    assert!(out.data["next_start_char"].is_null());
    let scoped = ok(&engine, "browser_extract", json!({"selector": "ul"})).await;
    assert!(scoped.data["content"].as_str().unwrap().contains("Beta"));
    let e = call(&engine, "browser_extract", json!({"selector": "#nope"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ElementNotFound);
    engine.shutdown().await;
}

#[tokio::test]
async fn pages_concatenate_to_exactly_the_whole() {
    let (_site, engine) = open("/article.html").await;
    let whole = ok(&engine, "browser_extract", json!({})).await;
    let whole_text = whole.data["content"].as_str().unwrap().to_owned();
    let total = whole.data["total_chars"].as_u64().unwrap();
    assert_eq!(total as usize, whole_text.chars().count());
    let mut joined = String::new();
    let mut start = 0u64;
    let mut pages = 0;
    loop {
        let page = ok(
            &engine,
            "browser_extract",
            json!({"start_char": start, "max_chars": 40}),
        )
        .await;
        joined += page.data["content"].as_str().unwrap();
        pages += 1;
        match page.data["next_start_char"].as_u64() {
            Some(next) => {
                assert!(
                    page.text.contains(&format!("start_char: {next}")),
                    "{}",
                    page.text
                );
                start = next;
            }
            None => break,
        }
    }
    assert!(pages > 3);
    assert_eq!(joined, whole_text);
    engine.shutdown().await;
}

#[tokio::test]
async fn html_over_two_million_characters_is_cut_before_conversion() {
    // Buttons and fields are not read: 120,000 controls leave over
    // 2,000,000 characters of table and links. The page's first layout
    // alone takes seconds on a loaded 2-core machine (the navigate's
    // obstacle probe waits behind it): what is tested is extract's cut, so
    // both calls get a budget of their own rather than the default 25 s.
    let site = testkit::TestSite::start().await;
    let engine = common::engine();
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/controls/120000"), "timeout_ms": 90_000}),
    )
    .await;
    let out = ok(
        &engine,
        "browser_extract",
        json!({"selector": "body", "max_chars": 100, "timeout_ms": 90_000}),
    )
    .await;
    assert_eq!(out.data["input_truncated"], true, "{}", out.text);
    assert!(out.text.contains("was cut before conversion"));
    assert!(out.data["total_chars"].as_u64().unwrap() > 100_000);
    engine.shutdown().await;
}
