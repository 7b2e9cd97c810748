//! Where the browser may go: the URL rules of `[policy]` and
//! `[[policy.rules]]` (plus `--allow`/`--deny`/`--ask`), judged for every
//! document request at the request stage ([`gate`]) and for the page an
//! action is about to act on (`crate::session`).
//!
//! Owns compiling the rules and judging one URL. The judgement is pure: a
//! configured deny always wins; otherwise the last matching rule decides;
//! with none, `policy.default`.

pub mod connection;
pub mod consent;
pub mod gate;
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
    rules: Vec<Rule>,
    default: Decision,
    /// How a verdict by the default names it.
    default_label: String,
    /// `policy.resources`: sub-resources are judged at the request stage too.
    pub resources: bool,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            rules: Vec::new(),
            default: Decision::Allow,
            default_label: "policy.default = \"allow\"".into(),
            resources: false,
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
            rules.push(
                Rule::compile(&rule.pattern, decision, place.clone())
                    .map_err(|e| format!("{place}: pattern {e}"))?,
            );
        }
        Ok(Policy {
            rules,
            default,
            default_label: format!("policy.default = {:?}", default.as_str()),
            resources: config.resources,
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
        }
    }

    /// Whether any URL can be refused: with no rules and `default = allow`
    /// nothing is intercepted at all.
    pub fn restricts(&self) -> bool {
        !self.rules.is_empty() || self.default != Decision::Allow
    }

    /// Judges one URL. A URL that does not parse gets the default.
    pub fn judge(&self, url: &str) -> Verdict {
        let verdict = |decision, rule: String| Verdict {
            url: url.to_owned(),
            decision,
            rule,
        };
        let default = || verdict(self.default, self.default_label.clone());
        let Ok(parsed) = url::Url::parse(url) else {
            return default();
        };
        let mut last = None;
        for rule in self.rules.iter().filter(|r| r.matches(&parsed)) {
            if rule.decision == Decision::Deny {
                return verdict(Decision::Deny, rule.to_string());
            }
            last = Some(rule);
        }
        match last {
            Some(rule) => verdict(rule.decision, rule.to_string()),
            None => default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{PolicyConfig, Rule as RuleConfig};

    fn policy(default: &str, rules: &[(&str, &str)]) -> Policy {
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

    #[test]
    fn no_rules_and_allow_restricts_nothing() {
        assert!(!policy("allow", &[]).restricts());
        assert!(policy("deny", &[]).restricts());
        assert!(policy("allow", &[("deny", "https://x.example/*")]).restricts());
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
