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
//! reports each refusal in a result's `blocked` (a refusal here is not
//! reported: Chrome fails the request before anyone else sees it), as is
//! `policy.default = "deny"`.
//! Owns nothing: one call per worker, before it runs.

use cdp::protocol::network::{BlockPattern, Enable, SetBlockedUrls};
use cdp::{CdpError, Session};
use tokio::time::Instant;

use super::Policy;

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
