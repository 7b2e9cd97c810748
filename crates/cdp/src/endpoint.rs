//! Resolving an attach address to a browser WebSocket URL.
//!
//! `ws://…` and `wss://…` are used as they are; `http://host:port` is asked
//! for `/json/version`, whose `webSocketDebuggerUrl` is the browser endpoint.
//! DevTools' HTTP endpoint is plain HTTP/1.1 on loopback or a tunnel, so a
//! single GET is written by hand rather than pulling in an HTTP client. The
//! answer ends where its framing says, never at the socket's close: Chromium
//! ignores `Connection: close` and keeps the socket open after answering.
//! This module has no clock of its own; the caller races it against its
//! budget.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::CdpError;

/// `/json/version` is a few hundred bytes; anything this big is not DevTools.
const MAX_RESPONSE: usize = 1 << 20;

pub async fn resolve(address: &str) -> Result<String, CdpError> {
    if address.starts_with("ws://") || address.starts_with("wss://") {
        return Ok(address.to_owned());
    }
    let Some(rest) = address.strip_prefix("http://") else {
        return Err(CdpError::Connect(format!(
            "cannot attach to {address:?}: use ws://… or http://host:port"
        )));
    };
    let host_port = rest.split('/').next().unwrap_or(rest);
    let failed = |detail: String| {
        CdpError::Connect(format!(
            "finding the browser endpoint: GET http://{host_port}/json/version {detail}; \
             check that Chromium runs with --remote-debugging-port and that cdp_url names \
             that port (or use the ws://… URL Chromium printed as cdp_url)"
        ))
    };
    let mut stream = TcpStream::connect(host_port)
        .await
        .map_err(|e| failed(format!("could not connect: {e}")))?;
    let request = format!("GET /json/version HTTP/1.1\r\nHost: {host_port}\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| failed(format!("could not be sent: {e}")))?;
    let response = read_response(&mut stream).await.map_err(failed)?;
    if response.status != 200 {
        return Err(failed(format!(
            "answered {}: {}",
            response.status,
            String::from_utf8_lossy(&response.body).trim()
        )));
    }
    let version: serde_json::Value =
        serde_json::from_slice(&response.body).map_err(|_| failed("did not answer with JSON".into()))?;
    version["webSocketDebuggerUrl"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| failed("gave no webSocketDebuggerUrl".into()))
}

#[derive(Debug, PartialEq, Eq)]
struct Response {
    status: u16,
    body: Vec<u8>,
}

/// Reads one HTTP/1.1 response, stopping as soon as its body is complete.
/// The error says what went wrong, to follow the request line.
async fn read_response(stream: &mut (impl AsyncRead + Unpin)) -> Result<Response, String> {
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let read = stream
            .read(&mut chunk)
            .await
            .map_err(|e| format!("failed while reading the answer: {e}"))?;
        received.extend_from_slice(&chunk[..read]);
        if let Some(response) = complete_response(&received, read == 0)? {
            return Ok(response);
        }
        if received.len() > MAX_RESPONSE {
            return Err(format!("answered more than {MAX_RESPONSE} bytes"));
        }
    }
}

/// The response in `received` if it is complete: its body framed by
/// `Transfer-Encoding: chunked`, else `Content-Length`, else (HTTP/1.0
/// style) by the end of the stream. `None` while more bytes are needed.
fn complete_response(received: &[u8], at_eof: bool) -> Result<Option<Response>, String> {
    let Some(head_end) = find(received, b"\r\n\r\n") else {
        return if at_eof {
            Err("closed the connection without an answer".into())
        } else {
            Ok(None)
        };
    };
    let head = String::from_utf8_lossy(&received[..head_end]);
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .strip_prefix("HTTP/1.")
        .and_then(|rest| rest.split(' ').nth(1))
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(|| format!("did not answer with HTTP: {status_line:?}"))?;
    let mut chunked = false;
    let mut length = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.trim().eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.to_ascii_lowercase().contains("chunked");
        } else if name.trim().eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .parse::<usize>()
                    .map_err(|_| format!("sent a bad Content-Length {value:?}"))?,
            );
        }
    }
    let body = &received[head_end + 4..];
    let complete = if chunked {
        dechunk(body)?
    } else if let Some(length) = length {
        (body.len() >= length).then(|| body[..length].to_vec())
    } else {
        at_eof.then(|| body.to_vec())
    };
    match complete {
        Some(body) => Ok(Some(Response { status, body })),
        None if at_eof => Err("closed the connection in the middle of the answer".into()),
        None => Ok(None),
    }
}

