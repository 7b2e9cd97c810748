//! Issue 34, finding 7: what cdpilot sends a Selenium Grid, and where.
//! A fake hub on loopback (it records every request and answers as a Grid
//! does) hands back a `se:cdp` on another origin or its own: the hub's
//! headers and credentials go to the hub's origin only, a `user:password`
//! in `[browser] grid` is sent as Basic authentication and printed
//! nowhere, and the new-session request carries `se:remoteUrl` and the
//! egress gate's flags and preferences.

mod common;

use std::sync::{Arc, Mutex};

use common::engine_with;
use engine::Engine;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One request a fake server read: its head (request line and headers,
/// lower-cased names) and body.
#[derive(Debug, Clone)]
struct Heard {
    head: String,
    body: String,
}

impl Heard {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }
}

/// A loopback server that records every request; `answer` makes the
/// reply's JSON body from the request (`None`: close without a reply, as a
/// WebSocket endpoint that refuses).
struct Recorder {
    port: u16,
    heard: Arc<Mutex<Vec<Heard>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Recorder {
    async fn start(answer: impl Fn(&Heard, u16) -> Option<Value> + Send + Sync + 'static) -> Recorder {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let heard = Arc::new(Mutex::new(Vec::new()));
        let log = heard.clone();
        let answer = Arc::new(answer);
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let (log, answer) = (log.clone(), answer.clone());
                tokio::spawn(async move {
                    let mut buffer = Vec::new();
                    let mut chunk = [0u8; 4096];
                    let end = loop {
                        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                            break end;
                        }
                        match stream.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                        }
                    };
                    let head = String::from_utf8_lossy(&buffer[..end]).to_string();
                    let length: usize = head
                        .lines()
                        .find_map(|l| {
                            let (n, v) = l.split_once(':')?;
                            n.eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse().ok())?
                        })
                        .unwrap_or(0);
                    let mut body = buffer[end + 4..].to_vec();
                    while body.len() < length {
                        match stream.read(&mut chunk).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => body.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let heard = Heard {
                        head,
                        body: String::from_utf8_lossy(&body).to_string(),
                    };
                    log.lock().unwrap().push(heard.clone());
                    if let Some(value) = answer(&heard, port) {
                        let body = value.to_string();
                        let reply = format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                            body.len()
                        );
                        let _ = stream.write_all(reply.as_bytes()).await;
                    }
                });
            }
        });
        Recorder { port, heard, task }
    }

    fn heard(&self) -> Vec<Heard> {
        self.heard.lock().unwrap().clone()
    }
}

/// A fake hub: a new session answers `se:cdp` from `cdp(port)` (the hub's
/// own port given); the `se:cdp` handshake itself is recorded and refused.
async fn fake_hub(cdp: impl Fn(u16) -> String + Send + Sync + 'static) -> Recorder {
    Recorder::start(move |heard, port| {
        let line = heard.head.lines().next().unwrap_or_default();
        if line.starts_with("POST ") && line.contains("/session ") {
            Some(json!({"value": {"sessionId": "s1", "capabilities": {"se:cdp": cdp(port)}}}))
        } else if line.contains("/se/cdp") {
            None
        } else {
            Some(json!({"value": {"nodes": []}}))
        }
    })
    .await
}

fn on_grid(url: String) -> Engine {
    engine_with(move |c| {
        c.browser.grid = url;
        c.browser.grid_headers = [("X-Grid-Token".to_owned(), "tok-3141".to_owned())].into();
    })
}

/// The first call fails (nothing answers `se:cdp` as a browser would); its
/// error text.
async fn first_call_fails(engine: &Engine) -> String {
    let e = common::call(engine, "browser_snapshot", json!({"timeout_ms": 20000}))
        .await
        .unwrap_err();
    format!("{} {}", e.message, e.next_step)
}

/// Issue 34, finding 7: `grid_headers` went with the CDP handshake to
/// whatever host the hub's `se:cdp` named; now a `se:cdp` on another
/// origin gets no header of the hub's, and the hub's password shows in no
/// error.
#[tokio::test]
async fn a_se_cdp_on_another_origin_gets_none_of_the_hubs_headers() {
    let stranger = Recorder::start(|_, _| None).await;
    let elsewhere = stranger.port;
    let hub = fake_hub(move |_| format!("ws://127.0.0.1:{elsewhere}/session/s1/se/cdp")).await;
    let engine = on_grid(format!("http://alice:s3cret-pw@127.0.0.1:{}", hub.port));
    let said = first_call_fails(&engine).await;
    assert!(
        !said.contains("s3cret-pw"),
        "the password is in the error: {said}"
    );

    let handshakes = stranger.heard();
    assert!(!handshakes.is_empty(), "cdpilot tried the se:cdp address: {said}");
    for handshake in &handshakes {
        assert_eq!(handshake.header("x-grid-token"), None, "{handshake:?}");
        assert_eq!(handshake.header("authorization"), None, "{handshake:?}");
    }
    // The hub itself got them, the password as Basic authentication.
    let asked = hub.heard();
    let new_session = asked
        .iter()
        .find(|h| h.head.starts_with("POST "))
        .expect("a new-session request");
    assert_eq!(new_session.header("x-grid-token").as_deref(), Some("tok-3141"));
    use base64::Engine as _;
    let basic = base64::engine::general_purpose::STANDARD.encode("alice:s3cret-pw");
    assert_eq!(
        new_session.header("authorization"),
        Some(format!("Basic {basic}"))
    );
    engine.shutdown().await;
}

