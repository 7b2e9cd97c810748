//! The audit's file failing (issue 9): a write that fails is counted and
//! logged, and the call it describes still succeeds.

mod common;

use common::{engine_with, ok_in};
use serde_json::json;

/// Issue 9: a failed audit write must not fail the call (here the file is
/// `/dev/full`, which opens but refuses every write).
#[tokio::test]
async fn a_failed_audit_write_is_counted_and_the_call_still_succeeds() {
    let site = testkit::TestSite::start().await;
    let engine = engine_with(|c| c.audit.file = "/dev/full".into());
    ok_in(
        engine.session(),
        "browser_navigate",
        json!({"url": site.url("/index.html")}),
    )
    .await;
    assert_eq!(engine.metrics().to_json()["audit_write_errors"], 1);
    let records = engine.audit().records();
    assert_eq!(records.len(), 1, "kept in memory all the same");
    assert_eq!(records[0].outcome, "ok");
}
