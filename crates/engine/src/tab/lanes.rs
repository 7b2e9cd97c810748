//! A tab's evaluate lanes: `browser_evaluate`'s own sessions on the tab's
//! target, so a script that never returns cannot block the main session's
//! commands. Owns the idle ones; a lane in use is owned by its call (a
//! [`Leased`]). `tab_tools/evaluate.rs` opens lanes and runs calls on them.

use std::sync::Mutex;
use std::time::Duration;

use cdp::protocol::target;
use cdp::{Connection, Session};

/// Warm lanes kept per tab; more are opened while more calls run at once,
/// and those beyond this many are closed when given back.
const WARM_LANES: usize = 2;

/// The cleanup budget for detaching a discarded lane's session.
const DETACH_BUDGET: Duration = Duration::from_secs(2);

/// browser_evaluate's own session on one tab.
pub struct Lane {
    /// The lane's own connection, kept so the socket lives as long as the
    /// lane; `None` when the transport allows one pipe only and the lane's
    /// session shares the tab's connection (closing the lane then detaches
    /// only its session).
    own: Option<Connection>,
    session: Session,
}

impl Lane {
    /// A lane on `session`; `own` is its own connection, if it has one.
    pub fn new(own: Option<Connection>, session: Session) -> Lane {
        Lane { own, session }
    }

    fn close(self) {
        match self.own {
            Some(conn) => conn.close(),
            None => {
                // Detached without waiting: a discarded lane's command may
                // still be pending in the page, and nobody needs the answer.
                let session = self.session;
                tokio::spawn(async move {
                    let detach = target::DetachFromTarget {
                        session_id: session.id().to_owned(),
                    };
                    let soon = tokio::time::Instant::now() + DETACH_BUDGET;
                    let _ = session.connection().browser().call(detach, soon).await;
                });
            }
        }
    }

    /// Whether the lane can still carry a call.
    fn is_open(&self) -> bool {
        let conn = self.session.connection();
        !conn.is_closed() && conn.has_session(self.session.id())
    }
}

/// The tab's idle evaluate lanes. A lane in use is owned by its call (a
/// [`Leased`]), never shared, so a call that must discard its lane cannot
/// close one another call is waiting on.
#[derive(Default)]
pub struct Lanes {
    /// Lanes waiting for a call; locked for microseconds, never across an
    /// await.
    idle: Mutex<Vec<Lane>>,
}

impl Lanes {
    /// A warm lane whose socket is still open, if there is one.
    pub fn take(&self) -> Option<Lane> {
        let mut idle = self.idle.lock().unwrap();
        while let Some(lane) = idle.pop() {
            if lane.is_open() {
                return Some(lane);
            }
        }
        None
    }

    /// Lends `lane` (a warm one or a new one) to one call.
    pub fn lend(&self, lane: Lane) -> Leased<'_> {
        Leased {
            lanes: self,
            lane: Some(lane),
        }
    }

    fn give_back(&self, lane: Lane) {
        let mut idle = self.idle.lock().unwrap();
        if idle.len() < WARM_LANES && lane.is_open() {
            idle.push(lane);
        } else {
            drop(idle);
            lane.close();
        }
    }
}

/// A lane lent to one call. Dropped without [`Leased::give_back`] (the
/// call failed, timed out, was cancelled, or a dialog ended it), the lane
/// is closed: its command may still be pending in the page.
pub struct Leased<'a> {
    lanes: &'a Lanes,
    lane: Option<Lane>,
}

impl Leased<'_> {
    /// The lane's session.
    pub fn session(&self) -> &Session {
        &self
            .lane
            .as_ref()
            .expect("a leased lane until given back")
            .session
    }

    /// The call's command was answered: the lane is clean for the next call.
    pub fn give_back(mut self) {
        if let Some(lane) = self.lane.take() {
            self.lanes.give_back(lane);
        }
    }
}

impl Drop for Leased<'_> {
    fn drop(&mut self) {
        if let Some(lane) = self.lane.take() {
            lane.close();
        }
    }
}
