//! Writing one session's trace: its directory (0700) and files (0600),
//! a line per call appended and flushed as the call ends, the size budget
//! (screenshots go first), and stopping on a write error without touching
//! the session.
//!
//! Owns the open `trace.jsonl` and what has been written; a lock held for
//! one line's write (or a screenshot's), never across an await.

use std::collections::{BTreeMap, HashSet};
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use super::format::{cast_name, CastFrame, Chapter, End, Header, Line, Step, Viewport, FORMAT, VERSION};
use crate::audit::rfc3339;

/// Screenshots are kept while the trace is under this share of its
/// budget (so text lines always have the last quarter).
const SHOTS_SHARE: (u64, u64) = (3, 4);

/// Screencast frames are kept while the trace is under this share of its
/// budget: they thin out before the steps' screenshots do.
const CAST_SHARE: (u64, u64) = (1, 2);

/// One session's trace, being written.
pub struct Trace {
    /// The session's trace directory.
    dir: PathBuf,
    state: Mutex<State>,
}

/// The trace stopped by itself (its budget, a write error): for the
/// session's events and metrics.
#[derive(Debug, Clone)]
pub struct Stopped {
    /// The trace's directory.
    pub dir: PathBuf,
    /// Why it stopped.
    pub reason: String,
}

/// A screenshot for a step: the JPEG, or why there is none.
pub enum Shot {
    /// The JPEG's bytes.
    Jpeg(Vec<u8>),
    /// None was taken, for this reason.
    Dropped(&'static str),
    /// The call does not change the page (a read): none is due.
    None,
}

/// A screencast frame waiting to be kept (`[trace] video`): the JPEG, when
/// it came, the viewport it shows and the tab's URL then.
pub struct CastShot {
    /// The JPEG's bytes.
    pub jpeg: Vec<u8>,
    /// When it arrived, in seconds since the Unix epoch.
    pub at: f64,
    /// The viewport it shows, in CSS px.
    pub viewport: Viewport,
    /// The tab's URL when it arrived (redacted).
    pub url: String,
}

struct State {
    /// `trace.jsonl`, open for appending; `None` once stopped.
    file: Option<File>,
    /// Bytes written (lines and screenshots).
    bytes: u64,
    max_bytes: u64,
    /// Steps written.
    steps: u64,
    /// Screenshots not kept, by reason.
    dropped: BTreeMap<String, u64>,
    /// The URL a secret was typed on: no screenshot of it (a typed value
    /// can be in the pixels, where no redaction reaches).
    secret_page: Option<String>,
    /// Console messages up to this time are in the trace already.
    console_until: f64,
    /// `tab/id` of the requests in the trace already (bounded by the
    /// budget: each one costs a line's bytes).
    requests_seen: HashSet<String>,
    /// `cast.jsonl`, once a screencast frame was kept.
    cast: Option<File>,
    /// Screencast frames kept.
    cast_frames: u64,
}

impl Trace {
    /// Starts a trace for session `session` in a new directory under
    /// `base` (created 0700 if missing): `20261202T031500Z-default/`.
    pub fn start(base: &Path, session: &str, max_bytes: u64) -> std::io::Result<Trace> {
        DirBuilder::new().recursive(true).mode(0o700).create(base)?;
        let now = SystemTime::now();
        let stamp: String = rfc3339(now)
            .chars()
            .filter(|c| !matches!(c, '-' | ':'))
            .take_while(|c| *c != '.')
            .collect();
        let name: String = session
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        let mut dir = base.join(format!("{stamp}Z-{name}"));
        let mut n = 1;
        loop {
            match DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => break,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => {
                    n += 1;
                    dir = base.join(format!("{stamp}Z-{name}-{n}"));
                }
                Err(e) => return Err(e),
            }
        }
        DirBuilder::new().mode(0o700).create(dir.join("shots"))?;
        let mut file = create(&dir.join("trace.jsonl"))?;
        let header = Line::Header(Header {
            format: FORMAT.into(),
            version: VERSION,
            session: session.to_owned(),
            started: rfc3339(now),
            cdpilot: env!("CARGO_PKG_VERSION").into(),
            max_bytes,
        });
        let line = to_line(&header);
        file.write_all(line.as_bytes())?;
        Ok(Trace {
            dir,
            state: Mutex::new(State {
                file: Some(file),
                bytes: line.len() as u64,
                max_bytes,
                steps: 0,
                dropped: BTreeMap::new(),
                secret_page: None,
                console_until: crate::timing::now(),
                requests_seen: HashSet::new(),
                cast: None,
                cast_frames: 0,
            }),
        })
    }

    /// The trace's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether it still writes.
    pub fn is_on(&self) -> bool {
        self.state.lock().unwrap().file.is_some()
    }

