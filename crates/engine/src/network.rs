//! The tab's request log: its last 500 requests (its iframes' too, cross-
//! origin ones from their own sessions) and the origins whose documents it
//! loaded (what `browser_storage save` reads localStorage from).
//!
//! Owns only bookkeeping, fed by the tab's event reader through
//! `TabState::apply_from` and unit-tested without a browser. Bodies are not
//! kept here: `browser_network get` asks the session that saw the request.
//! Bounded in count ([`KEPT`]) and bytes ([`BYTES_KEPT`]); headers are kept
//! as text ([`Headers`]).

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

/// The most bytes of one request's or response's headers kept (as JSON
/// text); the headers past it are dropped, each value is cut at
/// [`URL_KEPT`] bytes (issue 24).
pub const HEADERS_KEPT: usize = 16 * 1024;

/// The most bytes a tab's request log holds (each request's
/// [`Request::size`]): a page of requests with long URLs, bodies or
/// headers pushes out older requests rather than pinning 500 × their
/// size. The newest request is always kept (issue 24).
pub const BYTES_KEPT: usize = 2 << 20;

/// A request's or response's headers, kept as one JSON object text: in a
/// soak over real news pages, 500 requests' headers as `Map`s of `String`s
/// were about 1.6 MiB per tab, several times their text (issue 24). Read
/// back with [`Headers::map`] (only `browser_network get` does).
#[derive(Debug, Clone, Default)]
pub struct Headers(Box<str>);

impl Headers {
    /// Keeps `map`, each value cut at [`URL_KEPT`] bytes, the headers in
    /// order until [`HEADERS_KEPT`] bytes.
    pub fn new(map: &Map<String, Value>) -> Headers {
        let mut kept = Map::new();
        let mut size = 2;
        for (name, value) in map {
            let value = match value {
                Value::String(text) if text.len() > URL_KEPT => Value::String(clip_url(text.clone())),
                other => other.clone(),
            };
            // Name, value, quotes, colon and comma.
            let entry = name.len() + value.to_string().len() + 4;
            if size + entry > HEADERS_KEPT {
                break;
            }
            size += entry;
            kept.insert(name.clone(), value);
        }
        if kept.is_empty() {
            return Headers::default();
        }
        Headers(Value::Object(kept).to_string().into_boxed_str())
    }

    /// The headers as a map (empty when none were kept).
    pub fn map(&self) -> Map<String, Value> {
        serde_json::from_str(&self.0).unwrap_or_default()
    }

    /// Their size as kept, in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// No header was kept (beside `len`, as clippy asks).
    #[allow(dead_code)]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

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
    /// When it was sent, in seconds since the epoch (the browser's wall
    /// clock, else cdpilot's when it heard of it).
    pub wall_started: f64,
    /// Bytes received, once finished.
    pub bytes: Option<u64>,
    pub request_headers: Headers,
    /// The body as the request event carried it (absent when large).
    pub post_data: Option<String>,
    /// The request has a body, even when `post_data` does not hold it.
    pub has_post_data: bool,
    pub response_headers: Headers,
    pub mime_type: String,
}

impl Request {
    /// What it holds, in bytes: its strings and headers and the record
    /// itself (what [`BYTES_KEPT`] counts).
    pub fn size(&self) -> usize {
        std::mem::size_of::<Request>()
            + self.id.len()
            + self.cdp_id.len()
            + self.session.len()
            + self.method.len()
            + self.url.len()
            + self.kind.len()
            + self.failed.as_ref().map_or(0, String::len)
            + self.request_headers.len()
            + self.post_data.as_ref().map_or(0, String::len)
            + self.response_headers.len()
            + self.mime_type.len()
    }

    /// Milliseconds from sending to the end (or the response), if known.
    pub fn ms(&self) -> Option<u64> {
        let end = self.ended?;
        Some(((end - self.started).max(0.0) * 1000.0).round() as u64)
    }
}