/// The body of a chunked transfer once its last (zero-size) chunk has
/// arrived; trailers are ignored.
fn dechunk(mut data: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let mut body = Vec::new();
    loop {
        let Some(line_end) = find(data, b"\r\n") else {
            return Ok(None);
        };
        let size_line = String::from_utf8_lossy(&data[..line_end]);
        let size_hex = size_line.split(';').next().unwrap_or_default().trim();
        let size =
            usize::from_str_radix(size_hex, 16).map_err(|_| format!("sent a bad chunk size {size_hex:?}"))?;
        if size == 0 {
            return Ok(Some(body));
        }
        let chunk_start = line_end + 2;
        if data.len() < chunk_start + size + 2 {
            return Ok(None);
        }
        body.extend_from_slice(&data[chunk_start..chunk_start + size]);
        data = &data[chunk_start + size + 2..];
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    const VERSION: &str =
        r#"{"Browser":"Chrome/1","webSocketDebuggerUrl":"ws://127.0.0.1:1/devtools/browser/x"}"#;

    /// A DevTools-like server: answers each GET with `reply`, then keeps the
    /// socket open (as Chromium does) until the test ends.
    async fn serve_and_keep_open(reply: String) -> (String, tokio::task::JoinHandle<()>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while find(&request, b"\r\n\r\n").is_none() {
                let n = socket.read(&mut buf).await.unwrap();
                assert!(n > 0, "the client closed before sending its request");
                request.extend_from_slice(&buf[..n]);
            }
            socket.write_all(reply.as_bytes()).await.unwrap();
            std::future::pending::<()>().await;
        });
        (address, server)
    }

    // Issue 8: `--cdp-url http://…` read until the socket closed, and
    // Chromium never closes it, so every attach waited out its budget.
    #[tokio::test]
    async fn a_content_length_answer_on_a_socket_left_open_resolves() {
        let reply = format!(
            "HTTP/1.1 200 OK\r\nContent-Length:{}\r\nContent-Type:application/json\r\n\r\n{VERSION}",
            VERSION.len()
        );
        let (address, server) = serve_and_keep_open(reply).await;
        let resolved = tokio::time::timeout(std::time::Duration::from_secs(10), resolve(&address))
            .await
            .expect("resolve returned once the body was complete, without waiting for a close");
        assert_eq!(resolved.unwrap(), "ws://127.0.0.1:1/devtools/browser/x");
        server.abort();
    }

    #[tokio::test]
    async fn a_chunked_answer_on_a_socket_left_open_resolves() {
        let (first, second) = VERSION.split_at(20);
        let reply = format!(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{first}\r\n{:x};ext=1\r\n{second}\r\n0\r\n\r\n",
            first.len(),
            second.len()
        );
        let (address, server) = serve_and_keep_open(reply).await;
        let resolved = tokio::time::timeout(std::time::Duration::from_secs(10), resolve(&address))
            .await
            .expect("resolve returned once the last chunk arrived");
        assert_eq!(resolved.unwrap(), "ws://127.0.0.1:1/devtools/browser/x");
        server.abort();
    }

    #[test]
    fn a_response_is_incomplete_until_its_framing_says_so() {
        let head = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
        let partial = [&head[..], b"abc"].concat();
        assert_eq!(complete_response(&partial, false), Ok(None));
        assert!(complete_response(&partial, true).is_err(), "cut short");
        let whole = [&head[..], b"abcde"].concat();
        assert_eq!(
            complete_response(&whole, false),
            Ok(Some(Response {
                status: 200,
                body: b"abcde".to_vec()
            }))
        );
        // Without framing the body runs to the end of the stream.
        let unframed = b"HTTP/1.0 404 Not Found\r\n\r\nnope";
        assert_eq!(complete_response(unframed, false), Ok(None));
        assert_eq!(
            complete_response(unframed, true),
            Ok(Some(Response {
                status: 404,
                body: b"nope".to_vec()
            }))
        );
        assert!(complete_response(b"SSH-2.0-OpenSSH\r\n\r\n", false).is_err());
    }

    #[tokio::test]
    async fn an_unreachable_endpoint_names_the_step_and_what_to_do() {
        let closed = tokio::net::TcpSocket::new_v4().unwrap();
        closed.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let port = closed.local_addr().unwrap().port();
        let error = resolve(&format!("http://127.0.0.1:{port}"))
            .await
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("finding the browser endpoint"), "{error}");
        assert!(
            error.contains(&format!("127.0.0.1:{port}/json/version")),
            "{error}"
        );
        assert!(error.contains("--remote-debugging-port"), "{error}");
        assert!(
            CdpError::Connect(error.clone()).is_refused(),
            "a refused connection is still recognisable: {error}"
        );
    }
}
