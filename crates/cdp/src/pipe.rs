//! The DevTools pipe: a launched Chromium driven over `--remote-debugging-pipe`
//! (it reads commands from its fd 3 and writes replies and events to its
//! fd 4, each message a JSON text ended by a NUL byte), so the browser opens
//! no DevTools TCP port that another local user could reach.
//!
//! Owns the two pipe ends on cdpilot's side until the one [`Connection`]
//! takes them (`Transport::open`). A pipe cannot be opened twice nor
//! reopened: [`Pipe::capabilities`] says so, so evaluate's lane is a second
//! flattened session on the same pipe and a lost pipe means the browser is
//! gone (the engine relaunches). Launching (which fds the child gets) is
//! `launch`'s business; this module only speaks the framing, and says at
//! once whether Chromium's end is closed ([`Transport::hung_up`]).
//!
//! [`Connection`]: crate::Connection

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Mutex;

use futures_util::future::BoxFuture;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;

use crate::transport::{Capabilities, Incoming, Outgoing, Oversized, Transport, MAX_MESSAGE};
use crate::CdpError;

/// The message terminator on a DevTools pipe.
const NUL: u8 = 0;

/// cdpilot's ends of a launched browser's DevTools pipe.
pub struct Pipe {
    /// Taken by the first (and only) [`Transport::open`]; locked for
    /// microseconds.
    ends: Mutex<Option<Ends>>,
    /// A second descriptor of the pipe Chromium writes (a `dup` of our
    /// read end, never read): polled for the hang-up that says every
    /// writer, i.e. Chromium, is gone, whoever holds the reader.
    watch: Option<OwnedFd>,
}

/// Where commands go (Chromium's fd 3) and where its messages come from
/// (its fd 4). The reader is buffered once here so that bytes read past the
/// launch's handshake are not lost.
struct Ends {
    to_browser: pipe::Sender,
    from_browser: BufReader<pipe::Receiver>,
}

impl Pipe {
    /// Wraps cdpilot's ends: the write end of the pipe Chromium reads (its
    /// fd 3) and the read end of the pipe it writes (its fd 4).
    pub(crate) fn new(to_browser: OwnedFd, from_browser: OwnedFd) -> Result<Pipe, CdpError> {
        let failed = |e: std::io::Error| CdpError::Connect(format!("cannot use the DevTools pipe: {e}"));
        // Without it the pipe still works; its end is then noticed by the
        // reader alone.
        let watch = from_browser.try_clone().ok();
        let to_browser = pipe::Sender::from_owned_fd(to_browser).map_err(failed)?;
        let from_browser = pipe::Receiver::from_owned_fd(from_browser).map_err(failed)?;
        Ok(Pipe {
            ends: Mutex::new(Some(Ends {
                to_browser,
                from_browser: BufReader::new(from_browser),
            })),
            watch,
        })
    }

