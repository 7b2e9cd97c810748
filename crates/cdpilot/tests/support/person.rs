//! A second real headless Chromium that plays a person (the engine as a
//! library): it opens the dashboard or a hand-off page and acts there as a
//! person would. Also the dashboard's live-view socket and its frames.

use std::sync::Arc;
use std::time::Duration;

use engine::{ActionError, ActionOutput, Config, Engine};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::serve::Serve;

/// The person's browser; `who` names it in a failed call's panic.
pub struct PersonsBrowser {
    pub engine: Arc<Engine>,
    who: &'static str,
}

impl PersonsBrowser {
    /// A browser on the test Chromium, with `setup` applied to its config.
    pub fn new(who: &'static str, setup: impl FnOnce(&mut Config)) -> PersonsBrowser {
        let mut config = Config::default();
        config.browser.executable = testkit::chromium::executable().display().to_string();
        setup(&mut config);
        PersonsBrowser {
            engine: Arc::new(Engine::new(config)),
            who,
        }
    }

    pub async fn call(&self, tool: &str, arguments: Value) -> Result<ActionOutput, ActionError> {
        engine::dispatch::call(self.engine.session(), tool, arguments, Default::default()).await
    }

    /// `tool`'s output; panics naming the browser when it fails.
    pub async fn ok(&self, tool: &str, arguments: Value) -> ActionOutput {
        match self.call(tool, arguments.clone()).await {
            Ok(output) => output,
            Err(e) => panic!("the {}'s {tool} {arguments} failed: {}", self.who, e.message),
        }
    }

    /// The value of `expression` in the browser's page.
    pub async fn value(&self, expression: &str) -> Value {
        self.ok("browser_evaluate", json!({"expression": expression}))
            .await
            .data["value"]
            .clone()
    }

    /// Waits up to 20 s for `text` on the page.
    pub async fn wait_text(&self, text: &str) {
        self.ok("browser_wait", json!({"text": text, "timeout_ms": 20000}))
            .await;
    }
}

pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// The dashboard's live view of `session`'s tab t1, as its page opens one.
pub async fn dashboard_screencast(serve: &Serve, session: &str) -> Socket {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let url = format!(
        "ws://{}/v1/dashboard/screencast?session={session}&tab=t1",
        serve.authority
    );
    let mut request = url.into_client_request().unwrap();
    let bearer = format!("Bearer {}", serve.token).parse().unwrap();
    request.headers_mut().insert("authorization", bearer);
    tokio_tungstenite::connect_async(request)
        .await
        .expect("the live view's WebSocket")
        .0
}

/// The next text message of `socket` that `is_frame` accepts, within 20 s
/// (`None`: none came); an `error:` message fails the test.
pub async fn next_frame(socket: &mut Socket, is_frame: impl Fn(&str) -> bool) -> Option<String> {
    use futures_util::StreamExt;
    let read = async {
        while let Some(Ok(message)) = socket.next().await {
            if let tokio_tungstenite::tungstenite::Message::Text(text) = message {
                assert!(!text.starts_with("error:"), "{text}");
                if is_frame(text.as_str()) {
                    return Some(text.as_str().to_owned());
                }
            }
        }
        None
    };
    tokio::time::timeout(Duration::from_secs(20), read)
        .await
        .ok()
        .flatten()
}
