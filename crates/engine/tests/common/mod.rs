//! Shared set-up for the engine's real-browser tests.
#![allow(dead_code)]

use std::time::Duration;

use engine::{ActionError, ActionOutput, Budget, Config, Engine, ToolCall};
use serde_json::Value;

/// An engine on a fresh headless Chromium (launched on first use).
pub fn engine() -> Engine {
    engine_with(|_| {})
}

/// The test site, and an engine whose tab has opened `path` on origin A:
/// the start of most tests.
pub async fn open(path: &str) -> (testkit::TestSite, Engine) {
    let site = testkit::TestSite::start().await;
    let engine = engine();
    ok(
        &engine,
        "browser_navigate",
        serde_json::json!({"url": site.url(path)}),
    )
    .await;
    (site, engine)
}

/// Like [`open`], with the engine's configuration adjusted first.
pub async fn open_with(path: &str, adjust: impl FnOnce(&mut Config)) -> (testkit::TestSite, Engine) {
    let site = testkit::TestSite::start().await;
    let engine = engine_with(adjust);
    ok(
        &engine,
        "browser_navigate",
        serde_json::json!({"url": site.url(path)}),
    )
    .await;
    (site, engine)
}

/// Like [`engine`], with the configuration adjusted first.
pub fn engine_with(adjust: impl FnOnce(&mut Config)) -> Engine {
    let mut config = Config::default();
    // Downloads land in a scratch directory, not in the source tree.
    config.files.output_dir = std::env::temp_dir()
        .join(format!("cdpilot-test-output-{}", std::process::id()))
        .display()
        .to_string();
    config.browser.executable = testkit::chromium::executable().display().to_string();
    config.browser.args = testkit::chromium::TEST_FLAGS
        .iter()
        .map(|s| s.to_string())
        .collect();
    // Last, so a test's own flags (the corpus's external-host block) are
    // added to the test flags rather than replaced by them.
    adjust(&mut config);
    Engine::new(config)
}

/// Runs a call through the one door, exactly as a transport would.
pub async fn call(engine: &Engine, tool: &str, args: Value) -> Result<ActionOutput, ActionError> {
    engine.call(ToolCall::new(tool, args)).await
}

pub async fn ok(engine: &Engine, tool: &str, args: Value) -> ActionOutput {
    call(engine, tool, args.clone())
        .await
        .unwrap_or_else(|e| panic!("{tool} {args} failed: {e}"))
}

/// The ref printed on the snapshot line that contains `needle`.
#[allow(unused_imports)] // not every test binary reads refs
pub use testkit::snapshot::ref_of;

/// Evaluates a page expression through the raw CDP session of the test's
/// own budget-free path: a snapshot of `selector`'s text is enough for most
/// checks, so this reads the title (pages under test write results there).
pub async fn title(engine: &Engine) -> String {
    let out = ok(engine, "browser_snapshot", serde_json::json!({"max_elements": 1})).await;
    out.data["title"].as_str().unwrap_or_default().to_owned()
}

pub fn budget() -> Budget {
    Budget::with_timeout(Duration::from_secs(20))
}

/// Runs a call in `session` exactly as a transport would (the one dispatch).
pub async fn call_in(
    session: &engine::Session,
    tool: &str,
    args: Value,
) -> Result<ActionOutput, ActionError> {
    engine::dispatch::call(session, tool, args, Default::default()).await
}

pub async fn ok_in(session: &engine::Session, tool: &str, args: Value) -> ActionOutput {
    call_in(session, tool, args.clone())
        .await
        .unwrap_or_else(|e| panic!("{tool} {args} failed: {e}"))
}

/// An engine whose one rule denies `pattern` (everything else allowed).
pub fn denying(pattern: &str) -> Engine {
    let pattern = pattern.to_owned();
    engine_with(move |c| {
        c.policy.rules.push(engine::config::Rule {
            pattern,
            action: "deny".into(),
            origin: None,
        })
    })
}

/// The URL of each request the policy or the egress gate reported
/// blocked, from the result of the call that caused it or of the calls
/// after it (a navigation a click starts may be blocked just after the
/// click returns), for up to 10 s.
pub async fn blocked_soon(engine: &Engine, first: &ActionOutput) -> Vec<String> {
    let urls = |out: &ActionOutput| -> Vec<String> {
        out.data["blocked"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b["url"].as_str().map(str::to_owned))
            .collect()
    };
    let mut found = urls(first);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while found.is_empty() && std::time::Instant::now() < deadline {
        let out = ok(engine, "browser_evaluate", serde_json::json!({"expression": "1"})).await;
        found = urls(&out);
    }
    found
}
