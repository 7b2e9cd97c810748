//! The hand-off page's view of the tab: resizing it resizes the tab until
//! the end, and the dashboard's live view and the hand-off page share the
//! tab's one screencast.

use serde_json::{json, Value};

use testkit::TestSite;

use crate::support::person::{dashboard_screencast, next_frame, Socket};
use crate::support::serve::Serve;
use crate::{centre, split, Agent, Person};

/// The viewport the agent's page reports, and the sizes its `resize`
/// events saw since `record_resizes`.
async fn viewport(agent: &mut Agent, id: &str) -> (Value, Value) {
    let seen = agent
        .ok(
            id,
            "browser_evaluate",
            json!({"expression": "[[innerWidth, innerHeight], window.sizes || []]"}),
        )
        .await;
    (seen["value"][0].clone(), seen["value"][1].clone())
}

/// The person resizes the hand-off page's window to `width`×`height` and
/// waits until a frame of the tab at the stage's new size is shown; returns
/// that size.
async fn resize_to(person: &Person, width: u32, height: u32) -> (f64, f64) {
    person
        .ok("browser_emulate", json!({"width": width, "height": height}))
        .await;
    let size = person
        .value(
            "new Promise((done) => { const stage = document.getElementById('stage'); \
             const check = () => (cdpilotHandoff.width === stage.clientWidth && cdpilotHandoff.height === stage.clientHeight) \
             ? done([stage.clientWidth, stage.clientHeight]) : requestAnimationFrame(check); check(); })",
        )
        .await;
    (size[0].as_f64().unwrap(), size[1].as_f64().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resizing_the_handoff_page_resizes_the_tab_until_the_end() {
    let site = TestSite::start().await;
    let serve = Serve::start("", &["--caps", "emulation"]).await;
    let mut agent = Agent::open(&serve).await;
    agent
        .ok("1", "browser_navigate", json!({"url": site.url("/handoff.html")}))
        .await;
    let record =
        "window.sizes = []; addEventListener('resize', () => sizes.push([innerWidth, innerHeight])); 0";
    agent
        .ok("2", "browser_evaluate", json!({"expression": record}))
        .await;
    let (before, _) = viewport(&mut agent, "3").await;
    let robot = centre(&mut agent, "3a", "#robot").await;
    let person = Person::new();

    // No emulation of the agent's: the window's own viewport comes back.
    let handoff = agent.hand_off("h1", json!({"reason": "Resize me"})).await;
    let link = handoff["url"].as_str().unwrap().to_owned();
    person.open(&link).await;
    let (width, height) = resize_to(&person, 900, 640).await;
    assert!(
        width < 900.0 && height < 640.0,
        "the stage is inside the window: {width}×{height}"
    );
    // The person's clicks still land: the live view maps onto the new
    // viewport (the checkbox keeps its place: the page is left-aligned).
    person.click_at(person.on_page(robot).await).await;
    person.ok("browser_click", json!({"selector": "#done"})).await;
    let done = agent.response("h1").await;
    assert_eq!(done["result"]["by"], "person", "{done}");
    let seen = agent
        .ok("4a", "browser_evaluate", json!({"expression": "seen.clicks"}))
        .await;
    assert_eq!(
        seen["value"],
        json!([true]),
        "the click after the resize landed: {seen}"
    );
    let (after, sizes) = viewport(&mut agent, "4").await;
    assert!(
        sizes
            .as_array()
            .unwrap()
            .contains(&json!([width as u64, height as u64])),
        "the agent's page took the person's size {width}×{height}: {sizes}"
    );
    assert_eq!(after, before, "the agent's viewport is back after Done: {sizes}");

    // The agent's own emulated viewport comes back too.
    agent
        .ok("5", "browser_emulate", json!({"width": 800, "height": 600}))
        .await;
    agent
        .ok("6", "browser_evaluate", json!({"expression": "sizes.length = 0"}))
        .await;
    person
        .ok("browser_emulate", json!({"width": 1280, "height": 720}))
        .await;
    let handoff = agent.hand_off("h2", json!({"reason": "Resize me again"})).await;
    let link = handoff["url"].as_str().unwrap().to_owned();
    person.open(&link).await;
    let (width, height) = resize_to(&person, 1000, 700).await;
    person.ok("browser_click", json!({"selector": "#done"})).await;
    agent.response("h2").await;
    let (after, sizes) = viewport(&mut agent, "7").await;
    assert!(
        sizes
            .as_array()
            .unwrap()
            .contains(&json!([width as u64, height as u64])),
        "{width}×{height}: {sizes}"
    );
    assert_eq!(
        after,
        json!([800, 600]),
        "browser_emulate's viewport is back: {sizes}"
    );
    person.engine.shutdown().await;
}

/// The hand-off page's live socket for `link`.
async fn live_socket(link: &str, authority: &str) -> Socket {
    let (path, token) = split(link, authority);
    let live = format!("ws://{authority}{path}/live?t={token}");
    tokio_tungstenite::connect_async(live.as_str()).await.unwrap().0
}

fn a_handoff_frame(text: &str) -> bool {
    text.starts_with("{\"frame\"")
}

/// Closes `socket` and waits for the server's side of the close.
async fn leave(mut socket: Socket) {
    use futures_util::StreamExt;
    socket.close(None).await.unwrap();
    while let Some(Ok(_)) = socket.next().await {}
}

/// A trusted click at viewport point `at` sent through a hand-off page's socket.
async fn click_through(socket: &mut Socket, (x, y): (f64, f64)) {
    use futures_util::SinkExt;
    for action in ["move", "down", "up"] {
        let event = json!({"type": "mouse", "action": action, "x": x, "y": y, "button": "left", "clicks": 1});
        socket
            .send(tokio_tungstenite::tungstenite::Message::text(event.to_string()))
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_and_the_handoff_page_share_the_tabs_screencast() {
    let site = TestSite::start().await;
    let serve = Serve::start("", &[]).await;
    let mut agent = Agent::open(&serve).await;
    agent
        .ok("1", "browser_navigate", json!({"url": site.url("/handoff.html")}))
        .await;
    let robot = centre(&mut agent, "2", "#robot").await;
    let handoff = agent.hand_off("h", json!({"reason": "Share"})).await;
    let link = handoff["url"].as_str().unwrap().to_owned();
    let mut page = live_socket(&link, &serve.authority).await;
    next_frame(&mut page, a_handoff_frame)
        .await
        .expect("the hand-off page's first frame");

    // A dashboard viewer joins the same screencast (the latest frame at
    // once) and leaves: the hand-off page's frames go on.
    let session = agent.session.clone();
    let mut dashboard = dashboard_screencast(&serve, &session).await;
    next_frame(&mut dashboard, |_| true)
        .await
        .expect("the dashboard's first frame");
    leave(dashboard).await;
    click_through(&mut page, robot).await;
    next_frame(&mut page, a_handoff_frame)
        .await
        .expect("a frame of the click after the dashboard viewer left");

    // The hand-off ends: a dashboard viewer's frames go on.
    let mut dashboard = dashboard_screencast(&serve, &session).await;
    next_frame(&mut dashboard, |_| true)
        .await
        .expect("the dashboard's first frame");
    {
        use futures_util::SinkExt;
        let give_up = json!({"type": "give_up"}).to_string();
        page.send(tokio_tungstenite::tungstenite::Message::text(give_up))
            .await
            .unwrap();
    }
    let declined = agent.response("h").await;
    assert_eq!(declined["error"]["code"], "handoff_declined", "{declined}");
    leave(page).await;
    agent
        .ok("3", "browser_click", json!({"selector": "#robot"}))
        .await;
    next_frame(&mut dashboard, |_| true)
        .await
        .expect("a frame of the agent's click after the hand-off page left");
}

/// A tab behind another tab of its window draws nothing, and its
/// screencast sends no frame: handing it off brings it to the front, so
/// the person sees it and their click lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tab_behind_another_is_brought_to_the_front_for_the_person() {
    let site = TestSite::start().await;
    let serve = Serve::start("", &[]).await;
    let mut agent = Agent::open(&serve).await;
    agent
        .ok("1", "browser_navigate", json!({"url": site.url("/handoff.html")}))
        .await;
    let robot = centre(&mut agent, "2", "#robot").await;
    let opened = json!({"action": "new", "url": site.url("/index.html")});
    let tabs = agent.ok("3", "browser_tabs", opened).await;
    let first = tabs["tabs"][0]["id"].as_str().unwrap().to_owned();
    let visibility = json!({"tab": first, "expression": "document.visibilityState"});
    let hidden = agent.ok("4", "browser_evaluate", visibility.clone()).await;
    assert_eq!(hidden["value"], "hidden", "{hidden}");

    let handoff = agent
        .hand_off("h", json!({"reason": "Behind", "tab": first}))
        .await;
    let link = handoff["url"].as_str().unwrap().to_owned();
    let mut page = live_socket(&link, &serve.authority).await;
    next_frame(&mut page, a_handoff_frame)
        .await
        .expect("a frame of the tab that was behind another");
    click_through(&mut page, robot).await;
    next_frame(&mut page, a_handoff_frame)
        .await
        .expect("a frame of the person's click");
    {
        use futures_util::SinkExt;
        let done = json!({"type": "done"}).to_string();
        page.send(tokio_tungstenite::tungstenite::Message::text(done))
            .await
            .unwrap();
    }
    let done = agent.response("h").await;
    assert_eq!(done["result"]["by"], "person", "{done}");
    let seen = json!({"tab": first, "expression": "seen.clicks"});
    let seen = agent.ok("5", "browser_evaluate", seen).await;
    assert_eq!(seen["value"], json!([true]), "the person's click landed: {seen}");
    let visible = agent.ok("6", "browser_evaluate", visibility).await;
    assert_eq!(visible["value"], "visible", "{visible}");
}
