//! The sessions `cdpilot serve` has open: one per MCP session and one per
//! WebSocket session, each a browser context of its own on the shared
//! browser.
//!
//! Owns the table from session id to [`Lease`] and the limit on how many
//! may be open. A lease ends its session when the last holder drops it (the
//! MCP session ended, the last WebSocket holding it closed); `close_all`
//! ends the rest at shutdown. The table lock is held for microseconds,
//! never across an await.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use engine::session::events::EndReason;
use engine::{Budget, Engine, Session};
use tokio::task::JoinHandle;

use super::metrics::ServeMetrics;

/// How long ending one session (disposing its browser context) may take.
const CLOSE_BUDGET: Duration = Duration::from_secs(5);

pub struct Sessions {
    engine: Arc<Engine>,
    /// `[serve] max_sessions`.
    max: usize,
    /// Open sessions by id. Weak: the holders (MCP handlers, WebSocket
    /// connections) keep a session alive, not this table.
    open: Mutex<HashMap<String, Weak<Lease>>>,
    /// Sessions being closed after their last holder went away; awaited at
    /// shutdown so no context is left half-disposed.
    closing: Mutex<Vec<JoinHandle<()>>>,
    metrics: Arc<ServeMetrics>,
}

/// Refused: the server already has `max_sessions` open.
#[derive(Debug)]
pub struct TooManySessions {
    pub max: usize,
}

impl std::fmt::Display for TooManySessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "too_many_sessions: this server already has its maximum of {} sessions open. End a session you no longer need, or raise [serve] max_sessions.",
            self.max
        )
    }
}

impl std::error::Error for TooManySessions {}

/// One open session; dropping the last `Arc` ends it.
pub struct Lease {
    id: String,
    session: Arc<Session>,
    sessions: Weak<Sessions>,
    /// When a call last finished in it (idle accounting).
    last_used: Mutex<Instant>,
    /// Where its calls are counted.
    metrics: Arc<ServeMetrics>,
}

impl Lease {
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    pub fn metrics(&self) -> &ServeMetrics {
        &self.metrics
    }

    /// Marks the session as used now.
    pub fn touch(&self) {
        *self.last_used.lock().unwrap() = Instant::now();
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.metrics.session_ended();
        let Some(sessions) = self.sessions.upgrade() else {
            return;
        };
        sessions.open.lock().unwrap().remove(&self.id);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let session = self.session.clone();
        let id = self.id.clone();
        let task = runtime.spawn(async move {
            // Its client let go of it (the last connection closed, an MCP
            // DELETE or keep-alive expiry): unless it had already ended.
            session
                .end(EndReason::ClientClosed, &Budget::with_timeout(CLOSE_BUDGET))
                .await;
            tracing::info!(session = id, "session ended");
        });
        let mut closing = sessions.closing.lock().unwrap();
        closing.retain(|t| !t.is_finished());
        closing.push(task);
    }
}

impl Sessions {
    pub fn new(engine: Arc<Engine>, max: usize, metrics: Arc<ServeMetrics>) -> Arc<Sessions> {
        Arc::new(Sessions {
            engine,
            max,
            open: Mutex::new(HashMap::new()),
            closing: Mutex::new(Vec::new()),
            metrics,
        })
    }

    pub fn max(&self) -> usize {
        self.max
    }

    /// How many sessions are open.
    pub fn count(&self) -> usize {
        self.open.lock().unwrap().len()
    }

    pub fn is_full(&self) -> bool {
        self.count() >= self.max
    }

    /// A new session with a browser context of its own (opened on its
    /// first call), unless `max_sessions` are open.
    pub fn start(self: &Arc<Self>) -> Result<Arc<Lease>, TooManySessions> {
        let mut open = self.open.lock().unwrap();
        if open.len() >= self.max {
            return Err(TooManySessions { max: self.max });
        }
        let id = format!("s-{}", crate::serve::auth::random_hex(8));
        let lease = Arc::new(Lease {
            id: id.clone(),
            session: Arc::new(self.engine.new_session_named(id.clone())),
            sessions: Arc::downgrade(self),
            last_used: Mutex::new(Instant::now()),
            metrics: self.metrics.clone(),
        });
        open.insert(id.clone(), Arc::downgrade(&lease));
        drop(open);
        self.metrics.session_started();
        tracing::info!(session = id, "session started");
        Ok(lease)
    }

    /// The open session `id`, to join it.
    pub fn get(&self, id: &str) -> Option<Arc<Lease>> {
        self.open.lock().unwrap().get(id).and_then(Weak::upgrade)
    }

    /// Ends every session still open and waits for those already ending.
    pub async fn close_all(&self) {
        let open: Vec<Arc<Lease>> = self
            .open
            .lock()
            .unwrap()
            .values()
            .filter_map(Weak::upgrade)
            .collect();
        let budget = Budget::with_timeout(CLOSE_BUDGET);
        for lease in &open {
            lease.session.end(EndReason::Stopped, &budget).await;
        }
        let closing: Vec<JoinHandle<()>> = std::mem::take(&mut *self.closing.lock().unwrap());
        for task in closing {
            let _ = task.await;
        }
    }
}
