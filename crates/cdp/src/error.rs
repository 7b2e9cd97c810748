//! Errors of the wire, and the ONE place where Chrome's error strings are
//! interpreted ([`CdpError::kind`]), so callers branch on meaning, not text.

use std::time::Duration;

#[derive(Debug, Clone, thiserror::Error)]
pub enum CdpError {
    /// The socket to the browser closed (browser exited, crashed or the
    /// network dropped). Every pending command fails with this at once.
    #[error("the browser connection closed")]
    Disconnected,
    /// The session this command was sent on detached (tab or frame closed).
    #[error("the target of session {session_id} went away")]
    TargetClosed { session_id: String },
    /// No response arrived before the command's deadline.
    #[error("{method} got no response within {}ms", after.as_millis())]
    Timeout { method: String, after: Duration },
    /// Chrome answered with an error object.
    #[error("{method} failed: {message}")]
    Protocol {
        method: String,
        code: i64,
        message: String,
    },
    /// Chrome's answer did not fit the type we expected.
    #[error("{method}: unexpected response: {detail}")]
    Decode { method: String, detail: String },
    /// The browser's answer was over the limit per message
    /// (`transport::MAX_MESSAGE`) and was dropped unread.
    #[error("{method}: the browser's answer of {mib} MiB was over cdpilot's limit of {limit_mib} MiB per message and was dropped")]
    TooLarge {
        method: String,
        mib: u64,
        limit_mib: usize,
    },
    /// Connecting to, or launching, the browser failed.
    #[error("{0}")]
    Connect(String),
}

/// What a protocol error means for the caller, decided from Chrome's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolErrorKind {
    /// The DOM node behind an id or object is gone.
    NodeGone,
    /// The execution context (document or world) was destroyed.
    ContextGone,
    /// The session or target no longer exists.
    TargetGone,
    /// The node exists but has no box (display:none, detached, zero size).
    NoLayout,
    /// The cdpilot extension's consent gate refused it: the domain is on
    /// the blocklist the user keeps in their Chrome.
    BlockedByExtension,
    /// Anything else.
    Other,
}

impl CdpError {
    /// Connecting failed because nothing listens at the address any more
    /// (the browser is gone), rather than a slow or flaky network.
    pub fn is_refused(&self) -> bool {
        matches!(self, CdpError::Connect(message) if message.contains("Connection refused"))
    }

    /// Chrome does not know the method (JSON-RPC's -32601): a domain this
    /// browser lacks (`WebMCP` without its feature flag).
    pub fn is_unknown_method(&self) -> bool {
        matches!(self, CdpError::Protocol { code: -32601, .. })
    }

    /// Classifies a protocol error by Chrome's message. Chrome's strings are
    /// matched here and nowhere else.
    pub fn kind(&self) -> ProtocolErrorKind {
        match self {
            CdpError::TargetClosed { .. } => ProtocolErrorKind::TargetGone,
            CdpError::Protocol { message, .. } => classify_message(message),
            _ => ProtocolErrorKind::Other,
        }
    }
}

fn classify_message(message: &str) -> ProtocolErrorKind {
    let m = message.to_ascii_lowercase();
    if m.starts_with("domain_blocked:") {
        // Not Chrome's: the extension relay's refusal, as the server
        // words it (serve/extension.rs).
        ProtocolErrorKind::BlockedByExtension
    } else if m.contains("no node with given id")
        || m.contains("could not find node with given id")
        || m.contains("node is detached")
        || m.contains("no node found")
        || m.contains("could not find object with given id")
    {
        ProtocolErrorKind::NodeGone
    } else if m.contains("cannot find context with specified id")
        || m.contains("execution context was destroyed")
        || m.contains("inspected target navigated or closed")
        || m.contains("cannot find default execution context")
    {
        ProtocolErrorKind::ContextGone
    } else if m.contains("session with given id not found")
        || m.contains("no target with given id")
        || m.contains("target closed")
        || m.contains("no session with given id")
    {
        ProtocolErrorKind::TargetGone
    } else if m.contains("could not compute content quads")
        || m.contains("node does not have a layout object")
        || m.contains("node is either not visible or not an htmlelement")
    {
        ProtocolErrorKind::NoLayout
    } else {
        ProtocolErrorKind::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protocol(message: &str) -> CdpError {
        CdpError::Protocol {
            method: "X".into(),
            code: -32000,
            message: message.into(),
        }
    }

    #[test]
    fn chrome_messages_map_to_kinds() {
        assert_eq!(
            protocol("No node with given id found").kind(),
            ProtocolErrorKind::NodeGone
        );
        assert_eq!(
            protocol("Could not find object with given id").kind(),
            ProtocolErrorKind::NodeGone
        );
        assert_eq!(
            protocol("Cannot find context with specified id").kind(),
            ProtocolErrorKind::ContextGone
        );
        assert_eq!(
            protocol("Execution context was destroyed.").kind(),
            ProtocolErrorKind::ContextGone
        );
        assert_eq!(
            protocol("Session with given id not found.").kind(),
            ProtocolErrorKind::TargetGone
        );
        assert_eq!(
            protocol("Could not compute content quads.").kind(),
            ProtocolErrorKind::NoLayout
        );
        assert_eq!(protocol("Invalid parameters").kind(), ProtocolErrorKind::Other);
        assert_eq!(
            protocol("domain_blocked: example.com is on the extension's blocklist").kind(),
            ProtocolErrorKind::BlockedByExtension
        );
        assert_eq!(CdpError::Disconnected.kind(), ProtocolErrorKind::Other);
        assert_eq!(
            CdpError::TargetClosed {
                session_id: "S".into()
            }
            .kind(),
            ProtocolErrorKind::TargetGone
        );
    }
}
