//! Serving one browser connection to the egress gate (hyper's HTTP/1
//! server): `CONNECT host:port` (TLS, WebSockets: Chromium tunnels both),
//! absolute-form plain-http requests (`GET http://host/… HTTP/1.1`, the
//! body streamed, the upstream connection kept alive for the next request
//! to the same host) and WebSocket upgrades on them.
//!
//! Every connection is judged before it is opened: by the rules at the
//! connection level, then by the addresses its name resolves to; the gate
//! connects only to an address it checked. A refused one gets `403` and no
//! upstream connection at all, and is recorded on the door for the
//! session's next result. A plain-http request is judged by its whole URL
//! first, by the rules that refuse by path (`Policy::refused_by_path`).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{HeaderValue, CONNECTION, UPGRADE};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpStream;

use super::resolve::{is_private, lookup, plain};
use super::{Refusal, Shared};
use crate::policy::connection::canonical_host;
use crate::policy::Decision;

type Body = BoxBody<Bytes, hyper::Error>;

/// How long connecting to one address may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a browser connection may wait for its next request (or the
/// whole head of its first) before the gate closes it (issue 24). Chromium
/// keeps idle proxy sockets for minutes and opens dozens per browser
/// context; each one the gate holds open costs about 20 KB (hyper's read and
/// write buffers, the connection's task, the upstream connection kept for
/// it), and 854 were open at the peak of a 16-session soak, most of them
/// idle, under hyper's default of 30 s. Reconnecting on loopback costs the
/// browser a fraction of a millisecond, and a request Chromium sends on a
/// socket the gate is closing is retried on a new one (as for any
/// keep-alive server). A connection in the middle of a request, a response
/// or a tunnel is not idle and is never cut.
pub(super) const IDLE_KEPT: Duration = Duration::from_secs(5);

/// The upstream connection of a browser connection's last plain-http
/// request, kept for its next request to the same host and port.
struct Kept {
    host: String,
    port: u16,
    sender: SendRequest<Body>,
    /// It goes to the user's upstream proxy (absolute-form requests).
    via_upstream: bool,
}

/// Serves one connection from the browser until it closes.
pub(super) async fn serve(stream: TcpStream, shared: Arc<Shared>) {
    let kept: Arc<Mutex<Option<Kept>>> = Arc::default();
    let service = service_fn(move |request| {
        let shared = shared.clone();
        let kept = kept.clone();
        async move { Ok::<_, Infallible>(handle(request, &shared, &kept).await) }
    });
    let served = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(IDLE_KEPT)
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades()
        .await;
    if let Err(e) = served {
        tracing::debug!("egress gate: a browser connection ended: {e}");
    }
}

async fn handle(request: Request<Incoming>, shared: &Shared, kept: &Mutex<Option<Kept>>) -> Response<Body> {
    if request.method() == Method::CONNECT {
        return tunnel(request, shared).await;
    }
    if request.uri().scheme_str() == Some("http") && request.uri().host().is_some() {
        return forward(request, shared, kept).await;
    }
    text(
        StatusCode::BAD_REQUEST,
        "cdpilot's egress gate takes CONNECT host:port and absolute-form http:// requests".into(),
    )
}

/// `CONNECT host:port`: judged, connected, answered 200, then bytes both
/// ways until either side closes.
async fn tunnel(request: Request<Incoming>, shared: &Shared) -> Response<Body> {
    let Some(authority) = request.uri().authority() else {
        return text(StatusCode::BAD_REQUEST, "CONNECT needs host:port".into());
    };
    let host = authority.host().to_owned();
    let port = authority.port_u16().unwrap_or(443);
    let url = authority.to_string();
    let mut upstream = match open(shared, &host, port, &url, true).await {
        Ok((stream, _)) => stream,
        Err(response) => return response,
    };
    tokio::spawn(async move {
        match hyper::upgrade::on(request).await {
            Ok(upgraded) => {
                let mut browser = TokioIo::new(upgraded);
                let _ = tokio::io::copy_bidirectional(&mut browser, &mut upstream).await;
            }
            Err(e) => tracing::debug!("egress gate: CONNECT {url} was not upgraded: {e}"),
        }
    });
    Response::new(empty())
}

