//! cdpilot's configuration file (`docs/src/spec/config.md`): keys, defaults,
//! and the checks that make a bad file a clear start-up error.
//!
//! Unknown keys are errors naming the key and the file. Settings of features
//! this build does not enforce yet are refused rather than silently ignored:
//! a URL rule that is accepted but not applied would be worse than none.

/// A closed set of names in the configuration as an enum, its names in
/// one list: `NAMED` (name, value), `name()`, `FromStr` (the error names
/// the key and every allowed name) and `Deserialize` from the name.
macro_rules! closed_set {
    (
        $(#[$meta:meta])*
        $key:literal => pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $word:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every value with its name in the file, on the command line
            /// and in the environment: the one list of names.
            pub const NAMED: &'static [(&'static str, $name)] = &[$(($word, $name::$variant)),+];

            /// Its name in the configuration.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $word,)+
                }
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;

            /// A value by name; the error names the key and the allowed names.
            fn from_str(word: &str) -> Result<$name, String> {
                Self::NAMED
                    .iter()
                    .find(|(n, _)| *n == word)
                    .map(|(_, v)| *v)
                    .ok_or_else(|| {
                        let names: Vec<&str> = Self::NAMED.iter().map(|(n, _)| *n).collect();
                        format!("{} = {word:?}: allowed is {}", $key, names.join(" | "))
                    })
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

mod browser;
mod env;
mod files;
mod limits;
mod policy;

use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use browser::{check_adopt_tabs, Bridge, BrowserConfig, DialogConfig, DialogPolicy, Source};
pub use files::{AuditConfig, FilesConfig, OutputConfig, TraceConfig};
pub use limits::{HandoffConfig, Limits, ServeConfig, SessionConfig};
pub use policy::{CdpAccess, PageToolsMode, PolicyConfig, Rule, ToolsConfig};

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
    /// `[trace]`: a trace of every session.
    pub trace: TraceConfig,
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

    /// Value checks that serde's types cannot express, on this table alone.
    /// The checks that need the modules a key configures (compiling the URL
    /// rules, the tool groups' names, the Grid's settings, the egress gate's
    /// proxy settings, reading `browser.storage_state`) are the engine's
    /// start-up check (`crate::startup::check`, run by `Engine::start`).
    pub fn check(&self) -> Result<(), String> {
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
        if self.trace.max_mb == 0 {
            return Err("trace.max_mb = 0: allowed is 1 or more (leave dir empty to trace nothing)".into());
        }
        for origin in &self.policy.page_tools_trust_claims {
            let parsed = url::Url::parse(origin).ok().filter(|u| {
                matches!(u.scheme(), "http" | "https")
                    && u.path() == "/"
                    && u.query().is_none()
                    && u.username().is_empty()
            });
            if parsed.is_none() {
                return Err(format!(
                    "policy.page_tools_trust_claims: {origin:?}: allowed is an origin, e.g. \"https://shop.example\""
                ));
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

    /// Issue 45: adopting the browser's tabs is for a browser cdpilot
    /// attaches to; anywhere else it is a start-up error naming the key.
    #[test]
    fn adopt_tabs_needs_an_attached_browser() {
        let check = |text: &str| browser::check_adopt_tabs(&Config::parse(text).unwrap().browser);
        assert!(!Config::parse("").unwrap().browser.adopt_tabs);
        let e = check("[browser]\nadopt_tabs = true\n").unwrap_err();
        assert!(
            e.contains("browser.adopt_tabs") && e.contains("cdp_url") && e.contains("launches"),
            "{e}"
        );
        let e = check("[browser]\nadopt_tabs = true\nsource = \"auto_connect\"\n").unwrap_err();
        assert!(e.contains("auto_connect"), "{e}");
        check("[browser]\nadopt_tabs = true\ncdp_url = \"http://127.0.0.1:9222\"\n").unwrap();
        check("[browser]\nadopt_tabs = true\nendpoints = [\"ws://127.0.0.1:9222/devtools/browser/x\"]\n")
            .unwrap();
    }

    #[test]
    fn traces_are_off_by_default_and_turned_on_by_file_or_environment() {
        let c = Config::parse("").unwrap();
        assert_eq!(
            (c.trace.dir.as_str(), c.trace.max_mb, c.trace.screenshots),
            ("", 100, true)
        );
        assert!(!c.trace.video);
        let c =
            Config::parse("[trace]\ndir = \"/t\"\nmax_mb = 5\nscreenshots = false\nvideo = true\n").unwrap();
        assert_eq!(
            (
                c.trace.dir.as_str(),
                c.trace.max_bytes(),
                c.trace.screenshots,
                c.trace.video
            ),
            ("/t", 5 << 20, false, true)
        );
        let e = Config::parse("[trace]\nmax_mb = 0\n").unwrap_err();
        assert!(e.contains("trace.max_mb = 0"), "{e}");
        let mut c = Config::parse("").unwrap();
        c.apply_env(|n| (n == "CDPILOT_TRACE").then(|| "/env".to_owned()))
            .unwrap();
        assert_eq!(c.trace.dir, "/env");
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
    fn the_idle_browser_closes_after_60_s_unless_the_file_or_the_environment_says_otherwise() {
        assert_eq!(Config::default().serve.browser_idle_restart_s, 60);
        let mut c = Config::parse("[serve]\nbrowser_idle_restart_s = 0\n").unwrap();
        assert_eq!(c.serve.browser_idle_restart_s, 0);
        c.apply_env(|n| (n == "CDPILOT_SERVE_BROWSER_IDLE_RESTART_S").then(|| "300".to_owned()))
            .unwrap();
        assert_eq!(c.serve.browser_idle_restart_s, 300);
        let e = Config::parse("[serve]\nbrowser_idle_restart_s = -1\n").unwrap_err();
        assert!(e.contains("browser_idle_restart_s"), "{e}");
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