/// The hub's headers do go with the handshake when `se:cdp` is on the
/// hub's own origin (a Grid that proxies CDP, as Selenium 4's does).
#[tokio::test]
async fn a_se_cdp_on_the_hubs_origin_gets_the_hubs_headers() {
    let hub = fake_hub(|port| format!("ws://127.0.0.1:{port}/session/s1/se/cdp")).await;
    let engine = on_grid(format!("http://alice:s3cret-pw@127.0.0.1:{}", hub.port));
    let said = first_call_fails(&engine).await;
    assert!(!said.contains("s3cret-pw"), "{said}");
    let asked = hub.heard();
    let handshake = asked
        .iter()
        .find(|h| h.head.contains("/se/cdp"))
        .unwrap_or_else(|| panic!("no se:cdp handshake: {asked:?}"));
    assert_eq!(handshake.header("x-grid-token").as_deref(), Some("tok-3141"));
    assert!(handshake.header("authorization").is_some(), "{handshake:?}");
    engine.shutdown().await;
}

/// Issue 34, items 6 and 7: the new-session request asks for a Chromium
/// behind the gate (the gate's proxy flags last, WebRTC kept off UDP the
/// proxy does not carry, QUIC off, prediction off in its profile) and says
/// where cdpilot reaches the Grid (`se:remoteUrl`, without the password).
#[tokio::test]
async fn the_new_session_asks_for_a_gated_chromium_and_says_the_remote_url() {
    let hub = fake_hub(|port| format!("ws://127.0.0.1:{port}/session/s1/se/cdp")).await;
    let engine = on_grid(format!("http://alice:s3cret-pw@127.0.0.1:{}/wd/hub", hub.port));
    first_call_fails(&engine).await;
    let asked = hub.heard();
    let new_session = asked.iter().find(|h| h.head.starts_with("POST ")).unwrap();
    assert!(
        new_session.head.starts_with("POST /wd/hub/session "),
        "{}",
        new_session.head
    );
    let body: Value = serde_json::from_str(&new_session.body).unwrap();
    let always = &body["capabilities"]["alwaysMatch"];
    assert_eq!(
        always["se:remoteUrl"],
        format!("http://127.0.0.1:{}/wd/hub", hub.port)
    );
    assert!(!new_session.body.contains("s3cret-pw"), "{}", new_session.body);
    let options = &always["goog:chromeOptions"];
    let args: Vec<&str> = options["args"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for flag in [
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--proxy-bypass-list=<-loopback>",
        "--disable-quic",
    ] {
        assert!(args.contains(&flag), "{flag} missing: {args:?}");
    }
    assert!(
        args.iter()
            .any(|a| a.starts_with("--proxy-server=http://127.0.0.1:")),
        "{args:?}"
    );
    assert_eq!(
        options["prefs"]["webrtc.ip_handling_policy"],
        "disable_non_proxied_udp"
    );
    assert_eq!(options["prefs"]["net.network_prediction_options"], 2);
    engine.shutdown().await;
}

/// Issue 34, "Bad input": a Grid URL, header or capability cdpilot cannot
/// use is a start-up error naming the key, the password masked.
#[test]
fn unusable_grid_settings_are_start_up_errors_naming_the_key() {
    let start = |adjust: &dyn Fn(&mut engine::Config)| {
        let mut config = engine::Config::default();
        config.browser.grid = "http://127.0.0.1:4444".into();
        adjust(&mut config);
        Engine::start(config).err().expect("refused at start")
    };
    let e = start(&|c| c.browser.grid = "http://bob:hunter2@grid.example:notaport".into());
    assert!(e.contains("browser.grid") && !e.contains("hunter2"), "{e}");
    let e = start(&|c| c.browser.grid = "ws://bob:hunter2@grid.example:4444".into());
    assert!(e.contains("browser.grid") && !e.contains("hunter2"), "{e}");
    let e =
        start(&|c| c.browser.grid_headers = [("X-Token".to_owned(), "line\nbreak-secret".to_owned())].into());
    assert!(e.contains("browser.grid_headers") && e.contains("X-Token"), "{e}");
    assert!(!e.contains("break-secret"), "{e}");
    let e = start(&|c| {
        c.browser.grid_capabilities =
            serde_json::Map::from_iter([("proxy".to_owned(), json!({"proxyType": "direct"}))])
    });
    assert!(
        e.contains("browser.grid_capabilities") && e.contains("proxy"),
        "{e}"
    );
    let e = start(&|c| {
        c.browser.grid_capabilities = serde_json::Map::from_iter([(
            "goog:chromeOptions".to_owned(),
            json!({"args": ["--proxy-server=http://elsewhere:3128"]}),
        )])
    });
    assert!(
        e.contains("goog:chromeOptions") && e.contains("--proxy-server"),
        "{e}"
    );
    let e = start(&|c| {
        c.browser.grid_capabilities = serde_json::Map::from_iter([(
            "goog:chromeOptions".to_owned(),
            json!({"prefs": {"webrtc.ip_handling_policy": "default"}}),
        )])
    });
    assert!(
        e.contains("prefs") && e.contains("webrtc.ip_handling_policy"),
        "{e}"
    );
    let e = start(&|c| {
        c.browser.grid_capabilities =
            serde_json::Map::from_iter([("goog:chromeOptions".to_owned(), json!({"args": "--x"}))])
    });
    assert!(e.contains("goog:chromeOptions") && e.contains("args"), "{e}");
}
