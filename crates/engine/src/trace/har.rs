//! The trace's requests as HAR 1.2 (`har.json`; the same record
//! `browser_network` reads, kept per step as [`RequestRecord`]s): each
//! request with its headers and body, its response's headers, status,
//! type and body (within the trace's limit), and its time (the log knows
//! sent and finished, so the whole time is `wait`).
//!
//! Written for two readers, both checked by the tests: Chrome DevTools'
//! HAR import (the fields its `HARFormat.ts` casts with `safeNumber` and
//! `safeDate` are always present: `time`, `startedDateTime`, `timings.
//! send/wait/receive`, `headersSize`, `bodySize`, `status`,
//! `content.size`) and cdpilot's own replay of a HAR
//! (`policy::har`, `browser_network har`), which answers each request
//! with the recorded status, headers and body.

use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use serde_json::{json, Map, Value};

use super::format::RequestRecord;
use crate::audit::rfc3339;

/// The HAR 1.2 log of `requests`.
pub fn log(requests: &[RequestRecord]) -> Value {
    let mut entries: Vec<&RequestRecord> = requests.iter().collect();
    entries.sort_by(|a, b| a.started.total_cmp(&b.started));
    json!({"log": {
        "version": "1.2",
        "creator": {"name": "cdpilot", "version": env!("CARGO_PKG_VERSION")},
        "pages": [],
        "entries": entries.into_iter().map(entry).collect::<Vec<_>>(),
    }})
}

/// The HAR of the trace in `dir`, as the text of `har.json`.
pub fn of_trace(dir: &Path) -> std::io::Result<String> {
    let read = super::read::read(dir).map_err(std::io::Error::other)?;
    let requests: Vec<RequestRecord> = read.steps.into_iter().flat_map(|s| s.requests).collect();
    Ok(serde_json::to_string_pretty(&log(&requests)).unwrap_or_default())
}

fn headers(map: &Map<String, Value>) -> Vec<Value> {
    let mut out = Vec::new();
    for (name, value) in map {
        let value = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
        // CDP joins repeated headers with newlines.
        for value in value.split('\n') {
            out.push(json!({"name": name, "value": value}));
        }
    }
    out
}

fn header<'a>(map: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    map.iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .and_then(|(_, v)| v.as_str())
}

