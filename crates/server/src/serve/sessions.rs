//! The sessions `cdpilot serve` has open: one per MCP session and one per
//! WebSocket session, each a browser context of its own on the shared
//! browser.
//!
//! Owns the table from session id to [`Lease`] and the limit on how many
//! may be open. A lease ends its session when the last holder drops it (the
//! MCP session ended, the last WebSocket holding it closed); `close_all`
//! ends the rest at shutdown. [`Lease::call`] is the one way a serve front
//! end (MCP over HTTP, the WebSocket API, the dashboard) runs a call: the
//! dispatch under the lease's stop token, then the lease's bookkeeping
//! (running calls, last use, last call, the success hook). Kept sessions (a WebSocket `hello` with
//! `keep: NAME`, as the CLI sends) are also held by the table under their
//! name until `[session] idle_timeout_s` without a call or a Stop. Each
//! lease has a stop token: Stop (the dashboard's, `cdpilot stop`) cancels
//! its calls in flight at once and ends it (shutdown cancels calls through
//! the transports' own tokens, as before). The table lock is held for
//! microseconds, never across an await.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use engine::events::EndReason;
use engine::{ActionError, ActionOutput, Budget, Engine, Session};
use serde_json::Value;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::entry::{CallFuture, Entry};
use crate::serve::metrics::ServeMetrics;
use crate::serve::turns::{Turn, Turns};

/// How long ending one session (disposing its browser context) may take.
const CLOSE_BUDGET: Duration = Duration::from_secs(5);

pub struct Sessions {
    engine: Arc<Engine>,
    /// `[serve] max_sessions`.
    max: usize,
    /// Open sessions by id. Weak: the holders (MCP handlers, WebSocket
    /// connections) keep a session alive, not this table.
    open: Mutex<HashMap<String, Weak<Lease>>>,
    /// How many open sessions hold a seat (count toward `max`): all but
    /// those whose pages ended for idleness and that have not called since.
    /// Changed only under the `open` lock.
    seated: std::sync::atomic::AtomicUsize,
    /// Sessions being closed after their last holder went away; awaited at
    /// shutdown so no context is left half-disposed.
    closing: Mutex<Vec<JoinHandle<()>>>,
    /// Sessions open and started (`/metrics`).
    metrics: Arc<ServeMetrics>,
    /// Kept sessions by name: held here (strongly) until idle or stopped.
    kept: Mutex<HashMap<String, Arc<Lease>>>,
    /// When the table last became empty (or was created): the background
    /// server's idle exit counts from here.
    empty_since: Mutex<Option<Instant>>,
    /// Called after every call that ended `ok` (the dashboard's thumbnails).
    on_success: Mutex<Option<OnSuccess>>,
}

/// A hook run after a successful call: the lease and the tool.
pub type OnSuccess = Arc<dyn Fn(&Arc<Lease>, &str) + Send + Sync>;

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
    /// Cancelled by Stop: its calls end at once, its connections close.
    /// Also cancelled when the lease is dropped (nothing runs in it then),
    /// which ends whatever waits on it.
    stop: CancellationToken,
    /// When it started.
    started: Instant,
    /// Who drives it (`hello`'s `client`, `mcp`, …), for the dashboard.
    client: Mutex<String>,
    /// Its kept name, if the table keeps it.
    kept_as: Option<String>,
    /// The last call: tool, outcome (`ok` or the error code), when it ended.
    last_call: Mutex<Option<(String, String, Instant)>>,
    /// Calls running now.
    running: std::sync::atomic::AtomicUsize,
    /// Its calls' turns: a few run, a few wait, the rest are `busy`.
    turns: Arc<Turns>,
    /// It counts toward `max_sessions`; given back when it is idle (see
    /// [`Sessions::expire_idle`]), taken again by its next call. Changed
    /// only under the table's `open` lock.
    seated: std::sync::atomic::AtomicBool,
}

impl Lease {
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Marks the session as used now.
    fn touch(&self) {
        *self.last_used.lock().unwrap() = Instant::now();
    }

    /// Cancelled when the session is stopped (or the server shuts down).
    pub fn stop_token(&self) -> &CancellationToken {
        &self.stop
    }

    /// Names who drives the session (shown by the dashboard).
    pub fn set_client(&self, client: &str) {
        *self.client.lock().unwrap() = client.to_owned();
    }