/// An absolute-form request: judged, sent in origin form on a connection
/// to the checked address (or as it is to the upstream proxy), its answer
/// streamed back; a `101` joins both sides for the WebSocket.
async fn forward(
    mut request: Request<Incoming>,
    shared: &Shared,
    kept: &Mutex<Option<Kept>>,
) -> Response<Body> {
    let uri = request.uri().clone();
    let host = uri.host().unwrap_or_default().to_owned();
    let port = uri.port_u16().unwrap_or(80);
    let upgrading = request.headers().contains_key(UPGRADE);
    // The whole URL of a plain-http request, judged by the rules that
    // refuse by path in every spelling of its path and host: a worker's
    // request (no request stage, a blocklist matching patterns only as
    // written) or a speculation's (issue 41, finding 4). A document of the
    // agent's was judged the same way before it got here.
    if let Some(verdict) = shared.judge.paths.refused_by_path(&uri.to_string()) {
        if verdict.decision == Decision::Deny || !shared.granted(&host, port) {
            return refuse_path(shared, &uri.to_string(), verdict.rule);
        }
    }
    let reused = kept
        .lock()
        .unwrap()
        .take()
        .filter(|k| k.host == host && k.port == port && !k.sender.is_closed());
    let (mut sender, via_upstream) = match reused {
        Some(k) => (k.sender, k.via_upstream),
        None => {
            let (stream, via_upstream) = match open(shared, &host, port, &uri.to_string(), false).await {
                Ok(opened) => opened,
                Err(response) => return response,
            };
            let handshake = hyper::client::conn::http1::Builder::new()
                .handshake::<_, Body>(TokioIo::new(stream))
                .await;
            let (sender, connection) = match handshake {
                Ok(pair) => pair,
                Err(e) => return text(StatusCode::BAD_GATEWAY, format!("cdpilot's egress gate: {e}")),
            };
            tokio::spawn(async move {
                if let Err(e) = connection.with_upgrades().await {
                    tracing::debug!("egress gate: an upstream connection ended: {e}");
                }
            });
            (sender, via_upstream)
        }
    };
    let browser_upgrade = upgrading.then(|| hyper::upgrade::on(&mut request));
    let (mut parts, body) = request.into_parts();
    let headers = &mut parts.headers;
    headers.remove("proxy-connection");
    headers.remove("proxy-authorization");
    if via_upstream {
        if let Some(auth) = shared
            .judge
            .upstream
            .as_ref()
            .and_then(|u| u.authorization.as_ref())
        {
            if let Ok(value) = HeaderValue::from_str(auth) {
                headers.insert("proxy-authorization", value);
            }
        }
    } else {
        let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
        parts.uri = match path.parse() {
            Ok(uri) => uri,
            Err(_) => {
                return text(
                    StatusCode::BAD_REQUEST,
                    "a request path that does not parse".into(),
                )
            }
        };
    }
    if !upgrading
        && headers
            .get(CONNECTION)
            .is_some_and(|c| c.as_bytes().eq_ignore_ascii_case(b"upgrade"))
    {
        headers.remove(CONNECTION);
    }
    let request = Request::from_parts(parts, body.boxed());
    if sender.ready().await.is_err() {
        return text(
            StatusCode::BAD_GATEWAY,
            "cdpilot's egress gate: the upstream connection closed".into(),
        );
    }
    let mut response = match sender.send_request(request).await {
        Ok(response) => response,
        Err(e) => return text(StatusCode::BAD_GATEWAY, format!("cdpilot's egress gate: {e}")),
    };
    if response.status() == StatusCode::SWITCHING_PROTOCOLS {
        let upstream_upgrade = hyper::upgrade::on(&mut response);
        if let Some(browser_upgrade) = browser_upgrade {
            tokio::spawn(async move {
                if let (Ok(browser), Ok(upstream)) = tokio::join!(browser_upgrade, upstream_upgrade) {
                    let (mut browser, mut upstream) = (TokioIo::new(browser), TokioIo::new(upstream));
                    let _ = tokio::io::copy_bidirectional(&mut browser, &mut upstream).await;
                }
            });
        }
    } else if !upgrading {
        *kept.lock().unwrap() = Some(Kept {
            host,
            port,
            sender,
            via_upstream,
        });
    }
    response.map(|body| body.boxed())
}

/// A plain-http request a rule refuses by path: `403`, no upstream
/// connection, recorded on the door (by its whole URL) for the session's
/// next result.
fn refuse_path(shared: &Shared, url: &str, rule: String) -> Response<Body> {
    let message = format!("Blocked by cdpilot's egress gate: {url} is refused by {rule}.");
    shared.refusals.record(Refusal {
        url: url.to_owned(),
        host: url.to_owned(),
        rule,
        blocked: super::Blocked::Connection,
        at: std::time::Instant::now(),
    });
    text(StatusCode::FORBIDDEN, message)
}