    /// Sends one command before any connection exists and waits for its
    /// answer: the launch's proof that DevTools is up (the pipe has no
    /// "listening" line). Uses id 0, which no [`Connection`](crate::Connection)
    /// sends; nothing is enabled yet, so no event can come before it.
    pub(crate) async fn handshake(&self) -> Result<(), CdpError> {
        let Some(mut ends) = self.ends.lock().unwrap().take() else {
            return Err(CdpError::Connect("the DevTools pipe is already in use".into()));
        };
        let result = async {
            write_message(&mut ends.to_browser, r#"{"id":0,"method":"Browser.getVersion"}"#).await?;
            loop {
                let message = read_message(&mut ends.from_browser).await?;
                if message.starts_with(r#"{"id":0,"#) {
                    return Ok(());
                }
            }
        }
        .await;
        *self.ends.lock().unwrap() = Some(ends);
        result
    }
}

async fn write_message(to: &mut pipe::Sender, message: &str) -> Result<(), CdpError> {
    let mut bytes = Vec::with_capacity(message.len() + 1);
    bytes.extend_from_slice(message.as_bytes());
    bytes.push(NUL);
    to.write_all(&bytes).await.map_err(|_| CdpError::Disconnected)
}

/// One NUL-terminated message; `Disconnected` at the end of the pipe
/// (Chromium exited). A message past [`MAX_MESSAGE`] is skipped to its NUL
/// without being kept, and its note ([`Oversized`]) comes in its place.
async fn read_message(from: &mut BufReader<pipe::Receiver>) -> Result<String, CdpError> {
    let mut bytes = Vec::new();
    let mut over: Option<Oversized> = None;
    loop {
        let buffered = from.fill_buf().await.map_err(|_| CdpError::Disconnected)?;
        if buffered.is_empty() {
            return Err(CdpError::Disconnected);
        }
        let end = buffered.iter().position(|b| *b == NUL);
        let chunk = &buffered[..end.unwrap_or(buffered.len())];
        match &mut over {
            Some(skipping) => skipping.push(chunk),
            None if bytes.len() + chunk.len() > MAX_MESSAGE => {
                let mut skipping = Oversized::default();
                skipping.push(&bytes);
                skipping.push(chunk);
                bytes = Vec::new();
                over = Some(skipping);
            }
            None => bytes.extend_from_slice(chunk),
        }
        let used = chunk.len() + usize::from(end.is_some());
        from.consume(used);
        if end.is_some() {
            break;
        }
    }
    match over {
        Some(skipped) => Ok(skipped.note()),
        None => String::from_utf8(bytes).map_err(|_| CdpError::Disconnected),
    }
}

impl Transport for Pipe {
    fn open(&self) -> BoxFuture<'_, Result<(Outgoing, Incoming), CdpError>> {
        Box::pin(async move {
            let Some(ends) = self.ends.lock().unwrap().take() else {
                return Err(CdpError::Connect(
                    "the browser's DevTools pipe was already opened; a pipe cannot be reopened".into(),
                ));
            };
            let outgoing: Outgoing = Box::pin(futures_util::sink::unfold(
                ends.to_browser,
                |mut to, message: String| async move {
                    write_message(&mut to, &message).await?;
                    Ok::<_, CdpError>(to)
                },
            ));
            let incoming: Incoming = Box::pin(futures_util::stream::unfold(
                Some(ends.from_browser),
                |from| async move {
                    let mut from = from?;
                    match read_message(&mut from).await {
                        Ok(message) => Some((Ok(message), Some(from))),
                        // One error ends the stream: the pipe is gone.
                        Err(e) => Some((Err(e), None)),
                    }
                },
            ));
            Ok((outgoing, incoming))
        })
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            parallel_pipes: false,
            reopen: false,
        }
    }

    fn describe(&self) -> String {
        "the launched browser's DevTools pipe".into()
    }

    /// `poll` with no wait: `POLLHUP` on a pipe's read end means no write
    /// end is open any more. Only Chromium's main process holds it (the
    /// guard and cdpilot close their copies at launch), so it is set from
    /// the moment Chromium has exited, even with messages still unread.
    fn hung_up(&self) -> bool {
        let Some(watch) = &self.watch else {
            return false;
        };
        let mut fd = libc::pollfd {
            fd: watch.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, owned by this frame; a zero timeout.
        let ready = unsafe { libc::poll(&mut fd, 1, 0) };
        ready > 0 && fd.revents & libc::POLLHUP != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::{SinkExt, StreamExt};
    use std::time::Duration;

    const TEST_WAIT: Duration = Duration::from_secs(5);

    /// Two OS pipes standing in for Chromium: returns the Pipe and the
    /// "browser" ends (what it reads, what it writes).
    fn fake_browser() -> (Pipe, std::io::PipeReader, std::io::PipeWriter) {
        let (browser_reads, to_browser) = std::io::pipe().unwrap();
        let (from_browser, browser_writes) = std::io::pipe().unwrap();
        let pipe = Pipe::new(OwnedFd::from(to_browser), OwnedFd::from(from_browser)).unwrap();
        (pipe, browser_reads, browser_writes)
    }

    #[tokio::test]
    async fn messages_are_nul_framed_both_ways_and_the_pipe_opens_once() {
        use std::io::{Read, Write};
        let (pipe, mut browser_reads, mut browser_writes) = fake_browser();
        let (mut outgoing, mut incoming) = pipe.open().await.unwrap();
        outgoing.send("{\"id\":1}".into()).await.unwrap();
        let mut got = [0u8; 9];
        browser_reads.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"{\"id\":1}\0");
        browser_writes.write_all(b"{\"a\":1}\0{\"b\":2}\0").unwrap();
        let first = tokio::time::timeout(TEST_WAIT, incoming.next()).await.unwrap();
        assert_eq!(first.unwrap().unwrap(), "{\"a\":1}");
        let second = tokio::time::timeout(TEST_WAIT, incoming.next()).await.unwrap();
        assert_eq!(second.unwrap().unwrap(), "{\"b\":2}");
        drop(browser_writes);
        let end = tokio::time::timeout(TEST_WAIT, incoming.next()).await.unwrap();
        assert!(matches!(end, Some(Err(CdpError::Disconnected))), "{end:?}");
        assert!(pipe.open().await.is_err(), "a pipe opens once");
        assert!(!pipe.capabilities().reopen && !pipe.capabilities().parallel_pipes);
    }

    #[tokio::test]
    async fn a_message_over_the_limit_is_skipped_to_its_nul_and_noted() {
        use std::io::Write;
        let (pipe, _browser_reads, mut browser_writes) = fake_browser();
        let (_outgoing, mut incoming) = pipe.open().await.unwrap();
        let writer = std::thread::spawn(move || {
            browser_writes
                .write_all(br#"{"id":7,"result":{"value":""#)
                .unwrap();
            browser_writes.write_all(&vec![b'x'; MAX_MESSAGE]).unwrap();
            browser_writes
                .write_all(b"\"},\"sessionId\":\"S1\"}\0{\"b\":2}\0")
                .unwrap();
            browser_writes
        });
        let before = crate::transport::dropped_messages();
        let note = tokio::time::timeout(TEST_WAIT, incoming.next()).await.unwrap();
        let note: serde_json::Value = serde_json::from_str(&note.unwrap().unwrap()).unwrap();
        assert_eq!(note["method"], crate::transport::DROPPED, "{note}");
        assert_eq!(
            (note["params"]["id"].as_u64(), note["sessionId"].as_str()),
            (Some(7), Some("S1"))
        );
        assert!(crate::transport::dropped_messages() > before);
        let next = tokio::time::timeout(TEST_WAIT, incoming.next()).await.unwrap();
        assert_eq!(next.unwrap().unwrap(), "{\"b\":2}", "the pipe goes on");
        drop(writer.join());
    }

    #[tokio::test]
    async fn a_closed_write_end_is_a_hang_up_at_once_even_with_messages_unread() {
        use std::io::Write;
        let (pipe, _browser_reads, mut browser_writes) = fake_browser();
        let (_outgoing, _incoming) = pipe.open().await.unwrap();
        assert!(!pipe.hung_up(), "the browser's end is open");
        browser_writes.write_all(b"{\"a\":1}\0").unwrap();
        assert!(!pipe.hung_up(), "a message waiting is not a hang-up");
        // Nothing reads `_incoming`: the end is seen without the reader.
        drop(browser_writes);
        assert!(pipe.hung_up());
    }
}
