//! A session's routes (`browser_network route`, `har`): requests a URL
//! pattern matches, answered at the request stage by what the agent chose
//! (aborted, fulfilled, continued with changes, delayed, or answered from a
//! HAR file), inside the URL rules: the gate ([`super::gate`]) judges a
//! routed request by the rules first, so a route never answers for a URL
//! the rules deny, nor widens an `ask`.
//!
//! Owns the session's route table (its routes, their hits, a generation the
//! tabs compare to know their interception is current) and matching one
//! paused request against it. Pure bookkeeping: the gate answers, the tab
//! re-arms its `Fetch.enable`, the tool checks the arguments.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::har::Har;
use super::rules::{Decision, Rule};

/// The most routes a session holds (a model looping on `route` meets a
/// clear error, not a table that grows per request's cost).
pub const MAX_ROUTES: usize = 100;

/// The longest body a route may answer with (inline, a file or a JSON
/// value), in bytes: `Fetch.fulfillRequest` carries it base64 in one CDP
/// message, which the transport bounds too.
pub const MAX_BODY: usize = 8 << 20;

/// The longest delay a route may hold a request, in milliseconds.
pub const MAX_DELAY_MS: u64 = 60_000;

/// What a route does with a request it matches.
#[derive(Debug, Clone)]
pub enum Answer {
    /// Fails it with this `Network.ErrorReason` (`Failed`, `Aborted`,
    /// `ConnectionRefused`…): nothing reaches the server.
    Abort {
        /// The `Network.ErrorReason`.
        reason: &'static str,
    },
    /// Answers it with this response: nothing reaches the server.
    Fulfill {
        /// The HTTP status.
        status: u16,
        /// The response headers.
        headers: Vec<(String, String)>,
        /// The body.
        body: Arc<[u8]>,
    },
    /// Lets it go on, changed.
    Continue {
        /// Request headers set (replacing one of the same name) or added.
        headers: Vec<(String, String)>,
        /// The method sent instead.
        method: Option<String>,
        /// The body sent instead.
        post_data: Option<String>,
    },
    /// Lets it go on unchanged after this many milliseconds.
    Delay {
        /// How long it holds the request.
        ms: u64,
    },
    /// Answers it from a recorded HAR; what it does not hold goes to the
    /// network (`fallback`) or fails (`not_found`).
    Har {
        /// The recorded answers.
        har: Arc<Har>,
        /// A request it holds no answer for fails (else goes on).
        not_found_fails: bool,
    },
}

impl Answer {
    /// The word `browser_network routes` lists it by.
    pub fn word(&self) -> &'static str {
        match self {
            Answer::Abort { .. } => "abort",
            Answer::Fulfill { .. } => "fulfill",
            Answer::Continue { .. } => "continue",
            Answer::Delay { .. } => "delay",
            Answer::Har { .. } => "har",
        }
    }

    /// Whether the browser would answer the request without the server
    /// (so the URL rules must allow it before the route may: a fulfilled
    /// response for a denied URL is a page the rules forbid).
    pub fn answers_itself(&self) -> bool {
        matches!(self, Answer::Fulfill { .. } | Answer::Har { .. })
    }
}

/// One route.
#[derive(Debug)]
pub struct Route {
    /// `route1`, `route2`… (never reused in a session).
    pub id: String,
    /// The URL pattern, compiled as the URL rules are ([`Rule::compile`]).
    pattern: Rule,
    /// Resource types it applies to (Chrome's, lowercased); empty: all.
    pub types: Vec<String>,
    /// What it does with a request it matches.
    pub answer: Answer,
    /// Requests it answered.
    hits: AtomicU64,
}