    /// Who drives the session: its MCP client's name when it said one,
    /// else the transport's name for it (`hello`'s `client`, `mcp`).
    pub fn client(&self) -> String {
        match self.session.client_name() {
            name if name.is_empty() => self.client.lock().unwrap().clone(),
            name => name,
        }
    }

    /// Runs one call in this session: the engine's one dispatch (which
    /// counts it in the metrics and writes its audit record), stopped when
    /// `cancel` fires or the session is stopped; meanwhile the call counts
    /// as running, and once it ends it is the session's last call and its
    /// last use, and a successful one reaches the success hook (the
    /// dashboard's thumbnails). Every serve front end calls through here.
    pub async fn call(
        self: &Arc<Self>,
        tool: &str,
        arguments: Value,
        cancel: CancellationToken,
    ) -> Result<ActionOutput, ActionError> {
        let turn = self.take_turn(tool)?;
        self.call_in_turn(turn, tool, arguments, cancel).await
    }

    /// A turn for a call of `tool` (see [`Turns::take`]); a `busy` refusal
    /// is counted as the call's outcome.
    pub fn take_turn(&self, tool: &str) -> Result<Turn, ActionError> {
        self.seat().and_then(|()| self.turns.take()).inspect_err(|error| {
            let name = engine::tools::find(tool).map_or("unknown", |spec| spec.name);
            self.session
                .metrics()
                .record(name, Duration::ZERO, Err(error.code));
        })
    }

    /// Takes a seat again for a session that gave its seat back while
    /// idle; `busy` if the server has `max_sessions` seated meanwhile.
    fn seat(&self) -> Result<(), ActionError> {
        use std::sync::atomic::Ordering::SeqCst;
        let Some(sessions) = self.sessions.upgrade() else {
            return Ok(());
        };
        let _open = sessions.open.lock().unwrap();
        if self.seated.load(SeqCst) {
            return Ok(());
        }
        if sessions.seated.load(SeqCst) >= sessions.max {
            return Err(ActionError::new(
                engine::ErrorCode::Busy,
                format!(
                    "this session was idle and gave its place back, and the server now has its maximum of {} sessions working",
                    sessions.max
                ),
                "Retry in a while, or end a session you no longer need.",
            ));
        }
        sessions.seated.fetch_add(1, SeqCst);
        self.seated.store(true, SeqCst);
        Ok(())
    }

    /// [`Lease::call`] with its turn already taken: waits for the turn
    /// (cancelled by `cancel` or Stop like the call; the call's budget
    /// starts when its turn comes), then runs the call.
    pub async fn call_in_turn(
        self: &Arc<Self>,
        mut turn: Turn,
        tool: &str,
        arguments: Value,
        cancel: CancellationToken,
    ) -> Result<ActionOutput, ActionError> {
        tokio::select! {
            biased;
            () = turn.ready() => {}
            () = cancel.cancelled() => return Err(canceled_waiting()),
            () = self.stop.cancelled() => return Err(canceled_waiting()),
        }
        let mark = self.call_started();
        let dispatched = engine::dispatch::call(&self.session, tool, arguments, cancel.clone());
        let outcome = crate::cancel::linked(dispatched, &self.stop, &cancel).await;
        mark.finish(tool, outcome.as_ref().map_or_else(|e| e.code.as_str(), |_| "ok"));
        drop(turn);
        outcome
    }

    /// Marks a call as started; the guard marks it finished (with its
    /// outcome, through [`CallMark::finish`]).
    fn call_started(self: &Arc<Self>) -> CallMark {
        self.running.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        CallMark { lease: self.clone() }
    }

    /// What the dashboard shows of it (no browser round trip).
    pub fn view(&self) -> serde_json::Value {
        let overview = self.session.overview();
        let last = self.last_call.lock().unwrap().clone();
        serde_json::json!({
            "id": self.id,
            "client": *self.client.lock().unwrap(),
            "kept_as": self.kept_as,
            "age_s": self.started.elapsed().as_secs(),
            "idle_s": self.last_used.lock().unwrap().elapsed().as_secs(),
            "running": self.running.load(std::sync::atomic::Ordering::Relaxed),
            "stopped": self.stop.is_cancelled(),
            "last_call": last.map(|(tool, outcome, at)| serde_json::json!({
                "tool": tool, "outcome": outcome, "ago_s": at.elapsed().as_secs(),
            })),
            "tabs": overview.tabs,
            // The trace being written, by the name the timeline knows it by.
            "trace": self.session.trace_dir().and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned())),
            "dialogs": overview.dialogs,
            "grid": self.session.grid_session().map(|(id, node)| serde_json::json!({
                "session": id, "node": node,
            })),
        })
    }
}

