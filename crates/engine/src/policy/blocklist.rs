//! A worker's blocklist: the refusing URL rules, given to a paused
//! worker's own session (`Network.setBlockedURLs`) before it runs, so that
//! every request it makes whose URL a deny (or ask) rule matches fails
//! where it starts, path rules included.
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
//! blocklist takes, so each refusing rule is sent as written. What it
//! does not do, the other guards do: other spellings of a host, the
//! addresses a name resolves to and `policy.default = "deny"` are the
//! egress gate's (by host, for every connection); reporting a refusal in
//! a result's `blocked` is the request stage's, where Chrome has one.
//! Owns nothing: one call per worker, before it runs.

use cdp::protocol::network::{BlockPattern, Enable, SetBlockedUrls};
use cdp::{CdpError, Session};
use tokio::time::Instant;

use super::Policy;

/// Gives `session` (a paused worker's) the refusing rules of `policy` as
/// its blocklist. Nothing is sent when no rule refuses.
pub async fn install(session: &Session, policy: &Policy, deadline: Instant) -> Result<(), CdpError> {
    let url_patterns: Vec<BlockPattern> = policy
        .refusing_patterns()
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
