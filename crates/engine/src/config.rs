//! cdpilot's configuration file (`shared/spec/CONFIG.md`): keys, defaults,
//! and the checks that make a bad file a clear start-up error.
//!
//! Unknown keys are errors naming the key and the file. Settings of features
//! this build does not enforce yet are refused rather than silently ignored:
//! a URL rule that is accepted but not applied would be worse than none.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The whole configuration; `Config::default()` is cdpilot with no file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// `[browser]`: which Chromium, launched or attached.
    pub browser: BrowserConfig,
    /// `[dialogs]`: how alerts, confirms and prompts are handled.
    pub dialogs: DialogConfig,
    /// `[policy]`: URL schemes and rules.
    pub policy: PolicyConfig,
    /// `[tools]`: which tools are offered.
    pub tools: ToolsConfig,
    /// `[limits]`: default budgets and caps.
    pub limits: Limits,
    /// `[audit]`: where the audit log goes.
    pub audit: AuditConfig,
    /// `[session]`: session lifetimes.
    pub session: SessionConfig,
    /// `[serve]`: the HTTP and WebSocket server.
    pub serve: ServeConfig,
    /// `[files]`: where uploads may come from and outputs go.
    pub files: FilesConfig,
    /// `[output]`: how results are written.
    pub output: OutputConfig,
    /// `[handoff]`: handing a tab to a person (`browser_handoff`).
    pub handoff: HandoffConfig,
    /// `NAME = { env = "VARIABLE", origins = [...] }`: values the model
    /// types as `{{secret:NAME}}` and never reads back.
    pub secrets: std::collections::BTreeMap<String, SecretConfig>,
}

/// One `[secrets]` entry: where its value comes from and where it may go.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretConfig {
    /// The environment variable holding the value.
    pub env: String,
    /// Origins it may be typed on; empty: any.
    #[serde(default)]
    pub origins: Vec<String>,
}

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
    /// `cdp_url`) or `extension` (the user's own Chrome, paired with
    /// cdpilot's extension; `cdpilot serve` only).
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

/// `[policy]`: where the browser may go.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyConfig {
    /// `allow`, `ask` or `deny`: the decision when no rule matches.
    pub default: String,
    /// URL schemes actions may open (default http and https).
    pub schemes: Vec<String>,
    /// `[[policy.rules]]`, as written.
    pub rules: Vec<Rule>,
    /// Judge sub-resources (scripts, images, XHR…) at the request stage
    /// too, not only documents.
    pub resources: bool,
    /// The egress gate refuses loopback, private, link-local and cloud
    /// metadata addresses after resolving a name.
    pub block_private_networks: bool,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            default: "allow".into(),
            schemes: vec!["http".into(), "https".into()],
            rules: Vec::new(),
            resources: false,
            block_private_networks: false,
        }
    }
}

/// One `[[policy.rules]]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// A URL pattern (urlpattern syntax).
    pub pattern: String,
    /// `allow`, `ask` or `deny`.
    pub action: String,
    /// Where a rule not from the file came from (`--deny`), for messages;
    /// `None`: `policy.rules[i]`.
    #[serde(skip)]
    pub origin: Option<String>,
}

/// `[tools]`: which tools are offered.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ToolsConfig {
    /// Offer `browser_evaluate` (default true).
    pub evaluate: bool,
    /// `browser_cdp`: off (default), fenced to methods that stay inside
    /// the caller's tab (`true`), or `"unrestricted"` (a single-user stdio
    /// server only; `cdpilot serve` refuses it at start).
    pub cdp: CdpAccess,
    /// Tool groups beyond `core` (`network`, `storage`, `pdf`,
    /// `emulation`, `all`).
    pub caps: Vec<String>,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig {
            evaluate: true,
            cdp: CdpAccess::Off,
            caps: Vec::new(),
        }
    }
}

/// How much `browser_cdp` may do (`[tools] cdp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CdpAccess {
    /// `false`: the tool is not offered.
    #[default]
    Off,
    /// `true`: only methods that cannot reach outside the caller's tab
    /// (`crate::policy::cdp_fence`).
    Fenced,
    /// `"unrestricted"`: every method, for a single-user stdio server.
    Unrestricted,
}

