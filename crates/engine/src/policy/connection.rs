//! The URL rules as the egress gate (`crate::egress`) applies them to a
//! connection, which has a host and a port and nothing else: no scheme it
//! can trust (Chromium tunnels `https`, `wss` and `ws` alike through
//! `CONNECT`), no path.
//!
//! Owns the rules' connection-level reading, compiled once. A rule whose
//! path is `*` (and that names no search or hash) is **host-level**: it
//! decides the connection. A **path-level** rule (`https://x.example/admin/*`)
//! cannot be judged here: its deny is left to the request stage, and its
//! allow (or ask) keeps the host reachable, so the request stage can judge
//! the paths. `ask` is asked at the request stage, where a person can be
//! asked about a document; here it lets the connection through.
//!
//! A connection is refused when a host-level deny matches the host and
//! port under any scheme (`http`, `https`, `ws`, `wss`); otherwise it
//! passes when any rule that allows or asks matches, else by
//! `policy.default`. The addresses a name resolves to are judged by the
//! host-level denies alone (a deny on `127.0.0.1:8080` also refuses
//! `localhost:8080`).

use std::net::IpAddr;

use urlpattern::{UrlPattern, UrlPatternMatchInput};

use std::sync::Arc;

use super::{Decision, Policy, Rule, Verdict};

/// The schemes a connection to a host and port may carry.
const SCHEMES: [&str; 4] = ["http", "https", "ws", "wss"];

/// The rules of a [`Policy`], read at the connection level.
pub struct ConnectionRules {
    rules: Vec<ConnectionRule>,
    default: Decision,
    default_label: String,
}

struct ConnectionRule {
    /// The rule, shared with the policy it came from: its host pattern
    /// (path, search and hash widened to `*`) and whether it is host-level
    /// (its deny refuses the host).
    rule: Arc<Rule>,
    /// How a verdict names it (`policy.rules[2] (deny "…")`).
    label: String,
}

impl ConnectionRule {
    fn host_level(&self) -> bool {
        self.rule.host_level
    }
    fn decision(&self) -> Decision {
        self.rule.decision
    }
    fn pattern(&self) -> &UrlPattern {
        self.rule.host_pattern()
    }
}

impl Policy {
    /// The rules read at the connection level (see the module's doc).
    pub fn connection_rules(&self) -> ConnectionRules {
        let rules = self
            .rules
            .iter()
            .map(|rule| ConnectionRule {
                rule: rule.clone(),
                label: rule.to_string(),
            })
            .collect();
        ConnectionRules {
            rules,
            default: self.default,
            default_label: self.default_label.clone(),
        }
    }
}

/// The rule's pattern with path, search and hash as `*`, and whether it was
/// host-level as written. `None` for a rule that does not compile (the
/// configuration check refuses those first).
impl ConnectionRules {
    /// Judges a connection to `host` (a name or an IP literal, as the
    /// browser sent it) and `port`. The verdict's URL is `host:port`.
    pub fn judge(&self, host: &str, port: u16) -> Verdict {
        let urls = urls(host, port);
        let verdict = |decision, rule: &str| Verdict {
            url: format!("{}:{port}", canonical_host(host)),
            decision,
            rule: rule.to_owned(),
        };
        let matching = |rule: &&ConnectionRule| urls.iter().any(|u| matches(rule.pattern(), u));
        if let Some(deny) = self
            .rules
            .iter()
            .filter(|r| r.host_level() && r.decision() == Decision::Deny)
            .find(matching)
        {
            return verdict(Decision::Deny, &deny.label);
        }
        if let Some(pass) = self
            .rules
            .iter()
            .rev()
            .filter(|r| r.decision() != Decision::Deny)
            .find(matching)
        {
            return verdict(Decision::Allow, &pass.label);
        }
        match self.default {
            Decision::Deny => verdict(Decision::Deny, &self.default_label),
            _ => verdict(Decision::Allow, &self.default_label),
        }
    }

