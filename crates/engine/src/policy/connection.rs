//! The URL rules as the egress gate (`crate::egress`) applies them to a
//! connection, which has a host and a port and nothing else: no scheme it
//! can trust (Chromium tunnels `https`, `wss` and `ws` alike through
//! `CONNECT`), no path.
//!
//! Owns the rules' connection-level reading, compiled once. A rule whose
//! path is `*` (and that names no search or hash) is **host-level**: it
//! decides the connection. A **path-level** rule (`https://x.example/admin/*`)
//! cannot be judged here: its deny is left to the request stage, and its
//! allow keeps the host reachable, so the request stage can judge the
//! paths. An `ask` is decided here as `ask`: the gate lets it through only
//! for an origin the user granted (issue 34, finding 4: a WebSocket never
//! reaches the request stage where it would be asked).
//!
//! A connection is refused when a host-level deny matches the host and
//! port under any scheme (`http`, `https`, `ws`, `wss`), the host judged in
//! canonical form and, on the local host, as each of its spellings
//! ([`super::canonical::LOCAL_HOST`]). Otherwise, reading the rules that
//! allow or ask from the last: a path-level allow lets it through (some
//! path is allowed; the request stage judges which), the first host-level
//! rule decides (`allow` or `ask`), a path-level ask is passed over (it
//! covers only its paths); with none of those, `policy.default` decides,
//! except that a default deny over a path-level ask is `ask`. The
//! addresses a name resolves to are judged by the host-level denies alone
//! (a deny on `127.0.0.1:8080` also refuses `localhost:8080`), and so are
//! the addresses of the names the host-level denies write
//! ([`ConnectionRules::denied_names`]: the gate resolves them).

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
        let mut path_ask = None;
        for rule in self
            .rules
            .iter()
            .rev()
            .filter(|r| r.decision() != Decision::Deny)
            .filter(matching)
        {
            match (rule.decision(), rule.host_level()) {
                (Decision::Ask, false) => path_ask = path_ask.or(Some(rule)),
                (decision, _) => return verdict(decision, &rule.label),
            }
        }
        match (self.default, path_ask) {
            (Decision::Deny, Some(ask)) => verdict(Decision::Ask, &ask.label),
            (default, _) => verdict(default, &self.default_label),
        }
    }

    /// The names the host-level denies write literally (`bank.example` in
    /// `https://{*.}?bank.example/*`; not an address, not the local host,
    /// not a wildcard), each once: the gate resolves them and refuses their
    /// addresses at the ports the deny covers (issue 34, finding 3).
    pub fn denied_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for rule in self
            .rules
            .iter()
            .filter(|r| r.host_level() && r.decision() == Decision::Deny)
        {
            let pattern = rule.pattern().hostname();
            let bare = pattern
                .strip_prefix("{*.}?")
                .or_else(|| pattern.strip_prefix("*."))
                .unwrap_or(pattern);
            if bare.is_empty() || bare.contains(|c: char| "*?+(){}:[]\\".contains(c)) {
                continue;
            }
            let Some(name) = super::canonical::host(bare) else {
                continue;
            };
            if name.parse::<IpAddr>().is_ok() || super::canonical::is_local_host(&name) {
                continue;
            }
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    /// The host-level deny that refuses the address `ip` at `port`, if any.
    pub fn denies_address(&self, ip: IpAddr, port: u16) -> Option<&str> {
        self.denies_host(&ip.to_string(), port)
    }

    /// The host-level deny that refuses `host` (a name or an address) at
    /// `port`, if any.
    pub fn denies_host(&self, host: &str, port: u16) -> Option<&str> {
        let urls = urls(host, port);
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

/// `host:port` under every scheme, the host in canonical form and, on the
/// local host, in each of its spellings.
fn urls(host: &str, port: u16) -> Vec<url::Url> {
    let host = canonical_host(host);
    let mut hosts = vec![host.clone()];
    if super::canonical::is_local_host(&host) {
        hosts.extend(
            super::canonical::LOCAL_HOST
                .iter()
                .filter(|s| **s != host)
                .map(|s| s.to_string()),
        );
    }
    hosts
        .iter()
        .flat_map(|host| {
            SCHEMES
                .iter()
                .filter_map(move |scheme| url::Url::parse(&format!("{scheme}://{host}:{port}/")).ok())
        })
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
        // Issue 34: every 127/8 address is the local host.
        assert!(r.denies_address("127.0.0.2".parse().unwrap(), 8080).is_some());
        assert!(r.denies_address("10.0.0.2".parse().unwrap(), 8080).is_none());
    }

    /// Issue 34, finding 3: every spelling of the local host is judged
    /// as each of them, so a deny written for `127.0.0.1` or `localhost`
    /// refuses `0.0.0.0`, `[::]`, `[::1]` and the mapped forms too; an
    /// allow written for one lets the others through.
    #[test]
    fn the_local_host_is_one_host_whatever_its_spelling() {
        for denied in ["http://127.0.0.1:8080/*", "http://localhost:8080/*"] {
            let r = rules("allow", &[("deny", denied)]);
            for host in [
                "0.0.0.0",
                "0",
                "0x0",
                "0.0.0.0.",
                "[::]",
                "::",
                "[::1]",
                "[::ffff:127.0.0.1]",
                "[::ffff:7f00:1]",
                "[::ffff:0.0.0.0]",
                "2130706433",
                "0177.0.0.1",
                "127.0.0.2",
                "localhost",
                "a.localhost",
                "127.0.0.1",
            ] {
                assert_eq!(r.judge(host, 8080).decision, Decision::Deny, "{denied}: {host}");
            }
            assert_eq!(r.judge("0.0.0.0", 8081).decision, Decision::Allow);
            assert_eq!(r.judge("10.0.0.1", 8080).decision, Decision::Allow);
            assert!(r.denies_address("::".parse().unwrap(), 8080).is_some());
            assert!(r.denies_address("::1".parse().unwrap(), 8080).is_some());
        }
        let r = rules("deny", &[("allow", "http://127.0.0.1:*/*")]);
        assert_eq!(r.judge("localhost", 9).decision, Decision::Allow);
        assert_eq!(r.judge("[::1]", 9).decision, Decision::Allow);
        assert_eq!(r.judge("10.0.0.1", 9).decision, Decision::Deny);
    }

    /// Issue 34, finding 4: an `ask` host is `ask` at the gate (let through
    /// only where the user granted it), a path-level ask leaves the rest of
    /// its host to the default, and a later allow of a path keeps the
    /// host reachable.
    #[test]
    fn an_ask_is_decided_as_ask_at_the_connection_level() {
        let r = rules("allow", &[("ask", "http://127.0.0.1:8080/*")]);
        assert_eq!(r.judge("127.0.0.1", 8080).decision, Decision::Ask);
        assert_eq!(r.judge("[::]", 8080).decision, Decision::Ask);
        assert_eq!(rules("ask", &[]).judge("x.example", 443).decision, Decision::Ask);
        let r = rules("allow", &[("ask", "https://x.example/admin/*")]);
        assert_eq!(r.judge("x.example", 443).decision, Decision::Allow);
        let r = rules("deny", &[("ask", "https://x.example/admin/*")]);
        assert_eq!(r.judge("x.example", 443).decision, Decision::Ask);
        let r = rules(
            "deny",
            &[
                ("ask", "https://x.example/*"),
                ("allow", "https://x.example/public/*"),
            ],
        );
        assert_eq!(r.judge("x.example", 443).decision, Decision::Allow);
        let r = rules(
            "deny",
            &[("allow", "https://x.example/*"), ("ask", "https://x.example/*")],
        );
        assert_eq!(r.judge("x.example", 443).decision, Decision::Ask);
    }

    #[test]
    fn the_names_host_level_denies_write_are_listed_for_resolving() {
        let r = rules(
            "allow",
            &[
                ("deny", "https://{*.}?Bank.Example./*"),
                ("deny", "http://vm:8080/*"),
                ("deny", "http://127.0.0.1:8080/*"),
                ("deny", "http://localhost:9/*"),
                ("deny", "https://*.wild-*.example/*"),
                ("deny", "https://path.example/secret/*"),
                ("allow", "https://allowed.example/*"),
                ("deny", "http://vm:9090/*"),
            ],
        );
        assert_eq!(r.denied_names(), ["bank.example", "vm"]);
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
