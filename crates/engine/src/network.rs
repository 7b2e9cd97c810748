//! The tab's request log: its last 500 requests (its iframes' too, cross-
//! origin ones from their own sessions) and the origins whose documents it
//! loaded (what `browser_storage save` reads localStorage from).
//!
//! Owns only bookkeeping, fed by the tab's event reader through
//! `TabState::apply_from` and unit-tested without a browser. Bodies are not
//! kept here: `browser_network get` asks the session that saw the request.

use std::collections::{BTreeSet, VecDeque};

use cdp::protocol::network;
use cdp::Event;
use serde_json::{Map, Value};

/// How many requests a tab keeps.
pub const KEPT: usize = 500;

/// The longest URL kept whole (a `data:` URL can be megabytes): longer
/// ones are cut here and end with `…` (issue 24).
pub const URL_KEPT: usize = 4096;

/// The longest request body kept with its request; a longer one is left to
/// `browser_network get`, which asks the browser for it.
pub const BODY_KEPT: usize = 8192;

/// How many document origins a tab remembers (what `browser_storage
/// save` visits); later ones are not added.
pub const ORIGINS_KEPT: usize = 1000;

/// One request as the tab saw it.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// `r12`: what the model names it by; never reused in a tab.
    pub id: String,
    /// The browser's request id (shared by the hops of a redirect chain).
    pub cdp_id: String,
    /// The CDP session that reported it (the tab's, or an iframe's).
    pub session: String,
    pub method: String,
    pub url: String,
    /// `document`, `xhr`, `fetch`, `script`, … (lowercase).
    pub kind: String,
    pub status: Option<i64>,
    /// Why it failed (`net::ERR_…`), if it did.
    pub failed: Option<String>,
    started: f64,
    ended: Option<f64>,
    /// Bytes received, once finished.
    pub bytes: Option<u64>,
    pub request_headers: Map<String, Value>,
    /// The body as the request event carried it (absent when large).
    pub post_data: Option<String>,
    /// The request has a body, even when `post_data` does not hold it.
    pub has_post_data: bool,
    pub response_headers: Map<String, Value>,
    pub mime_type: String,
}

impl Request {
    /// Milliseconds from sending to the end (or the response), if known.
    pub fn ms(&self) -> Option<u64> {
        let end = self.ended?;
        Some(((end - self.started).max(0.0) * 1000.0).round() as u64)
    }
}

/// The tab's last [`KEPT`] requests, oldest first.
#[derive(Debug, Default)]
pub struct Requests {
    ring: VecDeque<Request>,
    /// Numbers `r1`, `r2`, …
    issued: u64,
    /// Origins (`http://host:port`) of documents the tab or its frames loaded.
    origins: BTreeSet<String>,
}

impl Requests {
    /// Records one event of `event.session_id` (any event: others are ignored).
    pub fn record(&mut self, event: &Event) {
        let session = event.session_id.as_str();
        if let Some(sent) = event.decode::<network::RequestWillBeSent>() {
            if let Some(redirect) = &sent.redirect_response {
                if let Some(hop) = self.find_mut(session, &sent.request_id) {
                    hop.status = Some(redirect.status);
                    hop.response_headers = redirect.headers.clone();
                    hop.ended = Some(sent.timestamp);
                }
            }
            self.issued += 1;
            let request = sent.request;
            self.ring.push_back(Request {
                id: format!("r{}", self.issued),
                cdp_id: sent.request_id,
                session: session.to_owned(),
                method: request.method,
                url: clip_url(request.url),
                kind: sent.kind.to_ascii_lowercase(),
                started: sent.timestamp,
                request_headers: request.headers,
                post_data: request.post_data.filter(|body| body.len() <= BODY_KEPT),
                has_post_data: request.has_post_data,
                ..Default::default()
            });
            if self.ring.len() > KEPT {
                self.ring.pop_front();
            }
        } else if let Some(received) = event.decode::<network::ResponseReceived>() {
            if received.kind == "Document" {
                if let Some(origin) = web_origin(&received.response.url) {
                    if self.origins.len() < ORIGINS_KEPT {
                        self.origins.insert(origin);
                    }
                }
            }
            if let Some(r) = self.find_mut(session, &received.request_id) {
                r.status = Some(received.response.status);
                r.response_headers = received.response.headers;
                r.mime_type = received.response.mime_type;
            }
        } else if let Some(finished) = event.decode::<network::LoadingFinished>() {
            if let Some(r) = self.find_mut(session, &finished.request_id) {
                r.ended = Some(finished.timestamp);
                r.bytes = Some(finished.encoded_data_length.max(0.0) as u64);
            }
        } else if let Some(failed) = event.decode::<network::LoadingFailed>() {
            if let Some(r) = self.find_mut(session, &failed.request_id) {
                r.ended = Some(failed.timestamp);
                r.failed = Some(match (failed.canceled, failed.blocked_reason) {
                    (_, Some(reason)) => format!("blocked ({reason})"),
                    (true, None) => "canceled".to_owned(),
                    (false, None) => failed.error_text,
                });
            }
        }
    }

