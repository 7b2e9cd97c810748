//! Where the browser may go: the URL rules of `[policy]` and
//! `[[policy.rules]]` (plus `--allow`/`--deny`/`--ask`), judged for every
//! document request at the request stage ([`gate`]) and for the page an
//! action is about to act on (`crate::session`).
//!
//! Owns compiling the rules and judging one URL. The judgement is pure: a
//! configured deny always wins; otherwise the last matching rule decides;
//! with none, `policy.default`. A URL is judged as written and in its
//! canonical form ([`canonical`]): a rule matching either decides, and a
//! deny matching either wins.

pub mod blocklist;
pub mod canonical;
pub mod cdp_fence;
pub mod connection;
pub mod consent;
pub mod gate;
pub mod har;
pub mod routes;
pub mod rules;
mod verdict;

use crate::config::PolicyConfig;

pub use consent::{Answer, Asker, Consent};
pub use gate::Gate;
pub use rules::{Decision, Rule};
pub use verdict::Verdict;

/// The compiled URL rules of `[policy]`.
#[derive(Debug)]
pub struct Policy {
    /// Shared with the egress gate's connection rules ([`connection`]).
    rules: Vec<std::sync::Arc<Rule>>,
    default: Decision,
    /// How a verdict by the default names it.
    default_label: String,
    /// `policy.resources`: sub-resources are judged at the request stage too.
    pub resources: bool,
    /// `[tools] page_tools`: the tabs follow the tools their pages
    /// register (the WebMCP domain), and a launched browser has the feature
    /// on. Set by whoever holds the whole configuration (the browser slot).
    pub page_tools: bool,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            rules: Vec::new(),
            default: Decision::Allow,
            default_label: "policy.default = \"allow\"".into(),
            resources: false,
            page_tools: false,
        }
    }
}

impl Policy {
    /// Compiles the configured rules; an error names the rule
    /// (`policy.rules[2]`) and what is wrong with it.
    pub fn from_config(config: &PolicyConfig) -> Result<Policy, String> {
        let default = Decision::parse(&config.default).ok_or_else(|| {
            format!(
                "policy.default = {:?}: allowed is allow | ask | deny",
                config.default
            )
        })?;
        let mut rules = Vec::with_capacity(config.rules.len());
        for (index, rule) in config.rules.iter().enumerate() {
            let place = rule
                .origin
                .clone()
                .unwrap_or_else(|| format!("policy.rules[{index}]"));
            let decision = Decision::parse(&rule.action).ok_or_else(|| {
                format!(
                    "{place}: action = {:?}: allowed is allow | ask | deny",
                    rule.action
                )
            })?;
            rules.push(std::sync::Arc::new(
                Rule::compile(&rule.pattern, decision, place.clone())
                    .map_err(|e| format!("{place}: pattern {e}"))?,
            ));
        }
        Ok(Policy {
            rules,
            default,
            default_label: format!("policy.default = {:?}", default.as_str()),
            resources: config.resources,
            page_tools: false,
        })
    }

    /// For a configuration that was never checked (library use) and whose
    /// rules do not compile: refusing every URL, naming why, is safer than
    /// running without the rules the user wrote.
    pub fn refusing_all(reason: &str) -> Policy {
        Policy {
            rules: Vec::new(),
            default: Decision::Deny,
            default_label: format!("an invalid policy ({reason})"),
            resources: false,
            page_tools: false,
        }
    }

    /// Whether any URL can be refused: with no rules and `default = allow`
    /// nothing is intercepted at all.
    pub fn restricts(&self) -> bool {
        !self.rules.is_empty() || self.default != Decision::Allow
    }

    /// The patterns of every rule that refuses (deny, and ask: nobody is
    /// asked about a worker's request) by path, search or hash, as
    /// written. Host-level ones are left out: the egress gate holds them
    /// for every connection, and reports what it refused.
    pub fn refusing_path_patterns(&self) -> Vec<String> {
        self.rules
            .iter()
            .filter(|r| r.decision != Decision::Allow && !r.host_level)
            .map(|r| r.text.clone())
            .collect()
    }

