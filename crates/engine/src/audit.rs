//! The audit trail: exactly one record per tool call, whatever its outcome
//! (`docs/src/spec/tools.md`, Audit). The last [`KEPT`] are kept in memory for
//! the MCP resource `cdpilot://audit`; with `[audit] file` set, each record
//! is also appended to that file as one JSON line and flushed at once.
//!
//! The ring keeps each record as its JSON text, packed one after another
//! in blocks of [`BLOCK`] bytes, not as the record's values: a record
//! held as values is a few dozen small allocations (its arguments, its
//! URL verdicts), and a thousand of them, made between the short-lived
//! allocations of the calls, kept pages of the heap partly used long
//! after their sessions closed (issue 24: 4.3 MiB live in 33,530 blocks
//! held 15 MiB of the server's RSS). A reader parses what it reads.
//!
//! Owns the ring and the open file. Records are written by the one dispatch
//! (`crate::dispatch::call`), already redacted; nothing else writes here.
//! The file is opened in append mode and never truncated or rewritten: a
//! failed write is logged and counted, never a failed call.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::metrics::Metrics;

/// How many records the in-memory ring keeps (per engine).
pub const KEPT: usize = 1000;

/// How many bytes of records (their JSON) the ring keeps at most: a few
/// calls with megabytes of arguments (an `evaluate`'s script, a long
/// `type`) push out older records rather than pinning 1000 × their size
/// (issue 24). The newest record is always kept.
pub const KEPT_BYTES: usize = 8 << 20;

/// The size of the ring's blocks of JSON text: a record larger than this
/// gets a block of its own size.
pub const BLOCK: usize = 64 << 10;

/// One call as the audit shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// When the call started, RFC 3339 in UTC with milliseconds.
    pub at: String,
    /// The session's id (`default` over stdio).
    pub session: String,
    /// The tool called.
    pub tool: String,
    /// The call's arguments as the client sent them, secrets redacted.
    pub arguments: Value,
    /// The tab's URL before and after the call (absent when the call never
    /// reached a tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_before: Option<String>,
    /// The tab's URL after the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_after: Option<String>,
    /// What the URL policy decided during the call: `{url, action, rule}`.
    pub verdicts: Vec<Value>,
    /// What the session's routes answered in the call's tab since its
    /// previous call, by route: `{route, answer, pattern, requests, urls}`
    /// (the first [`crate::policy::gate::URLS_SUMMED`] URLs). Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routed: Vec<Value>,
    /// `ok`, or the error code.
    pub outcome: String,
    /// How long the call took.
    pub ms: u64,
}

/// The audit trail: the last records in memory and, with `[audit] file`,
/// every record appended to that file.
pub struct Audit {
    /// The last [`KEPT`] records (at most [`KEPT_BYTES`]), oldest first.
    /// Locked for microseconds to keep a record; a reader parses what it
    /// reads under it (about a millisecond for the whole ring).
    ring: Mutex<Ring>,
    /// `[audit] file`, opened for appending; `None`: memory only. Its lock
    /// keeps one record's line whole when calls finish together.
    file: Option<Mutex<File>>,
    /// The engine's metrics, where failed writes are counted.
    metrics: Arc<Metrics>,
}

impl Audit {
    /// The audit of an engine: `path` empty means memory only. A file that
    /// cannot be opened is a start-up error naming the key.
    pub fn open(path: &str, metrics: Arc<Metrics>) -> Result<Audit, String> {
        let file = match path {
            "" => None,
            path => {
                // 0600: the records name URLs (their query tokens too) and
                // tools' arguments; another local user reads none of it.
                let file = OpenOptions::new()
                    .create(true)
                    .append(true)
                    .mode(0o600)
                    .open(path)
                    .map_err(|e| format!("audit.file = {path:?}: cannot open it for appending: {e}"))?;
                Some(Mutex::new(file))
            }
        };
        Ok(Audit {
            ring: Mutex::default(),
            file,
            metrics,
        })
    }

    /// Keeps `record` in the ring and appends it to the file. A write that
    /// fails is reported (stderr, metrics) and otherwise ignored: the call
    /// it describes has happened either way.
    pub fn record(&self, record: Record) {
        let mut line = serde_json::to_string(&record).unwrap_or_default();
        drop(record);
        self.ring.lock().unwrap().push(&line);
        if let Some(file) = &self.file {
            line.push('\n');
            let written = {
                let mut file = file.lock().unwrap();
                file.write_all(line.as_bytes()).and_then(|()| file.flush())
            };
            if let Err(e) = written {
                tracing::warn!("writing the audit file failed: {e}; the record is kept in memory only");
                self.metrics.audit_write_failed();
            }
        }
    }

    /// How many records the ring holds, and their size in bytes (as JSON).
    pub fn held(&self) -> (usize, usize) {
        let ring = self.ring.lock().unwrap();
        (ring.index.len(), ring.bytes)
    }

