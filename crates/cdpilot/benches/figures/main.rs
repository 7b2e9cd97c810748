//! The figures cdpilot competes on, measured end to end through MCP stdio
//! on the optimized binary, against real headless Chromium and pages served
//! on loopback. Run: `cargo bench -p cdpilot --bench figures`.
//!
//! Not a test: it asserts nothing about speed, it prints medians.
//!
//! `-- breakdown` prints instead where the milliseconds of a snapshot, a
//! click and the first navigate (the browser's start) go, step by step, from
//! the server's `CDPILOT_TIMINGS` file. `CDPILOT_BENCH_BIN=<path>` measures
//! another build of the binary (a base to compare with, run back to back).
//! `-- screenshot` prints only the viewport screenshot: through MCP, and
//! raw `Page.captureScreenshot` with and without Chrome's `optimizeForSpeed`.
//! `-- startup` prints only the start figures (the first navigate beside
//! Chromium's own start with a bare CDP client).
//! `-- compare` prints this build beside another (`CDPILOT_BENCH_BASE`),
//! figure by figure, flagging a change past +5% (`scripts/bench-compare`).
//! `-- routes` prints only what routes cost a page; `-- trace` only what
//! a trace costs a call.
//!
//! One module a figure; `common` holds what they share.

mod breakdown;
mod common;
mod compare;
mod forms;
mod memory;
mod pages;
mod raw_cdp;
#[path = "../shared/readings.rs"]
#[allow(dead_code)]
mod readings;
mod routes;
mod screenshot;
mod startup;
mod trace;
mod url_rules;

use testkit::TestSite;

#[tokio::main]
async fn main() {
    let site = TestSite::start().await;
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "breakdown") {
        let parts: Vec<&str> = args[at + 1..]
            .iter()
            .map(String::as_str)
            .filter(|a| !a.starts_with('-'))
            .collect();
        breakdown::figures(&site, &parts).await;
        return;
    }
    if args.iter().any(|a| a == "startup") {
        startup::figures(&site).await;
        return;
    }
    if args.iter().any(|a| a == "compare") {
        compare::figures(&site).await;
        return;
    }
    if args.iter().any(|a| a == "routes") {
        routes::figures(&site).await;
        routes::corpus_figures().await;
        return;
    }
    if args.iter().any(|a| a == "trace") {
        trace::figures(&site).await;
        return;
    }
    if args.iter().any(|a| a == "screenshot") {
        screenshot::figures(&site).await;
        return;
    }
    println!("cdpilot figures (medians; MCP stdio, release build, headless Chromium)\n");
    startup::figures(&site).await;
    pages::figures(&site).await;
    forms::figures(&site).await;
    url_rules::figures(&site).await;
    routes::figures(&site).await;
    routes::corpus_figures().await;
    trace::figures(&site).await;
    raw_cdp::figures(&site).await;
}
