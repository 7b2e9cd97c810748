//! Asking the user about a URL an `ask` rule covers, and what they said.
//!
//! The transport installs an [`Asker`] (MCP elicitation, the WebSocket
//! API's `ask` event) when its client can ask; without one an `ask` is
//! refused with `permission_denied` saying so. An "always" answer grants the
//! asked URL's origin for the rest of the session; "once" lets the call
//! that asked go there (its document requests at the request stage too)
//! and is forgotten when the call ends. A grant only ever turns an `ask`
//! into an allow: a configured deny is never consulted here.
//!
//! Owns one session's grants and asker (locked for microseconds, never
//! across the wait for an answer).

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::{Decision, Verdict};
use crate::{ActionError, Budget};

/// What the user answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Allow this once (the call that asked).
    Once,
    /// Allow the asked URL's origin for the rest of the session.
    Always,
    /// Refused (declined or dismissed).
    Deny,
    /// No answer could be had (the client failed the request); the text
    /// says why.
    Failed(String),
}

/// Asks the user about one URL (the verdict names it and the `ask` rule).
pub trait Asker: Send + Sync {
    /// The user's answer for the verdict's URL.
    fn ask<'a>(&'a self, verdict: &'a Verdict) -> Pin<Box<dyn Future<Output = Answer> + Send + 'a>>;
}

/// One session's asker and grants.
#[derive(Default)]
pub struct Consent {
    asker: Mutex<Option<Arc<dyn Asker>>>,
    /// Origins the user allowed for the rest of the session.
    always: Mutex<HashSet<String>>,
    /// Origins allowed once, by calls still running (one entry per call
    /// that was allowed; removed by its [`OnceGrant`]).
    once: Arc<Mutex<Vec<String>>>,
    /// Calls of this session running now: an ask that arises while none
    /// runs (a page navigating by itself between calls) is refused, never
    /// put to the user, who would be asked about something no agent did.
    running: Arc<AtomicUsize>,
    /// "Once" answers given at the request stage (a document paused
    /// there), kept until no call of the session runs: the document's
    /// connection through the egress gate comes after the answer.
    held: Arc<Mutex<Vec<OnceGrant>>>,
}

/// A call of the session is running while this is held.
#[derive(Debug)]
pub struct Running(Arc<AtomicUsize>, Arc<Mutex<Vec<OnceGrant>>>);

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.1.lock().unwrap().clear();
        }
    }
}

/// An "allow once" held by the call that asked; forgotten when dropped.
#[derive(Debug)]
pub struct OnceGrant {
    origin: String,
    once: Arc<Mutex<Vec<String>>>,
}

impl Drop for OnceGrant {
    fn drop(&mut self) {
        let mut once = self.once.lock().unwrap();
        if let Some(at) = once.iter().position(|o| *o == self.origin) {
            once.swap_remove(at);
        }
    }
}

