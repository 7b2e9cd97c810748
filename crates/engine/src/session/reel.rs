//! The trace's reel (`[trace] video`): the frames of the screencast of the
//! tab the last traced call left, gathered between steps, so that the
//! video shows the page as it moved and not only the picture after each
//! call (`spec/trace.md`, "The video").
//!
//! Owns the watcher (one viewer of the tab's screencast, which the
//! dashboard's live view shares) and the frames that came since the last
//! step. Which of them the trace keeps (none of a page a secret was typed
//! on, none past their share of the budget) is the trace writer's call
//! ([`Trace::record_cast`]).

use std::sync::{Arc, Mutex, Weak};

use super::Session;
use crate::secrets::Secrets;
use crate::tab::screencast::Frame;
use crate::tab::Tab;
use crate::trace::{CastShot, Trace, Viewport};

/// Frames closer than this (seconds) are thinned to the newest: a page
/// that animates is kept at about five frames a second.
const MIN_GAP: f64 = 0.2;

/// At most this many frames wait for the next step; past it every other
/// one goes (a long wait between calls keeps its whole span, thinner).
const MAX_PENDING: usize = 150;

/// The reel of one session's trace.
#[derive(Default)]
pub(crate) struct Reel {
    watching: Mutex<Option<Watching>>,
    pending: Arc<Mutex<Pending>>,
}

/// Frames since the last step, as the screencast sent them: most are
/// thinned out before the next step, so the JPEG is decoded and the URL
/// redacted only for those kept ([`Reel::take`]).
#[derive(Default)]
struct Pending {
    frames: Vec<Seen>,
    /// Frames thinned out since the last step.
    thinned: u64,
}

/// A frame as it came: the screencast's (base64), when, and the tab's URL
/// then (not yet redacted).
struct Seen {
    frame: Frame,
    at: f64,
    url: String,
}

/// The tab watched, for which trace, by which task.
struct Watching {
    tab: Weak<Tab>,
    trace: Weak<Trace>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Watching {
    fn drop(&mut self) {
        // The task's viewer goes with it: the last viewer stops the cast.
        self.task.abort();
    }
}

impl Reel {
    /// Watches `tab`'s screencast for `trace` (nothing when it does).
    fn follow(&self, tab: &Arc<Tab>, trace: &Arc<Trace>) {
        let mut watching = self.watching.lock().unwrap();
        if let Some(w) = &*watching {
            if std::ptr::eq(w.tab.as_ptr(), Arc::as_ptr(tab))
                && std::ptr::eq(w.trace.as_ptr(), Arc::as_ptr(trace))
                && !w.task.is_finished()
            {
                return;
            }
        }
        let mut viewer = tab.watch();
        let (weak_tab, pending) = (Arc::downgrade(tab), self.pending.clone());
        let weak_trace = Arc::downgrade(trace);
        let task = tokio::spawn(async move {
            while let Ok(frame) = viewer.next().await {
                let (Some(tab), Some(trace)) = (weak_tab.upgrade(), weak_trace.upgrade()) else {
                    break;
                };
                if !trace.is_on() {
                    break;
                }
                let url = tab.state(|s| s.url().to_owned());
                let at = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0.0, |d| d.as_secs_f64());
                pending.lock().unwrap().add(Seen { frame, at, url });
            }
        });
        *watching = Some(Watching {
            tab: Arc::downgrade(tab),
            trace: Arc::downgrade(trace),
            task,
        });
    }

    /// The frames since the last step (decoded, their URLs redacted with
    /// `secrets`), and how many were thinned out (a frame that is not
    /// base64 counts as thinned).
    fn take(&self, secrets: &Secrets) -> (Vec<CastShot>, u64) {
        use base64::Engine as _;
        let taken = std::mem::take(&mut *self.pending.lock().unwrap());
        let mut thinned = taken.thinned;
        let mut shots = Vec::with_capacity(taken.frames.len());
        for seen in taken.frames {
            let Ok(jpeg) = base64::engine::general_purpose::STANDARD.decode(seen.frame.data.as_bytes())
            else {
                thinned += 1;
                continue;
            };
            shots.push(CastShot {
                jpeg,
                at: seen.at,
                viewport: Viewport {
                    width: seen.frame.width,
                    height: seen.frame.height,
                },
                url: secrets.redact(&seen.url),
            });
        }
        (shots, thinned)
    }

    /// Stops watching (the trace stopped).
    fn stop(&self) {
        self.watching.lock().unwrap().take();
    }
}