    /// Why a call that acts gets no screenshot, if it gets none: its
    /// arguments type a secret on `url`, or it ends on the page one was
    /// typed on; the budget is past its screenshots' share.
    pub fn refuses_shot(&self, arguments: &serde_json::Value, url: Option<&str>) -> Option<&'static str> {
        let mut state = self.state.lock().unwrap();
        state.file.as_ref()?;
        if arguments.to_string().contains("{{secret:") {
            state.secret_page = url.map(str::to_owned);
            return Some("secret_on_page");
        }
        if url.is_some() && state.secret_page.as_deref() == url {
            return Some("secret_on_page");
        }
        if state.bytes * SHOTS_SHARE.1 >= state.max_bytes * SHOTS_SHARE.0 {
            return Some("budget");
        }
        None
    }

    /// Whether responses' bodies are kept: while the trace is under its
    /// screenshots' share of the budget, as screenshots are.
    pub fn keeps_bodies(&self) -> bool {
        let state = self.state.lock().unwrap();
        state.file.is_some() && state.bytes * SHOTS_SHARE.1 < state.max_bytes * SHOTS_SHARE.0
    }

    /// Console messages after this time are not in the trace yet.
    pub fn console_until(&self) -> f64 {
        self.state.lock().unwrap().console_until
    }

    /// Whether request `id` of tab `tab` is in the trace already.
    pub fn has_request(&self, tab: &str, id: &str) -> bool {
        self.state
            .lock()
            .unwrap()
            .requests_seen
            .contains(&format!("{tab}/{id}"))
    }

    /// Writes `step` (numbered here) with its screenshot. Says so when the
    /// trace stopped because of it (its budget, a write error).
    pub fn record(&self, mut step: Step, shot: Shot) -> Option<Stopped> {
        let mut state = self.state.lock().unwrap();
        state.file.as_ref()?;
        step.step = state.steps + 1;
        for message in &step.console {
            state.console_until = state.console_until.max(message.at);
        }
        for request in &step.requests {
            state
                .requests_seen
                .insert(format!("{}/{}", request.tab, request.id));
        }
        match shot {
            Shot::Jpeg(jpeg)
                if state.bytes + jpeg.len() as u64 <= state.max_bytes * SHOTS_SHARE.0 / SHOTS_SHARE.1 =>
            {
                let name = super::format::shot_name(step.step);
                if let Err(e) = create(&self.dir.join(&name)).and_then(|mut f| f.write_all(&jpeg)) {
                    return self.stop_locked(&mut state, format!("writing {name}: {e}"));
                }
                state.bytes += jpeg.len() as u64;
                step.shot = Some(name);
            }
            Shot::Jpeg(_) => step.shot_dropped = Some("budget".into()),
            Shot::Dropped(why) => step.shot_dropped = Some(why.into()),
            Shot::None => {}
        }
        if let Some(why) = &step.shot_dropped {
            *state.dropped.entry(why.clone()).or_default() += 1;
        }
        let line = to_line(&Line::Step(Box::new(step)));
        if state.bytes + line.len() as u64 > state.max_bytes {
            return self.stop_locked(&mut state, "budget".into());
        }
        self.write_locked(&mut state, &line)
    }

    /// Keeps the screencast frames that came while the call a step records
    /// ran (and before it, since the step before): none when the step's
    /// URLs (`urls`, before and after) are the page a secret was typed on
    /// ([`Trace::refuses_shot`] saw the call's arguments first), nor a
    /// frame that came while its tab showed that page; none past the
    /// frames' share of the budget. Each dropped frame is counted in the
    /// end line (`cast_secret`, `cast_budget`; `cast_thinned`: the
    /// `thinned` frames the reel let go of a burst or a long wait).
    pub fn record_cast(&self, frames: Vec<CastShot>, thinned: u64, urls: &[Option<&str>]) -> Option<Stopped> {
        let mut state = self.state.lock().unwrap();
        state.file.as_ref()?;
        if thinned > 0 {
            *state.dropped.entry("cast_thinned".into()).or_default() += thinned;
        }
        let secret_call = state
            .secret_page
            .as_deref()
            .is_some_and(|page| urls.contains(&Some(page)));
        for frame in frames {
            let why = if secret_call || state.secret_page.as_deref() == Some(frame.url.as_str()) {
                "cast_secret"
            } else if (state.bytes + frame.jpeg.len() as u64) * CAST_SHARE.1 > state.max_bytes * CAST_SHARE.0
            {
                "cast_budget"
            } else {
                match self.keep_frame(&mut state, frame) {
                    Ok(()) => continue,
                    Err(e) => return self.stop_locked(&mut state, e),
                }
            };
            *state.dropped.entry(why.into()).or_default() += 1;
        }
        None
    }

    /// Writes one screencast frame and its line of `cast.jsonl`.
    fn keep_frame(&self, state: &mut State, frame: CastShot) -> Result<(), String> {
        if state.cast.is_none() {
            let made = DirBuilder::new()
                .mode(0o700)
                .create(self.dir.join("cast"))
                .and_then(|()| create(&self.dir.join("cast.jsonl")));
            state.cast = Some(made.map_err(|e| format!("starting cast.jsonl: {e}"))?);
        }
        let number = state.cast_frames + 1;
        let name = cast_name(number);
        create(&self.dir.join(&name))
            .and_then(|mut f| f.write_all(&frame.jpeg))
            .map_err(|e| format!("writing {name}: {e}"))?;
        let mut line = serde_json::to_string(&CastFrame {
            frame: number,
            at: frame.at,
            file: name,
            viewport: frame.viewport,
        })
        .unwrap_or_default();
        line.push('\n');
        let cast = state.cast.as_mut().expect("opened above");
        cast.write_all(line.as_bytes())
            .map_err(|e| format!("writing cast.jsonl: {e}"))?;
        state.cast_frames = number;
        state.bytes += (frame.jpeg.len() + line.len()) as u64;
        Ok(())
    }

    /// Writes a named chapter after the last step.
    pub fn chapter(&self, name: &str) -> Option<Stopped> {
        let mut state = self.state.lock().unwrap();
        state.file.as_ref()?;
        let line = to_line(&Line::Chapter(Chapter {
            after_step: state.steps,
            at: rfc3339(SystemTime::now()),
            name: name.to_owned(),
        }));
        self.write_locked(&mut state, &line)
    }

    /// Steps written so far.
    pub fn steps(&self) -> u64 {
        self.state.lock().unwrap().steps
    }

    /// Stops the trace for `reason` (`stopped`, `session_ended`): its end
    /// line, then `har.json` from its requests. Nothing if it had stopped.
    pub fn stop(&self, reason: &str) {
        let mut state = self.state.lock().unwrap();
        if state.file.is_some() {
            self.stop_locked(&mut state, reason.to_owned());
        }
    }

    fn write_locked(&self, state: &mut State, line: &str) -> Option<Stopped> {
        let written = state.file.as_mut().map(|f| f.write_all(line.as_bytes()));
        match written {
            Some(Ok(())) => {
                state.bytes += line.len() as u64;
                if line.starts_with("{\"kind\":\"step\"") {
                    state.steps += 1;
                }
                None
            }
            Some(Err(e)) => {
                // The disk is full or gone: no end line either.
                state.file = None;
                state.requests_seen.clear();
                Some(Stopped {
                    dir: self.dir.clone(),
                    reason: format!("writing trace.jsonl: {e}"),
                })
            }
            None => None,
        }
    }

    fn stop_locked(&self, state: &mut State, reason: String) -> Option<Stopped> {
        let end = to_line(&Line::End(End {
            at: rfc3339(SystemTime::now()),
            reason: reason.clone(),
            steps: state.steps,
            dropped: state.dropped.clone(),
        }));
        let mut file = state.file.take()?;
        state.cast = None;
        state.requests_seen.clear();
        let ended = file.write_all(end.as_bytes());
        drop(file);
        if ended.is_ok() {
            let path = self.dir.join("har.json");
            let written = super::har::of_trace(&self.dir).and_then(|text| {
                let _ = std::fs::remove_file(&path);
                create(&path)?.write_all(text.as_bytes())
            });
            if let Err(e) = written {
                tracing::warn!("trace {}: writing har.json: {e}", self.dir.display());
            }
        }
        let clean = matches!(reason.as_str(), "stopped" | "session_ended");
        (!clean).then(|| Stopped {
            dir: self.dir.clone(),
            reason,
        })
    }
}