    /// The verdict on `url` when a rule that refuses by path decides it
    /// (deny, or ask) in any of its spellings ([`Policy::judge`]); `None`
    /// when it is allowed, or refused only by a host-level rule or the
    /// default (the egress gate's connection rules hold those). What the
    /// egress gate judges a plain-http request's whole URL by (issue 41,
    /// finding 4: a worker's request in a spelling Chrome's blocklist,
    /// which takes patterns as written, does not match).
    pub fn refused_by_path(&self, url: &str) -> Option<Verdict> {
        let verdict = self.judge(url);
        let by_path = self
            .rules
            .iter()
            .any(|r| !r.host_level && r.decision == verdict.decision && r.to_string() == verdict.rule);
        (!verdict.allowed() && by_path).then_some(verdict)
    }

    /// The verdict naming the rule that put `url` on a worker's blocklist
    /// ([`blocklist`]: the rules that refuse by path), for reporting a
    /// request the blocklist failed: the judgement when it refuses (a deny
    /// wins, as everywhere); otherwise (an `ask` by path a later `allow`
    /// outweighs in judging, which the blocklist still holds) the first
    /// such rule matching. `None`: no rule on the blocklist matches `url`.
    pub fn blocklisted(&self, url: &str) -> Option<Verdict> {
        let parsed = url::Url::parse(url).ok()?;
        let listed = self
            .rules
            .iter()
            .find(|r| r.decision != Decision::Allow && !r.host_level && r.matches(&parsed))?;
        let verdict = self.judge(url);
        Some(match verdict.allowed() {
            true => self.verdict(url, Some(listed)),
            false => verdict,
        })
    }

    /// Judges one URL, as written, in its canonical form
    /// ([`canonical::url`]) and, on the local host, as each of its
    /// spellings ([`canonical::local_spellings`]): a deny matching any wins;
    /// otherwise the strictest of the forms' deciding rules decides; with
    /// no rule matching any, the default. A URL that does not parse gets the
    /// default. The verdict names the URL as written.
    pub fn judge(&self, url: &str) -> Verdict {
        let Ok(parsed) = url::Url::parse(url) else {
            return self.verdict(url, None);
        };
        let raw = self.decide(&parsed);
        let canonical = canonical::url(&parsed);
        let mut others = canonical::local_spellings(&parsed);
        if canonical != parsed {
            others.push(canonical);
        }
        let decided = others
            .iter()
            .map(|u| self.decide(u))
            .fold(raw, |a, b| match (a, b) {
                (Some(a), Some(b)) => Some(if strictness(b.decision) > strictness(a.decision) {
                    b
                } else {
                    a
                }),
                (a, b) => a.or(b),
            });
        self.verdict(url, decided)
    }

    /// The rule that decides `url` as it is (a matching deny first, else
    /// the last matching rule), if any matches.
    fn decide(&self, url: &url::Url) -> Option<&Rule> {
        let mut last = None;
        for rule in self.rules.iter().map(|r| &**r).filter(|r| r.matches(url)) {
            if rule.decision == Decision::Deny {
                return Some(rule);
            }
            last = Some(rule);
        }
        last
    }

    fn verdict(&self, url: &str, rule: Option<&Rule>) -> Verdict {
        match rule {
            Some(rule) => Verdict {
                url: url.to_owned(),
                decision: rule.decision,
                rule: rule.to_string(),
            },
            None => Verdict {
                url: url.to_owned(),
                decision: self.default,
                rule: self.default_label.clone(),
            },
        }
    }
}