    /// The latest hop of request `cdp_id` of `session`.
    fn find_mut(&mut self, session: &str, cdp_id: &str) -> Option<&mut Request> {
        self.ring
            .iter_mut()
            .rev()
            .find(|r| r.cdp_id == cdp_id && r.session == session)
    }

    /// Every kept request, oldest first.
    pub fn list(&self) -> impl Iterator<Item = &Request> {
        self.ring.iter()
    }

    /// Request `id` (`r12`), if it is still kept.
    pub fn get(&self, id: &str) -> Option<&Request> {
        self.ring.iter().find(|r| r.id == id)
    }

    /// Origins whose documents the tab loaded.
    pub fn origins(&self) -> impl Iterator<Item = &String> {
        self.origins.iter()
    }
}

/// `url`, cut after [`URL_KEPT`] bytes (on a character boundary).
fn clip_url(mut url: String) -> String {
    if url.len() > URL_KEPT {
        let mut end = URL_KEPT;
        while !url.is_char_boundary(end) {
            end -= 1;
        }
        url.truncate(end);
        url.push('…');
    }
    url
}

/// `scheme://host:port` of an http(s) URL.
pub fn web_origin(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    matches!(parsed.scheme(), "http" | "https").then(|| parsed.origin().ascii_serialization())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(session: &str, method: &str, params: Value) -> Event {
        Event {
            session_id: session.into(),
            method: method.into(),
            params,
        }
    }

    #[test]
    fn requests_are_followed_through_redirects_to_their_end_and_capped() {
        let mut log = Requests::default();
        let sent = |id: &str, url: &str, t: f64| {
            json!({"requestId": id, "type": "Document", "timestamp": t,
                   "request": {"url": url, "method": "GET", "headers": {}}})
        };
        log.record(&event(
            "",
            "Network.requestWillBeSent",
            sent("1", "http://a.test/r", 1.0),
        ));
        let mut hop = sent("1", "http://a.test/", 1.1);
        hop["redirectResponse"] = json!({"status": 302, "url": "http://a.test/r"});
        log.record(&event("", "Network.requestWillBeSent", hop));
        log.record(&event(
            "",
            "Network.responseReceived",
            json!({"requestId": "1", "type": "Document", "response": {"status": 200, "url": "http://a.test/", "mimeType": "text/html"}}),
        ));
        log.record(&event(
            "",
            "Network.loadingFinished",
            json!({"requestId": "1", "timestamp": 1.25, "encodedDataLength": 300}),
        ));
        // Same id on another session is another request.
        log.record(&event(
            "S2",
            "Network.requestWillBeSent",
            sent("1", "http://b.test/x", 2.0),
        ));
        log.record(&event(
            "S2",
            "Network.loadingFailed",
            json!({"requestId": "1", "timestamp": 2.5, "errorText": "net::ERR_FAILED"}),
        ));
        let all: Vec<&Request> = log.list().collect();
        assert_eq!(all.len(), 3);
        assert_eq!((all[0].status, all[0].ms()), (Some(302), Some(100)));
        assert_eq!(
            (all[1].status, all[1].bytes, all[1].ms()),
            (Some(200), Some(300), Some(150))
        );
        assert_eq!(all[2].failed.as_deref(), Some("net::ERR_FAILED"));
        assert_eq!(log.get("r3").unwrap().session, "S2");
        assert_eq!(log.origins().collect::<Vec<_>>(), ["http://a.test"]);
        for i in 0..KEPT {
            log.record(&event(
                "",
                "Network.requestWillBeSent",
                sent(&format!("x{i}"), "http://a.test/", 3.0),
            ));
        }
        assert_eq!(log.list().count(), KEPT);
        assert!(log.get("r1").is_none() && log.get("r503").is_some());
    }

    /// Issue 24: a page sending megabyte `data:` URLs and bodies keeps the
    /// log within its bounds (each URL cut, each long body left to `get`).
    #[test]
    fn long_urls_and_bodies_are_not_kept_whole() {
        let mut log = Requests::default();
        let sent = |id: &str, url: &str, t: f64| {
            json!({"requestId": id, "type": "Fetch", "timestamp": t,
                   "request": {"url": url, "method": "POST", "headers": {}}})
        };
        let long = format!("data:text/plain,{}", "é".repeat(1 << 20));
        for i in 0..KEPT + 10 {
            let mut params = sent(&format!("y{i}"), &long, 1.0);
            params["request"]["postData"] = json!("b".repeat(1 << 20));
            params["request"]["hasPostData"] = json!(true);
            log.record(&event("", "Network.requestWillBeSent", params));
        }
        assert_eq!(log.list().count(), KEPT);
        let held: usize = log
            .list()
            .map(|r| r.url.len() + r.post_data.as_ref().map_or(0, String::len))
            .sum();
        assert!(held <= KEPT * (URL_KEPT + 3), "{held} bytes of URLs and bodies");
        let last = log.list().last().unwrap();
        assert!(last.url.ends_with('…') && last.has_post_data && last.post_data.is_none());
    }
}