impl Drop for Trace {
    fn drop(&mut self) {
        self.stop("session_ended");
    }
}

/// A new file, 0600, that must not exist yet.
fn create(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

fn to_line(line: &Line) -> String {
    let mut text = serde_json::to_string(line).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn step(tool: &str) -> Step {
        Step {
            tool: tool.into(),
            outcome: "ok".into(),
            text: Some("x".repeat(200)),
            ..Step::default()
        }
    }

    #[test]
    fn a_trace_is_private_and_reads_back() {
        let base = tempdir("private");
        let trace = Trace::start(&base, "s/1", 1 << 20).unwrap();
        assert!(trace
            .record(step("browser_navigate"), Shot::Jpeg(vec![0xff, 0xd8, 0xff]))
            .is_none());
        assert!(trace.chapter("login").is_none());
        assert!(trace.record(step("browser_snapshot"), Shot::None).is_none());
        trace.stop("stopped");
        let dir = trace.dir().to_owned();
        assert!(dir.file_name().unwrap().to_str().unwrap().ends_with("Z-s_1"));
        for path in [dir.clone(), dir.join("shots")] {
            assert_eq!(
                std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
                0o700
            );
        }
        for path in ["trace.jsonl", "shots/0001.jpg", "har.json"] {
            let mode = std::fs::metadata(dir.join(path)).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{path}");
        }
        let read = crate::trace::read::read(&dir).unwrap();
        assert_eq!(read.steps.len(), 2);
        assert_eq!(read.steps[0].shot.as_deref(), Some("shots/0001.jpg"));
        assert_eq!(read.chapters[0].after_step, 1);
        assert_eq!(read.end.unwrap().reason, "stopped");
    }

    #[test]
    fn past_its_budget_screenshots_go_first_then_the_trace_stops() {
        let base = tempdir("budget");
        let trace = Trace::start(&base, "s", 4000).unwrap();
        // A screenshot past three quarters of the budget is dropped.
        assert!(trace.record(step("a"), Shot::Jpeg(vec![0; 3500])).is_none());
        let mut stopped = None;
        for _ in 0..40 {
            stopped = trace.record(step("b"), Shot::Jpeg(vec![0; 10]));
            if stopped.is_some() {
                break;
            }
        }
        assert_eq!(stopped.unwrap().reason, "budget");
        assert!(!trace.is_on());
        let read = crate::trace::read::read(trace.dir()).unwrap();
        let end = read.end.unwrap();
        assert_eq!(end.reason, "budget");
        assert!(end.dropped["budget"] >= 1, "{:?}", end.dropped);
        assert_eq!(read.steps[0].shot_dropped.as_deref(), Some("budget"));
        let size: u64 = walk(trace.dir())
            .iter()
            .map(|p| std::fs::metadata(p).unwrap().len())
            .sum();
        assert!(size <= 4000 + 400, "{size}");
    }

    #[test]
    fn screencast_frames_of_a_secrets_page_and_past_their_share_are_dropped_and_counted() {
        let base = tempdir("cast");
        let trace = Trace::start(&base, "s", 40_000).unwrap();
        let frame = |url: &str, size: usize| CastShot {
            jpeg: vec![0xff; size],
            at: 1.0,
            viewport: Viewport {
                width: 10.0,
                height: 10.0,
            },
            url: url.into(),
        };
        assert!(trace
            .record_cast(
                vec![frame("http://a/", 100), frame("http://a/", 100)],
                3,
                &[Some("http://a/")]
            )
            .is_none());
        // A secret typed on b: that call's frames, and later ones of b, go.
        let typed = serde_json::json!({"text": "{{secret:PW}}"});
        assert_eq!(
            trace.refuses_shot(&typed, Some("http://b/")),
            Some("secret_on_page")
        );
        trace.record_cast(
            vec![frame("http://a/", 100)],
            0,
            &[Some("http://a/"), Some("http://b/")],
        );
        trace.record_cast(
            vec![frame("http://b/", 100), frame("http://c/", 100)],
            0,
            &[Some("http://c/")],
        );
        // Past half the budget.
        trace.record_cast(vec![frame("http://c/", 30_000)], 0, &[Some("http://c/")]);
        trace.stop("stopped");
        let cast = crate::trace::read::read_cast(trace.dir()).unwrap();
        let files: Vec<&str> = cast.iter().map(|f| f.file.as_str()).collect();
        assert_eq!(files, ["cast/000001.jpg", "cast/000002.jpg", "cast/000003.jpg"]);
        for path in ["cast", "cast.jsonl", "cast/000001.jpg"] {
            let mode = std::fs::metadata(trace.dir().join(path))
                .unwrap()
                .permissions()
                .mode()
                & 0o777;
            assert_eq!(mode, if path == "cast" { 0o700 } else { 0o600 }, "{path}");
        }
        let end = crate::trace::read::read(trace.dir()).unwrap().end.unwrap();
        assert_eq!(end.dropped["cast_secret"], 2, "{:?}", end.dropped);
        assert_eq!(end.dropped["cast_budget"], 1, "{:?}", end.dropped);
        assert_eq!(end.dropped["cast_thinned"], 3, "{:?}", end.dropped);
    }

    #[test]
    fn a_full_disk_stops_the_trace_and_says_so() {
        let base = tempdir("full");
        let trace = Trace::start(&base, "s", 1 << 20).unwrap();
        // /dev/full: every write fails with ENOSPC.
        let mut state = trace.state.lock().unwrap();
        state.file = Some(OpenOptions::new().append(true).open("/dev/full").unwrap());
        drop(state);
        let stopped = trace.record(step("a"), Shot::None).unwrap();
        assert!(stopped.reason.contains("trace.jsonl"), "{}", stopped.reason);
        assert!(!trace.is_on());
        assert!(trace.record(step("b"), Shot::None).is_none());
    }

    fn tempdir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cdpilot-trace-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files.extend(walk(&path));
            } else {
                files.push(path);
            }
        }
        files
    }
}
