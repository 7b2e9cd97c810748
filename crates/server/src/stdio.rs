//! MCP's stdio framing (one JSON-RPC message per line), read by us rather
//! than by rmcp, so that every line gets the answer JSON-RPC owes it.
//!
//! rmcp's own line reader drops a line it cannot decode: JSON nested deeper
//! than serde_json's limit of 128, a string with a lone `\ud800` escape and
//! any other syntax error are ignored, and well-formed JSON of the wrong
//! shape is answered with an id-less error. Either way the client waits for
//! its request id until its own timeout (issue 8). Here a line that does not
//! decode is answered at once: with its request's id when the id can be read
//! (a lenient scan of the top-level object, see `Envelope`), with a parse
//! error when the line is not JSON at all. Lines that decode go to rmcp
//! unchanged.
//!
//! This file owns the bytes on stdin and stdout; it knows nothing of tools.
//! Everything written goes through one writer task, so answers from here and
//! rmcp's responses never interleave within a line.

use std::borrow::Cow;
use std::future::Future;

use rmcp::model::{ErrorCode, ErrorData, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader,
};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The longest line read whole; the rest of a longer one is skipped. As
/// rmcp's own cap: without one, a client that never sends a newline grows
/// the buffer until memory runs out.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// The server side of MCP over a byte stream pair (stdin/stdout in
/// production, pipes in tests).
pub struct StdioTransport {
    /// Decoded messages from the reader task, in line order; closed when the
    /// client closes its end.
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleServer>>,
    /// Finished lines for the writer task: rmcp's messages and the reader's
    /// own answers share it, so stdout has one writer. `None` once closed.
    outgoing: Option<mpsc::Sender<String>>,
    reader: JoinHandle<()>,
    /// Awaited on close so that every queued line is written before exit.
    writer: Option<JoinHandle<()>>,
}

/// Serves on the process's stdin and stdout.
pub fn stdio() -> StdioTransport {
    StdioTransport::new(tokio::io::stdin(), tokio::io::stdout())
}

impl StdioTransport {
    pub fn new(
        read: impl AsyncRead + Send + Unpin + 'static,
        write: impl AsyncWrite + Send + Unpin + 'static,
    ) -> StdioTransport {
        let (outgoing, lines) = mpsc::channel(64);
        let (decoded, incoming) = mpsc::channel(64);
        StdioTransport {
            incoming,
            reader: tokio::spawn(read_lines(read, decoded, outgoing.clone())),
            writer: Some(tokio::spawn(write_lines(write, lines))),
            outgoing: Some(outgoing),
        }
    }
}

impl Transport<RoleServer> for StdioTransport {
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        "cdpilot stdio".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let outgoing = self.outgoing.clone();
        async move {
            let line = serde_json::to_string(&item)?;
            let closed = || std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout is closed");
            outgoing
                .ok_or_else(closed)?
                .send(line)
                .await
                .map_err(|_| closed())
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        // `recv` is cancel-safe: rmcp polls this inside a `select!`.
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // The reader holds a sender too; once it stops, dropping ours lets
        // the writer drain the queue and end.
        self.reader.abort();
        self.outgoing.take();
        if let Some(writer) = self.writer.take() {
            let _ = writer.await;
        }
        Ok(())
    }
}

/// Reads lines until end of input: decoded messages go to rmcp, lines that
/// do not decode are answered on `outgoing` right away.
async fn read_lines(
    read: impl AsyncRead + Unpin,
    decoded: mpsc::Sender<RxJsonRpcMessage<RoleServer>>,
    outgoing: mpsc::Sender<String>,
) {
    let mut read = BufReader::new(read);
    let mut line = Vec::new();
    loop {
        line.clear();
        let too_long = match read_line(&mut read, &mut line).await {
            Ok(None) => return,
            Ok(Some(too_long)) => too_long,
            Err(e) => {
                tracing::error!("reading stdin: {e}");
                return;
            }
        };
        let outcome = if too_long {
            refuse(&line, Problem::TooLong)
        } else {
            decode(&line)
        };
        let delivered = match outcome {
            Line::Message(message) => decoded.send(message).await.is_ok(),
            Line::Answer(answer) => outgoing.send(answer).await.is_ok(),
            Line::Skip => true,
        };
        if !delivered {
            return;
        }
    }
}

