//! Who may talk to a listener of cdpilot (`cdpilot serve`'s, the
//! extension's, `cdpilot mcp`'s hand-off listener): the one guard every
//! route passes ([`check`]: the `Host`/`Origin` check against DNS rebinding
//! and other sites' pages, then the route's credential, never a cookie),
//! and no framing of any answer.
//!
//! Owns the token and the allowed origins; which credential each route
//! asks is declared with the route in `routes.rs`; this file is below it.

use std::io::Read;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// What a route asks of a request besides the right `Host` and `Origin`
/// (the guard asks those of every route).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    /// `Authorization: Bearer <token>` (serve's token). Never a cookie.
    Bearer,
    /// A WebSocket whose first message carries the credential (a browser
    /// cannot set a header on an upgrade): serve's token in the WebSocket
    /// API's `hello` and the dashboard's live view's `{"token"}`, the relay's
    /// pairing code or extension token in its `hello`. A bearer header,
    /// when sent, must be right.
    FirstMessage,
    /// A hand-off's link: its id (128 random bits) and, for its socket,
    /// its one-time token (`?t=`); checked by the hand-off's handler
    /// against the open hand-offs (an unknown or ended one answers 410).
    HandoffLink,
    /// None: a static file, the same for everyone (a page's shell, its
    /// script, `/healthz`). A bearer header, when sent, must be right.
    Public,
}

/// The cdpilot extension's id, fixed by the `key` in
/// `extension/manifest.json`: its pages and service worker are an origin
/// the guard lets in (the relay, `extension.rs`, above this module, names
/// it too).
pub const EXTENSION_ID: &str = "cgolnlbbddjholdlhbgdgeffmhifhpfg";

pub struct Guard {
    token: String,
    /// The address served; a loopback one means `Host` must be a loopback name.
    listen: SocketAddr,
    /// `[serve] allowed_origins`, besides the server's own.
    allowed_origins: Vec<String>,
}

/// Set on a request whose `Authorization` header carried the right token
/// (a socket that had it needs no credential in its first message).
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
        if origin == format!("chrome-extension://{}", EXTENSION_ID) {
            return true;
        }
        // The server's own pages: the origin names the host that was asked.
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        host.is_some_and(|host| origin == format!("http://{host}") || origin == format!("https://{host}"))
    }
}

/// The one guard of every route of every listener (`routes.rs` wraps each
/// route in it as the route is declared): `Host` (DNS rebinding), `Origin`
/// (another site's page), then the route's [`Credential`]. No cookie is
/// ever read: a cookie reaches every port of the host and any page of the
/// host can set one, so it could neither keep the token to this server
/// nor be trusted not to lock the person out.
pub async fn check(
    State((guard, credential)): State<(Arc<Guard>, Credential)>,
    mut request: Request,
    next: Next,
) -> Response {
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
    let offered = headers.get(header::AUTHORIZATION).map(|value| {
        value
            .to_str()
            .ok()
            .and_then(|v| v.strip_prefix("Bearer "))
            .is_some_and(|t| guard.token_matches(t.trim()))
    });
    match (credential, offered) {
        // The hand-off's handler checks its link against the open hand-offs.
        (Credential::HandoffLink, _) => {}
        (_, Some(false)) => return refuse(StatusCode::UNAUTHORIZED, "bad_token: the bearer token is wrong"),
        (_, Some(true)) => {
            request.extensions_mut().insert(HeaderAuthenticated);
        }
        // The socket's first message carries it (checked there); a static file asks none.
        (Credential::FirstMessage | Credential::Public, None) => {}
        (Credential::Bearer, None) => {
            return refuse(
                StatusCode::UNAUTHORIZED,
                "bad_token: send Authorization: Bearer <token> (printed by cdpilot serve at start, or [serve] token); for the dashboard open /#token=<token>",
            )
        }
    }
    next.run(request).await
}

/// Every answer of a listener says it may not be framed
/// (`X-Frame-Options: DENY`, CSP `frame-ancestors 'none'`): a page the
/// agent visits must not frame the dashboard or a hand-off page and trick
/// a person into pressing Stop, Allow, Done or a dialog's answer
/// (clickjacking).
pub async fn no_framing(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::X_FRAME_OPTIONS, header::HeaderValue::from_static("DENY"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        header::HeaderValue::from_static("frame-ancestors 'none'"),
    );
    response
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