/// A call cancelled while it waited for its turn: nothing of it ran.
fn canceled_waiting() -> ActionError {
    ActionError::of(
        engine::Failure::Canceled {
            step: "waiting for its turn".into(),
        },
        "the call was canceled while it waited for its turn; nothing of it ran",
        "Send it again if you still need it.",
    )
}

/// A serve session is an entry for MCP over HTTP: its calls go through
/// [`Lease::call`].
impl Entry for Arc<Lease> {
    fn session(&self) -> &Session {
        &self.session
    }

    fn call<'a>(&'a self, tool: &'a str, arguments: Value, cancel: CancellationToken) -> CallFuture<'a> {
        Box::pin(Lease::call(self, tool, arguments, cancel))
    }
}

/// A call in flight in a lease; see [`Lease::call`].
struct CallMark {
    lease: Arc<Lease>,
}

impl CallMark {
    /// Records the call's outcome (`ok` or an error code) as the last call.
    fn finish(self, tool: &str, outcome: &str) {
        *self.lease.last_call.lock().unwrap() = Some((tool.to_owned(), outcome.to_owned(), Instant::now()));
        if outcome != "ok" {
            return;
        }
        let hook = self
            .lease
            .sessions
            .upgrade()
            .and_then(|s| s.on_success.lock().unwrap().clone());
        if let Some(hook) = hook {
            hook(&self.lease, tool);
        }
    }
}

impl Drop for CallMark {
    fn drop(&mut self) {
        self.lease
            .running
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        self.lease.touch();
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.stop.cancel();
        let Some(sessions) = self.sessions.upgrade() else {
            return;
        };
        sessions.metrics.session_ended();
        {
            let mut open = sessions.open.lock().unwrap();
            open.remove(&self.id);
            if self.seated.load(std::sync::atomic::Ordering::SeqCst) {
                sessions.seated.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            }
            if open.is_empty() {
                *sessions.empty_since.lock().unwrap() = Some(Instant::now());
            }
        }
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
            drop(session);
            tracing::info!(session = id, "session ended");
            super::trim::after_session();
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
            seated: Default::default(),
            closing: Mutex::new(Vec::new()),
            metrics,
            kept: Mutex::new(HashMap::new()),
            empty_since: Mutex::new(Some(Instant::now())),
            on_success: Mutex::new(None),
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
        let _open = self.open.lock().unwrap();
        self.seated.load(std::sync::atomic::Ordering::SeqCst) >= self.max
    }

    /// A new session with a browser context of its own (opened on its
    /// first call), unless `max_sessions` are open.
    pub fn start(self: &Arc<Self>) -> Result<Arc<Lease>, TooManySessions> {
        self.start_as(None)
    }

    /// The kept session `name`, started (and kept) if there is none.
    pub fn keep(self: &Arc<Self>, name: &str) -> Result<(Arc<Lease>, bool), TooManySessions> {
        let kept = self.kept.lock().unwrap().get(name).cloned();
        if let Some(lease) = kept.filter(|l| !l.stop.is_cancelled()) {
            return Ok((lease, false));
        }
        let lease = self.start_as(Some(name))?;
        let mut kept = self.kept.lock().unwrap();
        // Two connections may have started it at once: the first kept wins.
        if let Some(first) = kept.get(name).filter(|l| !l.stop.is_cancelled()) {
            return Ok((first.clone(), false));
        }
        kept.insert(name.to_owned(), lease.clone());
        Ok((lease, true))
    }

    fn start_as(self: &Arc<Self>, kept_as: Option<&str>) -> Result<Arc<Lease>, TooManySessions> {
        let mut open = self.open.lock().unwrap();
        if self.seated.load(std::sync::atomic::Ordering::SeqCst) >= self.max {
            return Err(TooManySessions { max: self.max });
        }
        let id = format!("s-{}", crate::serve::auth::random_hex(8));
        let lease = Arc::new(Lease {
            id: id.clone(),
            session: Arc::new(self.engine.new_session_named(id.clone())),
            sessions: Arc::downgrade(self),
            last_used: Mutex::new(Instant::now()),
            stop: CancellationToken::new(),
            started: Instant::now(),
            client: Mutex::new(String::new()),
            kept_as: kept_as.map(str::to_owned),
            last_call: Mutex::new(None),
            running: Default::default(),
            turns: Arc::default(),
            seated: true.into(),
        });
        self.seated.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        open.insert(id.clone(), Arc::downgrade(&lease));
        *self.empty_since.lock().unwrap() = None;
        drop(open);
        self.metrics.session_started();
        tracing::info!(session = id, "session started");
        Ok(lease)
    }

