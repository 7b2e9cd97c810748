//! Resolving an attach address to a browser WebSocket URL.
//!
//! `ws://…` and `wss://…` are used as they are; `http://host:port` is asked
//! for `/json/version`, whose `webSocketDebuggerUrl` is the browser endpoint.
//! DevTools' HTTP endpoint is plain HTTP/1.1 on loopback or a tunnel: one
//! GET with hyper's HTTP/1.1 client (as the CLI's), whose answer ends where
//! its framing says (`Content-Length`, chunked, or the end of the stream),
//! never waiting for the socket's close: Chromium ignores `Connection:
//! close` and keeps the socket open after answering. This module has no
//! clock of its own; the caller races it against its budget.

use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
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
    let stream = TcpStream::connect(host_port)
        .await
        .map_err(|e| failed(format!("could not connect: {e}")))?;
    let (status, body) = get_version(stream, host_port).await.map_err(failed)?;
    if status != 200 {
        return Err(failed(format!(
            "answered {status}: {}",
            String::from_utf8_lossy(&body).trim()
        )));
    }
    let version: serde_json::Value =
        serde_json::from_slice(&body).map_err(|_| failed("did not answer with JSON".into()))?;
    version["webSocketDebuggerUrl"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| failed("gave no webSocketDebuggerUrl".into()))
}

/// `GET /json/version` on `stream`: the status and the body (at most
/// [`MAX_RESPONSE`] bytes). The error says what went wrong, to follow the
/// request line.
async fn get_version(stream: TcpStream, host_port: &str) -> Result<(u16, Bytes), String> {
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("could not be sent: {e}"))?;
    // The connection's task ends with this call (the socket Chromium keeps
    // open is closed when it is aborted).
    let connection = AbortOnDrop(tokio::spawn(connection));
    let request = hyper::Request::get("/json/version")
        .header(hyper::header::HOST, host_port)
        .body(Empty::<Bytes>::new())
        .map_err(|e| format!("could not be written: {e}"))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| format!("failed while reading the answer: {e}"))?;
    let status = response.status().as_u16();
    let body = Limited::new(response.into_body(), MAX_RESPONSE)
        .collect()
        .await
        .map_err(|e| match e.downcast_ref::<http_body_util::LengthLimitError>() {
            Some(_) => format!("answered more than {MAX_RESPONSE} bytes"),
            None => format!("closed the connection in the middle of the answer: {e}"),
        })?
        .to_bytes();
    drop(connection);
    Ok((status, body))
}

/// A task aborted when its handle is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<Result<(), hyper::Error>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
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
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
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

    /// A DevTools-like server that answers `reply` and closes the socket.
    async fn serve_and_close(reply: &'static [u8]) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = socket.read(&mut buf).await.unwrap();
                if n == 0 {
                    return;
                }
                request.extend_from_slice(&buf[..n]);
            }
            socket.write_all(reply).await.unwrap();
        });
        address
    }

    /// The answer ends where its framing says: cut short is an error that
    /// says so, an unframed body runs to the end of the stream, a status
    /// other than 200 is said with its body, and what is not HTTP is
    /// refused.
    #[tokio::test]
    async fn a_response_is_incomplete_until_its_framing_says_so() {
        let cut = serve_and_close(b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{\"webSocket").await;
        let error = resolve(&cut).await.unwrap_err().to_string();
        assert!(error.contains("in the middle of the answer"), "{error}");
        let unframed = serve_and_close(b"HTTP/1.0 404 Not Found\r\n\r\nnope").await;
        let error = resolve(&unframed).await.unwrap_err().to_string();
        assert!(error.contains("answered 404: nope"), "{error}");
        let ssh = serve_and_close(b"SSH-2.0-OpenSSH\r\n\r\n").await;
        let error = resolve(&ssh).await.unwrap_err().to_string();
        assert!(error.starts_with("finding the browser endpoint"), "{error}");
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
