//! The user's Chrome for the extension tests and benchmark: headless
//! Chromium that loads the unpacked extension from `extension/` (a fresh
//! profile), driven by the harness through its own DevTools pipe (never by
//! cdpilot), and pairing it with a `cdpilot serve --extension`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cdp::launch::{self, BrowserProcess, LaunchOptions};
use cdp::{Connection, Session};
use serde_json::{json, Value};

use super::serve::Serve;

pub const EXTENSION_ID: &str = "cgolnlbbddjholdlhbgdgeffmhifhpfg";

pub fn extension_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../extension")
        .canonicalize()
        .unwrap()
}

pub fn soon() -> tokio::time::Instant {
    tokio::time::Instant::now() + Duration::from_secs(20)
}

/// The user's Chrome: headless Chromium with the extension loaded, driven
/// by the test through its DevTools pipe (never by cdpilot).
pub struct UserChrome {
    process: Option<BrowserProcess>,
    pub conn: Connection,
}

impl UserChrome {
    pub async fn start() -> UserChrome {
        UserChrome::start_with(&[]).await
    }

    /// [`UserChrome::start`] with more Chromium flags (such as
    /// `--host-resolver-rules`, to give loopback servers names).
    pub async fn start_with(flags: &[&str]) -> UserChrome {
        let dir = extension_dir();
        let mut args = vec![
            "--site-per-process".to_owned(),
            format!("--load-extension={}", dir.display()),
            format!("--disable-extensions-except={}", dir.display()),
        ];
        args.extend(flags.iter().map(|f| f.to_string()));
        let options = LaunchOptions {
            executable: Some(testkit::chromium::executable()),
            headless: true,
            args,
            ..Default::default()
        };
        let process = launch::launch(&options, Duration::from_secs(30)).await.unwrap();
        let conn = Connection::open(process.transport()).await.unwrap();
        UserChrome {
            process: Some(process),
            conn,
        }
    }

    /// Opens `url` in a new tab of the user's; its target id.
    pub async fn open(&self, url: &str) -> String {
        let created = self
            .conn
            .browser()
            .send("Target.createTarget", json!({"url": url}), soon())
            .await
            .unwrap();
        created["targetId"].as_str().unwrap().to_owned()
    }

    pub async fn session(&self, target_id: &str) -> Session {
        let attached = self
            .conn
            .browser()
            .send(
                "Target.attachToTarget",
                json!({"targetId": target_id, "flatten": true}),
                soon(),
            )
            .await
            .unwrap();
        self.conn.session(attached["sessionId"].as_str().unwrap())
    }

    /// Evaluates `expression` (awaited) in page `session`; a page still
    /// loading (its first document replaced) is asked again in its next one.
    pub async fn eval(session: &Session, expression: &str) -> Value {
        let until = soon();
        loop {
            let answer = session
                .send(
                    "Runtime.evaluate",
                    json!({"expression": expression, "awaitPromise": true, "returnByValue": true}),
                    until,
                )
                .await;
            match answer {
                Ok(answer) => return answer["result"]["value"].clone(),
                Err(e)
                    if e.kind() == cdp::ProtocolErrorKind::ContextGone
                        && tokio::time::Instant::now() < until =>
                {
                    tokio::time::sleep(Duration::from_millis(50)).await
                }
                Err(e) => panic!("{expression}: {e}"),
            }
        }
    }

    pub async fn targets(&self) -> Vec<Value> {
        let answer = self
            .conn
            .browser()
            .send("Target.getTargets", json!({}), soon())
            .await
            .unwrap();
        answer["targetInfos"].as_array().unwrap().clone()
    }

    /// Pages on the test site (the user's own tabs are not opened there
    /// unless a test says so).
    pub async fn agent_pages(&self) -> Vec<Value> {
        self.targets()
            .await
            .into_iter()
            .filter(|t| t["type"] == "page" && t["url"].as_str().unwrap().starts_with("http"))
            .collect()
    }

    /// An extension page (`popup.html`, `options.html`) opened as a tab,
    /// once its script ran.
    pub async fn extension_page(&self, path: &str) -> Session {
        let url = format!("chrome-extension://{EXTENSION_ID}/{path}");
        let target = self.open(&url).await;
        let page = self.session(&target).await;
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let ready = page
                .send(
                    "Runtime.evaluate",
                    json!({"expression": "location.protocol === 'chrome-extension:' && document.readyState === 'complete' && !!document.body.textContent", "returnByValue": true}),
                    tokio::time::Instant::now() + Duration::from_secs(2),
                )
                .await;
            if ready.is_ok_and(|r| r["result"]["value"] == true) {
                return page;
            }
            assert!(Instant::now() < until, "{url} did not load");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The extension's service worker, attached for `Runtime.evaluate`.
    #[allow(dead_code)] // not every test binary reads the worker
    pub async fn worker(&self) -> Session {
        let prefix = format!("chrome-extension://{EXTENSION_ID}/");
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let found =
                self.targets().await.into_iter().find(|t| {
                    t["type"] == "service_worker" && t["url"].as_str().unwrap().starts_with(&prefix)
                });
            if let Some(target) = found {
                return self.session(target["targetId"].as_str().unwrap()).await;
            }
            assert!(Instant::now() < until, "no service worker of the extension");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The extension's popup, opened as a tab (its buttons and state).
    pub async fn popup(&self) -> Session {
        self.extension_page("popup.html").await
    }
}

impl Drop for UserChrome {
    fn drop(&mut self) {
        self.conn.close();
        drop(self.process.take());
    }
}

/// `GET /v1/extension/status`.
pub async fn status(serve: &Serve) -> Value {
    serde_json::from_str(&serve.get("/v1/extension/status").await).unwrap()
}

/// Waits (up to `limit`) until the status says the extension is connected.
pub async fn connected_within(serve: &Serve, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if status(serve).await["connected"] == true {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

/// `cdpilot pair` against `serve`: its stdout's last line.
pub fn pair_link(serve: &Serve) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
        .args([
            "pair",
            "--server",
            &format!("http://{}", serve.authority),
            "--token",
            &serve.token,
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    stdout.trim_end().lines().last().unwrap().to_owned()
}

/// A serve with `--extension`, the user's Chrome, paired.
pub async fn paired(config: &str) -> (Serve, UserChrome) {
    paired_with(config, &[]).await
}

/// [`paired`], the user's Chrome started with `flags`.
pub async fn paired_with(config: &str, flags: &[&str]) -> (Serve, UserChrome) {
    let serve = Serve::start(config, &["--extension"]).await;
    let chrome = UserChrome::start_with(flags).await;
    let link = pair_link(&serve);
    assert!(
        link.starts_with(&format!(
            "chrome-extension://{EXTENSION_ID}/pair.html#server=ws://127.0.0.1:"
        )),
        "{link}"
    );
    let page = chrome.open(&link).await;
    let page = chrome.session(&page).await;
    let said = "new Promise(r => { const go = () => { const s = document.getElementById('status'); s && s.className ? r(s.className + ': ' + s.textContent) : setTimeout(go, 50); }; go(); })";
    let said = UserChrome::eval(&page, said).await;
    assert!(said.as_str().unwrap().starts_with("ok"), "{said}");
    assert!(
        connected_within(&serve, Duration::from_secs(10)).await,
        "the relay connected"
    );
    (serve, chrome)
}
