//! A session's event stream: what happened in it that no call asked about
//! (a dialog opened or closed, a tab's page changed, the policy refused a
//! URL, an obstacle was seen, the session ended). The WebSocket API sends
//! them to the connections holding the session; a dashboard may subscribe
//! the same way.
//!
//! Owns one `tokio::sync::broadcast` per session. Emitting never blocks and
//! never fails: with no subscriber the event is dropped, and a subscriber
//! that falls more than [`CAPACITY`] events behind loses the oldest (it
//! hears `Lagged`). Tabs are attached by the browser, not by a session, so
//! a tab reaches its session's stream through a [`TabEvents`] handle the
//! session's context binds when it adopts the tab.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::sync::broadcast;

pub mod dialog;

use crate::metrics::Metrics;
use crate::secrets::Secrets;
use dialog::Dialog;

/// Events kept for a subscriber that has not read them yet.
pub const CAPACITY: usize = 256;

/// Why a session ended (`session_ended`'s `reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// No call for `[session] idle_timeout_s`.
    Idle,
    /// The server is shutting down.
    Stopped,
    /// Its client ended it (closed the last connection, an MCP DELETE).
    ClientClosed,
    /// The browser endpoint it ran on failed; its next call starts on
    /// another one.
    BrowserLost,
    /// The user stopped it in their Chrome (the extension's Stop / Stop
    /// all, the debugger bar's Cancel, the screen locked).
    StoppedByUser,
}

impl EndReason {
    /// The reason as `session_ended` and the metrics name it.
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Idle => "idle",
            EndReason::Stopped => "stopped",
            EndReason::ClientClosed => "client_closed",
            EndReason::BrowserLost => "browser_lost",
            EndReason::StoppedByUser => "stopped_by_user",
        }
    }
}

/// One event of a session, as `docs/src/spec/protocol.md` names them.
#[derive(Debug, Clone)]
pub enum SessionEvent {
    /// A dialog opened in tab `tab` (or one of its frames).
    DialogOpened {
        /// The tab's short id (`t1`).
        tab: String,
        /// The dialog as the supervisor recorded it.
        dialog: Dialog,
    },
    /// A dialog closed: answered by the agent, a policy or the watchdog,
    /// or by the page.
    DialogClosed {
        /// The tab's short id.
        tab: String,
        /// The dialog, with `closed_by`.
        dialog: Dialog,
    },
    /// The top-level document of tab `tab` is now `url`.
    Navigated {
        /// The tab's short id.
        tab: String,
        /// The tab's new URL.
        url: String,
    },
    /// The tools the page in tab `tab` offers (WebMCP) may have changed: a
    /// frame registered or removed one, or a document that had some went.
    PageToolsChanged {
        /// The tab's short id.
        tab: String,
    },
    /// The URL policy refused `url` by `rule`.
    PermissionDenied {
        /// The URL refused.
        url: String,
        /// The rule that refused it.
        rule: String,
    },
    /// A call saw an obstacle on the page (a captcha, a login wall, …).
    Obstacle {
        /// The tab's short id, when the call named one.
        tab: Option<String>,
        /// The obstacle as the call's result reported it.
        obstacle: Value,
    },
    /// A `browser_handoff` waits for a person at `url` (a one-time link).
    Handoff {
        /// The tab's short id.
        tab: String,
        /// The hand-off's id.
        id: String,
        /// The one-time link to the hand-off page.
        url: String,
        /// Why, as the agent said it.
        reason: String,
    },
    /// A hand-off ended: `by` is `person`, `condition`, `declined` or
    /// `timeout` (a closed tab or a cancelled call say `timeout` too).
    HandoffEnded {
        /// The tab's short id.
        tab: String,
        /// The hand-off's id.
        id: String,
        /// How it ended.
        by: &'static str,
    },
    /// The session's trace stopped by itself (its size budget, a write
    /// error such as a full disk); the session goes on untraced.
    TraceStopped {
        /// The trace's directory.
        dir: String,
        /// Why.
        reason: String,
    },
    /// The session's pages are gone for `reason`.
    Ended {
        /// Why.
        reason: EndReason,
    },
}

