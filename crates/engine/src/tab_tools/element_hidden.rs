//! The in-page waits against a window that draws no frames, as when a tab
//! is hidden while an action runs (the input tools bring a hidden tab to
//! the front before they start: `actions::front`).

use std::sync::Arc;
use std::time::Duration;

use cdp::protocol::target;

use crate::tab::Tab;
use crate::Budget;

/// An element that is animating is measured frame by frame; in a
/// hidden tab no frame comes, and the wait used to last the whole
/// budget. It answers once no frame came for a second, within a 20 s
/// budget.
#[tokio::test]
async fn an_animated_element_in_a_hidden_tab_is_actionable_within_the_budget() {
    let (process, conn) = crate::test_browser::launch().await;
    let budget = Budget::with_timeout(Duration::from_secs(20));
    let page = "data:text/html,<style>@keyframes glow { to { color: red } }</style>\
<button id=b style='animation: glow 1s infinite alternate'>Glow</button>";
    let open = |url: &str| target::CreateTarget {
        url: url.into(),
        browser_context_id: None,
    };
    let created = budget
        .cdp("opening a tab", &conn.browser(), open(page))
        .await
        .unwrap();
    let tab = Tab::attach(&conn, &created.target_id, Arc::default(), &budget)
        .await
        .unwrap();
    // A second tab of the window goes in front of the first.
    budget
        .cdp("opening a tab", &conn.browser(), open("about:blank"))
        .await
        .unwrap();
    let state = tab
        .evaluate_in_world(&budget, "reading", "document.visibilityState", true)
        .await
        .unwrap();
    assert_eq!(state.value, Some(serde_json::json!("hidden")));

    // `createTarget` answers before the page's document is in: wait
    // for the button (a condition, polled within the budget).
    loop {
        let found = tab
            .evaluate_in_world(&budget, "reading", "!!document.getElementById('b')", true)
            .await;
        if matches!(found, Ok(ref r) if r.value == Some(serde_json::json!(true))) {
            break;
        }
        assert!(
            !budget.remaining().is_zero(),
            "the test page never showed its button"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let element = super::by_selector(&tab, "#b", &budget).await.unwrap();
    let point = element.actionable_point(&tab, &budget).await;
    assert!(point.is_ok(), "{:?}", point.err().map(|e| e.to_string()));
    conn.close();
    process.shutdown(Duration::from_secs(5)).await;
}
