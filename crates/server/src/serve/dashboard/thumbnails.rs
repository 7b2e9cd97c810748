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

/// How many thumbnails the ring keeps (issue 24): a 240 px wide JPEG of
/// quality 50 is 3–15 KB, so about 1–3 MB in all.
const THUMBNAILS_KEPT: usize = 200;
/// How many bytes of JPEG the ring keeps at most: a page of noise makes
/// larger thumbnails, which push out older ones rather than pinning 200 ×
/// their size. The newest is always kept.
const THUMBNAIL_BYTES_KEPT: usize = 4 << 20;
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
    /// The last [`THUMBNAILS_KEPT`] thumbnails (at most
    /// [`THUMBNAIL_BYTES_KEPT`] of JPEG), oldest first.
    ring: Mutex<Ring>,
    /// The number the next thumbnail gets (its URL names it).
    next: AtomicU64,
    /// When a dashboard last polled the state (`None`: never).
    pub(super) watched: Mutex<Option<Instant>>,
    /// Taken so far, and the total microseconds and bytes they took.
    taken: AtomicU64,
    micros: AtomicU64,
    bytes: AtomicU64,
}

/// The kept thumbnails and their JPEGs' total size.
#[derive(Default)]
struct Ring {
    kept: VecDeque<Thumbnail>,
    bytes: usize,
}

impl Ring {
    /// Keeps `thumbnail`, dropping the oldest beyond the ring's count and
    /// bytes (never the one just kept).
    fn push(&mut self, thumbnail: Thumbnail) {
        self.bytes += thumbnail.jpeg.len();
        self.kept.push_back(thumbnail);
        while self.kept.len() > THUMBNAILS_KEPT || (self.bytes > THUMBNAIL_BYTES_KEPT && self.kept.len() > 1)
        {
            if let Some(old) = self.kept.pop_front() {
                self.bytes -= old.jpeg.len();
            }
        }
    }
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
            ring: Mutex::default(),
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
            .newest(|r| r.session == session.id() && r.tool == tool)
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
            this.ring.lock().unwrap().push(Thumbnail { n, key, jpeg });
        });
    }

    pub(super) fn number_of(&self, key: &str) -> Option<u64> {
        self.ring
            .lock()
            .unwrap()
            .kept
            .iter()
            .find(|t| t.key == key)
            .map(|t| t.n)
    }

    pub(super) fn jpeg(&self, n: u64) -> Option<Vec<u8>> {
        self.ring
            .lock()
            .unwrap()
            .kept
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
            "kept": self.ring.lock().unwrap().kept.len(),
        })
    }
}

/// The dashboard's routes, on the WebSocket API's shared state.
/// Decodes standard base64 (what CDP sends), padded or not: the `base64`
/// crate, configured for either.
fn base64_decode(text: &str) -> Result<Vec<u8>, ()> {
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    use base64::Engine as _;
    const CDP: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    CDP.decode(text.trim()).map_err(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thumbnail(n: u64, size: usize) -> Thumbnail {
        Thumbnail {
            n,
            key: format!("s|{n}"),
            jpeg: vec![0; size],
        }
    }

    /// Issue 24: the ring keeps the last 200 thumbnails, the newest among
    /// them.
    #[test]
    fn the_ring_keeps_the_last_two_hundred() {
        let mut ring = Ring::default();
        for n in 0..THUMBNAILS_KEPT as u64 + 50 {
            ring.push(thumbnail(n, 10_000));
        }
        assert_eq!(ring.kept.len(), THUMBNAILS_KEPT);
        assert_eq!(ring.kept.front().unwrap().n, 50);
        assert_eq!(ring.kept.back().unwrap().n, THUMBNAILS_KEPT as u64 + 49);
        assert_eq!(ring.bytes, THUMBNAILS_KEPT * 10_000);
    }

    /// Issue 24: large thumbnails push out older ones: the ring stays under
    /// its bytes, and a thumbnail larger than the bound alone is kept.
    #[test]
    fn large_thumbnails_keep_the_ring_under_its_bytes() {
        let mut ring = Ring::default();
        for n in 0..100 {
            ring.push(thumbnail(n, 200_000));
        }
        assert!(ring.bytes <= THUMBNAIL_BYTES_KEPT, "{} bytes", ring.bytes);
        assert_eq!(ring.kept.len(), THUMBNAIL_BYTES_KEPT / 200_000);
        assert_eq!(ring.kept.back().unwrap().n, 99);
        ring.push(thumbnail(100, THUMBNAIL_BYTES_KEPT + 1));
        assert_eq!(ring.kept.len(), 1);
        assert_eq!(ring.bytes, THUMBNAIL_BYTES_KEPT + 1);
    }

    #[test]
    fn base64_decodes_padded_and_unpadded() {
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode("aGk").unwrap(), b"hi");
        assert_eq!(base64_decode("AAEC").unwrap(), [0, 1, 2]);
        assert!(base64_decode("a$b=").is_err());
    }
}
