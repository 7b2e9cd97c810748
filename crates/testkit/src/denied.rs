//! A "denied" server for safety tests: it records every TCP connection it
//! accepts and every request line it reads, and answers each request with a
//! small page. A test points a deny rule at it, lets a hostile page try every
//! door, and asserts that the server saw nothing: no request, and no
//! connection either (a preconnect or a refused WebSocket handshake opens a
//! connection without sending a request a log of requests would show).
//! It listens on `127.0.0.1:PORT` and `[::1]:PORT` (TCP), so every spelling
//! of the local host reaches it, and on UDP `127.0.0.1:PORT`, logging every
//! datagram (a STUN binding request a page's WebRTC sends).

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the denied server saw: connections accepted, request lines read.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Seen {
    pub connections: usize,
    /// Each request's first line (`GET /x HTTP/1.1`), in order.
    pub requests: Vec<String>,
    /// UDP datagrams received (their sizes, in order).
    pub datagrams: Vec<usize>,
}

/// A logging server on `127.0.0.1:port`, serving until dropped.
pub struct DeniedServer {
    pub port: u16,
    seen: Arc<Mutex<Seen>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for DeniedServer {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl DeniedServer {
    pub async fn start() -> DeniedServer {
        // A port free on 127.0.0.1 and [::1] (TCP) and 127.0.0.1 (UDP) alike.
        // (Without IPv6 on the host, after a few tries: IPv4 alone.)
        let mut tries = 0;
        let (v4, v6, udp) = loop {
            tries += 1;
            let v4 = TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let port = v4.local_addr().expect("address").port();
            let Ok(udp) = tokio::net::UdpSocket::bind(("127.0.0.1", port)).await else {
                continue;
            };
            match TcpListener::bind(("::1", port)).await {
                Ok(v6) => break (v4, Some(v6), udp),
                Err(_) if tries < 20 => continue,
                Err(_) => break (v4, None, udp),
            }
        };
        let port = v4.local_addr().expect("address").port();
        DeniedServer::serving(port, vec![v4].into_iter().chain(v6).collect(), Some(udp))
    }

    /// Listening on every address of the machine, IPv4 and IPv6 (`[::]`,
    /// dual-stack): reached through `127.0.0.1`, `[::1]`, `0.0.0.0`, `[::]`
    /// and the machine's own addresses alike, as a service bound to all
    /// interfaces is (issue 34: the local host's other spellings).
    pub async fn start_everywhere() -> DeniedServer {
        let listener = TcpListener::bind("[::]:0").await.expect("bind");
        let port = listener.local_addr().expect("address").port();
        DeniedServer::serving(port, vec![listener], None)
    }

    fn serving(port: u16, listeners: Vec<TcpListener>, udp: Option<tokio::net::UdpSocket>) -> DeniedServer {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let mut tasks = Vec::new();
        for listener in listeners {
            let log = seen.clone();
            tasks.push(tokio::spawn(async move {
                while let Ok((stream, _)) = listener.accept().await {
                    log.lock().unwrap().connections += 1;
                    tokio::spawn(serve(stream, log.clone()));
                }
            }));
        }
        if let Some(udp) = udp {
            let log = seen.clone();
            tasks.push(tokio::spawn(async move {
                let mut buffer = [0u8; 2048];
                while let Ok((n, _)) = udp.recv_from(&mut buffer).await {
                    log.lock().unwrap().datagrams.push(n);
                }
            }));
        }
        DeniedServer { port, seen, tasks }
    }

    /// `http://127.0.0.1:PORT/path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{}", self.port, path.trim_start_matches('/'))
    }

    /// `127.0.0.1:PORT`, for rules and page templates.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Everything seen so far.
    pub fn seen(&self) -> Seen {
        self.seen.lock().unwrap().clone()
    }

    /// Asserts that nothing reached the server, naming what did.
    #[track_caller]
    pub fn assert_untouched(&self, what: &str) {
        let seen = self.seen();
        assert_eq!(
            seen,
            Seen::default(),
            "{what}: the denied server was reached: {seen:?}"
        );
    }
}

/// Reads requests on one connection (keep-alive), logging each request
/// line, and answers each with a small HTML page.
async fn serve(mut stream: tokio::net::TcpStream, log: Arc<Mutex<Seen>>) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let Some(end) = find(&buffer, b"\r\n\r\n") else {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
            continue;
        };
        let head = String::from_utf8_lossy(&buffer[..end]).to_string();
        buffer.drain(..end + 4);
        let line = head.lines().next().unwrap_or_default().to_string();
        log.lock().unwrap().requests.push(line);
        // A body (a beacon, a POST) is read and dropped.
        let length = head
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse::<usize>().ok())?
            })
            .unwrap_or(0);
        while buffer.len() < length {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
        buffer.drain(..length);
        let body = "<!doctype html><title>denied server</title><p>DENIED SERVER CONTENT</p>";
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
             Access-Control-Allow-Origin: *\r\n\r\n{body}",
            body.len()
        );
        if stream.write_all(answer.as_bytes()).await.is_err() {
            return;
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