impl Route {
    /// A route for the URLs `pattern` matches; the error names the pattern
    /// and what is wrong with it.
    pub fn new(pattern: &str, types: Vec<String>, answer: Answer) -> Result<Route, String> {
        let compiled = Rule::compile(pattern, Decision::Allow, "route")?;
        Ok(Route {
            id: String::new(),
            pattern: compiled,
            types,
            answer,
            hits: AtomicU64::new(0),
        })
    }

    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        &self.pattern.text
    }

    /// Requests it answered so far.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Counts a request it answered (one the URL rules let through: a
    /// refused request it matched is not its hit).
    pub fn hit(&self) {
        self.hits.fetch_add(1, Ordering::Relaxed);
    }

    fn matches(&self, url: &url::Url, resource_type: &str) -> bool {
        // At the request stage Chrome reports a `fetch()` as `XHR` (the
        // request log says `fetch`): the two are one type here.
        let same = |t: &str| {
            t.eq_ignore_ascii_case(resource_type)
                || (matches!(t, "fetch" | "xhr") && matches!(resource_type, "XHR" | "Fetch"))
        };
        (self.types.is_empty() || self.types.iter().any(|t| same(t))) && self.pattern.matches(url)
    }
}

/// A session's routes, shared with the request stage of each of its tabs.
#[derive(Debug, Default)]
pub struct Routes {
    /// Newest last; the first match, newest first, answers (as Playwright:
    /// a later route overrides an earlier one). Locked for microseconds.
    table: Mutex<Table>,
    /// Bumped by every change: a tab whose interception was armed for an
    /// older generation re-arms it before its next call.
    generation: AtomicU64,
}

#[derive(Debug, Default)]
struct Table {
    next: u64,
    routes: Vec<Arc<Route>>,
}

impl Routes {
    /// Adds `route`, naming it; the error says the table is full.
    pub fn add(&self, mut route: Route) -> Result<Arc<Route>, String> {
        let mut table = self.table.lock().unwrap();
        if table.routes.len() >= MAX_ROUTES {
            return Err(format!("this session already has {MAX_ROUTES} routes"));
        }
        table.next += 1;
        route.id = format!("route{}", table.next);
        let route = Arc::new(route);
        table.routes.push(route.clone());
        self.generation.fetch_add(1, Ordering::Relaxed);
        Ok(route)
    }

    /// Removes the route `id` (every route with `None`); what it removed.
    pub fn remove(&self, id: Option<&str>) -> Vec<Arc<Route>> {
        let mut table = self.table.lock().unwrap();
        let (gone, kept) = std::mem::take(&mut table.routes)
            .into_iter()
            .partition(|r| id.is_none_or(|id| r.id == id));
        table.routes = kept;
        self.generation.fetch_add(1, Ordering::Relaxed);
        gone
    }

    /// Every route, oldest first.
    pub fn list(&self) -> Vec<Arc<Route>> {
        self.table.lock().unwrap().routes.clone()
    }

    /// Whether any route is set (the tabs then pause every request).
    pub fn any(&self) -> bool {
        !self.table.lock().unwrap().routes.is_empty()
    }

    /// The number every change bumps.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }

    /// The route that answers a request for `url` of `resource_type`
    /// (Chrome's, any case), newest first (its answer counted by
    /// [`Route::hit`]); a HAR route that holds no entry for it and lets it
    /// go to the network does not answer it.
    pub fn find(
        &self,
        url: &str,
        method: &str,
        post_data: Option<&str>,
        resource_type: &str,
    ) -> Option<Arc<Route>> {
        let parsed = url::Url::parse(url).ok()?;
        let routes = self.list();
        let found = routes.into_iter().rev().find(|r| {
            r.matches(&parsed, resource_type)
                && match &r.answer {
                    Answer::Har { har, not_found_fails } => {
                        *not_found_fails || har.find(method, url, post_data).is_some()
                    }
                    _ => true,
                }
        })?;
        Some(found)
    }
}

/// The `Network.ErrorReason` an `abort` route's `error` names (its word,
/// any case), and the words it knows.
pub fn error_reason(word: &str) -> Option<&'static str> {
    ERROR_REASONS
        .iter()
        .find(|r| r.eq_ignore_ascii_case(word))
        .copied()
}

