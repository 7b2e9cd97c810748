//! A Selenium Grid 4 hub's HTTP API, as cdpilot uses it: `POST /session`
//! (a new W3C session, answered with `se:cdp`), `DELETE /session/<id>`,
//! `GET /status` (nodes and their slots) and the new-session queue.
//!
//! Owns nothing but the hub's address and the headers sent with every
//! request (`[browser] grid_headers`, and `Authorization: Basic` from a
//! `user:password@` in the address, as Selenium's bindings send it). The
//! address is kept and shown without its userinfo: no message, log line or
//! metric carries the password. The headers go to the hub's origin only:
//! the `se:cdp` handshake gets them when `se:cdp` names that origin
//! ([`Hub::headers_for`]). Each request opens one HTTP/1.1
//! connection (hyper's client; rustls for `https://`): the Grid is asked a
//! few times per session, never per action. The Grid's answers are turned
//! into messages here, with the Grid's own words; which code a failure
//! gets is decided in `grid/mod.rs`. No clock of its own: callers race
//! these futures against their budgets.

use std::sync::Arc;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::{HeaderName, HeaderValue};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpStream;

/// A Grid's answer is JSON of a few kilobytes (`/status` grows with the
/// nodes); more than this is not a Grid.
const MAX_ANSWER: usize = 8 << 20;

/// The hub: where it is and what to send it.
pub struct Hub {
    /// `http://host:port` plus any path prefix, without a trailing slash
    /// and without userinfo.
    base: url::Url,
    /// `[browser] grid_headers`, checked at start, then `Authorization`
    /// from the address's userinfo (unless the headers name one).
    headers: Vec<(HeaderName, HeaderValue)>,
}

/// `url` without its userinfo (a `se:cdp` a hub answered, for messages).
pub fn without_userinfo(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.to_string()
        }
        Err(_) => crate::masked::url(url),
    }
}

/// What the hub answered: the HTTP status and the JSON body's `value`.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub value: Value,
}

/// A new Grid session.
#[derive(Debug, Clone)]
pub struct Created {
    /// The W3C session id.
    pub id: String,
    /// `se:cdp`: the session's browser over the Grid's CDP proxy.
    pub cdp: String,
}

/// Why a request to the hub failed.
#[derive(Debug)]
pub enum HubError {
    /// Nothing answered at the hub's address (or not HTTP).
    Unreachable(String),
    /// The hub answered with a W3C error (`error`, `message`).
    Refused {
        status: u16,
        error: String,
        message: String,
    },
    /// The hub answered, but not what a Grid answers.
    Unexpected(String),
}

impl std::fmt::Display for HubError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HubError::Unreachable(detail) => write!(f, "{detail}"),
            HubError::Refused {
                status,
                error,
                message,
            } => {
                write!(f, "the Grid answered {status} {error}: {message}")
            }
            HubError::Unexpected(detail) => write!(f, "{detail}"),
        }
    }
}

impl Hub {
    /// The hub at `url` (checked by [`check`](super::check)).
    pub fn new(url: &str, headers: &std::collections::BTreeMap<String, String>) -> Result<Hub, String> {
        let shown = crate::masked::url(url);
        let mut base = url::Url::parse(url.trim_end_matches('/'))
            .map_err(|e| format!("browser.grid = {shown:?}: {e}"))?;
        if !matches!(base.scheme(), "http" | "https") || base.host_str().is_none() {
            return Err(format!(
                "browser.grid = {shown:?}: allowed is the hub's http://host:port (or https://…)"
            ));
        }
        if base.query().is_some() || base.fragment().is_some() {
            return Err(format!(
                "browser.grid = {shown:?}: the hub's address takes no ?query or #fragment"
            ));
        }
        let mut headers: Vec<(HeaderName, HeaderValue)> = headers
            .iter()
            .map(|(name, value)| {
                // The value is never shown: it is often a credential.
                let bad = |e: &dyn std::fmt::Display| format!("browser.grid_headers.{name:?}: {e}");
                let name = HeaderName::from_bytes(name.as_bytes()).map_err(|e| bad(&e))?;
                if RESERVED.contains(&name.as_str()) {
                    return Err(bad(&"cdpilot sets this header itself: remove it"));
                }
                let value = HeaderValue::from_str(value)
                    .map_err(|_| bad(&"the value holds a character a header cannot carry"))?;
                Ok((name, value))
            })
            .collect::<Result<_, String>>()?;
        if !base.username().is_empty() || base.password().is_some() {
            let user = percent_decoded(base.username());
            let password = percent_decoded(base.password().unwrap_or_default());
            use base64::Engine as _;
            let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
            let given = headers.iter().any(|(n, _)| *n == hyper::header::AUTHORIZATION);
            if !given {
                let value = HeaderValue::from_str(&format!("Basic {token}"))
                    .map_err(|e| format!("browser.grid = {shown:?}: the user and password: {e}"))?;
                headers.push((hyper::header::AUTHORIZATION, value));
            }
            let _ = base.set_username("");
            let _ = base.set_password(None);
        }
        Ok(Hub { base, headers })
    }

