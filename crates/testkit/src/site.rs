//! The two-origin test site. Pages live in `site/*.html`; `{{A}}` and
//! `{{B}}` in them become the two origins, so a page on one origin can frame
//! or link the other. A few dynamic routes produce redirects, statuses, a
//! slow answer, an answer that never ends and a download.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tokio::net::TcpListener;

/// Fixture pages, by path.
const PAGES: &[(&str, &str)] = &[
    ("index.html", include_str!("../site/index.html")),
    ("egress.html", include_str!("../site/egress.html")),
    ("matrix.html", include_str!("../site/matrix.html")),
    ("form.html", include_str!("../site/form.html")),
    ("snapshot.html", include_str!("../site/snapshot.html")),
    ("covered.html", include_str!("../site/covered.html")),
    ("spa.html", include_str!("../site/spa.html")),
    ("inputs.html", include_str!("../site/inputs.html")),
    ("frames.html", include_str!("../site/frames.html")),
    ("child.html", include_str!("../site/child.html")),
    ("page-tools.html", include_str!("../site/page-tools.html")),
    (
        "page-tools-frame.html",
        include_str!("../site/page-tools-frame.html"),
    ),
    (
        "page-tools-hostile.html",
        include_str!("../site/page-tools-hostile.html"),
    ),
    ("page-tools-pay.html", include_str!("../site/page-tools-pay.html")),
    ("shadow.html", include_str!("../site/shadow.html")),
    ("article.html", include_str!("../site/article.html")),
    ("captcha.html", include_str!("../site/captcha.html")),
    ("handoff.html", include_str!("../site/handoff.html")),
    (
        "handoff-latency.html",
        include_str!("../site/handoff-latency.html"),
    ),
    ("login.html", include_str!("../site/login.html")),
    (
        "hostile-timeline.html",
        include_str!("../site/hostile-timeline.html"),
    ),
    ("leave.html", include_str!("../site/leave.html")),
    ("quiet.html", include_str!("../site/quiet.html")),
    ("listen-later.html", include_str!("../site/listen-later.html")),
    ("visibility.html", include_str!("../site/visibility.html")),
    ("slow-image.html", include_str!("../site/slow-image.html")),
    ("dialogs.html", include_str!("../site/dialogs.html")),
    ("policy.html", include_str!("../site/policy.html")),
    ("refresh.html", include_str!("../site/refresh.html")),
    ("outer.html", include_str!("../site/outer.html")),
    ("inner.html", include_str!("../site/inner.html")),
    ("resources.html", include_str!("../site/resources.html")),
    ("network.html", include_str!("../site/network.html")),
    ("network-frame.html", include_str!("../site/network-frame.html")),
    ("routes.html", include_str!("../site/routes.html")),
    ("routes-worker.js", include_str!("../site/routes-worker.js")),
    ("fetch-worker.js", include_str!("../site/fetch-worker.js")),
    ("logged-in.html", include_str!("../site/logged-in.html")),
    ("media.html", include_str!("../site/media.html")),
    ("counter.html", include_str!("../site/counter.html")),
    ("shop.html", include_str!("../site/shop.html")),
    ("ask.html", include_str!("../site/ask.html")),
    ("forms.html", include_str!("../site/forms.html")),
    ("drag.html", include_str!("../site/drag.html")),
    ("scroll.html", include_str!("../site/scroll.html")),
    ("widgets-frame.html", include_str!("../site/widgets-frame.html")),
    ("downloads.html", include_str!("../site/downloads.html")),
    ("frames5.html", include_str!("../site/frames5.html")),
    ("input-log.html", include_str!("../site/input-log.html")),
    ("oopif-input.html", include_str!("../site/oopif-input.html")),
    ("long-text.html", include_str!("../site/long-text.html")),
    ("reading.html", include_str!("../site/reading.html")),
    ("hidden-body.html", include_str!("../site/hidden-body.html")),
    ("console-error.html", include_str!("../site/console-error.html")),
    ("blank-article.html", include_str!("../site/blank-article.html")),
    (
        "widget-jqueryui.html",
        include_str!("../site/widget-jqueryui.html"),
    ),
    (
        "widget-flatpickr.html",
        include_str!("../site/widget-flatpickr.html"),
    ),
    (
        "widget-nouislider.html",
        include_str!("../site/widget-nouislider.html"),
    ),
    (
        "widget-tomselect.html",
        include_str!("../site/widget-tomselect.html"),
    ),
    (
        "widget-sortablejs.html",
        include_str!("../site/widget-sortablejs.html"),
    ),
    ("widget-quill.html", include_str!("../site/widget-quill.html")),
    ("widget-jstree.html", include_str!("../site/widget-jstree.html")),
    ("widget-native.html", include_str!("../site/widget-native.html")),
    ("widget-feed.html", include_str!("../site/widget-feed.html")),
    ("widget-mail.html", include_str!("../site/widget-mail.html")),
    (
        "widget-foldertree.html",
        include_str!("../site/widget-foldertree.html"),
    ),
    ("widget-virtual.html", include_str!("../site/widget-virtual.html")),
    (
        "widget-html5list.html",
        include_str!("../site/widget-html5list.html"),
    ),
    ("actable.html", include_str!("../site/actable.html")),
    ("refs.html", include_str!("../site/refs.html")),
    ("trees.html", include_str!("../site/trees.html")),
    ("listeners.html", include_str!("../site/listeners.html")),
    ("secret-fields.html", include_str!("../site/secret-fields.html")),
    ("forged.html", include_str!("../site/forged.html")),
    ("hostile-popup.html", include_str!("../site/hostile-popup.html")),
    ("hostile-blank.html", include_str!("../site/hostile-blank.html")),
    ("speculation.html", include_str!("../site/speculation.html")),
    ("sw-page.html", include_str!("../site/sw-page.html")),
    ("sw.js", include_str!("../site/sw.js")),
    ("hover-trap.html", include_str!("../site/hover-trap.html")),
    (
        "hover-trap-outer.html",
        include_str!("../site/hover-trap-outer.html"),
    ),
    ("drag-away.html", include_str!("../site/drag-away.html")),
    ("identity.html", include_str!("../site/identity.html")),
    ("identity-worker.js", include_str!("../site/identity-worker.js")),
];