/// Reads one line (without its `\n`) into `line`; `None` at end of input,
/// `Some(true)` when the line was longer than [`MAX_LINE`] (then `line`
/// holds its start and the rest has been skipped).
async fn read_line(
    read: &mut (impl AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
) -> std::io::Result<Option<bool>> {
    let n = (&mut *read)
        .take(MAX_LINE as u64 + 1)
        .read_until(b'\n', line)
        .await?;
    if n == 0 {
        return Ok(None);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        return Ok(Some(false));
    }
    if line.len() <= MAX_LINE {
        return Ok(Some(false)); // the last line, without a newline
    }
    let mut rest = Vec::new();
    loop {
        rest.clear();
        let n = (&mut *read).take(64 * 1024).read_until(b'\n', &mut rest).await?;
        if n == 0 || rest.last() == Some(&b'\n') {
            return Ok(Some(true));
        }
    }
}

async fn write_lines(mut write: impl AsyncWrite + Unpin, mut lines: mpsc::Receiver<String>) {
    while let Some(mut line) = lines.recv().await {
        line.push('\n');
        let written = async {
            write.write_all(line.as_bytes()).await?;
            write.flush().await
        };
        if let Err(e) = written.await {
            tracing::error!("writing stdout: {e}");
            return;
        }
    }
}

/// What to do with one line.
// A `Line` lives for one turn of the read loop; boxing the large variant
// would only add an allocation per message.
#[allow(clippy::large_enum_variant)]
enum Line {
    Message(RxJsonRpcMessage<RoleServer>),
    /// A JSON-RPC error to write back.
    Answer(String),
    /// Nothing to answer: blank, a notification or a response.
    Skip,
}

/// Why a line did not reach rmcp.
enum Problem {
    /// Not JSON serde_json reads (syntax, depth, lone surrogates, cut short).
    Unreadable(serde_json::Error),
    /// JSON, but not a message of MCP's shape.
    Shape(serde_json::Error),
    TooLong,
}

fn decode(line: &[u8]) -> Line {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line); // a UTF-8 BOM
    if line.iter().all(u8::is_ascii_whitespace) {
        return Line::Skip;
    }
    match serde_json::from_slice(line) {
        Ok(message) => Line::Message(message),
        Err(e) => match e.classify() {
            serde_json::error::Category::Data => refuse(line, Problem::Shape(e)),
            _ => refuse(line, Problem::Unreadable(e)),
        },
    }
}

/// The JSON-RPC answer to a line rmcp will not see.
fn refuse(line: &[u8], problem: Problem) -> Line {
    let envelope = Envelope::scan(line).unwrap_or_default();
    // JSON-RPC never answers a response or a notification.
    if envelope.is_response || (envelope.has_method && !envelope.has_id) {
        return Line::Skip;
    }
    let (id, code) = match (envelope.id, envelope.has_method, &problem) {
        // A request whose envelope reads: what failed is in its params.
        (Some(id), true, _) => (Some(id), ErrorCode::INVALID_PARAMS),
        (Some(id), false, _) => (Some(id), ErrorCode::INVALID_REQUEST),
        (None, _, Problem::Unreadable(_)) => (None, ErrorCode::PARSE_ERROR),
        (None, _, _) => (None, ErrorCode::INVALID_REQUEST),
    };
    let message = match problem {
        Problem::Unreadable(e) => format!(
            "{e}. Send plain JSON, one message per line: nested at most 128 deep, strings valid Unicode (no lone surrogate escapes)."
        ),
        Problem::Shape(e) => format!(
            "{e}. Send a JSON-RPC 2.0 request: an integer or string id, a method, and params as the method defines them."
        ),
        Problem::TooLong => format!("the message is longer than {MAX_LINE} bytes. Send less per call."),
    };
    tracing::debug!("answered an undecodable line: {message}");
    let answer = TxJsonRpcMessage::<RoleServer>::error(ErrorData::new(code, message, None), id);
    Line::Answer(serde_json::to_string(&answer).expect("a JSON-RPC error serializes"))
}

/// What a lenient scan reads from the top level of a JSON object that did
/// not decode: its `id` (when it reads as an MCP id: an integer or a
/// string) and which of the keys that make it a request or a response it
/// has.
///
/// The scan steps over nested values by counting brackets outside strings
/// and skips escapes without judging them, so neither depth nor a lone
/// surrogate stops it; it never recurses, so no input can exhaust the stack.
/// It stops at the first thing that is not JSON and keeps what it had read.
#[derive(Debug, Default, PartialEq)]
struct Envelope {
    id: Option<RequestId>,
    has_id: bool,
    has_method: bool,
    is_response: bool,
}

impl Envelope {
    /// `None` when the line is not a JSON object.
    fn scan(line: &[u8]) -> Option<Envelope> {
        let mut scan = Scan { bytes: line, at: 0 };
        scan.skip_space();
        scan.expect(b'{')?;
        let mut envelope = Envelope::default();
        let _ = scan.members(&mut envelope);
        Some(envelope)
    }
}

struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Scan<'_> {
    /// Reads `"key": value` pairs of the top-level object into `envelope`.
    fn members(&mut self, envelope: &mut Envelope) -> Option<()> {
        loop {
            self.skip_space();
            if self.peek()? == b'}' {
                return Some(());
            }
            let key_start = self.at;
            self.string()?;
            let key = &self.bytes[key_start + 1..self.at - 1];
            self.skip_space();
            self.expect(b':')?;
            self.skip_space();
            let value_start = self.at;
            self.value()?;
            let value = &self.bytes[value_start..self.at];
            match key {
                b"id" => {
                    envelope.has_id = true;
                    envelope.id = serde_json::from_slice(value).ok();
                }
                b"method" => envelope.has_method = true,
                b"result" | b"error" => envelope.is_response = true,
                _ => {}
            }
            self.skip_space();
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => return Some(()),
                _ => return None,
            }
        }
    }

    /// Steps over one value of any depth.
    fn value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth -= 1,
                        _ => {}
                    }
                    self.at += 1;
                    if depth == 0 {
                        return Some(());
                    }
                }
            }
            _ => {
                let start = self.at;
                while self
                    .peek()
                    .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
                {
                    self.at += 1;
                }
                (self.at > start).then_some(())
            }
        }
    }

    /// Steps over a string, escapes included, whatever they escape.
    fn string(&mut self) -> Option<()> {
        self.expect(b'"')?;
        loop {
            match self.peek()? {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return Some(());
                }
                _ => self.at += 1,
            }
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn answer(line: &str) -> Value {
        match decode(line.as_bytes()) {
            Line::Answer(answer) => serde_json::from_str(&answer).unwrap(),
            Line::Message(m) => panic!("decoded: {m:?}"),
            Line::Skip => panic!("skipped"),
        }
    }

    #[test]
    fn undecodable_requests_are_answered_with_their_id() {
        let deep = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
        let call = |arguments: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"x","arguments":{arguments}}}}}"#
            )
        };
        for line in [
            call(&format!(r#"{{"a":{deep}}}"#)),
            call(r#"{"a":"x\ud800y"}"#),
            call(r#"{"a":"cut short"#),
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"garbage"}"#.to_owned(),
        ] {
            let answer = answer(&line);
            assert_eq!(answer["id"], 7, "{answer}");
            assert_eq!(answer["error"]["code"], ErrorCode::INVALID_PARAMS.0, "{answer}");
        }
        let answer = answer(r#"{"id":"a-1","params":{"x":"\ud800"}}"#);
        assert_eq!(answer["id"], "a-1", "{answer}");
        assert_eq!(answer["error"]["code"], ErrorCode::INVALID_REQUEST.0, "{answer}");
    }

    #[test]
    fn lines_without_a_readable_id_get_an_id_less_error() {
        for line in ["this is not json", "[[[", r#"{"id":"\ud800","method":"ping""#] {
            let answer = answer(line);
            assert_eq!(answer["id"], Value::Null, "{answer}");
            assert_eq!(answer["error"]["code"], ErrorCode::PARSE_ERROR.0, "{answer}");
        }
        let answer = answer(r#"{"jsonrpc":"2.0","id":{"no":1},"method":"ping"}"#);
        assert_eq!(answer["error"]["code"], ErrorCode::INVALID_REQUEST.0, "{answer}");
        assert_eq!(answer["id"], Value::Null, "{answer}");
    }

    #[test]
    fn notifications_responses_and_blank_lines_are_never_answered() {
        for line in [
            "",
            "  \r",
            r#"{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"\ud800"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"a":"\ud800"}}"#,
        ] {
            assert!(matches!(decode(line.as_bytes()), Line::Skip), "{line:?}");
        }
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert!(matches!(decode(ping.as_bytes()), Line::Message(_)));
    }

    /// Through the transport itself: an over-long request is answered with
    /// its id, and the next line still reaches rmcp.
    #[tokio::test]
    async fn an_over_long_line_is_answered_and_reading_goes_on() {
        let (mut client, server) = tokio::io::duplex(64 * 1024);
        let (read, write) = tokio::io::split(server);
        let mut transport = StdioTransport::new(read, write);
        let (client_read, mut client_write) = tokio::io::split(&mut client);
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"x":"{}"}}}}"#,
            "a".repeat(MAX_LINE)
        );
        let sent = async {
            client_write.write_all(long.as_bytes()).await.unwrap();
            client_write
                .write_all(b"\n{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"}\n")
                .await
                .unwrap();
        };
        let mut answers = BufReader::new(client_read).lines();
        let (_, answer, ping) = tokio::join!(sent, answers.next_line(), transport.receive());
        let answer: Value = serde_json::from_str(&answer.unwrap().unwrap()).unwrap();
        assert_eq!(answer["id"], 9, "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("longer than"),
            "{answer}"
        );
        assert!(format!("{:?}", ping.unwrap()).contains("Ping"));
    }

    #[test]
    fn the_scan_reads_the_top_level_id_only() {
        let scan = |line: &str| Envelope::scan(line.as_bytes());
        let envelope = scan(r#" { "params" : {"id": 1, "s": "}\"]"}, "id" : 42 , "method":"m"} "#).unwrap();
        assert_eq!(envelope.id, Some(RequestId::Number(42)));
        assert!(envelope.has_method && !envelope.is_response);
        assert_eq!(scan("[1]"), None);
        assert_eq!(scan(r#"{"id":true,"#).unwrap().id, None);
        assert_eq!(scan(r#"{"id":-3,"#).unwrap().id, Some(RequestId::Number(-3)));
        assert_eq!(
            scan(r#"{"id":"a","#).unwrap().id,
            Some(RequestId::String("a".into()))
        );
        assert_eq!(scan(r#"{"id":null,"#).unwrap().id, None);
    }
}