    /// The headers the `se:cdp` handshake to `cdp` carries: every header
    /// of the hub's when `cdp` is on the hub's origin (same host and port;
    /// `ws` for `http`, `wss` for `https`), none otherwise: a hub cannot
    /// have cdpilot hand its credentials to another host.
    pub fn headers_for(&self, cdp: &str) -> Vec<(String, String)> {
        let Ok(target) = url::Url::parse(cdp) else {
            return Vec::new();
        };
        let scheme = match target.scheme() {
            "ws" => "http",
            "wss" => "https",
            other => other,
        };
        let same = scheme == self.base.scheme()
            && target.host_str() == self.base.host_str()
            && target.port_or_known_default() == self.base.port_or_known_default();
        if !same {
            if !self.headers.is_empty() {
                tracing::warn!(
                    grid = self.url(),
                    cdp = %without_userinfo(cdp),
                    "the Grid's se:cdp is not on the hub's origin: its handshake goes without [browser] grid_headers"
                );
            }
            return Vec::new();
        }
        self.headers
            .iter()
            .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
            .collect()
    }

    /// The hub's address, as configured.
    pub fn url(&self) -> &str {
        self.base.as_str().trim_end_matches('/')
    }

    /// `POST /session` with `capabilities` (the W3C `capabilities` object).
    /// Waits as long as the Grid queues the request.
    pub async fn new_session(&self, capabilities: &Value) -> Result<Created, HubError> {
        let body = serde_json::json!({ "capabilities": capabilities });
        let answer = self.send("POST", "/session", Some(&body)).await?;
        let answer = refused(answer)?;
        let id = answer.value["sessionId"].as_str().unwrap_or_default();
        if id.is_empty() {
            return Err(HubError::Unexpected(format!(
                "the Grid's answer to POST /session has no sessionId: {}",
                short(&answer.value)
            )));
        }
        let Some(cdp) = answer.value["capabilities"]["se:cdp"].as_str() else {
            // Made but unusable: give the slot back before saying so.
            let deleted = match self.delete(id).await {
                Ok(()) => String::new(),
                Err(e) => format!(" (deleting it failed: {e})"),
            };
            return Err(HubError::Unexpected(format!(
                "the Grid made session {id} but its answer has no se:cdp (is CDP turned off on the node?){deleted}"
            )));
        };
        Ok(Created {
            id: id.to_owned(),
            cdp: cdp.to_owned(),
        })
    }

    /// `DELETE /session/<id>`: the node closes the browser and frees the slot.
    pub async fn delete(&self, id: &str) -> Result<(), HubError> {
        refused(self.send("DELETE", &format!("/session/{id}"), None).await?).map(|_| ())
    }

    /// A WebDriver command that does nothing, so the node does not end a
    /// session it hears no WebDriver from (its `--session-timeout`, 300 s
    /// by default; CDP traffic does not count).
    pub async fn touch(&self, id: &str) -> Result<(), HubError> {
        refused(self.send("GET", &format!("/session/{id}/timeouts"), None).await?).map(|_| ())
    }

    /// `GET /status`: `value.nodes[]` with their `uri` and `slots`.
    pub async fn status(&self) -> Result<Value, HubError> {
        Ok(refused(self.send("GET", "/status", None).await?)?.value)
    }

    /// The new-session requests waiting in the Grid's queue.
    pub async fn queued(&self) -> Result<usize, HubError> {
        let answer = refused(self.send("GET", "/se/grid/newsessionqueue/queue", None).await?)?;
        Ok(answer.value.as_array().map_or(0, Vec::len))
    }

