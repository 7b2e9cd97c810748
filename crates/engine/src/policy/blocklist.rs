//! A worker's blocklist: the URL rules that refuse by path, given to a
//! paused worker's own session (`Network.setBlockedURLs`) before it runs,
//! so that every request it makes whose URL such a deny (or ask) rule
//! matches fails where it starts.
//!
//! Why not only the request stage: Chrome has no `Fetch` domain in a
//! dedicated worker's session (it answers "'Fetch.enable' wasn't found";
//! the worker's requests pause in its parent frame's session, among the
//! frame's own sub-resources), and in a shared worker's session `Fetch`
//! takes hold through a loader update that races the worker's start (a
//! blob-URL shared worker's first `fetch()` sometimes went out unjudged).
//! A blocklist travels in the worker's session, in order with
//! `runIfWaitingForDebugger`: it holds from the worker's first request.
//!
//! The rules are URLPattern constructor strings, the syntax Chrome's
//! blocklist takes, so each rule is sent as written. Host-level rules are
//! not in it: the egress gate holds them for every connection, every
//! spelling of the host and every address its name resolves to, and
//! reports each refusal in a result's `blocked`, as is
//! `policy.default = "deny"`. Chrome matches the patterns as written: a
//! request spelled another way (`//secret`, `%73ecret`, `localhost.`)
//! passes the blocklist; over plain http the egress gate judges its whole
//! URL in every spelling (issue 41), over https nothing sees its path.
//!
//! A request the blocklist failed is told in the worker's own session
//! (`Network` is on there once it has a blocklist): Chrome 156 sends
//! `Network.requestWillBeSent` (its URL) then `Network.loadingFailed` with
//! `blockedReason: "inspector"` (its type), in dedicated and shared workers
//! alike. A [`Watch`] reads those events and names the refusal's rule; its
//! owner (the tab's reader for a tab's workers, a worker's own gate task
//! for a shared or service worker) records it for the session to report.
//! Owns nothing but each watch's few requests under way.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use cdp::protocol::network::{
    BlockPattern, Enable, LoadingFailed, LoadingFinished, RequestWillBeSent, SetBlockedUrls,
};
use cdp::{CdpError, Event, Session};
use tokio::time::Instant;

use super::{Policy, Verdict};

/// Gives `session` (a paused worker's) the rules of `policy` that refuse
/// by path as its blocklist. Nothing is sent when there are none.
pub async fn install(session: &Session, policy: &Policy, deadline: Instant) -> Result<(), CdpError> {
    let url_patterns: Vec<BlockPattern> = policy
        .refusing_path_patterns()
        .into_iter()
        .map(|url_pattern| BlockPattern {
            url_pattern,
            block: true,
        })
        .collect();
    if url_patterns.is_empty() {
        return Ok(());
    }
    session.call(Enable {}, deadline).await?;
    session.call(SetBlockedUrls { url_patterns }, deadline).await?;
    Ok(())
}

/// At most this many requests a blocklist would refuse wait, per watch, for
/// Chrome to say how they ended (a refused one fails at once: more waiting
/// means requests Chrome let go, which the egress gate holds by host).
const WAITING: usize = 64;

/// What the blocklists of the worker sessions it follows refused, read from
/// their events. `W` is what its owner reports a refusal with (the
/// worker's kind, its browser context). Holds a request only while one a
/// rule on the blocklist refuses is under way in a followed session, at
/// most [`WAITING`]; a session forgotten takes its requests with it.
pub struct Watch<W> {
    policy: Arc<Policy>,
    /// The sessions given a blocklist, by session id.
    workers: HashMap<String, W>,
    /// Requests of those sessions a rule on the blocklist refuses, not yet
    /// ended: `(session, request id, verdict)`, oldest first.
    waiting: VecDeque<(String, String, Verdict)>,
}

/// A request a worker's blocklist failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused<W> {
    /// The URL and the rule that put it on the blocklist.
    pub verdict: Verdict,
    /// The request's type as Chrome names it (`Fetch`, `Script`…).
    pub resource: String,
    /// The worker, as its owner followed it.
    pub worker: W,
}

impl<W: Clone> Watch<W> {
    /// A watch over `policy`'s blocklist; `None` when no rule refuses by
    /// path: no worker gets a blocklist, and there is nothing to read.
    pub fn new(policy: Arc<Policy>) -> Option<Watch<W>> {
        if policy.refusing_path_patterns().is_empty() {
            return None;
        }
        Some(Watch {
            policy,
            workers: HashMap::new(),
            waiting: VecDeque::new(),
        })
    }

    /// Follows the worker session `session` (given the blocklist).
    pub fn follow(&mut self, session: &str, worker: W) {
        self.workers.insert(session.to_owned(), worker);
    }

    /// The session `session` ended: its requests are forgotten with it.
    pub fn forget(&mut self, session: &str) {
        if self.workers.remove(session).is_some() {
            self.waiting.retain(|(s, _, _)| s != session);
        }
    }