/// `Network.ErrorReason`'s values.
pub const ERROR_REASONS: &[&str] = &[
    "Failed",
    "Aborted",
    "TimedOut",
    "AccessDenied",
    "ConnectionClosed",
    "ConnectionReset",
    "ConnectionRefused",
    "ConnectionAborted",
    "ConnectionFailed",
    "NameNotResolved",
    "InternetDisconnected",
    "AddressUnreachable",
    "BlockedByClient",
    "BlockedByResponse",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn abort() -> Answer {
        Answer::Abort { reason: "Failed" }
    }

    #[test]
    fn the_newest_matching_route_answers_and_counts_the_hit() {
        let routes = Routes::default();
        let old = routes
            .add(Route::new("http://a.test/api/*", vec![], abort()).unwrap())
            .unwrap();
        let new = routes
            .add(
                Route::new(
                    "http://a.test/api/*",
                    vec!["fetch".into()],
                    Answer::Delay { ms: 5 },
                )
                .unwrap(),
            )
            .unwrap();
        let hit = routes.find("http://a.test/api/x", "GET", None, "Fetch").unwrap();
        assert_eq!(hit.id, new.id);
        hit.hit();
        let hit = routes.find("http://a.test/api/x", "GET", None, "Image").unwrap();
        assert_eq!(hit.id, old.id, "the newer route is for fetches only");
        hit.hit();
        assert!(routes.find("http://b.test/api/x", "GET", None, "Fetch").is_none());
        assert_eq!((old.hits(), new.hits()), (1, 1));
    }

    #[test]
    fn patterns_are_url_patterns_not_string_globs() {
        let routes = Routes::default();
        routes
            .add(Route::new("https://*.example.com/*", vec![], abort()).unwrap())
            .unwrap();
        assert!(routes
            .find("https://a.example.com/x", "GET", None, "Image")
            .is_some());
        assert!(routes
            .find("https://evil.net/a.example.com/b", "GET", None, "Image")
            .is_none());
        assert!(Route::new("http://[oops", vec![], abort()).is_err());
        // As in the URL rules: a host without a port is the default port.
        routes
            .add(Route::new("*://*/pixel.png*", vec!["image".into()], abort()).unwrap())
            .unwrap();
        assert!(routes
            .find("http://127.0.0.1:4000/pixel.png?from=x", "GET", None, "Image")
            .is_none());
        routes
            .add(Route::new("*://*:*/pixel.png*", vec!["image".into()], abort()).unwrap())
            .unwrap();
        assert!(routes
            .find("http://127.0.0.1:4000/pixel.png?from=x", "GET", None, "Image")
            .is_some());
        assert!(routes
            .find("http://127.0.0.1:4000/pixel.png", "GET", None, "XHR")
            .is_none());
    }

    #[test]
    fn remove_takes_one_or_all_and_bumps_the_generation() {
        let routes = Routes::default();
        let a = routes
            .add(Route::new("http://a.test/*", vec![], abort()).unwrap())
            .unwrap();
        routes
            .add(Route::new("http://b.test/*", vec![], abort()).unwrap())
            .unwrap();
        let before = routes.generation();
        assert_eq!(routes.remove(Some(&a.id)).len(), 1);
        assert!(routes.generation() > before);
        assert_eq!(routes.list().len(), 1);
        assert_eq!(routes.remove(None).len(), 1);
        assert!(!routes.any());
    }

    #[test]
    fn the_table_is_bounded() {
        let routes = Routes::default();
        for _ in 0..MAX_ROUTES {
            routes
                .add(Route::new("http://a.test/*", vec![], abort()).unwrap())
                .unwrap();
        }
        assert!(routes
            .add(Route::new("http://a.test/*", vec![], abort()).unwrap())
            .is_err());
    }
}
