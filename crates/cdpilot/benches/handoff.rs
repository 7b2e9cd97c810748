//! The hand-off page's latency (issue 26): a click on the page → the next
//! frame shown there. An agent (a WebSocket client of `cdpilot serve`)
//! hands its tab (`handoff-latency.html`: a box that changes colour on each
//! click, nothing else repaints) to a person, a second headless Chromium
//! that opens the link and clicks the box through the live element with
//! trusted input. Timed in the person's page: from its `mouseup` (after
//! the page sent the press and the release) to the `load` of the next
//! frame (decoded and shown). Prints the median, p90, min and max of
//! `CDPILOT_HANDOFF_ROUNDS` (default 30) clicks and the load average.
//!
//! Run: `cargo bench -p cdpilot --bench handoff` (release), or with
//! `--profile dev`. Not a test: asserts nothing. Timings on a loaded
//! machine are noisy: say the load with the figure.

#[path = "../tests/support/serve.rs"]
#[allow(dead_code)]
mod serve;

use std::sync::Arc;
use std::time::Duration;

use engine::{Config, Engine};
use serde_json::{json, Value};
use serve::Serve;
use testkit::TestSite;

/// The person's browser (the engine as a library; `browser_cdp` fenced to
/// its tab for trusted input).
struct Person {
    engine: Arc<Engine>,
}

impl Person {
    async fn ok(&self, tool: &str, arguments: Value) -> engine::ActionOutput {
        match engine::dispatch::call(self.engine.session(), tool, arguments.clone(), Default::default()).await
        {
            Ok(output) => output,
            Err(e) => panic!("the person's {tool} {arguments} failed: {}", e.message),
        }
    }

    async fn value(&self, expression: &str) -> Value {
        self.ok("browser_evaluate", json!({"expression": expression}))
            .await
            .data["value"]
            .clone()
    }

    async fn click_at(&self, (x, y): (f64, f64)) {
        for (kind, button, count) in [
            ("mouseMoved", "none", 0),
            ("mousePressed", "left", 1),
            ("mouseReleased", "left", 1),
        ] {
            self.ok(
                "browser_cdp",
                json!({"method": "Input.dispatchMouseEvent", "params": {
                    "type": kind, "x": x, "y": y, "button": button, "clickCount": count,
                }}),
            )
            .await;
        }
    }
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

async fn run() {
    let rounds: usize = std::env::var("CDPILOT_HANDOFF_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(30);
    let site = TestSite::start().await;
    let serve = Serve::start("", &[]).await;
    let mut agent = serve.ws().await;
    agent.open(&serve.token).await;
    let opened = agent
        .call(
            "1",
            "browser_navigate",
            json!({"url": site.url("/handoff-latency.html")}),
        )
        .await;
    assert!(opened.get("error").is_none(), "{opened}");
    let centre = agent
        .call(
            "2",
            "browser_evaluate",
            json!({"expression": "(() => { const r = document.getElementById('pad').getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()"}),
        )
        .await;
    assert!(centre.get("error").is_none(), "{centre}");
    let pad = (
        centre["result"]["value"][0].as_f64().unwrap(),
        centre["result"]["value"][1].as_f64().unwrap(),
    );
    agent
        .send(json!({"type": "request", "id": "h", "tool": "browser_handoff", "arguments": {"reason": "Latency"}}))
        .await;
    let link = loop {
        let message = agent.next().await.expect("the handoff event");
        if message["event"] == "handoff" {
            break message["data"]["url"].as_str().unwrap().to_owned();
        }
    };

    let mut config = Config::default();
    config.browser.executable = testkit::chromium::executable().display().to_string();
    config.tools.cdp = engine::config::CdpAccess::Fenced;
    let person = Person {
        engine: Arc::new(Engine::new(config)),
    };
    person.ok("browser_navigate", json!({"url": link})).await;
    person
        .value("new Promise((done) => { const check = () => cdpilotHandoff.frames > 0 ? done(true) : requestAnimationFrame(check); check(); })")
        .await;
    // Times from the page's mouseup (its own listener ran first: the
    // release is sent) to the next frame shown.
    person
        .value(
            "window.clicked = null; document.querySelector(\"[data-cdpilot='live']\").addEventListener('mouseup', () => \
             { window.clicked = { at: performance.now(), frames: cdpilotHandoff.frames }; }); 0",
        )
        .await;
    let at = person
        .value(&format!(
            "(() => {{ const r = document.querySelector(\"[data-cdpilot='live']\").getBoundingClientRect(); \
             return [r.left + {} * r.width / cdpilotHandoff.width, r.top + {} * r.height / cdpilotHandoff.height]; }})()",
            pad.0, pad.1
        ))
        .await;
    let at = (at[0].as_f64().unwrap(), at[1].as_f64().unwrap());

    let before = load();
    let mut samples = Vec::with_capacity(rounds);
    // Of which: from the frame's message to it shown (decoding).
    let mut shown = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        person.click_at(at).await;
        let ms = person
            .value(
                "new Promise((done) => { const check = () => (clicked && cdpilotHandoff.frames > clicked.frames) \
                 ? done([cdpilotHandoff.lastFrameAt - clicked.at, cdpilotHandoff.lastFrameAt - cdpilotHandoff.lastMessageAt]) \
                 : requestAnimationFrame(check); check(); })",
            )
            .await;
        samples.push(ms[0].as_f64().unwrap());
        shown.push(ms[1].as_f64().unwrap());
        // Let the click's last frames pass before the next one.
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    shown.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let at = |p: f64| samples[((samples.len() as f64 - 1.0) * p).round() as usize];
    println!(
        "hand-off click → next frame shown, {rounds} clicks: median {:.0} ms, p90 {:.0} ms, min {:.0} ms, max {:.0} ms; \
         of which the frame's message → shown: median {:.1} ms (load {before} → {})",
        at(0.5),
        at(0.9),
        samples[0],
        samples[samples.len() - 1],
        shown[shown.len() / 2],
        load()
    );
    let clicks = agent.call("3", "browser_snapshot", json!({})).await;
    let text = clicks.to_string();
    assert!(
        text.contains(&format!("Clicks: {rounds}")),
        "every click landed: {text}"
    );
    person.engine.shutdown().await;
}
