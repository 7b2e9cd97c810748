//! The same operations over raw CDP (our `cdp` crate, no engine, no MCP) on
//! a separately launched Chromium: the floor cdpilot's overhead sits on.

use std::time::Instant;

use cdp::protocol::{input, runtime};
use testkit::TestSite;

use crate::common::*;

pub async fn figures(site: &TestSite) {
    let page = RawPage::open(&testkit::chromium::launch_options(cdp::launch::Debugging::Pipe)).await;
    let s = &page.session;
    let evaluate = |expression: &str| runtime::Evaluate {
        expression: expression.into(),
        context_id: None,
        return_by_value: true,
        await_promise: false,
        user_gesture: false,
        repl_mode: false,
    };

    println!("\nraw CDP floor (no engine, no MCP)");
    page.load(site.url("/")).await;
    let mut evals = Vec::new();
    for _ in 0..30 {
        let began = Instant::now();
        s.call(evaluate("1+1"), soon()).await.unwrap();
        evals.push(began.elapsed());
    }
    println!(
        "  Runtime.evaluate 1+1 on the page session: {}",
        ms(median(evals))
    );

    let mut clicks = Vec::new();
    for _ in 0..30 {
        let began = Instant::now();
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            let pressed = kind == "mousePressed";
            s.call(
                input::DispatchMouseEvent {
                    kind: kind.into(),
                    x: 40.0,
                    y: 120.0,
                    button: if kind == "mouseMoved" {
                        "none".into()
                    } else {
                        "left".into()
                    },
                    buttons: if pressed { 1 } else { 0 },
                    click_count: if kind == "mouseMoved" { 0 } else { 1 },
                    modifiers: 0,
                },
                soon(),
            )
            .await
            .unwrap();
        }
        clicks.push(began.elapsed());
    }
    println!(
        "  mouse move + press + release:             {}",
        ms(median(clicks))
    );

    println!("  bare in-page walk (TreeWalker over every element, count only):");
    for count in [1_000usize, 5_000, 10_000, 20_000] {
        page.load(site.url(&format!("/controls/{count}"))).await;
        let walk = "(() => { const w = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT); let n = 0; while (w.nextNode()) n++; return n; })()";
        let mut times = Vec::new();
        for _ in 0..7 {
            let began = Instant::now();
            s.call(evaluate(walk), soon()).await.unwrap();
            times.push(began.elapsed());
        }
        println!("    {count:>6} controls: {}", ms(median(times)));
    }
    page.close().await;
}
