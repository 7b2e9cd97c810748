//! A tab's screencast (`Page.startScreencast`): JPEG frames as the page
//! repaints, each acknowledged, until the watcher stops. The dashboard's
//! live view and a hand-off page watch through it. Owns nothing: the
//! screencast runs in the caller's task.

use std::time::Duration;

use cdp::protocol::page;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::tab::Tab;
use crate::Budget;

/// JPEG quality of screencast frames.
const JPEG_QUALITY: u8 = 50;

/// Streams tab `tab`'s screencast frames, each made into a `T` by `map`,
/// into `frames` until `stop` fires, the receiver goes away or the tab
/// closes (the dashboard's live view, a hand-off page). A frame the
/// receiver has no room for is dropped (the next one replaces it).
pub(crate) async fn cast<T>(
    tab: &Tab,
    frames: mpsc::Sender<T>,
    stop: CancellationToken,
    map: impl Fn(page::ScreencastFrame) -> T,
) -> Result<(), String> {
    let session = tab.session.clone();
    let mut events = session.events();
    let budget = Budget::with_timeout(Duration::from_secs(5));
    budget
        .cdp(
            "starting the screencast",
            &session,
            page::StartScreencast {
                format: "jpeg".into(),
                quality: JPEG_QUALITY,
                max_width: 960,
                max_height: 720,
                every_nth_frame: 1,
            },
        )
        .await
        .map_err(|e| e.message)?;
    loop {
        let event = tokio::select! {
            _ = stop.cancelled() => break,
            _ = frames.closed() => break,
            event = events.recv() => match event {
                Some(event) => event,
                None => break,
            },
        };
        let Some(frame) = event.decode::<page::ScreencastFrame>() else {
            continue;
        };
        let ack = page::ScreencastFrameAck {
            session_id: frame.session_id,
        };
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        if session.call(ack, deadline).await.is_err() {
            break;
        }
        let _ = frames.try_send(map(frame));
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    let _ = session.call(page::StopScreencast {}, deadline).await;
    Ok(())
}
