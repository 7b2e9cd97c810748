//! Reading real pages well, each cause on a small fixture in real Chromium:
//! the content chosen by scoring (headline and byline kept; comments and
//! teaser links dropped), row header cells, empty links and `data:` images,
//! tracking parameters, `links: false`, the Markdown cached per document,
//! an empty result that says why, a hidden body read from the DOM, a
//! hidden or header password field that is no wall, and snapshot sections
//! that belong to the current document.

mod common;

use common::{ok, open};
use serde_json::json;

#[tokio::test]
async fn the_article_is_chosen_with_its_headline_and_without_comments_or_teasers() {
    let (_site, engine) = open("/reading.html").await;
    let out = ok(&engine, "browser_extract", json!({})).await;
    let md = out.data["content"].as_str().unwrap();
    for wanted in [
        "# Harbour lights return",
        "By Ada Lovelace",
        "harbour lights came back",
        "switched on each evening",
    ] {
        assert!(md.contains(wanted), "missing {wanted:?} in:\n{md}");
    }
    for unwanted in ["Commenter one", "Teaser one", "Site logo", "Copyright", "Log In"] {
        assert!(!md.contains(unwanted), "{unwanted:?} kept in:\n{md}");
    }
    engine.shutdown().await;
}

#[tokio::test]
async fn row_header_cells_stay_in_their_row() {
    let (_site, engine) = open("/reading.html").await;
    let out = ok(&engine, "browser_extract", json!({})).await;
    let md = out.data["content"].as_str().unwrap();
    let row = md
        .lines()
        .find(|l| l.contains("North"))
        .unwrap_or_else(|| panic!("no North row in:\n{md}"));
    let cells: Vec<_> = row.trim().trim_matches('|').split('|').map(str::trim).collect();
    assert_eq!(cells.len(), 3, "{row}");
    assert!(
        cells[0].contains("North") && cells[1] == "1901" && cells[2] == "12 miles",
        "{row}"
    );
    assert!(md.contains("Tower") && md.contains("Range"), "{md}");
    engine.shutdown().await;
}

#[tokio::test]
async fn urls_cost_only_what_they_are_worth() {
    let (_site, engine) = open("/reading.html").await;
    let out = ok(&engine, "browser_extract", json!({})).await;
    let md = out.data["content"].as_str().unwrap();
    assert!(!md.contains("data:image"), "a data: URI was copied:\n{md}");
    assert!(
        md.contains("A lamp at dusk"),
        "the image's alt text is the image:\n{md}"
    );
    assert!(!md.contains("[]("), "an empty link was kept:\n{md}");
    assert!(!md.contains("empty.example"), "{md}");
    assert!(
        md.contains("[follow-up report](https://news.example/story?id=7)"),
        "tracking parameters were not cut:\n{md}"
    );
    let bare = ok(&engine, "browser_extract", json!({"links": false})).await;
    let bare_md = bare.data["content"].as_str().unwrap();
    assert!(bare_md.contains("follow-up report"), "{bare_md}");
    assert!(
        !bare_md.contains("](") && !bare_md.contains("http"),
        "targets kept:\n{bare_md}"
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn later_pages_come_from_the_cache_until_the_document_changes() {
    let (_site, engine) = open("/reading.html").await;
    let first = ok(&engine, "browser_extract", json!({"max_chars": 100})).await;
    let total = first.data["total_chars"].as_u64().unwrap();
    assert!(first.data["from_cache"].is_null(), "{}", first.data);
    let second = ok(
        &engine,
        "browser_extract",
        json!({"start_char": 100, "max_chars": 100}),
    )
    .await;
    assert_eq!(second.data["from_cache"], true, "{}", second.data);
    assert_eq!(second.data["total_chars"], total);
    // Change the page behind the reader's back: the cached Markdown must not
    // be served for the changed document.
    ok(
        &engine,
        "browser_evaluate",
        json!({"expression": "document.querySelector('#story').insertAdjacentHTML('beforeend', '<p>A late paragraph added by a script after the first read of the page.</p>')"}),
    )
    .await;
    let after = ok(
        &engine,
        "browser_extract",
        json!({"start_char": 100, "max_chars": 100000}),
    )
    .await;
    assert!(after.data["from_cache"].is_null(), "{}", after.data);
    assert!(after.data["total_chars"].as_u64().unwrap() > total);
    assert!(after.data["content"]
        .as_str()
        .unwrap()
        .contains("A late paragraph"));
    // Unchanged since: the same whole, in slices that join up.
    let again = ok(&engine, "browser_extract", json!({"max_chars": 100})).await;
    let rest = ok(
        &engine,
        "browser_extract",
        json!({"start_char": 100, "max_chars": 100000}),
    )
    .await;
    assert_eq!(rest.data["from_cache"], true, "{}", rest.data);
    assert_eq!(
        again.data["total_chars"], after.data["total_chars"],
        "the cache must hold the changed document's Markdown"
    );
    let joined = format!(
        "{}{}",
        again.data["content"].as_str().unwrap(),
        rest.data["content"].as_str().unwrap()
    );
    assert_eq!(
        joined.chars().count() as u64,
        after.data["total_chars"].as_u64().unwrap()
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn an_empty_result_says_why_and_a_hidden_body_is_read_from_the_dom() {
    let (site, engine) = open("/blank-article.html").await;
    let out = ok(&engine, "browser_extract", json!({})).await;
    assert_eq!(out.data["empty"], true, "{}", out.text);
    assert!(
        out.text.contains("browser_wait") && out.text.contains("browser_screenshot"),
        "{}",
        out.text
    );
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/hidden-body.html")}),
    )
    .await;
    let hidden = ok(&engine, "browser_extract", json!({})).await;
    assert_eq!(hidden.data["fallback"], "dom_text", "{}", hidden.text);
    assert!(
        hidden.data["content"]
            .as_str()
            .unwrap()
            .contains("still has this paragraph"),
        "{}",
        hidden.text
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn hidden_and_header_password_fields_beside_an_article_are_no_wall() {
    let (_site, engine) = open("/reading.html").await;
    let out = ok(&engine, "browser_extract", json!({})).await;
    assert!(out.data["obstacle"].is_null(), "{}", out.data["obstacle"]);
    let snap = ok(&engine, "browser_snapshot", json!({})).await;
    assert!(snap.data["obstacle"].is_null(), "{}", snap.data["obstacle"]);
    engine.shutdown().await;
}

#[tokio::test]
async fn snapshot_sections_belong_to_the_current_document() {
    let (site, engine) = open("/console-error.html").await;
    let first = ok(&engine, "browser_snapshot", json!({})).await;
    assert!(first.text.contains("error from the first page"), "{}", first.text);
    ok(
        &engine,
        "browser_navigate",
        json!({"url": site.url("/article.html")}),
    )
    .await;
    let second = ok(&engine, "browser_snapshot", json!({})).await;
    assert!(
        !second.text.contains("error from the first page"),
        "{}",
        second.text
    );
    assert!(second.data["console_errors"].is_null(), "{}", second.data);
    assert_eq!(second.data["older_console_errors"], 1, "{}", second.data);
    assert!(second.text.contains("older_console_errors: 1"), "{}", second.text);
    let console = ok(&engine, "browser_console", json!({})).await;
    assert!(
        console.text.contains("error from the first page"),
        "{}",
        console.text
    );
    engine.shutdown().await;
}