/// A reserved loopback port on which connections are refused.
pub struct ClosedPort {
    _socket: tokio::net::TcpSocket,
    pub port: u16,
}

/// The site, serving on two loopback origins until dropped.
pub struct TestSite {
    /// Origin A: `http://127.0.0.1:P1`.
    pub a: String,
    /// Origin B: `http://localhost:P2` (another site, so iframes from it are OOPIFs).
    pub b: String,
    /// Every request either origin received, in order: tests of the URL
    /// policy assert that a denied origin received nothing.
    log: RequestLog,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for TestSite {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

#[derive(Clone)]
struct Origins {
    a: String,
    b: String,
}

/// A request the site received: which origin (`a` or `b`), the method,
/// the path with its query, and the headers that say who asked (the user
/// agent and its client hints, `sec-ch-*`), lowercase names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    pub origin: String,
    pub method: String,
    pub path: String,
    pub identity: Vec<(String, String)>,
}

impl Received {
    /// One of its identity headers (`user-agent`, `sec-ch-ua`, …).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.identity
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

type RequestLog = Arc<Mutex<Vec<Received>>>;

impl TestSite {
    pub async fn start() -> TestSite {
        let listener_a = TcpListener::bind("127.0.0.1:0").await.expect("bind A");
        let listener_b = TcpListener::bind("127.0.0.1:0").await.expect("bind B");
        let a = format!("http://127.0.0.1:{}", port(&listener_a));
        let b = format!("http://localhost:{}", port(&listener_b));
        let origins = Origins {
            a: a.clone(),
            b: b.clone(),
        };
        let log = RequestLog::default();
        let mut tasks = Vec::new();
        for (origin, listener) in [(&a, listener_a), (&b, listener_b)] {
            let log = log.clone();
            let origin = origin.clone();
            let app = router(origins.clone()).layer(axum::middleware::from_fn(
                move |request: axum::extract::Request, next: axum::middleware::Next| {
                    log.lock().unwrap().push(Received {
                        origin: origin.clone(),
                        method: request.method().to_string(),
                        path: request
                            .uri()
                            .path_and_query()
                            .map(|p| p.to_string())
                            .unwrap_or_default(),
                        identity: request
                            .headers()
                            .iter()
                            .filter(|(name, _)| *name == "user-agent" || name.as_str().starts_with("sec-ch-"))
                            .map(|(name, value)| {
                                (name.to_string(), value.to_str().unwrap_or_default().to_owned())
                            })
                            .collect(),
                    });
                    next.run(request)
                },
            ));
            tasks.push(tokio::spawn(async move {
                let _ = axum::serve(listener, app).await;
            }));
        }
        TestSite { a, b, log, tasks }
    }

