//! `[policy]`: URL schemes and rules; `[tools]`: which tools are offered
//! and how much `browser_cdp` may do.

use serde::Deserialize;

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
    /// A page tool is asked about first where the client can be asked
    /// (default true; without a way to ask it is called, as any click
    /// would be). The page's `readOnlyHint` is its claim and does not skip
    /// the ask, except for the origins in `page_tools_trust_claims`.
    pub page_tools_ask: bool,
    /// Origins (`https://shop.example`) whose tools' read-only claims the
    /// user trusts: such a tool is not asked about (default none).
    pub page_tools_trust_claims: Vec<String>,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            default: "allow".into(),
            schemes: vec!["http".into(), "https".into()],
            rules: Vec::new(),
            resources: false,
            block_private_networks: false,
            page_tools_ask: true,
            page_tools_trust_claims: Vec::new(),
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
    /// Tools pages register (WebMCP): off (default), listed in the
    /// snapshot and called with `browser_page_tool` (`true`), or also each
    /// offered as an MCP tool (`"expose"`).
    pub page_tools: PageToolsMode,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig {
            evaluate: true,
            cdp: CdpAccess::Off,
            caps: Vec::new(),
            page_tools: PageToolsMode::Off,
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
        let word = bool_or_word(d)?;
        CdpAccess::parse(&word).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "tools.cdp = \"{word}\": allowed is false, true (fenced to the caller's tab) or \"unrestricted\" (stdio only)"
            ))
        })
    }
}

/// What cdpilot does with the tools pages register (`[tools] page_tools`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PageToolsMode {
    /// `false`: the WebMCP domain is not followed, the tool not offered.
    #[default]
    Off,
    /// `true`: listed in the snapshot, called with `browser_page_tool`.
    On,
    /// `"expose"`: also each offered as an MCP tool of its own.
    Expose,
}

impl PageToolsMode {
    /// `false`, `true`, `"expose"` (the configuration's words).
    pub fn parse(word: &str) -> Option<PageToolsMode> {
        match word.trim() {
            "false" => Some(PageToolsMode::Off),
            "true" => Some(PageToolsMode::On),
            "expose" => Some(PageToolsMode::Expose),
            _ => None,
        }
    }

    /// Page tools are followed (`true` or `"expose"`).
    pub fn on(self) -> bool {
        self != PageToolsMode::Off
    }
}

impl<'de> Deserialize<'de> for PageToolsMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let word = bool_or_word(d)?;
        PageToolsMode::parse(&word).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "tools.page_tools = \"{word}\": allowed is false, true (listed in the snapshot, called with browser_page_tool) or \"expose\" (also an MCP tool each)"
            ))
        })
    }
}

/// A setting written `false`, `true` or a word, read as its word (`true`
/// as `"true"`), for the setting's own `parse` (which the environment's
/// `CDPILOT_*` values go through too).
fn bool_or_word<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Word {
        Bool(bool),
        Text(String),
    }
    Ok(match Word::deserialize(d)? {
        Word::Bool(b) => b.to_string(),
        Word::Text(t) => t,
    })
}
