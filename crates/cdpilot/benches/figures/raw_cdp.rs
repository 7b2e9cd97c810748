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

    let small = raw_clicks(s, (40.0, 120.0), 30).await;
    println!("  mouse move + press + release:             {}", ms(small));
    // The same on the 5,000-control page (issue 46): the browser's own cost
    // of a click there, to hold cdpilot's click on that page against.
    page.load(site.url("/controls/5000")).await;
    let centre = "(() => { const b = [...document.querySelectorAll('button')].find(b => b.textContent.trim() === 'Buy 2500'); b.scrollIntoView({block: 'center'}); const r = b.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()";
    let at = s.call(evaluate(centre), soon()).await.unwrap();
    let at = at.result.value.unwrap_or_default();
    let point = (at[0].as_f64().unwrap_or(0.0), at[1].as_f64().unwrap_or(0.0));
    let big = raw_clicks(s, point, 15).await;
    println!(
        "  the same on the 5,000-control page:       {} ({:.2}x the small page)",
        ms(big),
        big.as_secs_f64() / small.as_secs_f64()
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

/// The median of `times` raw clicks at `(x, y)`: move, press, release,
/// each awaited (as Puppeteer's `page.mouse.click` does).
async fn raw_clicks(s: &cdp::Session, (x, y): (f64, f64), times: usize) -> std::time::Duration {
    let mut clicks = Vec::new();
    for _ in 0..times {
        let began = Instant::now();
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            let pressed = kind == "mousePressed";
            s.call(
                input::DispatchMouseEvent {
                    kind: kind.into(),
                    x,
                    y,
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
    median(clicks)
}
