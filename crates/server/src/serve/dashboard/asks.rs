//! URL asks answered from the dashboard: a session whose client cannot ask
//! (a WebSocket client without `ask: true`, the CLI) gets this asker, which
//! shows the question in the dashboard (allow once / allow the origin /
//! deny). With no dashboard open it refuses at once, as before: nobody
//! would see the question.
//!
//! Owns the questions waiting for the dashboard (id → the waiting ask),
//! locked for microseconds; a question whose call ended is removed.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use engine::policy::{Answer, Asker, Verdict};
use serde_json::{json, Value};
use tokio::sync::oneshot;

/// A dashboard polled this recently is open: asks wait for it.
const OPEN_WITHIN: Duration = Duration::from_secs(5);

/// The questions waiting for the dashboard.
#[derive(Default)]
pub struct DashboardAsks {
    /// Questions by id until answered or their call ends.
    waiting: Mutex<HashMap<String, Question>>,
    /// Numbers the questions (`ask1`, `ask2`, …).
    next: AtomicU64,
    /// When a dashboard last polled the state.
    watched: Mutex<Option<Instant>>,
}

struct Question {
    session: String,
    url: String,
    rule: String,
    answer: oneshot::Sender<Answer>,
}

/// Removes a question when its ask ends (answered, budget out, cancelled).
struct Waiting<'a> {
    id: String,
    asks: &'a DashboardAsks,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.asks.waiting.lock().unwrap().remove(&self.id);
    }
}

impl DashboardAsks {
    /// A dashboard polled just now.
    pub fn watched(&self) {
        *self.watched.lock().unwrap() = Some(Instant::now());
    }

    fn open(&self) -> bool {
        self.watched
            .lock()
            .unwrap()
            .is_some_and(|t| t.elapsed() < OPEN_WITHIN)
    }

    /// The asker for session `session`.
    pub fn asker_for(self: &Arc<Self>, session: &str) -> Arc<dyn Asker> {
        Arc::new(DashboardAsker {
            asks: self.clone(),
            session: session.to_owned(),
        })
    }

    /// The waiting questions, for the state.
    pub fn pending(&self) -> Vec<Value> {
        let waiting = self.waiting.lock().unwrap();
        let mut list: Vec<Value> = waiting
            .iter()
            .map(|(id, q)| json!({"id": id, "session": q.session, "url": q.url, "rule": q.rule}))
            .collect();
        list.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
        list
    }

    /// Answers question `id`: `once`, `always` or `deny`. False: no such
    /// question waits (answered, or its call ended).
    pub fn decide(&self, id: &str, allow: &str) -> Result<bool, String> {
        let answer = match allow {
            "once" => Answer::Once,
            "always" => Answer::Always,
            "deny" => Answer::Deny,
            other => return Err(format!("allow: once, always or deny, not \"{other}\"")),
        };
        let question = self.waiting.lock().unwrap().remove(id);
        Ok(question.is_some_and(|q| q.answer.send(answer).is_ok()))
    }
}

struct DashboardAsker {
    asks: Arc<DashboardAsks>,
    session: String,
}

impl Asker for DashboardAsker {
    fn ask<'a>(&'a self, verdict: &'a Verdict) -> Pin<Box<dyn Future<Output = Answer> + Send + 'a>> {
        Box::pin(async move {
            if !self.asks.open() {
                return Answer::Failed(
                    "an ask rule needs a client that can ask (MCP elicitation, the WebSocket API's ask/decide) or a person at the dashboard (/ of cdpilot serve), and none is there".into(),
                );
            }
            let id = format!("ask{}", self.asks.next.fetch_add(1, Ordering::Relaxed) + 1);
            let (tx, rx) = oneshot::channel();
            self.asks.waiting.lock().unwrap().insert(
                id.clone(),
                Question {
                    session: self.session.clone(),
                    url: verdict.url.clone(),
                    rule: verdict.rule.clone(),
                    answer: tx,
                },
            );
            let _waiting = Waiting { id, asks: &self.asks };
            rx.await
                .unwrap_or_else(|_| Answer::Failed("the question was dropped before anyone answered".into()))
        })
    }
}
