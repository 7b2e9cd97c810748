//! URL rules: WHATWG URLPattern strings (the `urlpattern` crate), matched
//! component by component against a parsed URL, never as a glob over the
//! raw string (`https://*.example.com/*` must not match
//! `https://evil.net/a.example.com/b`).
//!
//! Owns compiling a rule from its text and matching one URL. Pure: no
//! browser, no session state.

use std::fmt;

use urlpattern::{UrlPattern, UrlPatternInit, UrlPatternMatchInput, UrlPatternOptions};

/// What a rule (or `policy.default`) says about a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The URL may be opened.
    Allow,
    /// The URL needs the user's approval.
    Ask,
    /// The URL may not be opened.
    Deny,
}

impl Decision {
    /// `allow`, `ask` or `deny`; `None` for any other word.
    pub fn parse(word: &str) -> Option<Decision> {
        match word {
            "allow" => Some(Decision::Allow),
            "ask" => Some(Decision::Ask),
            "deny" => Some(Decision::Deny),
            _ => None,
        }
    }

    /// The word the configuration uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

/// One compiled rule, with where it came from, so a verdict can name it.
pub struct Rule {
    pattern: UrlPattern,
    /// The same pattern with any path, search and hash: whether a URL on
    /// a host and port could match the rule at all (for judging a
    /// connection, which has no path).
    host_pattern: UrlPattern,
    /// The rule names no path, search or hash (`https://x.example/*`): it
    /// holds for every connection to the host, not only for documents.
    pub host_level: bool,
    /// What the rule decides for a URL it matches.
    pub decision: Decision,
    /// The pattern as written.
    pub text: String,
    /// Where it was written: `policy.rules[2]` or `--deny`.
    pub origin: String,
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for Rule {
    /// `policy.rules[2] (deny "https://x.example/*")`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({} {:?})", self.origin, self.decision.as_str(), self.text)
    }
}

impl Rule {
    /// Compiles `text`; the error says what is wrong with it (the caller
    /// adds the file and the rule's place).
    pub fn compile(text: &str, decision: Decision, origin: impl Into<String>) -> Result<Rule, String> {
        if text.trim().is_empty() {
            return Err("the pattern is empty".into());
        }
        let init = UrlPatternInit::parse_constructor_string::<regex::Regex>(text, None).map_err(|e| {
            format!("{text:?} is not a URL pattern ({e}); write a whole URL pattern such as \"https://{{*.}}?example.com/*\"")
        })?;
        let any_path = UrlPatternInit {
            pathname: Some("*".into()),
            search: Some("*".into()),
            hash: Some("*".into()),
            ..init.clone()
        };
        let pattern = UrlPattern::parse(init, UrlPatternOptions::default())
            .map_err(|e| format!("{text:?} is not a URL pattern ({e})"))?;
        let host_pattern = UrlPattern::parse(any_path, UrlPatternOptions::default())
            .map_err(|e| format!("{text:?} is not a URL pattern ({e})"))?;
        let host_level =
            matches!(pattern.pathname(), "*" | "/*") && pattern.search() == "*" && pattern.hash() == "*";
        Ok(Rule {
            pattern,
            host_pattern,
            host_level,
            decision,
            text: text.to_owned(),
            origin: origin.into(),
        })
    }

    /// Whether `url` matches the pattern.
    pub fn matches(&self, url: &url::Url) -> bool {
        self.pattern
            .test(UrlPatternMatchInput::Url(url.clone()))
            .unwrap_or(false)
    }

    /// The pattern with any path, search and hash: whether a URL on a
    /// host and port could match the rule at all (for judging a
    /// connection, which has no path: [`super::connection`]).
    pub fn host_pattern(&self) -> &UrlPattern {
        &self.host_pattern
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> url::Url {
        url::Url::parse(s).unwrap()
    }

    fn rule(text: &str) -> Rule {
        Rule::compile(text, Decision::Deny, "test").unwrap()
    }

    #[test]
    fn patterns_match_component_by_component_not_as_a_string_glob() {
        let r = rule("https://*.example.com/*");
        assert!(r.matches(&url("https://a.example.com/x")));
        assert!(!r.matches(&url("https://evil.net/a.example.com/b")));
        assert!(
            !r.matches(&url("http://a.example.com/x")),
            "the scheme is a component"
        );
    }

    #[test]
    fn an_optional_subdomain_group_matches_the_bare_host_too() {
        let r = rule("https://{*.}?bank.example/*");
        assert!(r.matches(&url("https://bank.example/login")));
        assert!(r.matches(&url("https://www.bank.example/")));
        assert!(!r.matches(&url("https://notbank.example/")));
        assert!(!r.matches(&url("https://bank.example.evil.net/")));
    }

    #[test]
    fn a_pattern_naming_no_search_or_hash_matches_any() {
        let r = rule("http://127.0.0.1:8080/*");
        assert!(r.matches(&url("http://127.0.0.1:8080/a?b=1#c")));
        assert!(
            !r.matches(&url("http://127.0.0.1:8081/a")),
            "the port is a component"
        );
    }

    #[test]
    fn a_rule_naming_only_a_host_is_host_level() {
        assert!(rule("http://127.0.0.1:8080/*").host_level);
        assert!(rule("https://{*.}?bank.example/*").host_level);
        assert!(!rule("http://127.0.0.1:8080/secret/*").host_level);
        assert!(!rule("http://127.0.0.1:8080/*?x=1").host_level);
    }

    #[test]
    fn bad_patterns_say_what_is_wrong() {
        let e = Rule::compile("not a pattern", Decision::Deny, "x").unwrap_err();
        assert!(e.contains("not a URL pattern"), "{e}");
        let e = Rule::compile("https://(unclosed/*", Decision::Deny, "x").unwrap_err();
        assert!(e.contains("not a URL pattern"), "{e}");
        assert!(Rule::compile("", Decision::Deny, "x").is_err());
    }
}