impl CdpAccess {
    /// `false`, `true`, `"unrestricted"` (the configuration's words).
    pub fn parse(word: &str) -> Option<CdpAccess> {
        match word.trim() {
            "false" => Some(CdpAccess::Off),
            "true" => Some(CdpAccess::Fenced),
            "unrestricted" => Some(CdpAccess::Unrestricted),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for CdpAccess {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Word {
            Bool(bool),
            Text(String),
        }
        match Word::deserialize(d)? {
            Word::Bool(false) => Ok(CdpAccess::Off),
            Word::Bool(true) => Ok(CdpAccess::Fenced),
            Word::Text(t) if t == "unrestricted" => Ok(CdpAccess::Unrestricted),
            Word::Text(t) => Err(serde::de::Error::custom(format!(
                "tools.cdp = \"{t}\": allowed is false, true (fenced to the caller's tab) or \"unrestricted\" (stdio only)"
            ))),
        }
    }
}

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

/// `[audit]`: the audit log.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuditConfig {
    /// File the audit log is appended to; empty: none.
    pub file: String,
}

/// `[session]`: session lifetimes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SessionConfig {
    /// A session with no call for this long is ended; 0: never.
    pub idle_timeout_s: u64,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig { idle_timeout_s: 900 }
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
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            listen: "127.0.0.1:8931".into(),
            token: String::new(),
            max_sessions: 16,
            allowed_origins: Vec::new(),
        }
    }
}

/// `[output]`: how results are written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputConfig {
    /// Page text in results enclosed in nonce markers (contract v3, "Page
    /// content is untrusted"; `content.rs`).
    #[serde(deserialize_with = "content_markers")]
    pub content_markers: bool,
}

/// `output.content_markers`: a boolean, or an error that names the key
/// (the TOML reader's own message does not).
fn content_markers<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    match toml::Value::deserialize(d)? {
        toml::Value::Boolean(on) => Ok(on),
        other => Err(serde::de::Error::custom(format!(
            "output.content_markers = {}: allowed is true or false",
            serde_json::to_string(&other).unwrap_or_default()
        ))),
    }
}