    /// The open session `id`, to join it: not one stopped (which lingers
    /// until its last connection has said goodbye, a resume racing that
    /// goodbye must not join it).
    pub fn get(&self, id: &str) -> Option<Arc<Lease>> {
        let lease = self.open.lock().unwrap().get(id).and_then(Weak::upgrade)?;
        (!lease.stop.is_cancelled()).then_some(lease)
    }

    /// Every open session not stopped, oldest first (a stopped one lingers
    /// only until its last connection has said goodbye).
    pub fn list(&self) -> Vec<Arc<Lease>> {
        let mut open: Vec<Arc<Lease>> = self
            .open
            .lock()
            .unwrap()
            .values()
            .filter_map(Weak::upgrade)
            .filter(|lease| !lease.stop.is_cancelled())
            .collect();
        open.sort_by_key(|l| l.started);
        open
    }

    /// Sets the hook run after every successful call.
    pub fn on_success(&self, hook: OnSuccess) {
        *self.on_success.lock().unwrap() = Some(hook);
    }

    /// The id of the session kept as `name`.
    pub fn resolve(&self, name: &str) -> Option<String> {
        self.kept.lock().unwrap().get(name).map(|l| l.id.clone())
    }

    /// Stops session `id`: its calls in flight end at once (`canceled`),
    /// its connections close, the table lets go of it. False: no such session.
    pub fn stop(&self, id: &str) -> bool {
        let Some(lease) = self.get(id) else {
            return false;
        };
        lease.stop.cancel();
        // The browser context goes now, not when the last holder lets go.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let session = lease.session.clone();
            let task = runtime.spawn(async move {
                session.close(&Budget::with_timeout(CLOSE_BUDGET)).await;
            });
            self.closing.lock().unwrap().push(task);
        }
        if let Some(name) = &lease.kept_as {
            let mut kept = self.kept.lock().unwrap();
            if kept.get(name).is_some_and(|l| Arc::ptr_eq(l, &lease)) {
                kept.remove(name);
            }
        }
        true
    }

    /// Stops every session (see [`Sessions::stop`]); returns how many.
    pub fn stop_all(&self) -> usize {
        let all = self.list();
        for lease in &all {
            self.stop(lease.id());
        }
        all.len()
    }

    /// Lets go of kept sessions idle for `idle` with no call running.
    pub fn expire_kept(&self, idle: Duration) {
        let mut kept = self.kept.lock().unwrap();
        kept.retain(|_, lease| {
            let running = lease.running.load(std::sync::atomic::Ordering::Relaxed) > 0;
            running || lease.last_used.lock().unwrap().elapsed() < idle
        });
    }

    /// Gives back the seats of sessions idle for `idle` (no call running
    /// or waiting, none ended for that long) whose pages are gone — never
    /// opened (a client that said hello and never called) or disposed by
    /// the session's own idle expiry — and says `session_ended` (`idle`)
    /// for those that never said it. The session id stays usable: its next
    /// call takes a seat again (`busy` if the server is full by then).
    pub fn expire_idle(&self, idle: Duration) {
        use std::sync::atomic::Ordering::SeqCst;
        // Collected first: a lease let go of during the sweep is dropped
        // after it, outside the table's lock (its drop takes that lock).
        let leases: Vec<Arc<Lease>> = self
            .open
            .lock()
            .unwrap()
            .values()
            .filter_map(Weak::upgrade)
            .collect();
        for lease in &leases {
            {
                let _open = self.open.lock().unwrap();
                let quiet = lease.running.load(SeqCst) == 0
                    && lease.turns.counts() == (0, 0)
                    && lease.last_used.lock().unwrap().elapsed() >= idle;
                if !quiet || !lease.seated.load(SeqCst) || lease.session.has_pages() {
                    continue;
                }
                lease.seated.store(false, SeqCst);
                self.seated.fetch_sub(1, SeqCst);
            }
            lease.session.say_ended(EndReason::Idle);
            tracing::info!(session = lease.id, "session idle: its seat is given back");
        }
    }

    /// How long the server has had no session (`None`: it has one).
    pub fn empty_for(&self) -> Option<Duration> {
        self.empty_since.lock().unwrap().map(|t| t.elapsed())
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
        self.kept.lock().unwrap().clear();
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
