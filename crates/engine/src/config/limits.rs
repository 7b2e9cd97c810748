//! Budgets and lifetimes: `[limits]`, `[session]`, `[serve]` (the HTTP and
//! WebSocket server), `[handoff]`.

use serde::Deserialize;

/// `[limits]`: default budgets and caps.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Budget of a call that gives no `timeout_ms`.
    pub timeout_ms: u64,
    /// Budget of a `browser_evaluate` that gives none.
    pub evaluate_timeout_ms: u64,
    /// Budget of a `browser_wait` that gives none.
    pub wait_timeout_ms: u64,
    /// Elements a snapshot lists at most, by default.
    pub snapshot_max_elements: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout_ms: 25_000,
            evaluate_timeout_ms: 10_000,
            wait_timeout_ms: 30_000,
            snapshot_max_elements: 2000,
        }
    }
}

/// `[session]`: session lifetimes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SessionConfig {
    /// A session with no call for this long is ended; 0: never.
    pub idle_timeout_s: u64,
    /// How long opening a session's browser context and first tab may take
    /// at least, from its turn (longer when the call that started it has
    /// more of its budget left): the opening goes on for a caller with
    /// less time, so its next call joins it rather than starting again.
    /// Not a key of the file: 20 s, changed only by library users (the
    /// tests shorten it).
    #[serde(skip_deserializing, default = "opening_floor")]
    pub opening_floor: std::time::Duration,
}

fn opening_floor() -> std::time::Duration {
    std::time::Duration::from_secs(20)
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            idle_timeout_s: 900,
            opening_floor: opening_floor(),
        }
    }
}

/// `cdpilot serve`: where it listens and who may use it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServeConfig {
    /// `host:port`; a non-loopback address needs a token.
    pub listen: String,
    /// Bearer token for every endpoint; empty: generated at start.
    pub token: String,
    /// Sessions open at once (MCP sessions plus WebSocket sessions).
    pub max_sessions: usize,
    /// Origin headers accepted besides the server's own (DNS-rebinding guard).
    pub allowed_origins: Vec<String>,
    /// A browser serve launched that no session has used for this long is
    /// closed, and the next session launches a new one (Chromium keeps much
    /// of what its closed sessions used); 0: never. Never for a browser
    /// attached to (`cdp_url`, endpoints, Grid, extension, auto-connect).
    pub browser_idle_restart_s: u64,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            listen: "127.0.0.1:8931".into(),
            token: String::new(),
            max_sessions: 16,
            allowed_origins: Vec::new(),
            browser_idle_restart_s: 60,
        }
    }
}

/// `[handoff]`: handing a tab to a person (`browser_handoff`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HandoffConfig {
    /// An obstacle on navigate starts a hand-off by itself.
    pub auto: bool,
    /// A hand-off's default budget, in seconds (its `timeout_ms` overrides).
    pub timeout_s: u64,
}

impl Default for HandoffConfig {
    fn default() -> Self {
        HandoffConfig {
            auto: false,
            timeout_s: 600,
        }
    }
}
