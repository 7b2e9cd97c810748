//! The argument checks tools share, done before anything touches the
//! browser: ref syntax, one element named, a value not empty, the call's
//! timeout, and the URL schemes of `policy.schemes` ([`url`], by the
//! session, which holds the configuration). Each tool's own rules are its
//! `check`, beside its handler.

use crate::args::ElementTarget;
use crate::ActionError;

const MAX_TIMEOUT_MS: u64 = 600_000;

/// A call's `timeout_ms`, when it gives one: 1 ms to 10 minutes. (Each
/// tool's own checks are its `check`, beside its handler.)
pub fn timeout(timeout_ms: Option<u64>) -> Result<(), ActionError> {
    if let Some(ms) = timeout_ms {
        if ms == 0 || ms > MAX_TIMEOUT_MS {
            return Err(ActionError::invalid(
                format!("timeout_ms must be between 1 and {MAX_TIMEOUT_MS}, not {ms}"),
                "Pass a timeout in milliseconds, or leave it out for the default.",
            ));
        }
    }
    Ok(())
}

/// Only complete URLs whose scheme is in `schemes` are opened. The
/// configuration lets `policy.schemes` name only http and https, so
/// `javascript:`, `file:`, `data:`, `chrome:`, `view-source:` and the like
/// are always refused here, before the browser sees them.
pub fn url(url: &str, schemes: &[String]) -> Result<(), ActionError> {
    let trimmed = url.trim();
    let allowed = schemes.join(", ");
    let example = schemes.last().map(String::as_str).unwrap_or("https");
    // A scheme is a letter, then letters, digits, `+`, `-` or `.`, before `:`.
    let scheme = trimmed.split_once(':').map(|(s, _)| s).filter(|s| {
        s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    let Some(scheme) = scheme else {
        return Err(ActionError::invalid(
            format!(
                "\"{}\" is not a complete URL (it has no scheme)",
                truncate(trimmed, 60)
            ),
            format!("Pass a full URL such as {example}://example.com/page."),
        ));
    };
    let lower = scheme.to_ascii_lowercase();
    if !schemes.iter().any(|s| s.eq_ignore_ascii_case(&lower)) {
        return Err(ActionError::invalid(
            format!(
                "{lower}: URLs cannot be opened (\"{}\"); allowed schemes: {allowed}",
                truncate(trimmed, 60)
            ),
            format!("Pass a full {example}:// URL."),
        ));
    }
    let rest = &trimmed[scheme.len() + 1..];
    let host = rest
        .trim_start_matches('/')
        .split(['/', '?', '#'])
        .next()
        .unwrap_or("");
    if !rest.starts_with("//") || host.is_empty() {
        return Err(ActionError::invalid(
            format!("\"{}\" is not a complete URL", truncate(trimmed, 60)),
            format!("Pass a full URL such as {example}://example.com/page."),
        ));
    }
    Ok(())
}

pub(crate) fn element_target(tool: &str, target: &ElementTarget) -> Result<(), ActionError> {
    match (&target.reference, &target.selector) {
        (Some(r), None) => reference(r),
        (None, Some(s)) => non_empty("selector", s),
        (Some(_), Some(_)) => Err(ActionError::invalid(
            format!("{tool} takes ref or selector, not both"),
            "Pass the ref from browser_snapshot only.",
        )),
        (None, None) => Err(ActionError::invalid(
            format!("{tool} needs a ref (or selector)"),
            "Take a browser_snapshot and pass the element's ref, e.g. {\"ref\": \"e12\"}.",
        )),
    }
}

/// A ref's tab part and the rest: `t2f3e7` → `(Some("t2"), "f3e7")`,
/// `e7` → `(None, "e7")`. The session's first tab's refs have none; every
/// other tab's carry its id, so a ref carried to another tab is told
/// from that tab's own (`ref_unknown`), never taken for its element of
/// the same number.
pub fn split_tab(reference: &str) -> (Option<&str>, &str) {
    if let Some(rest) = reference.strip_prefix('t') {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            return (Some(&reference[..=digits]), &rest[digits..]);
        }
    }
    (None, reference)
}

/// Refs look like `e12` (main frame) or `f2e7` (inside frame 2).
pub fn reference(r: &str) -> Result<(), ActionError> {
    let (_, rest) = split_tab(r);
    let body = match rest.strip_prefix('f') {
        Some(rest) => {
            let digits = rest.find('e').map(|i| &rest[..i]).unwrap_or("");
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                ""
            } else {
                &rest[digits.len()..]
            }
        }
        None => rest,
    };
    let ok = body
        .strip_prefix('e')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if ok {
        Ok(())
    } else {
        Err(ActionError::invalid(
            format!("\"{}\" is not a ref", truncate(r, 40)),
            "Use a ref exactly as browser_snapshot printed it, e.g. e12, f2e7 or t2e5.",
        ))
    }
}

pub(crate) fn non_empty(name: &str, value: &str) -> Result<(), ActionError> {
    if value.trim().is_empty() {
        return Err(ActionError::invalid(
            format!("{name} is empty"),
            format!("Pass a non-empty {name}."),
        ));
    }
    Ok(())
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        s.chars().take(max).collect::<String>() + "…"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default_schemes() -> Vec<String> {
        crate::config::PolicyConfig::default().schemes
    }

    #[test]
    fn only_complete_http_urls_pass() {
        let http_url = |u: &str| url(u, &default_schemes());
        assert!(http_url("https://example.com").is_ok());
        assert!(http_url("HTTP://127.0.0.1:8080/x?y").is_ok());
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "data:text/html,hi",
            "example.com",
            "http:/x",
            "https://",
            "chrome://settings",
        ] {
            assert!(http_url(bad).is_err(), "{bad} passed");
        }
    }

    /// Issue 8: `policy.schemes` was parsed but http and https were
    /// hard-coded, so `schemes = ["https"]` still opened http URLs.
    #[test]
    fn a_scheme_outside_policy_schemes_is_refused_naming_it_and_the_allowed_ones() {
        let https_only = vec!["https".to_owned()];
        assert!(url("https://example.com/", &https_only).is_ok());
        let e = url("http://example.com/", &https_only).unwrap_err();
        assert_eq!(e.code, crate::ErrorCode::InvalidArgument);
        assert!(
            e.message.contains("http:") && e.message.contains("allowed schemes: https"),
            "{e}"
        );
        for (bad, scheme) in [
            ("javascript:alert(1)", "javascript:"),
            ("data:text/html,hi", "data:"),
            ("file:///etc/passwd", "file:"),
            ("view-source:https://example.com", "view-source:"),
            ("Chrome://settings", "chrome:"),
        ] {
            let e = url(bad, &default_schemes()).unwrap_err();
            assert!(
                e.message.contains(scheme) && e.message.contains("allowed schemes: http, https"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn refs_are_checked_for_shape() {
        for good in ["e1", "e999", "f2e7", "f10e12", "t2e5", "t12f3e7"] {
            assert!(reference(good).is_ok(), "{good}");
        }
        for bad in [
            "", "e", "12", "ex", "f2", "fe3", "f2e", "e1 ", "button", "t2", "te5", "t2f3",
        ] {
            assert!(reference(bad).is_err(), "{bad}");
        }
    }
}
