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
    pub source: Source,
    /// The memory ceiling of one tab's page, in MiB: the V8 heap limit of
    /// each renderer of a browser cdpilot launches
    /// (`--js-flags=--max-old-space-size`). A page that allocates past it
    /// crashes its own renderer only; the call answers `tab_crashed`.
    /// 0: Chromium's own limit. Default 1024.
    pub tab_memory_mb: u64,
    /// Adopt the browser's existing tabs (its default context's) instead
    /// of a context of the session's own: the first session on a browser
    /// cdpilot attaches to (`cdp_url`, `endpoints`) takes them, and the
    /// first navigate reuses its active tab. Gated as far as a default
    /// context can be: the request stage, the WebRTC script and path rules
    /// hold; the egress gate does not (docs/src/security.md). Default false.
    pub adopt_tabs: bool,
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
            source: Source::Launch,
            tab_memory_mb: 1024,
            adopt_tabs: false,
        }
    }
}

/// `[browser] adopt_tabs` is for a browser cdpilot attaches to: checked on
/// the whole configuration, command-line flags applied
/// (`crate::startup::check`), so `--cdp-url` counts.
pub fn check_adopt_tabs(browser: &BrowserConfig) -> Result<(), String> {
    let attached = !browser.cdp_url.is_empty() || !browser.endpoints.is_empty();
    if !browser.adopt_tabs || (attached && browser.source == Source::Launch && browser.grid.is_empty()) {
        return Ok(());
    }
    let source = match (browser.source, browser.grid.is_empty()) {
        (Source::Launch, false) => "browser.grid (each session gets a Grid browser of its own)".to_owned(),
        (Source::Launch, true) => "a browser cdpilot launches (it has no tabs but cdpilot's)".to_owned(),
        (other, _) => format!(
            "browser.source = \"{}\" (the default context there is the user's own)",
            other.name()
        ),
    };
    Err(format!(
        "browser.adopt_tabs = true needs a browser cdpilot attaches to (browser.cdp_url or browser.endpoints), not {source}: set browser.cdp_url, or remove adopt_tabs"
    ))
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
    pub bridge: Bridge,
}

impl Default for DialogConfig {
    fn default() -> Self {
        DialogConfig {
            policy: DialogPolicy::MustRespond,
            timeout_s: 300,
            bridge: Bridge::Off,
        }
    }
}

closed_set! {
    /// `[dialogs] policy`: what happens to a dialog that opens.
    "dialogs.policy" => pub enum DialogPolicy {
        /// The model answers (`browser_dialog`); an action that opens one ends
        /// with `dialog_opened`; unanswered after `timeout_s`, it is dismissed.
        MustRespond = "must_respond",
        /// Dismissed at once.
        AutoDismiss = "auto_dismiss",
        /// Accepted at once.
        AutoAccept = "auto_accept",
    }
}

// (The options macro above declares the enum and takes no `#[default]`.)
#[allow(clippy::derivable_impls)]
impl Default for DialogPolicy {
    fn default() -> Self {
        DialogPolicy::MustRespond
    }
}

closed_set! {
    /// `[browser] source`: where sessions run.
    "browser.source" => pub enum Source {
        /// A Chromium cdpilot launches (or the one at `cdp_url`, `endpoints`,
        /// `grid`).
        Launch = "launch",
        /// The user's own Chrome, paired with cdpilot's extension.
        Extension = "extension",
        /// The user's running Chrome, found through its `DevToolsActivePort`.
        AutoConnect = "auto_connect",
    }
}

closed_set! {
    /// `[dialogs] bridge`: whether dialogs are also reported through the
    /// page's bridge.
    "dialogs.bridge" => pub enum Bridge {
        /// Not bridged (default).
        Off = "off",
        /// Bridged.
        On = "on",
    }
}
