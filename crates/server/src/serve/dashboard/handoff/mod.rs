//! The hand-off page (`browser_handoff`): `GET /handoff/<id>#<token>` (or
//! `?t=<token>`) shows a person the handed tab live and lets them act on it;
//! its WebSocket `GET /handoff/<id>/live?t=<token>` carries the frames and
//! the tab's URL one way and the person's input the other (`live.rs`).
//!
//! These routes need no server token: the link is their credential (its id,
//! 128 random bits, and its one-time token, bound to that hand-off and tab
//! and ended with it: then the page answers 410 "This hand-off has
//! ended"). They pass the same guard as every route (Host, Origin, no
//! framing) on both listeners. They are served by `cdpilot serve`'s listener and
//! by the loopback listener `cdpilot mcp` starts the first time a hand-off
//! needs one ([`OnDemand`]). Owns the routes and that listener; the open
//! hand-offs are the engine's (`engine::handoff`).

mod live;

use std::sync::Arc;

use axum::extract::{Path, Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use engine::handoff::{Handoffs, PageHost, Pending};
use tokio::sync::OnceCell;

use crate::serve::auth::{random_hex, Guard};
use crate::serve::routes::{Credential, Routes};

const PAGE: &str = include_str!("page.html");
const PAGE_JS: &str = include_str!("page.js");

/// What an ended, expired or wrong link answers.
const ENDED: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Hand-off ended</title></head><body><h1>This hand-off has ended</h1><p>The agent has the browser again. You can close this page.</p></body></html>\n";

/// The hand-off routes over `handoffs`, guarded by `guard` (Host, Origin,
/// no framing; the link is their credential, see `routes.rs`).
pub fn routes(handoffs: Arc<Handoffs>, guard: Arc<Guard>) -> Routes {
    use Credential::{HandoffLink, Public};
    Routes::<Arc<Handoffs>>::new(guard)
        .get("/handoff/page.js", Public, || async {
            asset("text/javascript", PAGE_JS)
        })
        .get("/handoff/{id}", HandoffLink, page)
        .get("/handoff/{id}/live", HandoffLink, live::upgrade)
        .with_state(handoffs)
}

/// Every route of `cdpilot mcp`'s hand-off listener at `local`: the
/// hand-off routes alone, behind the same guard as serve's (its `Host` must
/// name that loopback address; no `Origin` but its own; no bearer token
/// exists there, so a path nobody declared is refused).
pub fn on_demand_routes(handoffs: Arc<Handoffs>, local: std::net::SocketAddr) -> Routes {
    let guard = Arc::new(Guard::new(random_hex(32), local, Vec::new()));
    routes(handoffs, guard)
}

fn asset(mime: &'static str, body: &'static str) -> Response {
    (
        [(header::CONTENT_TYPE, mime), (header::CACHE_CONTROL, "no-store")],
        body,
    )
        .into_response()
}

/// `410 Gone` with the plain "This hand-off has ended" page.
pub(crate) fn ended() -> Response {
    (
        StatusCode::GONE,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        ENDED,
    )
        .into_response()
}

/// `GET /handoff/<id>`: the page while the hand-off is open (the token in
/// the fragment never reaches the server; one in `?t=` is checked here).
async fn page(State(handoffs): State<Arc<Handoffs>>, Path(id): Path<String>, request: Request) -> Response {
    let open = match super::query_value(&request, "t") {
        Some(token) => handoffs.find(&id, token).is_some(),
        None => handoffs.is_open(&id),
    };
    if !open {
        return ended();
    }
    let mut response = asset("text/html; charset=utf-8", PAGE);
    // The link's token must not leak to what the page loads.
    response.headers_mut().insert(
        header::REFERRER_POLICY,
        header::HeaderValue::from_static("no-referrer"),
    );
    response
}

/// `cdpilot serve`'s listener as the page host: its own address (a
/// wildcard one named as loopback).
pub struct Served {
    /// `http://HOST:PORT`.
    pub origin: String,
}

impl Served {
    /// The origin people reach the listener `local` at.
    pub fn at(local: std::net::SocketAddr) -> Served {
        let host = match local.ip() {
            ip if ip.is_unspecified() => "127.0.0.1".to_owned(),
            std::net::IpAddr::V6(ip) => format!("[{ip}]"),
            ip => ip.to_string(),
        };
        Served {
            origin: format!("http://{host}:{}", local.port()),
        }
    }
}

impl PageHost for Served {
    fn origin(&self) -> Pending<'_, Result<String, String>> {
        let origin = self.origin.clone();
        Box::pin(async move { Ok(origin) })
    }
}

/// `cdpilot mcp`'s hand-off listener: none until a hand-off needs one,
/// then one on `127.0.0.1` (a free port) for the rest of the process.
pub struct OnDemand {
    handoffs: std::sync::Weak<Handoffs>,
    /// The listener's origin once started (started once, for all callers).
    started: OnceCell<String>,
}

impl OnDemand {
    /// A host that serves `handoffs`' pages once asked.
    pub fn new(handoffs: &Arc<Handoffs>) -> OnDemand {
        OnDemand {
            handoffs: Arc::downgrade(handoffs),
            started: OnceCell::new(),
        }
    }

    async fn start(&self) -> Result<String, String> {
        let handoffs = self
            .handoffs
            .upgrade()
            .ok_or_else(|| "the engine is shutting down".to_owned())?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("cannot listen on 127.0.0.1 for the hand-off page: {e}"))?;
        let local = listener
            .local_addr()
            .map_err(|e| format!("cannot read the hand-off listener's address: {e}"))?;
        let routes = on_demand_routes(handoffs, local);
        tokio::spawn(async move {
            if let Err(e) = routes.serve_on(listener).await {
                tracing::warn!("the hand-off listener stopped: {e}");
            }
        });
        let origin = Served::at(local).origin;
        tracing::info!("hand-off pages are served at {origin}/handoff/…");
        Ok(origin)
    }
}

impl PageHost for OnDemand {
    fn origin(&self) -> Pending<'_, Result<String, String>> {
        Box::pin(async move { self.started.get_or_try_init(|| self.start()).await.cloned() })
    }
}
