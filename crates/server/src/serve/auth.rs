//! Who may talk to `cdpilot serve`: the bearer token every endpoint
//! requires, and the `Host`/`Origin` check against DNS rebinding (a web
//! page whose name resolves to 127.0.0.1 must not reach a loopback server).
//!
//! Owns the token and the allowed origins; touches nothing else.

use std::io::Read;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The path whose token may come in the first message instead of a header
/// (browsers cannot set headers on a WebSocket upgrade).
pub const WS_PATH: &str = "/v1/ws";

/// The load balancers' probe: answered without a token (it says only
/// whether the server can take sessions).
pub const HEALTH_PATH: &str = "/healthz";

pub struct Guard {
    token: String,
    /// The address served; a loopback one means `Host` must be a loopback name.
    listen: SocketAddr,
    /// `[serve] allowed_origins`, besides the server's own.
    allowed_origins: Vec<String>,
}

/// Set on a request whose `Authorization` header carried the right token.
#[derive(Clone, Copy)]
pub struct HeaderAuthenticated;

impl Guard {
    pub fn new(token: String, listen: SocketAddr, allowed_origins: Vec<String>) -> Guard {
        Guard {
            token,
            listen,
            allowed_origins,
        }
    }

    /// Compares in time independent of where the first difference is.
    pub fn token_matches(&self, offered: &str) -> bool {
        let (a, b) = (offered.as_bytes(), self.token.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }

    fn host_allowed(&self, headers: &HeaderMap) -> bool {
        if !self.listen.ip().is_loopback() {
            // Reachable by name from elsewhere; the token is the guard.
            return true;
        }
        let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
            return false;
        };
        let name = match host.rsplit_once(':') {
            Some((name, port)) if !name.is_empty() && !port.contains(']') => {
                if port != self.listen.port().to_string() {
                    return false;
                }
                name
            }
            _ => host,
        };
        matches!(name, "localhost" | "127.0.0.1" | "[::1]")
    }

    fn origin_allowed(&self, headers: &HeaderMap) -> bool {
        let Some(origin) = headers.get(header::ORIGIN) else {
            return true; // not a browser page's request
        };
        let Ok(origin) = origin.to_str() else {
            return false;
        };
        if self.allowed_origins.iter().any(|o| o == origin) {
            return true;
        }
        // The cdpilot extension's pages and service worker (its relay
        // socket and pairing); nothing else of a chrome-extension:// origin.
        if origin == format!("chrome-extension://{}", super::extension::EXTENSION_ID) {
            return true;
        }
        // The server's own pages: the origin names the host that was asked.
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        host.is_some_and(|host| origin == format!("http://{host}") || origin == format!("https://{host}"))
    }
}

/// The cookie the dashboard keeps the token in (set by `/?token=…`).
pub const COOKIE: &str = "cdpilot_token";

/// The token in the request's `cdpilot_token` cookie.
fn cookie_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(COOKIE)?.strip_prefix('='))
}

/// `/?token=…` with the right token: keep it in an HttpOnly cookie and go
/// to `/` (so the token leaves the address bar and the history).
fn login(guard: &Guard, request: &Request) -> Option<Response> {
    if request.uri().path() != "/" {
        return None;
    }
    let offered = query_value(request, "token")?;
    if !guard.token_matches(offered) {
        return Some(refuse(
            StatusCode::UNAUTHORIZED,
            "bad_token: the token in the address is wrong",
        ));
    }
    let cookie = format!("{COOKIE}={offered}; HttpOnly; SameSite=Strict; Path=/");
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    headers.insert(header::LOCATION, header::HeaderValue::from_static("/"));
    if let Ok(value) = header::HeaderValue::from_str(&cookie) {
        headers.insert(header::SET_COOKIE, value);
    }
    Some(response)
}

/// Middleware on every route: `Host`, `Origin`, then the bearer token (or
/// the dashboard's cookie; not asked of [`HEALTH_PATH`], where a wrong one
/// offered is still refused).
pub async fn check(State(guard): State<Arc<Guard>>, mut request: Request, next: Next) -> Response {
    let headers = request.headers();
    if !guard.host_allowed(headers) {
        return refuse(
            StatusCode::FORBIDDEN,
            "the Host header does not name this loopback server (DNS rebinding guard); connect to 127.0.0.1 or localhost",
        );
    }
    if !guard.origin_allowed(headers) {
        return refuse(
            StatusCode::FORBIDDEN,
            "this Origin may not use the server; add it to [serve] allowed_origins",
        );
    }
    if let Some(response) = login(&guard, &request) {
        return response;
    }
    let headers = request.headers();
    if let Some(offered) = cookie_token(headers) {
        if !guard.token_matches(offered) {
            return refuse(
                StatusCode::UNAUTHORIZED,
                "bad_token: the dashboard's cookie holds a wrong token; open /?token=<token> again",
            );
        }
        request.extensions_mut().insert(HeaderAuthenticated);
        return next.run(request).await;
    }
    match headers.get(header::AUTHORIZATION) {
        Some(value) => {
            let offered = value.to_str().ok().and_then(|v| v.strip_prefix("Bearer "));
            if !offered.is_some_and(|t| guard.token_matches(t.trim())) {
                return refuse(StatusCode::UNAUTHORIZED, "bad_token: the bearer token is wrong");
            }
            request.extensions_mut().insert(HeaderAuthenticated);
        }
        // The WebSocket API may carry the token in `hello` instead.
        None if request.uri().path() == WS_PATH => {}
        // The extension's relay proves its pairing in its own handshake.
        None if request.uri().path() == super::extension::PATH => {}
        None if request.uri().path() == HEALTH_PATH => {}
        None => {
            return refuse(
                StatusCode::UNAUTHORIZED,
                "bad_token: send Authorization: Bearer <token> (printed by cdpilot serve at start, or [serve] token); for the dashboard open /?token=<token>",
            )
        }
    }
    next.run(request).await
}

fn refuse(status: StatusCode, message: &str) -> Response {
    let mut response = (status, format!("{message}\n")).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
    }
    response
}

/// `bytes` random bytes from the OS, as hex.
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .expect("reading /dev/urandom");
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// The request's query value of `name`, percent-decoding nothing (ids and
/// tokens are plain).
pub fn query_value<'a>(request: &'a Request, name: &str) -> Option<&'a str> {
    request.uri().query()?.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        (key == name).then_some(value)
    })
}
