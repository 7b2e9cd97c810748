//! The route table of a listener (`cdpilot serve`'s, the extension's,
//! `cdpilot mcp`'s on-demand hand-off listener): every route is declared
//! here with the credential it asks, and the router is made from the
//! table, each route wrapped in the one guard (`auth::check`: Host,
//! Origin, that credential) as it is declared. A route cannot be added
//! without a credential, and the table the router was made from is what
//! the guard's test walks (`crates/cdpilot/tests/serve/doors.rs`), so a
//! route added later is tried by it too.
//!
//! Owns the table and the router under construction; the checks are
//! `auth.rs`'s.

use std::sync::Arc;

use axum::handler::Handler;
use axum::http::Method;
use axum::middleware::from_fn_with_state;
use axum::routing::MethodRouter;
use axum::Router;

pub use super::auth::Credential;
use super::auth::{self, Guard};

/// One declared route: what the guard's test tries.
#[derive(Debug, Clone)]
pub struct Declared {
    /// Its path as axum matches it (`/handoff/{id}`).
    pub path: &'static str,
    /// The methods it answers.
    pub methods: Vec<Method>,
    pub credential: Credential,
}

/// A router under construction and the table it is made from.
pub struct Routes<S = ()> {
    guard: Arc<Guard>,
    router: Router<S>,
    table: Vec<Declared>,
}

impl<S: Clone + Send + Sync + 'static> Routes<S> {
    /// No route yet; each one added is guarded by `guard`.
    pub fn new(guard: Arc<Guard>) -> Routes<S> {
        Routes {
            guard,
            router: Router::new(),
            table: Vec::new(),
        }
    }

    /// `GET path` asking `credential`.
    pub fn get<H, T>(self, path: &'static str, credential: Credential, handler: H) -> Routes<S>
    where
        H: Handler<T, S>,
        T: 'static,
    {
        self.method(path, vec![Method::GET], credential, axum::routing::get(handler))
    }

    /// `POST path` asking `credential`.
    pub fn post<H, T>(self, path: &'static str, credential: Credential, handler: H) -> Routes<S>
    where
        H: Handler<T, S>,
        T: 'static,
    {
        self.method(path, vec![Method::POST], credential, axum::routing::post(handler))
    }

    /// `path` answered by `route` (MCP's transport, with its own layers
    /// under the guard) for `methods`.
    pub fn service(
        self,
        path: &'static str,
        methods: Vec<Method>,
        credential: Credential,
        route: MethodRouter<S>,
    ) -> Routes<S> {
        self.method(path, methods, credential, route)
    }

    fn method(
        mut self,
        path: &'static str,
        methods: Vec<Method>,
        credential: Credential,
        route: MethodRouter<S>,
    ) -> Routes<S> {
        let guarded = route.layer(from_fn_with_state((self.guard.clone(), credential), auth::check));
        self.router = self.router.route(path, guarded);
        self.table.push(Declared {
            path,
            methods,
            credential,
        });
        self
    }

    /// The routes given their state.
    pub fn with_state<S2>(self, state: S) -> Routes<S2> {
        Routes {
            guard: self.guard,
            router: self.router.with_state(state),
            table: self.table,
        }
    }

    /// These routes and `other`'s (each keeps the guard it was declared with).
    pub fn merge(mut self, other: Routes<S>) -> Routes<S> {
        self.router = self.router.merge(other.router);
        self.table.extend(other.table);
        self
    }

    /// The table the router is made from.
    pub fn table(&self) -> &[Declared] {
        &self.table
    }
}

impl Routes<()> {
    /// The router to serve: a path nobody declared answers 404 after the
    /// same checks as a [`Credential::Bearer`] route, and every answer
    /// says it may not be framed.
    pub fn into_router(self) -> Router {
        let unknown: MethodRouter =
            axum::routing::any(|| async { (axum::http::StatusCode::NOT_FOUND, "no such route\n") })
                .layer(from_fn_with_state((self.guard, Credential::Bearer), auth::check));
        self.router
            .fallback_service(unknown)
            .layer(axum::middleware::map_response(auth::no_framing))
    }
}

impl Routes<()> {
    /// Serves these routes on `listener` until the process ends (`cdpilot
    /// mcp`'s hand-off listener; a test's).
    pub async fn serve_on(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        axum::serve(listener, self.into_router()).await
    }
}