/// Judges a connection to `host:port` and opens it: to an address the gate
/// resolved and checked, or through the user's upstream proxy (a tunnel,
/// or a connection to the proxy for absolute-form requests). A refusal is
/// recorded on the door and answered `403`; a failure `502`. The flag says
/// the stream goes to the upstream proxy.
async fn open(
    shared: &Shared,
    host: &str,
    port: u16,
    url: &str,
    tunnel: bool,
) -> Result<(TcpStream, bool), Response<Body>> {
    let judge = &shared.judge;
    let refuse = |rule: String| {
        let message = format!("Blocked by cdpilot's egress gate: {url} is refused by {rule}.");
        shared.refusals.record(Refusal {
            url: url.to_owned(),
            host: format!("{}:{port}", canonical_host(host)),
            rule,
            blocked: super::Blocked::Connection,
            at: std::time::Instant::now(),
        });
        text(StatusCode::FORBIDDEN, message)
    };
    let verdict = judge.rules.judge(host, port);
    match verdict.decision {
        Decision::Allow => {}
        Decision::Deny => return Err(refuse(verdict.rule)),
        // A connection never reaches a person (a WebSocket, a worker's
        // fetch, a beacon): it passes only where the user already allowed
        // the origin (issue 34, finding 4).
        Decision::Ask if shared.granted(host, port) => {}
        Decision::Ask => {
            return Err(refuse(format!(
                "{} (an ask rule: the user has not allowed this host)",
                verdict.rule
            )))
        }
    }
    let addresses = match lookup(host, port).await {
        Ok(addresses) if !addresses.is_empty() => addresses,
        // The user's proxy may resolve names this machine cannot; without
        // the private-network guard nothing here needs the address.
        _ if judge.upstream.is_some() && !judge.block_private => Vec::new(),
        Ok(_) => {
            return Err(unreachable(
                "net::ERR_NAME_NOT_RESOLVED",
                format!("{host} has no address"),
            ))
        }
        Err(e) => {
            return Err(unreachable(
                "net::ERR_NAME_NOT_RESOLVED",
                format!("cannot resolve {host}: {e}"),
            ))
        }
    };
    for address in &addresses {
        let ip = plain(address.ip());
        if let Some(rule) = judge.rules.denies_address(ip, port) {
            return Err(refuse(format!("{rule} ({host} is {ip})")));
        }
        if judge.block_private {
            if let Some(why) = is_private(ip) {
                return Err(refuse(format!(
                    "[policy] block_private_networks ({host} is {ip}, {why})"
                )));
            }
        }
    }
    // A deny written with a name refuses the name's addresses, whatever
    // name or address the page wrote (issue 34, finding 3).
    if let Some((rule, name, ip)) = judge.denied_names.refusing(&judge.rules, &addresses, port).await {
        return Err(refuse(format!("{rule} ({host} is {ip}, an address of {name})")));
    }
    let failed = |e: std::io::Error| {
        let net_error = match e.kind() {
            std::io::ErrorKind::ConnectionRefused => "net::ERR_CONNECTION_REFUSED",
            std::io::ErrorKind::TimedOut => "net::ERR_CONNECTION_TIMED_OUT",
            _ => "net::ERR_CONNECTION_FAILED",
        };
        unreachable(net_error, format!("cdpilot's egress gate: {url}: {e}"))
    };
    match &judge.upstream {
        // The user's proxy is told the name (it may route by it); with the
        // private-network guard on, the name was checked above.
        Some(upstream) if tunnel => upstream
            .tunnel(host, port)
            .await
            .map(|s| (s, true))
            .map_err(failed),
        Some(upstream) => upstream.connect().await.map(|s| (s, true)).map_err(failed),
        None => connect_checked(&addresses)
            .await
            .map(|s| (s, false))
            .map_err(failed),
    }
}

/// Connects to the first of `addresses` that answers (each checked by the
/// caller: never a fresh lookup).
async fn connect_checked(addresses: &[SocketAddr]) -> std::io::Result<TcpStream> {
    let mut last = std::io::Error::other("no address");
    for address in addresses {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(address)).await {
            Ok(Ok(stream)) => {
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
            Ok(Err(e)) => last = e,
            Err(_) => {
                last = std::io::Error::new(std::io::ErrorKind::TimedOut, format!("{address}: no answer"))
            }
        }
    }
    Err(last)
}

/// The header that carries, on the gate's `502`, the network error the
/// browser would have met without the gate (`net::ERR_CONNECTION_REFUSED`):
/// a proxy can only answer a plain-http request with a response, so the
/// tab's reader ([`crate::tab`]) reads it back and navigate fails as it
/// would have (`navigation_failed`), not as a page that says 502.
pub const GATE_ERROR_HEADER: &str = "x-cdpilot-gate-error";

/// `502` for a host the gate let through but could not reach.
fn unreachable(net_error: &'static str, message: String) -> Response<Body> {
    let mut response = text(StatusCode::BAD_GATEWAY, message);
    response
        .headers_mut()
        .insert(GATE_ERROR_HEADER, HeaderValue::from_static(net_error));
    response
}

fn text(status: StatusCode, message: String) -> Response<Body> {
    let mut response = Response::new(
        Full::new(Bytes::from(message))
            .map_err(|never| match never {})
            .boxed(),
    );
    *response.status_mut() = status;
    response.headers_mut().insert(
        "content-type",
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn empty() -> Body {
    http_body_util::Empty::new()
        .map_err(|never| match never {})
        .boxed()
}
