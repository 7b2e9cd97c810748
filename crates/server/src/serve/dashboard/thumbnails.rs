//! Audit thumbnails: a small JPEG of the active tab after each page
//! action, taken in the background while a dashboard is open, tied to the
//! call's audit record and kept in a bounded ring; and what they cost.
//!
//! Owns the ring and its counters (each locked or atomic for microseconds).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use engine::Budget;
use serde_json::{json, Value};

use crate::serve::sessions::Lease;

/// How many thumbnails the ring keeps.
const THUMBNAILS_KEPT: usize = 200;
/// Thumbnails are taken only while a dashboard polled this recently.
const WATCHED_WITHIN: Duration = Duration::from_secs(60);
/// How long taking one thumbnail may take.
const THUMBNAIL_BUDGET: Duration = Duration::from_secs(3);

/// Whether a call of `tool` changes what the page shows (its declaration
/// says so): each such call gets a thumbnail.
fn changes_page(tool: &str) -> bool {
    engine::tools::find(tool).is_some_and(|t| t.changes_page)
}

/// A bounded ring of small JPEGs, one per page action, each tied to its
/// audit record (session + start time), and what taking them cost.
pub struct Thumbnails {
    /// The last [`THUMBNAILS_KEPT`] thumbnails, oldest first.
    ring: Mutex<VecDeque<Thumbnail>>,
    /// The number the next thumbnail gets (its URL names it).
    next: AtomicU64,
    /// When a dashboard last polled the state (`None`: never).
    pub(super) watched: Mutex<Option<Instant>>,
    /// Taken so far, and the total microseconds and bytes they took.
    taken: AtomicU64,
    micros: AtomicU64,
    bytes: AtomicU64,
}

struct Thumbnail {
    n: u64,
    /// `session|at` of the audit record.
    key: String,
    jpeg: Vec<u8>,
}

impl Default for Thumbnails {
    fn default() -> Self {
        Thumbnails {
            ring: Mutex::new(VecDeque::with_capacity(THUMBNAILS_KEPT)),
            next: AtomicU64::new(1),
            watched: Mutex::new(None),
            taken: AtomicU64::new(0),
            micros: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        }
    }
}

impl Thumbnails {
    fn watched_recently(&self) -> bool {
        self.watched
            .lock()
            .unwrap()
            .is_some_and(|t| t.elapsed() < WATCHED_WITHIN)
    }

    /// After a successful call of `tool` in `lease`: for a page action,
    /// while a dashboard is watching, captures a thumbnail in the
    /// background (off the call's path) and ties it to the call's audit
    /// record, which the dispatch has just written.
    pub fn after_call(self: &Arc<Self>, lease: &Arc<Lease>, tool: &str) {
        if !changes_page(tool) || !self.watched_recently() {
            return;
        }
        let session = lease.session();
        let Some(record) = session
            .audit()
            .records()
            .into_iter()
            .rev()
            .find(|r| r.session == session.id() && r.tool == tool)
        else {
            return;
        };
        let key = format!("{}|{}", record.session, record.at);
        let (this, lease) = (self.clone(), lease.clone());
        tokio::spawn(async move {
            let started = Instant::now();
            let budget = Budget::with_timeout(THUMBNAIL_BUDGET);
            let Some(data) = lease.session().thumbnail(&budget).await else {
                return;
            };
            let Ok(jpeg) = base64_decode(&data) else {
                return;
            };
            this.taken.fetch_add(1, Ordering::Relaxed);
            this.micros
                .fetch_add(started.elapsed().as_micros() as u64, Ordering::Relaxed);
            this.bytes.fetch_add(jpeg.len() as u64, Ordering::Relaxed);
            let n = this.next.fetch_add(1, Ordering::Relaxed);
            let mut ring = this.ring.lock().unwrap();
            if ring.len() == THUMBNAILS_KEPT {
                ring.pop_front();
            }
            ring.push_back(Thumbnail { n, key, jpeg });
        });
    }

    pub(super) fn number_of(&self, key: &str) -> Option<u64> {
        self.ring
            .lock()
            .unwrap()
            .iter()
            .find(|t| t.key == key)
            .map(|t| t.n)
    }

    pub(super) fn jpeg(&self, n: u64) -> Option<Vec<u8>> {
        self.ring
            .lock()
            .unwrap()
            .iter()
            .find(|t| t.n == n)
            .map(|t| t.jpeg.clone())
    }

    pub(super) fn cost(&self) -> Value {
        let taken = self.taken.load(Ordering::Relaxed);
        let per = |total: u64| total.checked_div(taken).unwrap_or(0);
        json!({
            "taken": taken,
            "avg_ms": per(self.micros.load(Ordering::Relaxed)) as f64 / 1000.0,
            "avg_bytes": per(self.bytes.load(Ordering::Relaxed)),
            "kept": self.ring.lock().unwrap().len(),
        })
    }
}

/// The dashboard's routes, on the WebSocket API's shared state.
/// Decodes standard base64 (what CDP sends), without a dependency.
fn base64_decode(text: &str) -> Result<Vec<u8>, ()> {
    fn value(c: u8) -> Result<u32, ()> {
        match c {
            b'A'..=b'Z' => Ok(u32::from(c - b'A')),
            b'a'..=b'z' => Ok(u32::from(c - b'a') + 26),
            b'0'..=b'9' => Ok(u32::from(c - b'0') + 52),
            b'+' => Ok(62),
            b'/' => Ok(63),
            _ => Err(()),
        }
    }
    let bytes: Vec<u8> = text
        .bytes()
        .filter(|&c| c != b'=' && !c.is_ascii_whitespace())
        .collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= value(c)? << (18 - 6 * i);
        }
        let n = chunk.len() * 6 / 8;
        out.extend_from_slice(&acc.to_be_bytes()[1..1 + n]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::base64_decode;

    #[test]
    fn base64_decodes_padded_and_unpadded() {
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode("aGk").unwrap(), b"hi");
        assert_eq!(base64_decode("AAEC").unwrap(), [0, 1, 2]);
        assert!(base64_decode("a$b=").is_err());
    }
}