    /// Every request received so far, both origins.
    pub fn received(&self) -> Vec<Received> {
        self.log.lock().unwrap().clone()
    }

    /// Requests origin B received so far.
    pub fn received_by_b(&self) -> Vec<Received> {
        self.received()
            .into_iter()
            .filter(|r| r.origin == self.b)
            .collect()
    }

    /// Whether origin A received a request for `path` (path and query).
    pub fn a_received(&self, path: &str) -> bool {
        self.received()
            .iter()
            .any(|r| r.origin == self.a && r.path == path)
    }

    /// A URL on origin A.
    pub fn url(&self, path: &str) -> String {
        format!("{}/{}", self.a, path.trim_start_matches('/'))
    }

    /// A URL on origin B.
    pub fn url_b(&self, path: &str) -> String {
        format!("{}/{}", self.b, path.trim_start_matches('/'))
    }

    /// A loopback port nothing listens on (for `navigation_failed`). The
    /// port stays reserved (bound, not listening, so connections are
    /// refused) while the returned guard lives: a port merely released
    /// could be taken by another test's server in the meantime.
    pub fn closed_port() -> ClosedPort {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket.bind("127.0.0.1:0".parse().expect("addr")).expect("bind");
        let port = socket.local_addr().expect("local addr").port();
        ClosedPort {
            _socket: socket,
            port,
        }
    }
}

fn port(listener: &TcpListener) -> u16 {
    let addr: SocketAddr = listener.local_addr().expect("local addr");
    addr.port()
}

fn router(origins: Origins) -> Router {
    Router::new()
        .route("/redirect", get(redirect))
        .route("/status/{code}", get(status))
        .route("/controls/{count}", get(controls))
        .route("/slow", get(slow))
        .route("/never", get(never))
        .route("/download", get(download))
        .route("/", get(|s: State<Origins>| page(s, Path("index.html".into()))))
        .route("/{*path}", get(page))
        .route("/json", get(json_answer).post(json_answer))
        .route("/api/{*rest}", get(api_answer))
        .route("/pixel.png", get(pixel))
        .route("/vendor/{*path}", get(vendor))
        .with_state(origins)
}

async fn page(State(origins): State<Origins>, Path(path): Path<String>) -> Response {
    let Some((_, body)) = PAGES.iter().find(|(name, _)| *name == path) else {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    };
    let body = body.replace("{{A}}", &origins.a).replace("{{B}}", &origins.b);
    // A service worker's script must be served as JavaScript.
    let kind = if path.ends_with(".js") {
        "text/javascript; charset=utf-8"
    } else {
        "text/html; charset=utf-8"
    };
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}

/// `/vendor/<package>/<file>`: a widget library from the gallery's cache
/// (see [`crate::vendor`]).
async fn vendor(Path(path): Path<String>) -> Response {
    let Some(file) = crate::vendor::file(&path) else {
        return (StatusCode::BAD_REQUEST, "bad path").into_response();
    };
    match tokio::fs::read(&file).await {
        Ok(body) => ([(header::CONTENT_TYPE, crate::vendor::content_type(&file))], body).into_response(),
        Err(_) => (
            StatusCode::NOT_FOUND,
            format!("{} is missing: run scripts/widgets", file.display()),
        )
            .into_response(),
    }
}

async fn redirect(Query(q): Query<HashMap<String, String>>) -> Response {
    let to = q.get("to").cloned().unwrap_or_else(|| "/".into());
    (StatusCode::FOUND, [(header::LOCATION, to)]).into_response()
}

async fn status(Path(code): Path<u16>) -> Response {
    let code = StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_REQUEST);
    let body = format!(
        "<!doctype html><title>Status {}</title><h1>Status {}</h1>",
        code.as_u16(),
        code.as_u16()
    );
    (code, [(header::CONTENT_TYPE, "text/html")], body).into_response()
}

/// The longest `/slow` waits, whatever it is asked: a test that forgets to
/// stop the load cannot hold the server (or the test process) much longer.
const SLOWEST: Duration = Duration::from_secs(30);

/// `/slow?ms=N`: answers with a small page after `N` ms (at most
/// [`SLOWEST`]); with `&svg=NAME`, an 18×18 SVG icon instead (a slow
/// image; NAME only makes the URL its own). The wait is a timer, so the
/// server keeps answering other requests meanwhile.
async fn slow(Query(q): Query<HashMap<String, String>>) -> Response {
    let ms = q.get("ms").and_then(|ms| ms.parse().ok()).unwrap_or(15_000);
    tokio::time::sleep(Duration::from_millis(ms).min(SLOWEST)).await;
    if q.contains_key("svg") {
        let icon = "<svg xmlns='http://www.w3.org/2000/svg' width='18' height='18'><circle cx='9' cy='9' r='8' fill='#456'/></svg>";
        return ([(header::CONTENT_TYPE, "image/svg+xml")], icon).into_response();
    }
    let body = "<!doctype html><title>Slow</title><h1>Finally here</h1>";
    ([(header::CONTENT_TYPE, "text/html")], body).into_response()
}

/// `/never`: the start of a page (its title and heading) and then nothing,
/// never the end: a document whose load never finishes (one session's
/// slow page while the others are served).
async fn never() -> Response {
    use futures_util::StreamExt;
    let start = "<!doctype html><title>Never</title><h1>Still loading</h1>";
    let start = futures_util::stream::once(async move { Ok::<_, std::io::Error>(start) });
    let body = axum::body::Body::from_stream(start.chain(futures_util::stream::pending()));
    ([(header::CONTENT_TYPE, "text/html")], body).into_response()
}

/// `/download?name=F`: a file the browser downloads rather than shows
/// (`Content-Disposition: attachment`).
async fn download(Query(q): Query<HashMap<String, String>>) -> Response {
    let name = q.get("name").cloned().unwrap_or_else(|| "report.csv".into());
    let disposition = format!("attachment; filename=\"{name}\"");
    (
        [
            (header::CONTENT_TYPE, "text/csv".to_owned()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        "id,name\n1,Ada\n",
    )
        .into_response()
}

/// A page of `count` controls (links, buttons and inputs in a table, with
/// text around them), the shape the snapshot benchmarks use.
async fn controls(Path(count): Path<usize>) -> Response {
    ([(header::CONTENT_TYPE, "text/html")], controls_page(count)).into_response()
}

pub fn controls_page(count: usize) -> String {
    let mut html = String::with_capacity(count * 120);
    html.push_str("<!doctype html><title>Controls</title><h1>Inventory</h1><p>Rows of items.</p><table>");
    for i in 0..count {
        if i % 3 == 0 {
            html.push_str("<tr>");
        }
        match i % 3 {
            0 => html.push_str(&format!(
                "<td>Item {i}</td><td><a href=\"#item-{i}\">Open {i}</a></td>"
            )),
            1 => html.push_str(&format!(
                "<td><button onclick=\"this.dataset.n=1\">Buy {i}</button></td>"
            )),
            _ => html.push_str(&format!(
                "<td><input aria-label=\"Qty {i}\" value=\"{}\"></td></tr>",
                i % 7
            )),
        }
    }
    html.push_str("</table><footer>End</footer>");
    html
}

/// A small JSON answer (browser_network reads it back).
async fn json_answer() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        r#"{"user":"ada","items":[1,2,3]}"#,
    )
        .into_response()
}

/// `/api/…`: the real server's answer to the routes page's API (a route's
/// fixture says something else).
async fn api_answer() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        r#"{"items":["server"]}"#,
    )
        .into_response()
}

/// A 1×1 PNG (binary: browser_network reports its size, not its bytes).
pub const PIXEL_PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00,
    0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4, 0x89, 0x00,
    0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0xF8, 0xCF, 0xC0, 0xF0, 0x1F, 0x00, 0x05,
    0x00, 0x01, 0xFF, 0x89, 0x99, 0x3D, 0x1D, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42,
    0x60, 0x82,
];

async fn pixel() -> Response {
    ([(header::CONTENT_TYPE, "image/png")], PIXEL_PNG).into_response()
}