    /// The kept records of `session` (all of them: `None`), oldest first,
    /// as `cdpilot://audit` serves them.
    pub fn to_json(&self, session: Option<&str>) -> Value {
        let records: Vec<Record> = self
            .records()
            .into_iter()
            .filter(|r| session.is_none_or(|s| r.session == s))
            .collect();
        serde_json::json!({ "records": records })
    }

    /// The kept records, oldest first.
    pub fn records(&self) -> Vec<Record> {
        self.recent(usize::MAX)
    }

    /// The last `n` kept records, oldest first.
    pub fn recent(&self, n: usize) -> Vec<Record> {
        let ring = self.ring.lock().unwrap();
        let skip = ring.index.len().saturating_sub(n);
        ring.lines().skip(skip).filter_map(parse).collect()
    }

    /// The newest kept record that `wanted` accepts.
    pub fn newest(&self, wanted: impl Fn(&Record) -> bool) -> Option<Record> {
        let ring = self.ring.lock().unwrap();
        let newest = ring.lines().rev().filter_map(parse).find(|r| wanted(r));
        newest
    }
}

/// A kept line as its record (every kept line is one: the ring holds only
/// what `record` serialised).
fn parse(line: &str) -> Option<Record> {
    serde_json::from_str(line).ok()
}

/// Where one record's text is: its block (counted from the first block
/// ever made) and its range there.
struct Entry {
    block: usize,
    start: usize,
    len: usize,
}

/// The records kept in memory as JSON text in blocks, with an index, and
/// the total of their sizes.
#[derive(Default)]
struct Ring {
    /// The blocks still holding a kept record, oldest first; the last
    /// one is filled next.
    blocks: VecDeque<String>,
    /// How many blocks were dropped from the front (the first kept
    /// block's number).
    dropped: usize,
    /// One entry per kept record, oldest first.
    index: VecDeque<Entry>,
    /// The kept records' bytes.
    bytes: usize,
}

impl Ring {
    /// Keeps `line`, dropping the oldest records beyond [`KEPT`] and
    /// [`KEPT_BYTES`] (never the one just kept), and every block no kept
    /// record is in.
    fn push(&mut self, line: &str) {
        let fits = self
            .blocks
            .back()
            .is_some_and(|b| b.capacity() - b.len() >= line.len());
        if !fits {
            self.blocks
                .push_back(String::with_capacity(line.len().max(BLOCK)));
        }
        let number = self.dropped + self.blocks.len() - 1;
        let block = self.blocks.back_mut().expect("a block was just made");
        self.index.push_back(Entry {
            block: number,
            start: block.len(),
            len: line.len(),
        });
        block.push_str(line);
        self.bytes += line.len();
        while self.index.len() > KEPT || (self.bytes > KEPT_BYTES && self.index.len() > 1) {
            if let Some(old) = self.index.pop_front() {
                self.bytes -= old.len;
            }
        }
        let first_kept = self.index.front().map_or(self.dropped, |e| e.block);
        while self.dropped < first_kept {
            self.blocks.pop_front();
            self.dropped += 1;
        }
    }

    /// The kept records' text, oldest first.
    fn lines(&self) -> impl DoubleEndedIterator<Item = &str> {
        self.index
            .iter()
            .map(|e| &self.blocks[e.block - self.dropped][e.start..e.start + e.len])
    }

    /// The bytes of the blocks (what the ring holds, besides its index).
    #[cfg(test)]
    fn block_bytes(&self) -> usize {
        self.blocks.iter().map(String::capacity).sum()
    }
}

/// `time` as RFC 3339 in UTC with milliseconds (`2025-01-31T12:00:00.123Z`).
pub fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

/// Seconds since the epoch of an RFC 3339 time in UTC as [`rfc3339`]
/// writes it (`2025-01-31T12:00:00.123Z`; the fraction may be absent or of
/// any length); `None` for anything else.
pub fn parse_rfc3339(text: &str) -> Option<f64> {
    let text = text.strip_suffix('Z')?;
    let (date, time) = text.split_once('T')?;
    let mut date = date.splitn(3, '-').map(str::parse::<i64>);
    let (year, month, day) = (date.next()?.ok()?, date.next()?.ok()?, date.next()?.ok()?);
    let mut time = time.splitn(3, ':');
    let (hour, minute) = (
        time.next()?.parse::<f64>().ok()?,
        time.next()?.parse::<f64>().ok()?,
    );
    let second = time.next()?.parse::<f64>().ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    Some(
        days_from_civil(year, month as u32, day as u32) as f64 * 86_400.0
            + hour * 3600.0
            + minute * 60.0
            + second,
    )
}