/// Which of two rules' decisions wins when the raw and canonical forms
/// disagree.
fn strictness(decision: Decision) -> u8 {
    match decision {
        Decision::Allow => 0,
        Decision::Ask => 1,
        Decision::Deny => 2,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::{PolicyConfig, Rule as RuleConfig};

    /// A policy of `rules` (`(action, pattern)`) over `default`.
    pub(crate) fn policy(default: &str, rules: &[(&str, &str)]) -> Policy {
        Policy::from_config(&PolicyConfig {
            default: default.into(),
            rules: rules
                .iter()
                .map(|(action, pattern)| RuleConfig {
                    pattern: pattern.to_string(),
                    action: action.to_string(),
                    origin: None,
                })
                .collect(),
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn a_configured_deny_wins_over_a_later_allow() {
        let p = policy(
            "allow",
            &[("deny", "https://x.example/*"), ("allow", "https://x.example/*")],
        );
        let v = p.judge("https://x.example/a");
        assert_eq!(v.decision, Decision::Deny);
        assert!(v.rule.starts_with("policy.rules[0]"), "{}", v.rule);
    }

    #[test]
    fn otherwise_the_last_matching_rule_decides() {
        let p = policy(
            "deny",
            &[("ask", "https://*.example/*"), ("allow", "https://a.example/*")],
        );
        assert_eq!(p.judge("https://a.example/").decision, Decision::Allow);
        assert_eq!(p.judge("https://b.example/").decision, Decision::Ask);
        let v = p.judge("https://elsewhere.net/");
        assert_eq!(v.decision, Decision::Deny);
        assert_eq!(v.rule, "policy.default = \"deny\"");
    }

    /// A URL on a worker's blocklist is named by the rule that refuses it;
    /// one no path rule refuses (a host-level deny: the egress gate's) is
    /// not on it.
    #[test]
    fn a_blocklisted_url_names_the_rule_that_listed_it() {
        let p = policy(
            "allow",
            &[
                ("deny", "http://h.test/*"),
                ("ask", "https://a.example/private/*"),
                ("deny", "https://a.example/secret/*"),
                ("allow", "https://a.example/private/open"),
            ],
        );
        let denied = p.blocklisted("https://a.example/secret/x").unwrap();
        assert_eq!(denied.decision, Decision::Deny);
        assert!(denied.rule.starts_with("policy.rules[2]"), "{}", denied.rule);
        // Judged, the later allow decides; the blocklist still holds the ask.
        let asked = p.blocklisted("https://a.example/private/open").unwrap();
        assert_eq!(asked.decision, Decision::Ask);
        assert!(asked.rule.starts_with("policy.rules[1]"), "{}", asked.rule);
        assert!(p.blocklisted("http://h.test/secret/x").is_none());
        assert!(p.blocklisted("https://a.example/open").is_none());
        assert!(p.blocklisted("not a url").is_none());
    }

    #[test]
    fn no_rules_and_allow_restricts_nothing() {
        assert!(!policy("allow", &[]).restricts());
        assert!(policy("deny", &[]).restricts());
        assert!(policy("allow", &[("deny", "https://x.example/*")]).restricts());
    }

    /// Issue 20, findings 4 and 5: a host or path spelled another way is
    /// the same server, and a deny written for one spelling holds for all.
    #[test]
    fn a_deny_holds_for_every_spelling_of_its_host_and_path() {
        let p = policy(
            "allow",
            &[
                ("deny", "http://localhost:8080/*"),
                ("deny", "http://127.0.0.1:8080/*"),
                ("deny", "http://127.0.0.1:9090/secret/*"),
            ],
        );
        for url in [
            "http://localhost.:8080/",
            "http://LOCALHOST..:8080/x",
            "http://[::ffff:127.0.0.1]:8080/",
            "http://2130706433:8080/",
            "http://0x7f.1:8080/",
            "http://127.0.0.1.:8080/",
            "http://127.0.0.1:9090//secret/x",
            "http://127.0.0.1:9090/\\secret\\x",
            "http://127.0.0.1:9090/%73ecret/x",
            "http://127.0.0.1:9090/public/../secret/x",
            "http://127.0.0.1:9090/public/%2e%2e/%73ecret/x",
        ] {
            let v = p.judge(url);
            assert_eq!(v.decision, Decision::Deny, "{url}: {v:?}");
            assert_eq!(v.url, url, "the verdict names the URL as written");
        }
        assert_eq!(
            p.judge("http://127.0.0.1:9090/public/x").decision,
            Decision::Allow
        );
        assert_eq!(
            p.judge("http://127.0.0.1:9090/%2573ecret/x").decision,
            Decision::Allow
        );
    }

    /// Issue 41, finding 4: what the egress gate refuses by a plain-http
    /// request's whole URL: a path rule's refusal in any spelling, never a
    /// host-level rule's or the default's (the connection rules hold those).
    #[test]
    fn refused_by_path_names_only_a_path_rules_refusal() {
        let p = policy(
            "deny",
            &[
                ("deny", "http://127.0.0.1:9090/secret/*"),
                ("ask", "http://127.0.0.1:9090/admin/*"),
                ("allow", "http://127.0.0.1:9090/*"),
                ("deny", "http://127.0.0.1:8080/*"),
            ],
        );
        for url in [
            "http://localhost:9090//secret/x",
            "http://127.1:9090/%73ecret/x",
            "http://[::ffff:127.0.0.1]:9090/secret/x",
        ] {
            let v = p.refused_by_path(url).expect(url);
            assert_eq!(v.decision, Decision::Deny, "{url}");
            assert!(v.rule.starts_with("policy.rules[0]"), "{url}: {v:?}");
        }
        // An ask by path, a later allow: the allow decides, as everywhere.
        assert_eq!(p.refused_by_path("http://127.0.0.1:9090/admin/x"), None);
        assert_eq!(p.refused_by_path("http://127.0.0.1:9090/open"), None);
        assert_eq!(p.refused_by_path("http://127.0.0.1:8080/secret/x"), None);
        assert_eq!(p.refused_by_path("http://elsewhere.test/x"), None);
    }

    #[test]
    fn an_allow_written_for_the_canonical_form_allows_other_spellings() {
        let p = policy("deny", &[("allow", "https://bank.example/*")]);
        assert_eq!(p.judge("https://BANK.example./x").decision, Decision::Allow);
        assert_eq!(p.judge("https://bank.example.evil/x").decision, Decision::Deny);
    }

    #[test]
    fn a_connection_is_judged_by_the_rules_for_its_whole_host() {
        let p = policy(
            "allow",
            &[
                ("deny", "http://127.0.0.1:8080/*"),
                ("deny", "http://127.0.0.1:9090/secret/*"),
                ("deny", "https://{*.}?bank.example/*"),
            ],
        );
        for (host, port) in [
            ("127.0.0.1", 8080),
            ("[::ffff:127.0.0.1]", 8080),
            ("::ffff:7f00:1", 8080),
            ("2130706433", 8080),
            ("www.BANK.example.", 443),
            ("bank.example", 443),
        ] {
            let v = p.connection_rules().judge(host, port);
            assert_eq!(v.decision, Decision::Deny, "{host}:{port}: {v:?}");
        }
        assert_eq!(
            p.connection_rules().judge("127.0.0.1", 9090).decision,
            Decision::Allow,
            "a path-level deny leaves the host open"
        );
        assert_eq!(
            p.connection_rules().judge("bank.example", 80).decision,
            Decision::Allow,
            "the rule names https"
        );
        assert_eq!(
            p.connection_rules().judge("bank.example", 8443).decision,
            Decision::Allow,
            "the rule names the default port"
        );
        let strict = policy("deny", &[("allow", "http://127.0.0.1:9090/docs/*")]);
        assert_eq!(
            strict.connection_rules().judge("127.0.0.1", 9090).decision,
            Decision::Allow
        );
        assert_eq!(
            strict.connection_rules().judge("127.0.0.1", 9091).decision,
            Decision::Deny
        );
        assert_eq!(
            strict.connection_rules().judge("a b", 9090).decision,
            Decision::Deny
        );
    }

    #[test]
    fn a_bad_rule_is_named_with_its_index() {
        let e = Policy::from_config(&PolicyConfig {
            rules: vec![
                RuleConfig {
                    pattern: "https://ok.example/*".into(),
                    action: "allow".into(),
                    origin: None,
                },
                RuleConfig {
                    pattern: "https://(bad/*".into(),
                    action: "deny".into(),
                    origin: None,
                },
            ],
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.starts_with("policy.rules[1]: pattern"), "{e}");
    }
}