/// The tab's last [`KEPT`] requests (at most [`BYTES_KEPT`]), oldest first.
#[derive(Debug, Default)]
pub struct Requests {
    ring: VecDeque<Request>,
    /// The ring's [`Request::size`]s added up.
    bytes: usize,
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
                self.change(session, &sent.request_id, |hop| {
                    hop.status = Some(redirect.status);
                    hop.response_headers = Headers::new(&redirect.headers);
                    hop.ended = Some(sent.timestamp);
                });
            }
            self.issued += 1;
            let request = sent.request;
            let kept = Request {
                id: format!("r{}", self.issued),
                cdp_id: sent.request_id,
                session: session.to_owned(),
                method: request.method,
                url: clip_url(request.url),
                kind: sent.kind.to_ascii_lowercase(),
                started: sent.timestamp,
                wall_started: sent.wall_time.unwrap_or_else(crate::timing::now),
                request_headers: Headers::new(&request.headers),
                post_data: request.post_data.filter(|body| body.len() <= BODY_KEPT),
                has_post_data: request.has_post_data,
                ..Default::default()
            };
            self.bytes += kept.size();
            self.ring.push_back(kept);
            self.keep_within_bounds();
        } else if let Some(received) = event.decode::<network::ResponseReceived>() {
            if received.kind == "Document" {
                if let Some(origin) = web_origin(&received.response.url) {
                    if self.origins.len() < ORIGINS_KEPT {
                        self.origins.insert(origin);
                    }
                }
            }
            let response = received.response;
            self.change(session, &received.request_id, |r| {
                r.status = Some(response.status);
                r.response_headers = Headers::new(&response.headers);
                r.mime_type = response.mime_type;
            });
        } else if let Some(finished) = event.decode::<network::LoadingFinished>() {
            self.end(session, &finished.request_id, |r| {
                r.ended = Some(finished.timestamp);
                r.bytes = Some(finished.encoded_data_length.max(0.0) as u64);
            });
        } else if let Some(failed) = event.decode::<network::LoadingFailed>() {
            self.end(session, &failed.request_id, |r| {
                r.ended = Some(failed.timestamp);
                r.failed = Some(match (failed.canceled, failed.blocked_reason) {
                    (_, Some(reason)) => format!("blocked ({reason})"),
                    (true, None) => "canceled".to_owned(),
                    (false, None) => failed.error_text,
                });
            });
        }
    }

    /// Changes the latest hop of request `cdp_id` of `session` (if kept),
    /// counting what it holds again.
    fn change(&mut self, session: &str, cdp_id: &str, edit: impl FnOnce(&mut Request)) {
        let at = self.latest(session, cdp_id);
        self.change_at(at, edit);
    }

    /// Ends request `cdp_id` of `session` with `edit`. A cross-origin
    /// frame's document is the one request whose end comes from another
    /// session: Chrome reports its request and response in the parent
    /// frame's session and its end in the frame's own (attached
    /// meanwhile), which is also the one that answers for its body. So an
    /// end `session` has no such request of is the latest unfinished
    /// document of that id in another session, and it moves here.
    fn end(&mut self, session: &str, cdp_id: &str, edit: impl FnOnce(&mut Request)) {
        let at = self.latest(session, cdp_id).or_else(|| {
            let (at, r) = self.ring.iter_mut().enumerate().rev().find(|(_, r)| {
                r.cdp_id == cdp_id && r.kind == "document" && r.ended.is_none() && r.failed.is_none()
            })?;
            r.session = session.to_owned();
            Some(at)
        });
        self.change_at(at, edit);
    }

    /// Where the latest hop of request `cdp_id` of `session` is kept.
    fn latest(&self, session: &str, cdp_id: &str) -> Option<usize> {
        self.ring
            .iter()
            .rposition(|r| r.cdp_id == cdp_id && r.session == session)
    }

    /// Changes the request at `at` (if any), counting what it holds again.
    fn change_at(&mut self, at: Option<usize>, edit: impl FnOnce(&mut Request)) {
        let Some(r) = at.and_then(|at| self.ring.get_mut(at)) else {
            return;
        };
        let before = r.size();
        edit(r);
        self.bytes = self.bytes + r.size() - before;
        self.keep_within_bounds();
    }

    /// Drops the oldest requests beyond [`KEPT`] or [`BYTES_KEPT`] (never
    /// the newest).
    fn keep_within_bounds(&mut self) {
        while self.ring.len() > KEPT || (self.bytes > BYTES_KEPT && self.ring.len() > 1) {
            if let Some(old) = self.ring.pop_front() {
                self.bytes -= old.size();
            }
        }
    }

    /// What the log holds: (requests, bytes as [`Request::size`] counts);
    /// the tests read it.
    #[cfg(test)]
    pub fn held(&self) -> (usize, usize) {
        (self.ring.len(), self.bytes)
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
        Event::new(session, method, &params)
    }

    /// `Network.requestWillBeSent`'s params: request `id` of `kind` for `url` at `t`.
    fn sent(id: &str, kind: &str, url: &str, t: f64) -> Value {
        json!({"requestId": id, "type": kind, "timestamp": t,
               "request": {"url": url, "method": "GET", "headers": {}}})
    }

    #[test]
    fn a_cross_origin_frames_document_ends_in_the_frames_own_session() {
        // As Chrome 156 reports it (seen over raw CDP, --site-per-process).
        let mut log = Requests::default();
        log.record(&event(
            "TOP",
            "Network.requestWillBeSent",
            sent("L1", "Document", "http://b.test/frame", 1.0),
        ));
        log.record(&event(
            "TOP",
            "Network.responseReceived",
            json!({"requestId": "L1", "type": "Document", "response": {"status": 200, "url": "http://b.test/frame", "mimeType": "text/html"}}),
        ));
        log.record(&event(
            "FRAME",
            "Network.loadingFinished",
            json!({"requestId": "L1", "timestamp": 1.5, "encodedDataLength": 40}),
        ));
        let frame = log.get("r1").unwrap();
        assert_eq!(
            (frame.session.as_str(), frame.status, frame.bytes, frame.ms()),
            ("FRAME", Some(200), Some(40), Some(500))
        );
        // A sub-resource is never taken from another session.
        log.record(&event(
            "TOP",
            "Network.requestWillBeSent",
            sent("9.1", "Image", "http://a.test/i.png", 2.0),
        ));
        log.record(&event(
            "OTHER",
            "Network.loadingFinished",
            json!({"requestId": "9.1", "timestamp": 2.5, "encodedDataLength": 10}),
        ));
        let image = log.get("r2").unwrap();
        assert_eq!((image.session.as_str(), image.bytes), ("TOP", None));
    }

    #[test]
    fn requests_are_followed_through_redirects_to_their_end_and_capped() {
        let mut log = Requests::default();
        let sent = |id: &str, url: &str, t: f64| sent(id, "Document", url, t);
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
        // 4 KiB URLs: the bytes bound keeps fewer than 500.
        let (count, bytes) = log.held();
        assert!(
            count < KEPT && bytes <= BYTES_KEPT,
            "{count} requests, {bytes} bytes"
        );
        let held: usize = log
            .list()
            .map(|r| r.url.len() + r.post_data.as_ref().map_or(0, String::len))
            .sum();
        assert!(held <= KEPT * (URL_KEPT + 3), "{held} bytes of URLs and bodies");
        let last = log.list().last().unwrap();
        assert!(last.url.ends_with('…') && last.has_post_data && last.post_data.is_none());
    }

    /// Issue 24: headers are kept as text and read back whole; a header
    /// value over [`URL_KEPT`] is cut, and headers past [`HEADERS_KEPT`]
    /// bytes are dropped.
    #[test]
    fn headers_are_kept_as_text_and_bounded() {
        let mut map = Map::new();
        map.insert("Accept".into(), json!("text/html"));
        map.insert("Cookie".into(), json!("c".repeat(10_000)));
        let kept = Headers::new(&map);
        let back = kept.map();
        assert_eq!(back["Accept"], "text/html");
        let cookie = back["Cookie"].as_str().unwrap();
        assert!(cookie.len() <= URL_KEPT + 3 && cookie.ends_with('…'));
        let many: Map<String, Value> = (0..100)
            .map(|i| (format!("X-H{i:03}"), json!("v".repeat(1000))))
            .collect();
        let kept = Headers::new(&many);
        assert!(kept.len() <= HEADERS_KEPT, "{} bytes", kept.len());
        let back = kept.map();
        assert!(back.contains_key("X-H000") && !back.contains_key("X-H099"));
        assert!(Headers::new(&Map::new()).map().is_empty());
    }

    /// Issue 24: requests with large headers push older requests out: the
    /// log stays under [`BYTES_KEPT`], its count under [`KEPT`], the
    /// newest kept and its bytes counted as its response arrives.
    #[test]
    fn the_log_stays_under_its_bytes_and_keeps_the_newest() {
        let mut log = Requests::default();
        let headers: Map<String, Value> = (0..15)
            .map(|i| (format!("X-Header-{i}"), json!("v".repeat(1000))))
            .collect();
        for i in 0..KEPT {
            log.record(&event(
                "",
                "Network.requestWillBeSent",
                json!({"requestId": format!("z{i}"), "type": "Script", "timestamp": 1.0,
                       "request": {"url": format!("http://a.test/{i}"), "method": "GET", "headers": headers}}),
            ));
            log.record(&event(
                "",
                "Network.responseReceived",
                json!({"requestId": format!("z{i}"), "type": "Script",
                       "response": {"status": 200, "url": format!("http://a.test/{i}"), "headers": headers, "mimeType": "text/javascript"}}),
            ));
        }
        let (count, bytes) = log.held();
        assert!(count < KEPT, "{count} requests of 30 KB each");
        assert!(bytes <= BYTES_KEPT, "{bytes} bytes held");
        assert_eq!(bytes, log.list().map(Request::size).sum::<usize>());
        let newest = log.list().last().unwrap();
        assert_eq!(newest.url, format!("http://a.test/{}", KEPT - 1));
        assert_eq!(newest.status, Some(200));
        assert_eq!(newest.response_headers.map().len(), 15);
    }
}