impl Pending {
    /// Adds `frame`: it replaces the newest one when that one came less
    /// than [`MIN_GAP`] after the one before it (the newest is always kept:
    /// the page as it settled).
    fn add(&mut self, frame: Seen) {
        let n = self.frames.len();
        if n >= 2 && self.frames[n - 1].at - self.frames[n - 2].at < MIN_GAP {
            self.frames.pop();
            self.thinned += 1;
        }
        if self.frames.len() >= MAX_PENDING {
            let before = self.frames.len();
            let mut i = 0;
            self.frames.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.thinned += (before - self.frames.len()) as u64;
        }
        self.frames.push(frame);
    }
}

impl Session {
    /// Keeps, in `trace`, the screencast frames since the last step (the
    /// step with URLs `urls` ends now), then watches the tab the call left
    /// (`tab`, else the active one) when the trace makes a video.
    pub(crate) fn reel_step(&self, trace: &Arc<Trace>, urls: &[Option<&str>], tab: Option<&str>) {
        let config = &self.config().trace;
        if !(config.video && config.screenshots) {
            return;
        }
        let (frames, thinned) = self.reel.take(&self.secrets);
        if let Some(stopped) = trace.record_cast(frames, thinned, urls) {
            self.stopped_by_itself(stopped);
            self.reel.stop();
            return;
        }
        if let Some(tab) = self.tab_now(tab) {
            self.reel.follow(&tab, trace);
        }
    }

    /// Keeps the frames since the last step and stops watching: the trace
    /// is about to stop.
    pub(crate) fn reel_flush(&self) {
        self.reel.stop();
        let (frames, thinned) = self.reel.take(&self.secrets);
        if let Some(trace) = self.trace().current() {
            if let Some(stopped) = trace.record_cast(frames, thinned, &[]) {
                self.stopped_by_itself(stopped);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(at: f64) -> Seen {
        Seen {
            frame: Frame {
                data: "/9g=".into(),
                width: 800.0,
                height: 600.0,
            },
            at,
            url: "http://a/".into(),
        }
    }

    #[test]
    fn a_burst_keeps_a_frame_a_fifth_of_a_second_and_its_newest() {
        let mut pending = Pending::default();
        // 60 frames a second for one second.
        for i in 0..=60 {
            pending.add(frame(f64::from(i) / 60.0));
        }
        let times: Vec<f64> = pending.frames.iter().map(|f| f.at).collect();
        assert_eq!(times.last(), Some(&1.0), "the newest stays: {times:?}");
        assert!((5..=7).contains(&times.len()), "{times:?}");
        for pair in times[..times.len() - 1].windows(2) {
            assert!(pair[1] - pair[0] >= MIN_GAP, "{times:?}");
        }
        assert_eq!(pending.thinned as usize + times.len(), 61);
    }

    #[test]
    fn a_long_wait_is_thinned_over_its_whole_span() {
        let mut pending = Pending::default();
        for i in 0..400 {
            pending.add(frame(f64::from(i)));
        }
        assert!(pending.frames.len() <= MAX_PENDING);
        assert_eq!(pending.frames[0].at, 0.0, "the start of the wait is still there");
        assert_eq!(pending.frames.last().unwrap().at, 399.0);
        assert_eq!(pending.thinned as usize + pending.frames.len(), 400);
    }

    #[test]
    fn a_kept_frame_is_decoded_and_its_url_redacted_when_taken_and_a_broken_one_counts_as_thinned() {
        let mut config = std::collections::BTreeMap::new();
        config.insert(
            "PW".to_owned(),
            crate::config::SecretConfig {
                env: "X".into(),
                origins: vec![],
            },
        );
        let secrets = Secrets::resolve(&config, |_| Some("hunter2".into())).unwrap();
        let reel = Reel::default();
        let mut seen = frame(0.0);
        seen.url = "http://a/?pw=hunter2".into();
        reel.pending.lock().unwrap().add(seen);
        let mut broken = frame(1.0);
        broken.frame.data = "not base64!".into();
        reel.pending.lock().unwrap().add(broken);
        let (shots, thinned) = reel.take(&secrets);
        assert_eq!(shots.len(), 1);
        assert_eq!(shots[0].jpeg, vec![0xff, 0xd8]);
        assert!(!shots[0].url.contains("hunter2"), "{}", shots[0].url);
        assert_eq!(thinned, 1);
        assert!(reel.take(&secrets).0.is_empty(), "taken once");
    }
}
