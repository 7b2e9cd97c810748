//! `[browser]`: which Chromium, launched or attached (one browser, a fleet
//! of endpoints, a Grid, the extension); `[dialogs]`: how alerts, confirms
//! and prompts are handled.

use serde::Deserialize;

/// `[browser]`: the Chromium cdpilot launches or attaches to.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BrowserConfig {
    /// Chromium binary; empty: `$CDPILOT_CHROME`, then PATH.
    pub executable: String,
    /// Launch without a window (default true).
    pub headless: bool,
    /// Extra Chromium flags, appended.
    pub args: Vec<String>,
    /// Attach to this browser (ws://… or http://host:port) instead of launching.
    pub cdp_url: String,
    /// Persistent profile; empty: a temporary one removed on exit.
    pub user_data_dir: String,
    /// Several browsers to spread sessions over (ws://…, wss://…,
    /// http://host:port); empty: one local Chromium (or `cdp_url`).
    pub endpoints: Vec<String>,
    /// A file written by `browser_storage save`, loaded into every new
    /// session; empty: none.
    pub storage_state: String,
    /// The user's own proxy (`http://[user:password@]host:port`): the
    /// egress gate forwards what it lets through to it; empty: direct.
    pub upstream_proxy: String,
    /// A Selenium Grid 4 hub (`http://hub:4444`): each session gets a Grid
    /// session of its own; empty: no Grid.
    pub grid: String,
    /// Extra W3C capabilities for the Grid's new-session request
    /// (`platformName`, `se:name`, a node's stereotype…).
    pub grid_capabilities: serde_json::Map<String, serde_json::Value>,
    /// Headers sent to the Grid, its `se:cdp` WebSocket included (a Grid
    /// behind a gateway: `Authorization`).
    pub grid_headers: std::collections::BTreeMap<String, String>,
    /// Where sessions run: `launch` (a Chromium cdpilot launches, or
    /// `cdp_url`), `extension` (the user's own Chrome, paired with
    /// cdpilot's extension) or `auto_connect` (the user's running Chrome,
    /// found through its `DevToolsActivePort`).
    pub source: String,
    /// The memory ceiling of one tab's page, in MiB: the V8 heap limit of
    /// each renderer of a browser cdpilot launches
    /// (`--js-flags=--max-old-space-size`). A page that allocates past it
    /// crashes its own renderer only; the call answers `tab_crashed`.
    /// 0: Chromium's own limit. Default 1024.
    pub tab_memory_mb: u64,
}

impl Default for BrowserConfig {
    fn default() -> Self {
        BrowserConfig {
            executable: String::new(),
            headless: true,
            args: Vec::new(),
            cdp_url: String::new(),
            user_data_dir: String::new(),
            endpoints: Vec::new(),
            storage_state: String::new(),
            upstream_proxy: String::new(),
            grid: String::new(),
            grid_capabilities: serde_json::Map::new(),
            grid_headers: std::collections::BTreeMap::new(),
            source: "launch".into(),
            tab_memory_mb: 1024,
        }
    }
}

/// `[dialogs]`: alerts, confirms and prompts.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DialogConfig {
    /// `must_respond` (default: the model answers) or an automatic answer.
    pub policy: DialogPolicy,
    /// How long a dialog may wait for its answer, in seconds.
    pub timeout_s: u64,
    /// Where dialogs are also reported (`off` by default).
    pub bridge: String,
}

impl Default for DialogConfig {
    fn default() -> Self {
        DialogConfig {
            policy: DialogPolicy::MustRespond,
            timeout_s: 300,
            bridge: "off".into(),
        }
    }
}

/// `[dialogs] policy`: what happens to a dialog that opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DialogPolicy {
    /// The model answers (`browser_dialog`); an action that opens one ends
    /// with `dialog_opened`; unanswered after `timeout_s`, it is dismissed.
    #[default]
    MustRespond,
    /// Dismissed at once.
    AutoDismiss,
    /// Accepted at once.
    AutoAccept,
}

impl DialogPolicy {
    /// Every policy with its name in the file and on the command line: the
    /// one list of names.
    pub const NAMED: [(&'static str, DialogPolicy); 3] = [
        ("must_respond", DialogPolicy::MustRespond),
        ("auto_dismiss", DialogPolicy::AutoDismiss),
        ("auto_accept", DialogPolicy::AutoAccept),
    ];

    /// The policy's name (`must_respond`, …).
    pub fn name(self) -> &'static str {
        Self::NAMED
            .iter()
            .find(|(_, p)| *p == self)
            .map_or("must_respond", |(name, _)| name)
    }
}

impl std::str::FromStr for DialogPolicy {
    type Err = String;

    /// A policy by name; the error names the key and the allowed names.
    fn from_str(name: &str) -> Result<DialogPolicy, String> {
        Self::NAMED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, p)| *p)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::NAMED.iter().map(|(n, _)| *n).collect();
                format!("dialogs.policy = {name:?}: allowed is {}", names.join(" | "))
            })
    }
}

impl<'de> Deserialize<'de> for DialogPolicy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}