    /// Reads one event (of any session): a request the blocklist of a
    /// followed session failed, named by its rule.
    pub fn event(&mut self, event: &Event) -> Option<Refused<W>> {
        if !self.workers.contains_key(&event.session_id) {
            return None;
        }
        if let Some(sent) = event.decode::<RequestWillBeSent>() {
            // A redirect is the same request going on to another URL.
            self.end(&event.session_id, &sent.request_id);
            if let Some(verdict) = self.policy.blocklisted(&sent.request.url) {
                if self.waiting.len() == WAITING {
                    self.waiting.pop_front();
                }
                self.waiting
                    .push_back((event.session_id.clone(), sent.request_id, verdict));
            }
        } else if let Some(failed) = event.decode::<LoadingFailed>() {
            let verdict = self.end(&event.session_id, &failed.request_id)?;
            if failed.blocked_reason.as_deref() == Some("inspector") {
                return Some(Refused {
                    verdict,
                    resource: failed.kind,
                    worker: self.workers.get(&event.session_id)?.clone(),
                });
            }
        } else if let Some(finished) = event.decode::<LoadingFinished>() {
            self.end(&event.session_id, &finished.request_id);
        }
        None
    }

    /// Takes the waiting request `id` of `session`, if one is.
    fn end(&mut self, session: &str, id: &str) -> Option<Verdict> {
        let at = self
            .waiting
            .iter()
            .position(|(s, r, _)| s == session && r == id)?;
        self.waiting.remove(at).map(|(_, _, verdict)| verdict)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::tests::policy;
    use crate::policy::Decision;
    use serde_json::json;

    fn watch() -> Watch<&'static str> {
        let policy = policy("allow", &[("deny", "http://a.test/secret/*")]);
        let mut watch = Watch::new(Arc::new(policy)).expect("a path rule");
        watch.follow("W", "worker");
        watch
    }

    fn sent(session: &str, id: &str, url: &str) -> Event {
        let params = json!({"requestId": id, "type": "Fetch", "request": {"url": url, "method": "GET"}});
        Event::new(session, "Network.requestWillBeSent", &params)
    }

    fn failed(session: &str, id: &str, reason: Option<&str>) -> Event {
        let params = json!({"requestId": id, "type": "Fetch", "errorText": "net::ERR_BLOCKED_BY_CLIENT", "blockedReason": reason});
        Event::new(session, "Network.loadingFailed", &params)
    }

    /// Chrome's two events of a refused request (as Chromium 156 sends
    /// them in a worker's session) make one refusal, named by its rule.
    #[test]
    fn a_request_the_blocklist_failed_is_named_by_its_rule() {
        let mut watch = watch();
        assert_eq!(watch.event(&sent("W", "1", "http://a.test/secret/x")), None);
        let refused = watch.event(&failed("W", "1", Some("inspector"))).unwrap();
        assert_eq!(refused.verdict.url, "http://a.test/secret/x");
        assert_eq!(refused.verdict.decision, Decision::Deny);
        assert!(refused.verdict.rule.starts_with("policy.rules[0]"));
        assert_eq!((refused.resource.as_str(), refused.worker), ("Fetch", "worker"));
        assert!(watch.waiting.is_empty());
    }

    /// Another session's requests, one the rules let through, one that
    /// failed for another reason, and a session forgotten report nothing.
    #[test]
    fn only_a_followed_sessions_blocked_refused_request_is_reported() {
        let mut watch = watch();
        watch.event(&sent("P", "1", "http://a.test/secret/x"));
        assert_eq!(watch.event(&failed("P", "1", Some("inspector"))), None);
        watch.event(&sent("W", "2", "http://a.test/open"));
        assert!(watch.waiting.is_empty(), "an allowed request is not held");
        watch.event(&sent("W", "3", "http://a.test/secret/y"));
        assert_eq!(watch.event(&failed("W", "3", None)), None);
        watch.event(&sent("W", "4", "http://a.test/secret/z"));
        watch.forget("W");
        assert!(watch.waiting.is_empty());
        assert_eq!(watch.event(&failed("W", "4", Some("inspector"))), None);
    }

    /// Requests Chrome never ends hold at most [`WAITING`] entries.
    #[test]
    fn waiting_requests_are_bounded() {
        let mut watch = watch();
        for id in 0..WAITING * 3 {
            watch.event(&sent("W", &id.to_string(), "http://a.test/secret/x"));
        }
        assert_eq!(watch.waiting.len(), WAITING);
        let newest = (WAITING * 3 - 1).to_string();
        assert!(watch.event(&failed("W", &newest, Some("inspector"))).is_some());
    }

    /// No rule refusing by path: no blocklist, no watch.
    #[test]
    fn no_path_rule_no_watch() {
        let policy = policy("deny", &[("deny", "http://a.test/*")]);
        assert!(Watch::<()>::new(Arc::new(policy)).is_none());
    }
}