/// The origin a grant covers: `https://a.example:8443`. A URL with an
/// opaque origin has none, and is never granted.
pub fn origin_of(url: &str) -> Option<String> {
    let origin = url::Url::parse(url).ok()?.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

impl Consent {
    /// Installs (or, with `None`, removes) the way this session asks.
    pub fn install(&self, asker: Option<Arc<dyn Asker>>) {
        *self.asker.lock().unwrap() = asker;
    }

    /// Marks a call of the session running until the guard is dropped.
    pub fn call_running(&self) -> Running {
        self.running.fetch_add(1, Ordering::SeqCst);
        Running(self.running.clone(), self.held.clone())
    }

    /// Whether a call of the session is running now.
    pub fn in_call(&self) -> bool {
        self.running.load(Ordering::SeqCst) > 0
    }

    /// The asker the transport installed, if any.
    pub fn asker(&self) -> Option<Arc<dyn Asker>> {
        self.asker.lock().unwrap().clone()
    }

    /// Whether the user already allowed an `ask` verdict's origin (always,
    /// or once for a call still running). Never true for a deny.
    pub fn granted(&self, verdict: &Verdict) -> bool {
        if verdict.decision != Decision::Ask {
            return false;
        }
        let Some(origin) = origin_of(&verdict.url) else {
            return false;
        };
        self.always.lock().unwrap().contains(&origin) || self.once.lock().unwrap().contains(&origin)
    }

    /// Whether an origin the user allowed (always, or once for a call
    /// still running) is on `host` and `port`: what the egress gate lets
    /// an `ask` connection through by. A connection has no scheme it can
    /// trust (`https` and `wss` share a tunnel), so any granted origin on
    /// the host and port counts.
    pub fn grants_connection(&self, host: &str, port: u16) -> bool {
        let host = super::connection::canonical_host(host);
        let on = |origin: &String| {
            url::Url::parse(origin).is_ok_and(|u| {
                u.port_or_known_default() == Some(port)
                    && u.host_str().map(super::connection::canonical_host).as_deref() == Some(host.as_str())
            })
        };
        self.always.lock().unwrap().iter().any(on) || self.once.lock().unwrap().iter().any(on)
    }

    /// Keeps a "once" given at the request stage until no call of the
    /// session runs (the gate then still sees it when the document's
    /// connection comes).
    pub fn hold(&self, grant: Option<OnceGrant>) {
        if let Some(grant) = grant {
            if self.in_call() {
                self.held.lock().unwrap().push(grant);
            }
        }
    }

    /// Applies an answer to the grants; `Ok` with a grant held by the call
    /// when it was "once", an error naming the URL and the rule otherwise.
    pub fn record(
        &self,
        verdict: &Verdict,
        answer: Answer,
        what: &str,
    ) -> Result<Option<OnceGrant>, ActionError> {
        let origin = origin_of(&verdict.url);
        match (answer, origin) {
            (Answer::Always, Some(origin)) => {
                tracing::info!(%origin, "the user allowed an origin for the session");
                self.always.lock().unwrap().insert(origin);
                Ok(None)
            }
            (Answer::Once, Some(origin)) => {
                self.once.lock().unwrap().push(origin.clone());
                Ok(Some(OnceGrant {
                    origin,
                    once: self.once.clone(),
                }))
            }
            (Answer::Once | Answer::Always, None) => Ok(None),
            (Answer::Deny, _) => Err(verdict.refused_error(what)),
            (Answer::Failed(why), _) => Err(verdict.unanswered_error(what, &why)),
        }
    }

    /// Settles a verdict for a call: an allow passes; a deny, or an ask
    /// with no way to ask, is `permission_denied`; an ask not yet granted
    /// asks the user within the call's budget. A "once" answer returns the
    /// grant, which the call holds until it ends.
    pub async fn settle(
        &self,
        verdict: &Verdict,
        what: &str,
        budget: &Budget,
    ) -> Result<Option<OnceGrant>, ActionError> {
        if verdict.allowed() || self.granted(verdict) {
            return Ok(None);
        }
        let asker = match (verdict.decision, self.asker()) {
            (Decision::Ask, Some(asker)) => asker,
            _ => return Err(verdict.denied_error(what)),
        };
        let answer = budget
            .run("waiting for the user's answer", async {
                Ok(asker.ask(verdict).await)
            })
            .await?;
        self.record(verdict, answer, what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;
    use std::time::Duration;

    /// Answers from a list, counting the questions.
    struct Scripted(Mutex<Vec<Answer>>, Mutex<usize>);

    impl Asker for Scripted {
        fn ask<'a>(&'a self, _: &'a Verdict) -> Pin<Box<dyn Future<Output = Answer> + Send + 'a>> {
            *self.1.lock().unwrap() += 1;
            let answer = self.0.lock().unwrap().remove(0);
            Box::pin(async move { answer })
        }
    }

    fn verdict(url: &str, decision: Decision) -> Verdict {
        Verdict {
            url: url.into(),
            decision,
            rule: "test".into(),
        }
    }

    fn consent(answers: Vec<Answer>) -> (Consent, Arc<Scripted>) {
        let asker = Arc::new(Scripted(Mutex::new(answers), Mutex::new(0)));
        let consent = Consent::default();
        consent.install(Some(asker.clone() as Arc<dyn Asker>));
        (consent, asker)
    }

    fn budget() -> Budget {
        Budget::with_timeout(Duration::from_secs(5))
    }

    /// Issue 9: "always" grants the asked origin only; "once" lasts while
    /// the call holds it; a deny is never turned into an allow.
    #[tokio::test]
    async fn grants_are_scoped_to_the_origin_and_never_override_a_deny() {
        let (c, asker) = consent(vec![Answer::Once, Answer::Always, Answer::Deny]);
        let a = verdict("https://a.example/x", Decision::Ask);
        let once = c.settle(&a, "navigating to", &budget()).await.unwrap();
        assert!(once.is_some() && c.granted(&a));
        drop(once);
        assert!(!c.granted(&a), "once ends with the call");
        c.settle(&a, "navigating to", &budget()).await.unwrap();
        assert!(c.granted(&verdict("https://a.example/other", Decision::Ask)));
        let b = verdict("https://b.example/", Decision::Ask);
        let e = c.settle(&b, "navigating to", &budget()).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::PermissionDenied);
        assert!(e.message.contains("refused by the user"), "{e}");
        assert_eq!(*asker.1.lock().unwrap(), 3);
        let denied = verdict("https://a.example/secret", Decision::Deny);
        let e = c.settle(&denied, "navigating to", &budget()).await.unwrap_err();
        assert!(e.message.contains("is denied"), "{e}");
        assert_eq!(*asker.1.lock().unwrap(), 3, "a deny is not asked");
    }

    /// Issue 34, finding 4: the egress gate lets an `ask` connection
    /// through only for a granted origin's host and port; a "once" held
    /// from the request stage lasts until the session's calls end.
    #[tokio::test]
    async fn a_connection_is_granted_only_on_a_granted_origins_host_and_port() {
        let (c, _) = consent(vec![Answer::Always, Answer::Once]);
        assert!(!c.grants_connection("a.example", 443));
        c.settle(
            &verdict("https://A.example/x", Decision::Ask),
            "navigating to",
            &budget(),
        )
        .await
        .unwrap();
        assert!(c.grants_connection("a.example.", 443));
        assert!(!c.grants_connection("a.example", 80));
        assert!(!c.grants_connection("b.example", 443));
        let running = c.call_running();
        let once = c
            .settle(
                &verdict("http://127.0.0.1:9/", Decision::Ask),
                "navigating to",
                &budget(),
            )
            .await
            .unwrap();
        c.hold(once);
        assert!(c.grants_connection("127.0.0.1", 9));
        drop(running);
        assert!(!c.grants_connection("127.0.0.1", 9), "held until the calls end");
    }

    #[tokio::test]
    async fn without_an_asker_an_ask_is_refused_saying_so() {
        let c = Consent::default();
        let e = c
            .settle(
                &verdict("https://a.example/", Decision::Ask),
                "navigating to",
                &budget(),
            )
            .await
            .unwrap_err();
        assert!(
            e.message.contains("an ask rule needs a client that can ask"),
            "{e}"
        );
    }
}