    /// The host-level deny that refuses the address `ip` at `port`, if any.
    pub fn denies_address(&self, ip: IpAddr, port: u16) -> Option<&str> {
        let urls = urls(&ip.to_string(), port);
        self.rules
            .iter()
            .filter(|r| r.host_level() && r.decision() == Decision::Deny)
            .find(|r| urls.iter().any(|u| matches(r.pattern(), u)))
            .map(|r| r.label.as_str())
    }
}

/// A connection target's host in canonical form ([`super::canonical::host`]:
/// lowercase, no trailing dot, IPv4 dotted, IPv6 in brackets); a target that
/// is no host at all is only lowercased, and matches no rule but the default.
pub fn canonical_host(host: &str) -> String {
    super::canonical::host(host).unwrap_or_else(|| host.to_ascii_lowercase())
}

fn urls(host: &str, port: u16) -> Vec<url::Url> {
    let host = canonical_host(host);
    SCHEMES
        .iter()
        .filter_map(|scheme| url::Url::parse(&format!("{scheme}://{host}:{port}/")).ok())
        .collect()
}

fn matches(pattern: &UrlPattern, url: &url::Url) -> bool {
    pattern
        .test(UrlPatternMatchInput::Url(url.clone()))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(default: &str, rules: &[(&str, &str)]) -> ConnectionRules {
        crate::policy::tests::policy(default, rules).connection_rules()
    }

    #[test]
    fn a_host_level_deny_refuses_the_host_under_any_scheme() {
        let r = rules("allow", &[("deny", "http://127.0.0.1:8080/*")]);
        let v = r.judge("127.0.0.1", 8080);
        assert_eq!(v.decision, Decision::Deny);
        assert_eq!(v.url, "127.0.0.1:8080");
        assert!(v.rule.starts_with("policy.rules[0]"), "{}", v.rule);
        assert_eq!(r.judge("127.0.0.1", 8081).decision, Decision::Allow);
        let r = rules("allow", &[("deny", "https://{*.}?bank.example/*")]);
        assert_eq!(r.judge("bank.example", 443).decision, Decision::Deny);
        assert_eq!(r.judge("WWW.Bank.Example.", 443).decision, Decision::Deny);
        assert_eq!(r.judge("notbank.example", 443).decision, Decision::Allow);
    }

    #[test]
    fn a_path_level_deny_is_left_to_the_request_stage() {
        let r = rules("allow", &[("deny", "http://127.0.0.1:8080/secret/*")]);
        assert_eq!(r.judge("127.0.0.1", 8080).decision, Decision::Allow);
    }

    #[test]
    fn a_path_level_allow_keeps_its_host_reachable_under_a_default_deny() {
        let r = rules("deny", &[("allow", "https://docs.example/api/*")]);
        assert_eq!(r.judge("docs.example", 443).decision, Decision::Allow);
        let v = r.judge("elsewhere.example", 443);
        assert_eq!(v.decision, Decision::Deny);
        assert_eq!(v.rule, "policy.default = \"deny\"");
    }

    #[test]
    fn a_host_level_deny_wins_over_an_allow() {
        let r = rules(
            "allow",
            &[
                ("deny", "https://x.example/*"),
                ("allow", "https://x.example/ok/*"),
            ],
        );
        assert_eq!(r.judge("x.example", 443).decision, Decision::Deny);
    }

    #[test]
    fn addresses_are_judged_by_host_level_denies_only() {
        let r = rules("deny", &[("deny", "http://127.0.0.1:8080/*")]);
        assert!(r.denies_address("127.0.0.1".parse().unwrap(), 8080).is_some());
        assert!(r
            .denies_address("::ffff:127.0.0.1".parse().unwrap(), 8080)
            .is_some());
        assert!(r.denies_address("127.0.0.2".parse().unwrap(), 8080).is_none());
    }

    #[test]
    fn host_spellings_are_judged_in_canonical_form() {
        let r = rules(
            "allow",
            &[
                ("deny", "http://127.0.0.1:8080/*"),
                ("deny", "http://localhost:9/*"),
            ],
        );
        for host in ["[::ffff:127.0.0.1]", "0x7f.0.0.1", "2130706433"] {
            assert_eq!(r.judge(host, 8080).decision, Decision::Deny, "{host}");
        }
        assert_eq!(r.judge("LOCALHOST.", 9).decision, Decision::Deny);
    }
}