/// The inverse of [`civil_from_days`].
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let mp = i64::from((month + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Howard Hinnant's days-since-1970 → (year, month, day) in the proleptic
/// Gregorian calendar.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(tool: &str) -> Record {
        Record {
            at: rfc3339(SystemTime::now()),
            session: "default".into(),
            tool: tool.into(),
            arguments: Value::Null,
            url_before: None,
            url_after: None,
            verdicts: Vec::new(),
            routed: Vec::new(),
            outcome: "ok".into(),
            ms: 1,
        }
    }

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_709_210_096_789); // a leap day
        assert_eq!(rfc3339(t), "2024-02-29T12:34:56.789Z");
        let parsed = parse_rfc3339("2024-02-29T12:34:56.789Z").unwrap();
        assert!((parsed - 1_709_210_096.789).abs() < 1e-6, "{parsed}");
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(parse_rfc3339("2024-02-29 12:34:56"), None);
    }

    #[test]
    fn the_ring_keeps_the_last_thousand() {
        let audit = Audit::open("", Arc::default()).unwrap();
        for i in 0..KEPT + 5 {
            audit.record(record(&format!("t{i}")));
        }
        let records = audit.records();
        assert_eq!(records.len(), KEPT);
        assert_eq!(records[0].tool, "t5");
    }

    /// Issue 24: calls with a megabyte of arguments each keep the ring
    /// under its byte bound (the newest first to stay).
    #[test]
    fn large_arguments_keep_the_ring_under_its_byte_bound() {
        let audit = Audit::open("", Arc::default()).unwrap();
        for i in 0..40 {
            let mut big = record(&format!("t{i}"));
            big.arguments = serde_json::json!({ "script": "x".repeat(1 << 20) });
            audit.record(big);
        }
        let (count, bytes) = audit.held();
        assert!(bytes <= KEPT_BYTES, "{bytes} bytes held");
        assert!((1..40).contains(&count), "{count} records held");
        assert_eq!(audit.records().last().unwrap().tool, "t39");
    }

    /// Issue 24: the ring holds its records as text in a few blocks, and
    /// a block is let go once no kept record is in it.
    #[test]
    fn the_ring_holds_text_in_blocks_and_lets_go_of_the_old_ones() {
        let audit = Audit::open("", Arc::default()).unwrap();
        for i in 0..5 * KEPT {
            let mut r = record(&format!("t{i}"));
            r.arguments = serde_json::json!({ "url": format!("http://127.0.0.1/{}", "p".repeat(i % 300)) });
            audit.record(r);
        }
        let ring = audit.ring.lock().unwrap();
        let text: usize = ring.bytes;
        assert_eq!(ring.index.len(), KEPT);
        assert!(
            ring.block_bytes() <= text + 2 * BLOCK,
            "{} bytes of blocks for {text}",
            ring.block_bytes()
        );
        assert!(ring.dropped > 0, "no block was let go");
        drop(ring);
        let records = audit.records();
        assert_eq!(records.first().unwrap().tool, format!("t{}", 4 * KEPT));
        assert_eq!(records.last().unwrap().tool, format!("t{}", 5 * KEPT - 1));
        let recent = audit.recent(2);
        assert_eq!(recent.len(), 2);
        assert_eq!(recent[1].tool, format!("t{}", 5 * KEPT - 1));
        let newest = audit.newest(|r| r.tool.ends_with('7')).unwrap();
        assert_eq!(newest.tool, format!("t{}", 5 * KEPT - 3));
        assert_eq!(
            audit.to_json(Some("default"))["records"]
                .as_array()
                .unwrap()
                .len(),
            KEPT
        );
        assert_eq!(audit.to_json(Some("another"))["records"], serde_json::json!([]));
    }

    /// A record larger than a block gets one of its own, and comes back whole.
    #[test]
    fn a_record_larger_than_a_block_comes_back_whole() {
        let audit = Audit::open("", Arc::default()).unwrap();
        audit.record(record("small"));
        let mut big = record("big");
        big.arguments = serde_json::json!({ "text": "é".repeat(BLOCK) });
        audit.record(big);
        audit.record(record("after"));
        let records = audit.records();
        let tools: Vec<&str> = records.iter().map(|r| r.tool.as_str()).collect();
        assert_eq!(tools, ["small", "big", "after"]);
        assert_eq!(
            records[1].arguments["text"].as_str().unwrap().chars().count(),
            BLOCK
        );
    }

    #[test]
    fn a_file_is_appended_to_never_truncated() {
        let path = std::env::temp_dir().join(format!("cdpilot-audit-{}.jsonl", std::process::id()));
        std::fs::write(&path, "{\"earlier\":true}\n").unwrap();
        let audit = Audit::open(path.to_str().unwrap(), Arc::default()).unwrap();
        audit.record(record("browser_click"));
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).ok();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0], "{\"earlier\":true}");
        assert!(lines[1].contains("\"tool\":\"browser_click\""), "{text}");
    }

    #[test]
    fn a_file_that_cannot_be_opened_names_the_key() {
        let e = Audit::open("/nonexistent-dir/audit.jsonl", Arc::default())
            .err()
            .unwrap();
        assert!(e.starts_with("audit.file = "), "{e}");
    }
}
