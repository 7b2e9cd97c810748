//! The reading corpus (real saved pages with reference extractions, see
//! `testkit::corpus`): every page served from loopback with external hosts
//! blocked, then scored. Ignored by default (it takes minutes and needs the
//! corpus on this machine):
//!
//! ```sh
//! CDPILOT_CORPUS=path/to/corpus cargo test -p cdpilot-engine --test corpus -- --ignored --nocapture
//! ```
//!
//! Prints, over all pages: browser_extract's token F1 against the reference
//! (median and 10th percentile; also with `links: false`), the characters
//! it spends on link and image
//! targets, the snapshot's word coverage (share of the reference's words in
//! `browser_snapshot`'s text) and size, the share of snapshot characters in
//! the console_errors and recent_dialogs sections, and every obstacle
//! reported (ordinary articles should have none). Per-page rows go to
//! `$CARGO_TARGET_TMPDIR/corpus.tsv`.

mod common;

use std::fmt::Write as _;
use std::time::Instant;

use common::{call, engine_with};
use serde_json::json;
use testkit::corpus::{self, quantile, score, CorpusSite};

#[derive(Default)]
struct Row {
    f1: f64,
    f1_no_links: f64,
    precision: f64,
    recall: f64,
    extract_chars: usize,
    target_chars: usize,
    coverage: f64,
    snapshot_chars: usize,
    section_chars: usize,
    obstacle: String,
    extract_ms: u128,
    next_page_ms: u128,
}