fn entry(request: &RequestRecord) -> Value {
    let started = UNIX_EPOCH + Duration::from_secs_f64(request.started.max(0.0));
    let ms = request.ms.unwrap_or(0) as f64;
    let query: Vec<Value> = url::Url::parse(&request.url)
        .map(|u| {
            u.query_pairs()
                .map(|(name, value)| json!({"name": name, "value": value}))
                .collect()
        })
        .unwrap_or_default();
    let mut har_request = json!({
        "method": request.method,
        "url": request.url,
        "httpVersion": "",
        "cookies": [],
        "headers": headers(&request.request_headers),
        "queryString": query,
        "headersSize": -1,
        "bodySize": request.post_data.as_ref().map_or(0, |b| b.len() as i64),
    });
    if let Some(body) = &request.post_data {
        let mime = header(&request.request_headers, "content-type").unwrap_or("");
        har_request["postData"] = json!({"mimeType": mime, "text": body});
    }
    let mut entry = json!({
        "startedDateTime": rfc3339(started),
        "time": ms,
        "request": har_request,
        "response": {
            "status": request.status.unwrap_or(0),
            "statusText": "",
            "httpVersion": "",
            "cookies": [],
            "headers": headers(&request.response_headers),
            "content": content(request),
            "redirectURL": header(&request.response_headers, "location").unwrap_or(""),
            "headersSize": -1,
            "bodySize": request.bytes.map_or(-1, |b| b as i64),
        },
        "cache": {},
        "timings": {"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 0, "wait": ms, "receive": 0},
        "_resourceType": request.kind,
        "_cdpilotTab": request.tab,
        "_cdpilotId": request.id,
    });
    if let Some(failed) = &request.failed {
        entry["response"]["_error"] = failed.clone().into();
    }
    // How a route of the session answered it (not the server).
    if let (Some(how), Some(route)) = (&request.routed, &request.route) {
        entry["_cdpilotRouted"] = json!({"answer": how, "route": route, "pattern": request.pattern});
    }
    if let Some(why) = &request.body_dropped {
        entry["response"]["content"]["comment"] = format!("body not kept: {why}").into();
    }
    entry
}

/// The response's `content`: its body as kept (base64 for a binary one)
/// and its size (the body's, else the bytes received).
fn content(request: &RequestRecord) -> Value {
    use base64::Engine as _;
    let mut content = json!({"size": request.bytes.unwrap_or(0), "mimeType": request.mime_type});
    if let Some(body) = &request.body {
        let size = match request.body_base64 {
            true => base64::engine::general_purpose::STANDARD
                .decode(body)
                .map_or(0, |b| b.len()),
            false => body.len(),
        };
        content["size"] = size.into();
        content["text"] = body.clone().into();
        if request.body_base64 {
            content["encoding"] = "base64".into();
        }
    }
    content
}

/// The fields HAR 1.2 requires (http://www.softwareishard.com/blog/har-12-spec/),
/// and the numbers and dates Chrome DevTools' importer casts (its
/// `HARFormat.ts` throws on a `NaN` or an invalid date, refusing the file).
pub fn check_har_1_2(har: &Value) -> Result<(), String> {
    let log = &har["log"];
    let has = |v: &Value, keys: &[&str], what: &str| -> Result<(), String> {
        for key in keys {
            if v.get(key).is_none() {
                return Err(format!("{what} lacks {key}"));
            }
        }
        Ok(())
    };
    has(log, &["version", "creator", "entries"], "log")?;
    has(&log["creator"], &["name", "version"], "creator")?;
    for entry in log["entries"].as_array().ok_or("entries is not a list")? {
        has(
            entry,
            &[
                "startedDateTime",
                "time",
                "request",
                "response",
                "cache",
                "timings",
            ],
            "entry",
        )?;
        has(
            &entry["request"],
            &[
                "method",
                "url",
                "httpVersion",
                "cookies",
                "headers",
                "queryString",
                "headersSize",
                "bodySize",
            ],
            "request",
        )?;
        has(
            &entry["response"],
            &[
                "status",
                "statusText",
                "httpVersion",
                "cookies",
                "headers",
                "content",
                "redirectURL",
                "headersSize",
                "bodySize",
            ],
            "response",
        )?;
        has(&entry["response"]["content"], &["size", "mimeType"], "content")?;
        has(&entry["timings"], &["send", "wait", "receive"], "timings")?;
        let numbers = [
            ("time", &entry["time"]),
            ("request.headersSize", &entry["request"]["headersSize"]),
            ("request.bodySize", &entry["request"]["bodySize"]),
            ("response.status", &entry["response"]["status"]),
            ("response.headersSize", &entry["response"]["headersSize"]),
            ("response.bodySize", &entry["response"]["bodySize"]),
            ("response.content.size", &entry["response"]["content"]["size"]),
            ("timings.send", &entry["timings"]["send"]),
            ("timings.wait", &entry["timings"]["wait"]),
            ("timings.receive", &entry["timings"]["receive"]),
        ];
        for (name, value) in numbers {
            if value.as_f64().is_none() {
                return Err(format!("{name} is not a number ({value})"));
            }
        }
        let started = entry["startedDateTime"].as_str().unwrap_or("");
        if !rfc3339_shaped(started) {
            return Err(format!("startedDateTime {started:?} is not an ISO 8601 date"));
        }
        let sum: f64 = ["blocked", "dns", "connect", "send", "wait", "receive"]
            .iter()
            .filter_map(|k| entry["timings"][k].as_f64())
            .filter(|t| *t >= 0.0)
            .sum();
        if (sum - entry["time"].as_f64().unwrap_or(-1.0)).abs() > 0.5 {
            return Err(format!(
                "time {} is not the sum of the timings ({sum})",
                entry["time"]
            ));
        }
    }
    Ok(())
}

/// `2026-01-02T03:04:05.678Z` (or an offset): what `new Date()` reads.
fn rfc3339_shaped(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && (text.ends_with('Z') || text[19..].contains(['+', '-']))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_become_a_har_1_2_log() {
        let mut headers = Map::new();
        headers.insert("Set-Cookie".into(), "a=1\nb=2".into());
        let request = RequestRecord {
            tab: "t1".into(),
            id: "r1".into(),
            method: "POST".into(),
            url: "http://127.0.0.1:1/form?q=a%20b".into(),
            kind: "document".into(),
            status: Some(200),
            started: 1_700_000_000.5,
            ms: Some(12),
            bytes: Some(34),
            response_headers: headers,
            mime_type: "text/html".into(),
            post_data: Some("x=1".into()),
            ..Default::default()
        };
        let har = log(&[request]);
        check_har_1_2(&har).unwrap();
        let entry = &har["log"]["entries"][0];
        assert_eq!(entry["startedDateTime"], "2023-11-14T22:13:20.500Z");
        assert_eq!(entry["request"]["queryString"][0]["value"], "a b");
        assert_eq!(entry["response"]["headers"].as_array().unwrap().len(), 2);
        assert_eq!(entry["request"]["postData"]["text"], "x=1");
    }

    #[test]
    fn a_traces_har_answers_its_requests_again() {
        use base64::Engine as _;
        let page = RequestRecord {
            method: "GET".into(),
            url: "http://127.0.0.1:1/page".into(),
            status: Some(200),
            mime_type: "text/html".into(),
            body: Some("<p>hi</p>".into()),
            ..Default::default()
        };
        let pixel = RequestRecord {
            method: "GET".into(),
            url: "http://127.0.0.1:1/pixel.png".into(),
            status: Some(200),
            mime_type: "image/png".into(),
            body: Some(base64::engine::general_purpose::STANDARD.encode([0x89, b'P', b'N', b'G'])),
            body_base64: true,
            ..Default::default()
        };
        let har = log(&[page, pixel]);
        check_har_1_2(&har).unwrap();
        assert_eq!(har["log"]["entries"][1]["response"]["content"]["size"], 4);
        // The HAR replay (`browser_network har`) reads it back.
        let read = crate::policy::har::Har::parse(&har.to_string()).unwrap();
        let page = read.find("GET", "http://127.0.0.1:1/page", None).unwrap();
        assert_eq!((page.status, page.body.as_slice()), (200, &b"<p>hi</p>"[..]));
        let pixel = read.find("GET", "http://127.0.0.1:1/pixel.png", None).unwrap();
        assert_eq!(pixel.body, [0x89, b'P', b'N', b'G']);
    }
}