    /// One request on a connection of its own; the answer's JSON `value`.
    async fn send(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Answer, HubError> {
        let host = self.base.host_str().unwrap_or_default().to_owned();
        let port = self.base.port_or_known_default().unwrap_or(80);
        let unreachable = |e: &dyn std::fmt::Display| {
            HubError::Unreachable(format!("{method} {}{path} failed: {e}", self.url()))
        };
        let tcp = TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| unreachable(&e))?;
        let uri = format!("{}{path}", self.base.path().trim_end_matches('/'));
        let mut request = hyper::Request::builder()
            .method(method)
            .uri(uri)
            .header(hyper::header::HOST, format!("{host}:{port}"))
            .header(hyper::header::ACCEPT, "application/json");
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        let payload = match body {
            Some(body) => {
                // The Grid refuses a body whose type does not say utf-8.
                request = request.header(hyper::header::CONTENT_TYPE, "application/json; charset=utf-8");
                Bytes::from(body.to_string())
            }
            None => Bytes::new(),
        };
        let request = request.body(Full::new(payload)).map_err(|e| unreachable(&e))?;
        let response = if self.base.scheme() == "https" {
            let tls = tls_connector()
                .connect(rustls_pki_types_name(&host).map_err(|e| unreachable(&e))?, tcp)
                .await
                .map_err(|e| unreachable(&e))?;
            exchange(TokioIo::new(tls), request).await
        } else {
            exchange(TokioIo::new(tcp), request).await
        }
        .map_err(|e| unreachable(&e))?;
        let status = response.status().as_u16();
        let limited = http_body_util::Limited::new(response.into_body(), MAX_ANSWER);
        let bytes = limited.collect().await.map_err(|e| unreachable(&e))?.to_bytes();
        let json: Value = serde_json::from_slice(&bytes).map_err(|_| {
            HubError::Unexpected(format!(
                "{method} {}{path} answered {status} with something that is not a Grid's JSON: {}",
                self.url(),
                String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).trim()
            ))
        })?;
        Ok(Answer {
            status,
            value: json.get("value").cloned().unwrap_or(json),
        })
    }
}

/// Headers cdpilot sets on its requests to the hub itself.
const RESERVED: [&str; 4] = ["host", "content-type", "content-length", "accept"];

/// A URL's userinfo part as it was typed (`%40` is `@`).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The W3C error in an answer, or the answer.
fn refused(answer: Answer) -> Result<Answer, HubError> {
    let error = answer.value.get("error").and_then(Value::as_str);
    if answer.status < 400 && error.is_none() {
        return Ok(answer);
    }
    Err(HubError::Refused {
        status: answer.status,
        error: error.unwrap_or("error").to_owned(),
        message: answer.value["message"]
            .as_str()
            .map(|m| m.lines().next().unwrap_or_default().to_owned())
            .unwrap_or_else(|| short(&answer.value)),
    })
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(300) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

async fn exchange<S>(
    io: TokioIo<S>,
    request: hyper::Request<Full<Bytes>>,
) -> Result<hyper::Response<hyper::body::Incoming>, hyper::Error>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io).await?;
    // Drives the connection until the answer's body has been read.
    tokio::spawn(async move {
        let _ = connection.await;
    });
    sender.send_request(request).await
}

fn tls_connector() -> tokio_rustls::TlsConnector {
    static CONFIG: std::sync::OnceLock<Arc<tokio_rustls::rustls::ClientConfig>> = std::sync::OnceLock::new();
    let config = CONFIG.get_or_init(|| {
        let roots = tokio_rustls::rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
        Arc::new(
            tokio_rustls::rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .expect("ring supports the default protocol versions")
                .with_root_certificates(roots)
                .with_no_client_auth(),
        )
    });
    tokio_rustls::TlsConnector::from(config.clone())
}

fn rustls_pki_types_name(
    host: &str,
) -> Result<tokio_rustls::rustls::pki_types::ServerName<'static>, impl std::fmt::Display> {
    tokio_rustls::rustls::pki_types::ServerName::try_from(host.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_hubs_with_a_host_are_taken() {
        let none = Default::default();
        assert!(Hub::new("http://127.0.0.1:4444/", &none).is_ok());
        assert!(Hub::new("https://grid.example/wd/hub", &none).is_ok());
        for bad in ["ws://127.0.0.1:4444", "127.0.0.1:4444", "file:///x"] {
            let e = Hub::new(bad, &none).err().unwrap();
            assert!(e.contains("browser.grid"), "{e}");
        }
        let headers = [("Bad Name".to_owned(), "x".to_owned())].into();
        let e = Hub::new("http://h:1", &headers).err().unwrap();
        assert!(
            e.contains("browser.grid_headers") && e.contains("Bad Name"),
            "{e}"
        );
    }

    #[test]
    fn a_w3c_error_is_the_grids_message() {
        let answer = Answer {
            status: 500,
            value: serde_json::json!({"error": "session not created", "message": "Could not start a new session.\nmore"}),
        };
        let e = refused(answer).unwrap_err().to_string();
        assert_eq!(
            e,
            "the Grid answered 500 session not created: Could not start a new session."
        );
    }
}
