//! A HAR 1.2 file read back as answers (`browser_network har`): a run
//! recorded once (by cdpilot's trace or any browser's DevTools export)
//! answers its requests again with the servers down.
//!
//! Owns parsing and checking the file and finding the entry for one
//! request: by method and URL, and by post data when the entry has some.
//! Pure: the gate fulfils with what it finds ([`super::routes`]).

use std::collections::HashMap;

use base64::Engine as _;
use serde::Deserialize;

/// One recorded answer.
#[derive(Debug)]
pub struct Recorded {
    /// The HTTP status.
    pub status: u16,
    /// The response headers (less those the browser computes).
    pub headers: Vec<(String, String)>,
    /// The body, decoded.
    pub body: Vec<u8>,
    /// The request's post data as recorded (matched when present).
    post_data: Option<String>,
}

/// A HAR's answers, by method and URL (the first entry of each wins when
/// one URL was fetched several times with the same post data).
#[derive(Debug, Default)]
pub struct Har {
    entries: HashMap<(String, String), Vec<Recorded>>,
    count: usize,
}

/// Response headers a recorded answer must not replay: the browser
/// computes them for the body it is handed (a recorded `content-encoding:
/// gzip` over the decoded text would corrupt it), or they name the
/// connection, not the response.
const DROPPED_HEADERS: &[&str] = &[
    "content-encoding",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
];

#[derive(Deserialize)]
struct File {
    log: Log,
}

#[derive(Deserialize)]
struct Log {
    version: String,
    entries: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    request: HarRequest,
    response: HarResponse,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HarRequest {
    method: String,
    url: String,
    #[serde(default)]
    post_data: Option<PostData>,
}

#[derive(Deserialize)]
struct PostData {
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
struct HarResponse {
    /// 0 (or absent) for a request that got no answer.
    #[serde(default)]
    status: Option<i64>,
    #[serde(default)]
    headers: Vec<Header>,
    content: Content,
}

#[derive(Deserialize)]
struct Header {
    name: String,
    value: String,
}

#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    encoding: Option<String>,
}

impl Har {
    /// Reads a HAR 1.2 file's text; the error names what is wrong (and
    /// the entry), so a truncated or foreign file is refused whole.
    pub fn parse(text: &str) -> Result<Har, String> {
        let file: File = serde_json::from_str(text).map_err(|e| format!("it is not a HAR file ({e})"))?;
        if !file.log.version.starts_with("1.") {
            return Err(format!(
                "its log.version is {:?}; only HAR 1.x (1.2) is read",
                file.log.version
            ));
        }
        let mut har = Har::default();
        for (n, entry) in file.log.entries.into_iter().enumerate() {
            let status = u16::try_from(entry.response.status.unwrap_or(0))
                .ok()
                .filter(|s| (100..=599).contains(s))
                // DevTools records a request that never got an answer as
                // status 0: it has nothing to replay.
                ;
            let Some(status) = status else { continue };
            let body = match (
                entry.response.content.text,
                entry.response.content.encoding.as_deref(),
            ) {
                (None, _) => Vec::new(),
                (Some(text), Some("base64")) => base64::engine::general_purpose::STANDARD
                    .decode(text.as_bytes())
                    .map_err(|e| format!("log.entries[{n}].response.content.text is not base64 ({e})"))?,
                (Some(text), _) => text.into_bytes(),
            };
            let headers = entry
                .response
                .headers
                .into_iter()
                .filter(|h| !DROPPED_HEADERS.contains(&h.name.to_ascii_lowercase().as_str()))
                .map(|h| (h.name, h.value))
                .collect();
            let key = (entry.request.method.to_ascii_uppercase(), entry.request.url);
            har.entries.entry(key).or_default().push(Recorded {
                status,
                headers,
                body,
                post_data: entry.request.post_data.and_then(|p| p.text),
            });
            har.count += 1;
        }
        Ok(har)
    }

    /// How many answers it holds.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The recorded answer for a request: same method and URL, and the
    /// same post data where the entry recorded some (else the first).
    pub fn find(&self, method: &str, url: &str, post_data: Option<&str>) -> Option<&Recorded> {
        let candidates = self.entries.get(&(method.to_ascii_uppercase(), url.to_owned()))?;
        candidates
            .iter()
            .find(|r| r.post_data.is_some() && r.post_data.as_deref() == post_data)
            .or_else(|| {
                candidates
                    .iter()
                    .find(|r| r.post_data.is_none() || post_data.is_none())
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HAR: &str = r#"{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":[
      {"request":{"method":"GET","url":"http://a.test/api","headers":[]},
       "response":{"status":200,"headers":[{"name":"Content-Type","value":"application/json"},{"name":"Content-Encoding","value":"gzip"}],
                   "content":{"mimeType":"application/json","text":"{\"n\":1}"}}},
      {"request":{"method":"POST","url":"http://a.test/q","postData":{"mimeType":"text/plain","text":"a"}},
       "response":{"status":201,"headers":[],"content":{"text":"YQ==","encoding":"base64"}}},
      {"request":{"method":"POST","url":"http://a.test/q","postData":{"mimeType":"text/plain","text":"b"}},
       "response":{"status":202,"headers":[],"content":{"text":"b"}}},
      {"request":{"method":"GET","url":"http://a.test/never"},"response":{"status":0,"headers":[],"content":{}}}
    ]}}"#;

    #[test]
    fn entries_are_found_by_method_url_and_post_data() {
        let har = Har::parse(HAR).unwrap();
        assert_eq!(har.len(), 3, "the unanswered entry is not kept");
        let api = har.find("get", "http://a.test/api", None).unwrap();
        assert_eq!((api.status, api.body.as_slice()), (200, &b"{\"n\":1}"[..]));
        assert!(
            api.headers
                .iter()
                .all(|(n, _)| !n.eq_ignore_ascii_case("content-encoding")),
            "a recorded encoding is not replayed over the decoded body"
        );
        assert_eq!(
            har.find("POST", "http://a.test/q", Some("b")).unwrap().status,
            202
        );
        assert_eq!(har.find("POST", "http://a.test/q", Some("a")).unwrap().body, b"a");
        assert!(har.find("GET", "http://a.test/never", None).is_none());
        assert!(har.find("GET", "http://a.test/other", None).is_none());
    }

    #[test]
    fn a_foreign_or_truncated_file_is_refused_whole() {
        assert!(Har::parse(&HAR[..HAR.len() / 2])
            .unwrap_err()
            .contains("not a HAR"));
        assert!(Har::parse(&HAR.replace("\"1.2\"", "\"2.0\""))
            .unwrap_err()
            .contains("1.2"));
        assert!(Har::parse("{\"log\":{}}").is_err());
        let bad = HAR.replace("YQ==", "%%%");
        assert!(Har::parse(&bad).unwrap_err().contains("entries[1]"));
    }
}