impl Default for OutputConfig {
    fn default() -> Self {
        OutputConfig {
            content_markers: true,
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

/// `[files]`: the file system an agent's actions may touch.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FilesConfig {
    /// Directories `browser_upload` may read from; empty: none (uploads
    /// are refused).
    pub upload_roots: Vec<String>,
    /// Where downloads, PDFs and saved screenshots go; empty:
    /// `./cdpilot-output`.
    pub output_dir: String,
}

impl FilesConfig {
    /// The directory outputs are written to (not created here).
    pub fn output_dir(&self) -> PathBuf {
        if self.output_dir.is_empty() {
            PathBuf::from("cdpilot-output")
        } else {
            PathBuf::from(&self.output_dir)
        }
    }

    /// The directories uploads may be read from, as written (relative
    /// ones against the working directory); empty: uploads are refused
    /// (a server started in `$HOME` must not hand out `~/.ssh`).
    pub fn upload_roots(&self) -> Vec<PathBuf> {
        self.upload_roots.iter().map(PathBuf::from).collect()
    }
}

impl Config {
    /// The file to read: `--config PATH`, else `$CDPILOT_CONFIG`, else
    /// `./cdpilot.toml` if it exists; `None` means built-in defaults.
    pub fn locate(explicit: Option<&Path>) -> Option<PathBuf> {
        if let Some(path) = explicit {
            return Some(path.to_owned());
        }
        if let Some(path) = std::env::var_os("CDPILOT_CONFIG").filter(|p| !p.is_empty()) {
            return Some(PathBuf::from(path));
        }
        let local = PathBuf::from("cdpilot.toml");
        local.exists().then_some(local)
    }

    /// Reads and checks the file at `path`; the error names the file.
    pub fn load(path: &Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read config {}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("config {}: {e}", path.display()))
    }

    /// Parses and checks a configuration's TOML text.
    pub fn parse(text: &str) -> Result<Config, String> {
        let config: Config = toml::from_str(text).map_err(|e| {
            // A wrong type's message names no key: add the line it is on.
            let line = e.span().map(|span| {
                let start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
                let end = text[span.start..]
                    .find('\n')
                    .map_or(text.len(), |i| span.start + i);
                let number = text[..span.start].matches('\n').count() + 1;
                format!(" (line {number}: {})", text[start..end].trim())
            });
            format!("{}{}", e.message(), line.unwrap_or_default())
        })?;
        config.check()?;
        Ok(config)
    }

    /// Lays the environment over the file for every v2 key
    /// (`CDPILOT_<SECTION>_<KEY>`, CONFIG.md): flags go on top of this,
    /// defaults under the file. `var` reads one variable (the process
    /// environment in the binary); an empty value counts as unset. Lists
    /// are comma-separated.
    pub fn apply_env(&mut self, var: impl Fn(&str) -> Option<String>) -> Result<(), String> {
        let get = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let list = |v: String| {
            v.split(',')
                .map(|e| e.trim().to_owned())
                .filter(|e| !e.is_empty())
                .collect()
        };
        let number = |name: &str, v: String| {
            v.trim()
                .parse::<u64>()
                .map_err(|_| format!("${name} = {v:?}: allowed is a whole number"))
        };
        if let Some(v) = get("CDPILOT_BROWSER_ENDPOINTS") {
            self.browser.endpoints = list(v);
        }
        if let Some(v) = get("CDPILOT_BROWSER_GRID") {
            self.browser.grid = v;
        }
        // Tables come as a JSON object (`{"platformName":"linux"}`).
        if let Some(v) = get("CDPILOT_BROWSER_GRID_CAPABILITIES") {
            self.browser.grid_capabilities = json_table("CDPILOT_BROWSER_GRID_CAPABILITIES", &v)?;
        }
        if let Some(v) = get("CDPILOT_BROWSER_GRID_HEADERS") {
            self.browser.grid_headers = json_table("CDPILOT_BROWSER_GRID_HEADERS", &v)?
                .into_iter()
                .map(|(name, value)| match value {
                    serde_json::Value::String(value) => Ok((name, value)),
                    _ => Err(format!(
                        "$CDPILOT_BROWSER_GRID_HEADERS: {name:?} must be a string"
                    )),
                })
                .collect::<Result<_, _>>()?;
        }
        if let Some(v) = get("CDPILOT_BROWSER_SOURCE") {
            self.browser.source = v;
        }
        if let Some(v) = get("CDPILOT_BROWSER_STORAGE_STATE") {
            self.browser.storage_state = v;
        }
        if let Some(v) = get("CDPILOT_TOOLS_CDP") {
            self.tools.cdp = CdpAccess::parse(&v)
                .ok_or_else(|| "$CDPILOT_TOOLS_CDP: allowed is false, true or unrestricted".to_owned())?;
        }
        if let Some(v) = get("CDPILOT_BROWSER_UPSTREAM_PROXY") {
            self.browser.upstream_proxy = v;
        }
        if let Some(v) = get("CDPILOT_POLICY_BLOCK_PRIVATE_NETWORKS") {
            self.policy.block_private_networks = match v.trim() {
                "true" | "1" => true,
                "false" | "0" => false,
                _ => {
                    return Err(format!(
                        "$CDPILOT_POLICY_BLOCK_PRIVATE_NETWORKS = {v:?}: allowed is true | false"
                    ))
                }
            };
        }
        if let Some(v) = get("CDPILOT_TOOLS_CAPS") {
            self.tools.caps = list(v);
        }
        if let Some(v) = get("CDPILOT_BROWSER_TAB_MEMORY_MB") {
            self.browser.tab_memory_mb = number("CDPILOT_BROWSER_TAB_MEMORY_MB", v)?;
        }
        if let Some(v) = get("CDPILOT_SESSION_IDLE_TIMEOUT_S") {
            self.session.idle_timeout_s = number("CDPILOT_SESSION_IDLE_TIMEOUT_S", v)?;
        }
        if let Some(v) = get("CDPILOT_OUTPUT_CONTENT_MARKERS") {
            self.output.content_markers = match v.trim() {
                "true" => true,
                "false" => false,
                _ => {
                    return Err(format!(
                        "$CDPILOT_OUTPUT_CONTENT_MARKERS = {v:?}: allowed is true or false"
                    ))
                }
            };
        }
        if let Some(v) = get("CDPILOT_HANDOFF_AUTO") {
            self.handoff.auto = match v.trim() {
                "true" => true,
                "false" => false,
                _ => return Err(format!("$CDPILOT_HANDOFF_AUTO = {v:?}: allowed is true or false")),
            };
        }
        if let Some(v) = get("CDPILOT_HANDOFF_TIMEOUT_S") {
            self.handoff.timeout_s = number("CDPILOT_HANDOFF_TIMEOUT_S", v)?;
        }
        if let Some(v) = get("CDPILOT_SERVE_LISTEN") {
            self.serve.listen = v;
        }
        if let Some(v) = get("CDPILOT_SERVE_TOKEN") {
            self.serve.token = v;
        }
        if let Some(v) = get("CDPILOT_SERVE_MAX_SESSIONS") {
            self.serve.max_sessions = number("CDPILOT_SERVE_MAX_SESSIONS", v)? as usize;
        }
        if let Some(v) = get("CDPILOT_SERVE_ALLOWED_ORIGINS") {
            self.serve.allowed_origins = list(v);
        }
        if let Some(v) = get("CDPILOT_FILES_UPLOAD_ROOTS") {
            self.files.upload_roots = list(v);
        }
        if let Some(v) = get("CDPILOT_FILES_OUTPUT_DIR") {
            self.files.output_dir = v;
        }
        self.check()
    }

    /// Value checks that serde's types cannot express, on this table alone.
    /// The checks that need the modules a key configures (compiling the URL
    /// rules, the tool groups' names, the Grid's settings, the egress gate's
    /// proxy settings, reading `browser.storage_state`) are the engine's
    /// start-up check (`crate::startup::check`, run by `Engine::start`).
    pub fn check(&self) -> Result<(), String> {
        one_of("dialogs.bridge", &self.dialogs.bridge, &["off", "on"])?;
        // Enforced by `validate::urls` for every URL a tool opens. Only http
        // and https may be listed: `javascript:`, `data:`, `file:`, `chrome:`
        // and `view-source:` run code or read local state, never load a page.
        for scheme in &self.policy.schemes {
            one_of("policy.schemes", scheme, &["http", "https"])?;
        }
        for (key, value) in [
            ("limits.timeout_ms", self.limits.timeout_ms),
            ("limits.evaluate_timeout_ms", self.limits.evaluate_timeout_ms),
            ("limits.wait_timeout_ms", self.limits.wait_timeout_ms),
        ] {
            if value == 0 || value > 600_000 {
                return Err(format!("{key} = {value}: allowed is 1 to 600000 (ms)"));
            }
        }
        if self.limits.snapshot_max_elements == 0 {
            return Err("limits.snapshot_max_elements = 0: allowed is 1 or more".into());
        }
        if !self.browser.cdp_url.is_empty()
            && !["ws://", "wss://", "http://"]
                .iter()
                .any(|p| self.browser.cdp_url.starts_with(p))
        {
            return Err(format!(
                "browser.cdp_url = {:?}: allowed is ws://…, wss://… or http://host:port",
                self.browser.cdp_url
            ));
        }
        for endpoint in &self.browser.endpoints {
            if !["ws://", "wss://", "http://", "https://"]
                .iter()
                .any(|p| endpoint.starts_with(p))
            {
                return Err(format!(
                    "browser.endpoints: {endpoint:?}: allowed is ws://…, wss://…, http://host:port or https://host:port"
                ));
            }
        }
        if !self.browser.endpoints.is_empty() && !self.browser.cdp_url.is_empty() {
            return Err("browser.endpoints and browser.cdp_url are both set: use one".into());
        }
        if self.serve.listen.parse::<std::net::SocketAddr>().is_err() {
            return Err(format!(
                "serve.listen = {:?}: allowed is an IP address and port, e.g. \"127.0.0.1:8931\"",
                self.serve.listen
            ));
        }
        if self.serve.max_sessions == 0 {
            return Err("serve.max_sessions = 0: allowed is 1 or more".into());
        }
        Ok(())
    }
}

/// An environment variable holding a table, as a JSON object.
fn json_table(name: &str, value: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    match serde_json::from_str(value) {
        Ok(serde_json::Value::Object(table)) => Ok(table),
        _ => Err(format!(
            "${name} = {value:?}: allowed is a JSON object, e.g. {{\"platformName\": \"linux\"}}"
        )),
    }
}

pub(crate) fn one_of(key: &str, value: &str, allowed: &[&str]) -> Result<(), String> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(format!("{key} = {value:?}: allowed is {}", allowed.join(" | ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_spec() {
        let c = Config::parse("").unwrap();
        assert!(c.browser.headless);
        assert_eq!(c.dialogs.policy.name(), "must_respond");
        assert_eq!(c.limits.timeout_ms, 25_000);
        assert_eq!(c.limits.snapshot_max_elements, 2000);
    }

    #[test]
    fn unknown_keys_and_bad_values_are_named() {
        let e = Config::parse("[browser]\nheadles = false\n").unwrap_err();
        assert!(e.contains("headles"), "{e}");
        let e = Config::parse("[dialogs]\npolicy = \"ignore\"\n").unwrap_err();
        assert!(
            e.contains("dialogs.policy") && e.contains("ignore") && e.contains("must_respond"),
            "{e}"
        );
        let e = Config::parse("[limits]\ntimeout_ms = 0\n").unwrap_err();
        assert!(e.contains("limits.timeout_ms"), "{e}");
    }

    #[test]
    fn files_and_endpoints_are_read_and_checked() {
        let c = Config::parse("").unwrap();
        assert_eq!(c.files.output_dir(), PathBuf::from("cdpilot-output"));
        assert!(
            c.files.upload_roots().is_empty(),
            "no upload root unless configured"
        );
        let c = Config::parse(
            "[files]\noutput_dir = \"/tmp/out\"\nupload_roots = [\"/srv/up\"]\n[browser]\nendpoints = [\"ws://a:1/x\", \"http://b:9222\"]\n",
        )
        .unwrap();
        assert_eq!(c.files.output_dir(), PathBuf::from("/tmp/out"));
        assert_eq!(c.browser.endpoints.len(), 2);
        let e = Config::parse("[browser]\nendpoints = [\"ftp://a\"]\n").unwrap_err();
        assert!(e.contains("browser.endpoints") && e.contains("ftp://a"), "{e}");
    }

    #[test]
    fn tools_cdp_is_off_by_default_fenced_when_true_and_unrestricted_by_name() {
        assert_eq!(Config::parse("").unwrap().tools.cdp, CdpAccess::Off);
        for (text, want) in [
            ("false", CdpAccess::Off),
            ("true", CdpAccess::Fenced),
            ("\"unrestricted\"", CdpAccess::Unrestricted),
        ] {
            let c = Config::parse(&format!("[tools]\ncdp = {text}\n")).unwrap();
            assert_eq!(c.tools.cdp, want, "{text}");
        }
        let e = Config::parse("[tools]\ncdp = \"all\"\n").unwrap_err();
        assert!(e.contains("cdp") && e.contains("unrestricted"), "{e}");
        let mut c = Config::parse("").unwrap();
        c.apply_env(|n| (n == "CDPILOT_TOOLS_CDP").then(|| "true".to_owned()))
            .unwrap();
        assert_eq!(c.tools.cdp, CdpAccess::Fenced);
    }

    #[test]
    fn the_environment_overrides_the_file_for_v2_keys() {
        let mut c =
            Config::parse("[files]\noutput_dir = \"from-file\"\n[session]\nidle_timeout_s = 5\n").unwrap();
        let env = |name: &str| match name {
            "CDPILOT_FILES_OUTPUT_DIR" => Some("/tmp/from-env".to_owned()),
            "CDPILOT_TOOLS_CAPS" => Some("pdf, network".to_owned()),
            "CDPILOT_SESSION_IDLE_TIMEOUT_S" => Some("".to_owned()),
            _ => None,
        };
        c.apply_env(env).unwrap();
        assert_eq!(c.files.output_dir(), PathBuf::from("/tmp/from-env"));
        assert_eq!(c.tools.caps, ["pdf", "network"]);
        assert_eq!(c.session.idle_timeout_s, 5, "an empty variable is unset");
        let e = c
            .apply_env(|n| (n == "CDPILOT_SERVE_MAX_SESSIONS").then(|| "many".to_owned()))
            .unwrap_err();
        assert!(
            e.contains("CDPILOT_SERVE_MAX_SESSIONS") && e.contains("many"),
            "{e}"
        );
    }

    #[test]
    fn an_audit_file_is_accepted() {
        let c = Config::parse("[audit]\nfile = \"audit.jsonl\"\n").unwrap();
        assert_eq!(c.audit.file, "audit.jsonl");
    }

    #[test]
    fn content_markers_are_on_unless_turned_off_and_a_bad_value_names_the_key() {
        assert!(Config::default().output.content_markers);
        assert!(
            !Config::parse("[output]\ncontent_markers = false\n")
                .unwrap()
                .output
                .content_markers
        );
        let e = Config::parse("[output]\ncontent_markers = \"no\"\n").unwrap_err();
        assert!(e.contains("content_markers"), "{e}");
        let e = Config::parse("[output]\nmarkers = false\n").unwrap_err();
        assert!(e.contains("markers"), "{e}");
        let mut c = Config::default();
        c.apply_env(|n| (n == "CDPILOT_OUTPUT_CONTENT_MARKERS").then(|| "false".to_owned()))
            .unwrap();
        assert!(!c.output.content_markers);
        let e = c
            .apply_env(|n| (n == "CDPILOT_OUTPUT_CONTENT_MARKERS").then(|| "off".to_owned()))
            .unwrap_err();
        assert!(e.contains("CONTENT_MARKERS"), "{e}");
    }
}