impl SessionEvent {
    /// The event's name on the wire (`dialog_opened`, …).
    pub fn name(&self) -> &'static str {
        match self {
            SessionEvent::DialogOpened { .. } => "dialog_opened",
            SessionEvent::DialogClosed { .. } => "dialog_closed",
            SessionEvent::Navigated { .. } => "navigated",
            SessionEvent::PageToolsChanged { .. } => "page_tools_changed",
            SessionEvent::PermissionDenied { .. } => "permission_denied",
            SessionEvent::Obstacle { .. } => "obstacle",
            SessionEvent::Handoff { .. } => "handoff",
            SessionEvent::HandoffEnded { .. } => "handoff_ended",
            SessionEvent::TraceStopped { .. } => "trace_stopped",
            SessionEvent::Ended { .. } => "session_ended",
        }
    }

    /// The event's `data` on the wire.
    pub fn data(&self) -> Value {
        match self {
            SessionEvent::DialogOpened { tab, dialog } | SessionEvent::DialogClosed { tab, dialog } => {
                let mut data = json!(dialog);
                data["tab"] = tab.as_str().into();
                data
            }
            SessionEvent::Navigated { tab, url } => json!({ "tab": tab, "url": url }),
            SessionEvent::PageToolsChanged { tab } => json!({ "tab": tab }),
            SessionEvent::PermissionDenied { url, rule } => json!({ "url": url, "rule": rule }),
            SessionEvent::Obstacle { tab, obstacle } => json!({ "tab": tab, "obstacle": obstacle }),
            SessionEvent::Handoff { tab, id, url, reason } => {
                json!({ "tab": tab, "id": id, "url": url, "reason": reason })
            }
            SessionEvent::HandoffEnded { tab, id, by } => json!({ "tab": tab, "id": id, "by": by }),
            SessionEvent::TraceStopped { dir, reason } => json!({ "dir": dir, "reason": reason }),
            SessionEvent::Ended { reason } => json!({ "reason": reason.as_str() }),
        }
    }
}

impl SessionEvent {
    /// The event with every secret's value (in any spelling) replaced by
    /// its placeholder: a URL the page moved to after a GET form, a dialog
    /// that echoes a typed value.
    pub fn redacted(self, secrets: &Secrets) -> SessionEvent {
        if secrets.is_empty() {
            return self;
        }
        let dialog = |mut d: Dialog| {
            d.message = secrets.redact(&d.message);
            d.default_prompt = d.default_prompt.map(|p| secrets.redact(&p));
            d
        };
        match self {
            SessionEvent::DialogOpened { tab, dialog: d } => SessionEvent::DialogOpened {
                tab,
                dialog: dialog(d),
            },
            SessionEvent::DialogClosed { tab, dialog: d } => SessionEvent::DialogClosed {
                tab,
                dialog: dialog(d),
            },
            SessionEvent::Navigated { tab, url } => SessionEvent::Navigated {
                tab,
                url: secrets.redact(&url),
            },
            SessionEvent::PermissionDenied { url, rule } => SessionEvent::PermissionDenied {
                url: secrets.redact(&url),
                rule: secrets.redact(&rule),
            },
            SessionEvent::Obstacle { tab, obstacle } => SessionEvent::Obstacle {
                tab,
                obstacle: secrets.redact_value(obstacle),
            },
            SessionEvent::Handoff { tab, id, url, reason } => SessionEvent::Handoff {
                tab,
                id,
                url,
                reason: secrets.redact(&reason),
            },
            other @ (SessionEvent::Ended { .. }
            | SessionEvent::HandoffEnded { .. }
            | SessionEvent::TraceStopped { .. }
            | SessionEvent::PageToolsChanged { .. }) => other,
        }
    }
}

/// A session's event stream; clones share it.
#[derive(Clone)]
pub struct Events {
    sender: broadcast::Sender<SessionEvent>,
    /// Every event is redacted on its way in, so no subscriber (the
    /// WebSocket API, a dashboard) ever holds a secret's value.
    secrets: Arc<Secrets>,
}

impl Default for Events {
    fn default() -> Self {
        Events::redacting(Arc::default())
    }
}

impl Events {
    /// A stream that redacts `secrets` from every event emitted.
    pub fn redacting(secrets: Arc<Secrets>) -> Events {
        Events {
            sender: broadcast::Sender::new(CAPACITY),
            secrets,
        }
    }
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Events({} subscribers)", self.sender.receiver_count())
    }
}

impl Events {
    /// Every event from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<SessionEvent> {
        self.sender.subscribe()
    }

    /// Sends `event` to every subscriber (none: dropped).
    pub fn emit(&self, event: SessionEvent) {
        tracing::debug!(event = event.name(), "session event");
        let _ = self.sender.send(event.redacted(&self.secrets));
    }
}

/// Says once that a session's pages ended: the `session_ended` event and
/// its count in the metrics. Whoever ends them (the idle timer, a failed
/// browser endpoint, the transport closing the session) calls
/// [`Lifecycle::ended`]; a later call on a session that already ended (an
/// idle session its client then closes) says nothing more. Opening the
/// session's pages again makes it live.
pub struct Lifecycle {
    events: Events,
    metrics: Arc<Metrics>,
    /// Its pages ended and nothing has opened them again.
    ended: AtomicBool,
    /// What else ends with the pages (a Grid session is let go): run
    /// where the end is said, so no call can start on it in between.
    on_end: std::sync::OnceLock<Box<dyn Fn() + Send + Sync>>,
}

