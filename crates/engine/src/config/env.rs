//! The environment laid over the file: `CDPILOT_<SECTION>_<KEY>` for every
//! v2 key (CONFIG.md).

use super::{CdpAccess, Config, PageToolsMode};

impl Config {
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
            self.browser.source = v
                .parse()
                .map_err(|e: String| format!("$CDPILOT_BROWSER_SOURCE: {e}"))?;
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
        if let Some(v) = get("CDPILOT_TOOLS_PAGE_TOOLS") {
            self.tools.page_tools = PageToolsMode::parse(&v).ok_or_else(|| {
                format!("$CDPILOT_TOOLS_PAGE_TOOLS = {v:?}: allowed is false, true or expose")
            })?;
        }
        if let Some(v) = get("CDPILOT_POLICY_PAGE_TOOLS_ASK") {
            self.policy.page_tools_ask = match v.trim() {
                "true" | "1" => true,
                "false" | "0" => false,
                _ => {
                    return Err(format!(
                        "$CDPILOT_POLICY_PAGE_TOOLS_ASK = {v:?}: allowed is true | false"
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
        if let Some(v) = get("CDPILOT_BROWSER_ADOPT_TABS") {
            self.browser.adopt_tabs = match v.trim() {
                "true" | "1" => true,
                "false" | "0" => false,
                _ => {
                    return Err(format!(
                        "$CDPILOT_BROWSER_ADOPT_TABS = {v:?}: allowed is true | false"
                    ))
                }
            };
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
        if let Some(v) = get("CDPILOT_SERVE_BROWSER_IDLE_RESTART_S") {
            self.serve.browser_idle_restart_s = number("CDPILOT_SERVE_BROWSER_IDLE_RESTART_S", v)?;
        }
        if let Some(v) = get("CDPILOT_FILES_UPLOAD_ROOTS") {
            self.files.upload_roots = list(v);
        }
        if let Some(v) = get("CDPILOT_FILES_OUTPUT_DIR") {
            self.files.output_dir = v;
        }
        // `CDPILOT_TRACE=DIR` is the short spelling.
        if let Some(v) = get("CDPILOT_TRACE_DIR").or_else(|| get("CDPILOT_TRACE")) {
            self.trace.dir = v;
        }
        if let Some(v) = get("CDPILOT_TRACE_MAX_MB") {
            self.trace.max_mb = number("CDPILOT_TRACE_MAX_MB", v)?;
        }
        self.check()
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
