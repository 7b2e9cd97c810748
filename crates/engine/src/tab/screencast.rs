//! A tab's screencast (`Page.startScreencast`): JPEG frames as the page
//! repaints, shared by everyone who watches the tab (the dashboard's live
//! view, a hand-off page). Chrome keeps one screencast per tab session, so
//! the tab has one: the first [`Viewer`] starts it, the last one to leave
//! stops it, and a viewer leaving never stops the others' frames.
//!
//! Owns the tab's running cast (a weak handle: the viewers keep it alive)
//! and the viewport its latest frame showed. Each cast runs in a task of
//! its own that holds the tab's turn from its start to its stop, so the
//! next cast starts only after the previous one's stop reached Chrome.
//! Every frame is acknowledged as it arrives, before it is passed on
//! (Chrome sends the next one only after that).

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use cdp::protocol::page;
use cdp::Session;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::Budget;

/// JPEG quality of screencast frames.
const JPEG_QUALITY: u8 = 50;

/// The largest frame Chrome sends, in device pixels (larger viewports are
/// scaled down).
const MAX_SIZE: (u32, u32) = (960, 720);

/// Frames waiting for a slow viewer; older ones are dropped.
const FRAMES_KEPT: usize = 2;

/// One frame: the JPEG (base64) and the viewport it shows.
#[derive(Debug, Clone)]
pub struct Frame {
    /// JPEG, base64.
    pub data: Arc<str>,
    /// The viewport's width in CSS pixels.
    pub width: f64,
    /// The viewport's height in CSS pixels.
    pub height: f64,
}

/// The tab's screencast: none while nobody watches.
#[derive(Default)]
pub struct Screencast {
    /// The running cast, if someone watches.
    current: Mutex<Weak<Cast>>,
    /// The viewport (CSS pixels) the latest frame showed; (0, 0) before one.
    viewport: Arc<Mutex<(f64, f64)>>,
    /// Held by a cast's task from its start to its stop.
    turn: Arc<tokio::sync::Mutex<()>>,
}

/// One run of the screencast; dropping it (with its last viewer) stops it.
struct Cast {
    /// Subscribes new viewers (its own place in the queue is never read).
    joining: Mutex<broadcast::Receiver<Frame>>,
    /// The latest frame: a viewer who joins sees it at once (Chrome sends
    /// a frame only when the page repaints).
    last: Arc<Mutex<Option<Frame>>>,
    /// Why the cast ended early (the screencast could not start).
    failed: Arc<Mutex<Option<String>>>,
    stop: CancellationToken,
}

impl Drop for Cast {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// One viewer of a tab's screencast; dropping the last one stops it.
pub struct Viewer {
    cast: Arc<Cast>,
    frames: broadcast::Receiver<Frame>,
}

impl Viewer {
    /// The frame shown before this viewer joined, if any.
    pub fn latest(&self) -> Option<Frame> {
        self.cast.last.lock().unwrap().clone()
    }

    /// The next frame (a viewer who falls behind skips to the newest);
    /// `Err` once the screencast ended (the tab closed, or it could not
    /// start: the reason).
    pub async fn next(&mut self) -> Result<Frame, Option<String>> {
        loop {
            match self.frames.recv().await {
                Ok(frame) => return Ok(frame),
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => {
                    return Err(self.cast.failed.lock().unwrap().clone())
                }
            }
        }
    }
}

impl Screencast {
    /// Joins the screencast of the tab with session `session`, starting it
    /// if nobody watches yet.
    pub fn watch(&self, session: &Session) -> Viewer {
        let mut current = self.current.lock().unwrap();
        if let Some(cast) = current.upgrade() {
            let frames = cast.joining.lock().unwrap().resubscribe();
            return Viewer { cast, frames };
        }
        let (sender, joining) = broadcast::channel(FRAMES_KEPT);
        let frames = joining.resubscribe();
        let cast = Arc::new(Cast {
            joining: Mutex::new(joining),
            last: Arc::default(),
            failed: Arc::default(),
            stop: CancellationToken::new(),
        });
        *current = Arc::downgrade(&cast);
        let run = Run {
            session: session.clone(),
            frames: sender,
            last: cast.last.clone(),
            viewport: self.viewport.clone(),
            stop: cast.stop.clone(),
        };
        let (turn, failed) = (self.turn.clone(), cast.failed.clone());
        tokio::spawn(async move {
            let _turn = turn.lock().await;
            if let Err(why) = run.cast().await {
                tracing::debug!("a screencast: {why}");
                *failed.lock().unwrap() = Some(why);
            }
        });
        Viewer { cast, frames }
    }

    /// The tab's viewport in CSS pixels as the latest frame showed it;
    /// (0, 0) before the first frame.
    pub fn viewport(&self) -> (f64, f64) {
        *self.viewport.lock().unwrap()
    }
}

/// What one cast's task holds.
struct Run {
    session: Session,
    frames: broadcast::Sender<Frame>,
    last: Arc<Mutex<Option<Frame>>>,
    viewport: Arc<Mutex<(f64, f64)>>,
    stop: CancellationToken,
}

impl Run {
    /// Streams frames until `stop` fires or the tab's session ends; then
    /// stops the screencast in the browser.
    async fn cast(self) -> Result<(), String> {
        let session = &self.session;
        let mut events = session.events();
        let budget = Budget::new(Duration::from_secs(5), self.stop.child_token());
        let start = page::StartScreencast {
            format: "jpeg".into(),
            quality: JPEG_QUALITY,
            max_width: MAX_SIZE.0,
            max_height: MAX_SIZE.1,
            every_nth_frame: 1,
        };
        let started = budget.cdp("starting the screencast", session, start).await;
        if self.stop.is_cancelled() {
            // The viewers left while it started: stop it all the same.
            stop(session).await;
            return Ok(());
        }
        started.map_err(|e| e.message)?;
        loop {
            let event = tokio::select! {
                _ = self.stop.cancelled() => break,
                event = events.recv() => match event {
                    Some(event) => event,
                    None => return Ok(()),
                },
            };
            let Some(frame) = event.decode::<page::ScreencastFrame>() else {
                continue;
            };
            // Acknowledged first: Chrome prepares the next frame meanwhile.
            let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
            let ack = session.call(
                page::ScreencastFrameAck {
                    session_id: frame.session_id,
                },
                deadline,
            );
            let (width, height) = (frame.metadata.device_width, frame.metadata.device_height);
            let frame = Frame {
                data: frame.data.into(),
                width,
                height,
            };
            let pass_on = async {
                *self.viewport.lock().unwrap() = (width, height);
                *self.last.lock().unwrap() = Some(frame.clone());
                let _ = self.frames.send(frame);
            };
            let (acked, ()) = tokio::join!(ack, pass_on);
            if acked.is_err() {
                return Ok(());
            }
        }
        stop(session).await;
        Ok(())
    }
}

async fn stop(session: &Session) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    let _ = session.call(page::StopScreencast {}, deadline).await;
}
