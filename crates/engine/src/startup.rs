//! The engine's start-up check: what a configuration says that only the
//! modules it configures can judge (compiling the URL rules, the tool
//! groups' names, the Grid's settings, the egress gate's proxy settings, a
//! `browser.storage_state` file). It sits above all of them so that
//! `config` needs none of them; `Engine::start` runs it first, and every
//! error names the key (`policy.rules[1]: …`).

use crate::config::{one_of, Config};

/// Checks `config` as a whole: its own value checks, then the ones that
/// need the modules it configures.
pub fn check(config: &Config) -> Result<(), String> {
    config.check()?;
    // Compiling the rules is the check: a bad pattern or action names
    // the rule (`policy.rules[2]`) and the problem.
    crate::policy::Policy::from_config(&config.policy)?;
    let groups: Vec<&str> = crate::tools::Group::ALL
        .iter()
        .map(|g| g.name())
        // The page group has its own switch ([tools] page_tools).
        .filter(|g| !matches!(*g, "core" | "page"))
        .chain(["all"])
        .collect();
    for cap in &config.tools.caps {
        one_of("tools.caps", cap, &groups)?;
    }
    crate::config::check_adopt_tabs(&config.browser)?;
    crate::browser::grid::check(&config.browser)?;
    crate::browser::extension::check(&config.browser)?;
    crate::egress::check_config(config)?;
    if !config.browser.storage_state.is_empty() {
        // Every new session loads it: a file that is not a saved state
        // is a start-up error, not a failure of every later call.
        crate::session::storage_state::read(std::path::Path::new(&config.browser.storage_state))
            .map_err(|e| format!("browser.storage_state: {}", e.message))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_and_check(text: &str) -> Result<Config, String> {
        let config = Config::parse(text)?;
        check(&config)?;
        Ok(config)
    }

    #[test]
    fn a_storage_state_that_cannot_be_read_is_named() {
        let e = parse_and_check("[browser]\nstorage_state = \"/nonexistent/state.json\"\n").unwrap_err();
        assert!(
            e.contains("browser.storage_state") && e.contains("cannot read"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_tool_group_is_named() {
        let mut c = Config::parse("").unwrap();
        c.apply_env(|n| (n == "CDPILOT_TOOLS_CAPS").then(|| "pfd".to_owned()))
            .unwrap();
        let e = check(&c).unwrap_err();
        assert!(e.contains("tools.caps") && e.contains("pfd"), "{e}");
    }

    #[test]
    fn url_rules_are_accepted_and_a_bad_one_is_named() {
        let c = parse_and_check(
            "[policy]\ndefault = \"deny\"\n[[policy.rules]]\npattern = \"https://{*.}?x.example/*\"\naction = \"allow\"\n",
        )
        .unwrap();
        assert_eq!(c.policy.rules.len(), 1);
        let e = parse_and_check(
            "[[policy.rules]]\npattern = \"https://x.example/*\"\naction = \"allow\"\n[[policy.rules]]\npattern = \"https://(x/*\"\naction = \"deny\"\n",
        )
        .unwrap_err();
        assert!(e.starts_with("policy.rules[1]: pattern"), "{e}");
        let e = parse_and_check("[[policy.rules]]\npattern = \"https://x.example/*\"\naction = \"block\"\n")
            .unwrap_err();
        assert!(e.contains("policy.rules[0]") && e.contains("block"), "{e}");
        let e = parse_and_check("[[policy.rules]]\npattern = \"https://x.example/*\"\nactoin = \"deny\"\n")
            .unwrap_err();
        assert!(e.contains("actoin"), "{e}");
    }
}