#[tokio::test]
#[ignore = "needs the corpus (CDPILOT_CORPUS) and takes minutes"]
async fn reading_the_corpus() {
    let Some(dir) = corpus::dir() else {
        panic!("no corpus: set CDPILOT_CORPUS to a directory with manifest.json and pages/");
    };
    let only = std::env::var("CORPUS_ONLY").ok();
    let pages: Vec<_> = corpus::pages(&dir)
        .into_iter()
        .filter(|p| only.as_deref().is_none_or(|o| p.name.contains(o)))
        .collect();
    let site = CorpusSite::start(&dir).await;
    let engine = engine_with(|c| {
        c.browser
            .args
            .extend(corpus::BLOCK_EXTERNAL.iter().map(|s| s.to_string()));
    });
    let targets = regex::Regex::new(r"\]\(([^)]*)\)").unwrap();
    let mut rows = Vec::new();
    let mut tsv = String::from(
        "page\tlang\tf1\tf1_no_links\tprecision\trecall\textract_chars\ttarget_chars\tcoverage\tsnapshot_chars\tsection_chars\tobstacle\textract_ms\tnext_page_ms\n",
    );
    for page in &pages {
        let mut row = Row::default();
        let nav = call(
            &engine,
            "browser_navigate",
            json!({"url": site.url(&page.name), "wait_until": "domcontentloaded", "timeout_ms": 15000}),
        )
        .await;
        if let Err(e) = &nav {
            println!("{}: navigate failed: {e}", page.name);
        }
        let mut obstacles = Vec::new();
        if let Ok(o) = &nav {
            obstacles.push(o.data["obstacle"].clone());
        }
        let started = Instant::now();
        match call(&engine, "browser_extract", json!({"max_chars": 1_000_000})).await {
            Ok(out) => {
                row.extract_ms = started.elapsed().as_millis();
                let md = out.data["content"].as_str().unwrap_or_default();
                (row.precision, row.recall, row.f1) = score(md, &page.reference);
                row.extract_chars = md.chars().count();
                row.target_chars = targets.captures_iter(md).map(|c| c[1].chars().count()).sum();
                obstacles.push(out.data["obstacle"].clone());
            }
            Err(e) => println!("{}: extract failed: {e}", page.name),
        }
        let bare = json!({"max_chars": 1_000_000, "links": false});
        if let Ok(out) = call(&engine, "browser_extract", bare).await {
            let md = out.data["content"].as_str().unwrap_or_default();
            row.f1_no_links = score(md, &page.reference).2;
        }
        let started = Instant::now();
        if call(
            &engine,
            "browser_extract",
            json!({"start_char": 2000, "max_chars": 2000}),
        )
        .await
        .is_ok()
        {
            row.next_page_ms = started.elapsed().as_millis();
        }
        match call(&engine, "browser_snapshot", json!({})).await {
            Ok(out) => {
                row.snapshot_chars = out.text.chars().count();
                row.coverage = score(&out.text, &page.reference).1;
                row.section_chars = ["\n\nrecent_dialogs:", "\n\nconsole_errors:"]
                    .iter()
                    .filter_map(|h| out.text.find(h).map(|at| section_len(&out.text[at..])))
                    .sum();
                obstacles.push(out.data["obstacle"].clone());
            }
            Err(e) => println!("{}: snapshot failed: {e}", page.name),
        }
        row.obstacle = obstacles
            .iter()
            .filter(|o| !o.is_null())
            .map(|o| {
                format!(
                    "{}/{}",
                    o["type"].as_str().unwrap_or("?"),
                    o["confidence"].as_str().unwrap_or("?")
                )
            })
            .next()
            .unwrap_or_default();
        writeln!(
            tsv,
            "{}\t{}\t{:.3}\t{:.3}\t{:.3}\t{:.3}\t{}\t{}\t{:.3}\t{}\t{}\t{}\t{}\t{}",
            page.name,
            page.lang,
            row.f1,
            row.f1_no_links,
            row.precision,
            row.recall,
            row.extract_chars,
            row.target_chars,
            row.coverage,
            row.snapshot_chars,
            row.section_chars,
            row.obstacle,
            row.extract_ms,
            row.next_page_ms
        )
        .unwrap();
        rows.push(row);
    }
    engine.shutdown().await;
    let tsv_path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("corpus.tsv");
    std::fs::write(&tsv_path, &tsv).unwrap();

    let of = |f: fn(&Row) -> f64| rows.iter().map(f).collect::<Vec<_>>();
    let f1 = of(|r| r.f1);
    let coverage = of(|r| r.coverage);
    let sum = |f: fn(&Row) -> usize| rows.iter().map(f).sum::<usize>();
    let obstacles: Vec<_> = pages
        .iter()
        .zip(&rows)
        .filter(|(_, r)| !r.obstacle.is_empty())
        .map(|(p, r)| format!("{} {}", p.name, r.obstacle))
        .collect();
    println!("corpus: {} pages ({})", rows.len(), dir.display());
    println!(
        "extract F1: median {:.3}, p10 {:.3}; below 0.8: {} pages",
        quantile(&f1, 0.5),
        quantile(&f1, 0.1),
        f1.iter().filter(|f| **f < 0.8).count()
    );
    let bare = of(|r| r.f1_no_links);
    println!(
        "extract F1 with links: false: median {:.3}, p10 {:.3}",
        quantile(&bare, 0.5),
        quantile(&bare, 0.1)
    );
    println!(
        "extract precision median {:.3}, recall median {:.3}",
        quantile(&of(|r| r.precision), 0.5),
        quantile(&of(|r| r.recall), 0.5)
    );
    println!(
        "extract chars: {} total, {:.1}% in link/image targets; median {} ms a whole page, {} ms a later page",
        sum(|r| r.extract_chars),
        100.0 * sum(|r| r.target_chars) as f64 / sum(|r| r.extract_chars).max(1) as f64,
        quantile(&of(|r| r.extract_ms as f64), 0.5),
        quantile(&of(|r| r.next_page_ms as f64), 0.5),
    );
    println!(
        "snapshot word coverage: median {:.3}, p10 {:.3}; size median {} chars, total {}; recent_dialogs + console_errors {:.1}% of it",
        quantile(&coverage, 0.5),
        quantile(&coverage, 0.1),
        quantile(&of(|r| r.snapshot_chars as f64), 0.5),
        sum(|r| r.snapshot_chars),
        100.0 * sum(|r| r.section_chars) as f64 / sum(|r| r.snapshot_chars).max(1) as f64,
    );
    println!("obstacles reported: {} {:?}", obstacles.len(), obstacles);
    println!("per page: {}", tsv_path.display());
    assert!(!rows.is_empty());
}

/// The length of a section that starts `text`: up to the next blank line.
fn section_len(text: &str) -> usize {
    let body = &text[2..];
    body.find("\n\n").map_or(body.len(), |end| end) + 2
}