impl Lifecycle {
    /// A live session's lifecycle, reporting to `events` and `metrics`.
    pub fn new(events: Events, metrics: Arc<Metrics>) -> Lifecycle {
        Lifecycle {
            events,
            metrics,
            ended: AtomicBool::new(false),
            on_end: std::sync::OnceLock::new(),
        }
    }

    /// Runs `hook` each time the pages end (set once).
    pub fn on_end(&self, hook: impl Fn() + Send + Sync + 'static) {
        let _ = self.on_end.set(Box::new(hook));
    }

    /// The session's event stream.
    pub fn events(&self) -> &Events {
        &self.events
    }

    /// The session's pages ended for `reason`: said and counted, unless
    /// they had already ended. True if this call said it.
    pub fn ended(&self, reason: EndReason) -> bool {
        if self.ended.swap(true, Ordering::SeqCst) {
            return false;
        }
        self.metrics.session_ended(reason.as_str());
        self.events.emit(SessionEvent::Ended { reason });
        if let Some(hook) = self.on_end.get() {
            hook();
        }
        true
    }

    /// The session has pages again (a call opened its context).
    pub fn began(&self) {
        self.ended.store(false, Ordering::SeqCst);
    }
}

/// A tab's way to its session's stream: unbound until the session's
/// context adopts the tab, and bound again if another session ever does.
/// Clones share the binding (the tab's event reader, its dialog book).
#[derive(Clone, Default)]
pub struct TabEvents {
    bound: Arc<Mutex<Option<(Events, String)>>>,
}

impl std::fmt::Debug for TabEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bound = self.bound.lock().unwrap();
        write!(f, "TabEvents({:?})", bound.as_ref().map(|(_, tab)| tab))
    }
}

impl TabEvents {
    /// From now on the tab's events go to `events`, naming it `tab`.
    pub fn bind(&self, events: &Events, tab: &str) {
        *self.bound.lock().unwrap() = Some((events.clone(), tab.to_owned()));
    }

    /// Emits the event `make` builds from the tab's short id, if bound.
    pub fn emit(&self, make: impl FnOnce(String) -> SessionEvent) {
        let bound = self.bound.lock().unwrap().clone();
        if let Some((events, tab)) = bound {
            events.emit(make(tab));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_bound_tab_reaches_its_session_and_an_unbound_one_reaches_nobody() {
        let events = Events::default();
        let mut heard = events.subscribe();
        let tab = TabEvents::default();
        tab.emit(|tab| SessionEvent::Navigated {
            tab,
            url: "http://a/".into(),
        });
        tab.bind(&events, "t2");
        tab.clone().emit(|tab| SessionEvent::Navigated {
            tab,
            url: "http://b/".into(),
        });
        let event = heard.recv().await.unwrap();
        assert_eq!(event.name(), "navigated");
        assert_eq!(event.data(), json!({"tab": "t2", "url": "http://b/"}));
        assert!(heard.try_recv().is_err(), "the unbound emit went nowhere");
    }

    #[tokio::test]
    async fn an_end_is_said_once_until_the_session_begins_again() {
        let metrics = Arc::new(Metrics::default());
        let lifecycle = Lifecycle::new(Events::default(), metrics.clone());
        let mut heard = lifecycle.events().subscribe();
        assert!(lifecycle.ended(EndReason::Idle));
        assert!(!lifecycle.ended(EndReason::ClientClosed));
        lifecycle.began();
        assert!(lifecycle.ended(EndReason::BrowserLost));
        let reasons: Vec<_> = [heard.recv().await.unwrap(), heard.recv().await.unwrap()]
            .iter()
            .map(|e| e.data()["reason"].clone())
            .collect();
        assert_eq!(reasons, ["idle", "browser_lost"]);
        assert_eq!(
            metrics.counters().sessions_ended,
            [("browser_lost".to_string(), 1), ("idle".to_string(), 1)]
        );
    }

    #[test]
    fn end_reasons_are_the_protocol_names() {
        let names: Vec<_> = [
            EndReason::Idle,
            EndReason::Stopped,
            EndReason::ClientClosed,
            EndReason::BrowserLost,
        ]
        .iter()
        .map(|r| SessionEvent::Ended { reason: *r }.data()["reason"].clone())
        .collect();
        assert_eq!(names, ["idle", "stopped", "client_closed", "browser_lost"]);
    }
}
