//! Checks on arguments that a schema cannot express, done before anything
//! touches the browser: ref syntax, one-of rules, ranges ([`action`], when a
//! call is parsed), and the URL schemes of `policy.schemes` ([`urls`], by
//! the engine, which holds the configuration).

use crate::action::*;
use crate::ActionError;

const MAX_TIMEOUT_MS: u64 = 600_000;

pub fn action(action: &Action) -> Result<(), ActionError> {
    if let Some(ms) = action.timeout_ms() {
        if ms == 0 || ms > MAX_TIMEOUT_MS {
            return Err(ActionError::invalid(
                format!("timeout_ms must be between 1 and {MAX_TIMEOUT_MS}, not {ms}"),
                "Pass a timeout in milliseconds, or leave it out for the default.",
            ));
        }
    }
    match action {
        Action::Navigate(a) => navigate(a),
        Action::Snapshot(a) => {
            if let Some(s) = &a.selector {
                non_empty("selector", s)?;
            }
            if a.max_elements == Some(0) {
                return Err(ActionError::invalid(
                    "max_elements must be at least 1",
                    "Leave max_elements out for the default cap.",
                ));
            }
            crate::snapshot::check(a)
        }
        Action::Click(a) => {
            element_target("browser_click", &a.target)?;
            if let Some(n) = a.click_count {
                if !(1..=3).contains(&n) {
                    return Err(ActionError::invalid(
                        format!("click_count must be 1, 2 or 3, not {n}"),
                        "Use 2 for a double click.",
                    ));
                }
            }
            Ok(())
        }
        Action::Type(a) => element_target("browser_type", &a.target),
        Action::Wait(a) => wait(a),
        Action::Evaluate(a) => evaluate(a),
        Action::Dialog(_) | Action::Console(_) => Ok(()),
        Action::Cdp(a) => {
            let (domain, method) = a.method.split_once('.').unwrap_or(("", ""));
            let word = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric());
            if word(domain) && word(method) {
                Ok(())
            } else {
                Err(ActionError::invalid(
                    format!("\"{}\" is not a CDP method", a.method),
                    "Use Domain.method, e.g. Page.getLayoutMetrics.",
                ))
            }
        }
        Action::Tabs(a) => match (&a.url, a.action) {
            (Some(url), TabsAction::New) => non_empty("url", url),
            (Some(_), _) => Err(ActionError::invalid(
                "url is only for action new",
                "Leave url out, or use action new.",
            )),
            (None, _) => Ok(()),
        },
        Action::Extract(a) => {
            if let Some(s) = &a.selector {
                non_empty("selector", s)?;
            }
            match a.max_chars {
                Some(0) => Err(ActionError::invalid(
                    "max_chars must be at least 1",
                    "Leave it out for 20000.",
                )),
                Some(m) if m > 1_000_000 => Err(ActionError::invalid(
                    format!("max_chars {m} is over 1000000"),
                    "Read in pages of at most 1000000 characters.",
                )),
                _ => Ok(()),
            }
        }
        Action::Hover(a) => element_target("browser_hover", &a.target),
        Action::PressKey(a) => crate::actions::keys::parse(&a.key).map(|_| ()),
        Action::SelectOption(a) => {
            if let Some(text) = &a.text {
                if !a.values.is_empty() {
                    return Err(ActionError::invalid(
                        "browser_select_option takes values or text, not both",
                        "Pass values to choose options, or text to select that text.",
                    ));
                }
                if a.target.reference.is_some() || a.target.selector.is_some() {
                    element_target("browser_select_option", &a.target)?;
                }
                return non_empty("text", text);
            }
            element_target("browser_select_option", &a.target)?;
            if a.values.is_empty() {
                return Err(ActionError::invalid(
                    "values is empty",
                    "Pass at least one option value or label.",
                ));
            }
            Ok(())
        }
        Action::Screenshot(a) => {
            if let Some(r) = &a.reference {
                reference(r)?;
            }
            if a.reference.is_some() && a.full_page == Some(true) {
                return Err(ActionError::invalid(
                    "ref and full_page cannot be combined",
                    "Pass ref for one element, or full_page for the whole page.",
                ));
            }
            match (a.quality, a.format.unwrap_or_default()) {
                (Some(q), _) if q > 100 => Err(ActionError::invalid(
                    format!("quality must be 0-100, not {q}"),
                    "Pass a JPEG quality between 0 and 100.",
                )),
                (Some(_), ImageFormat::Png) => Err(ActionError::invalid(
                    "quality applies to JPEG only",
                    "Add format: \"jpeg\" or leave quality out.",
                )),
                _ => Ok(()),
            }
        }
        Action::Network(a) => crate::actions::network::check(a),
        Action::Storage(a) => crate::actions::storage::check(a),
        Action::Pdf(a) => a.path.as_deref().map_or(Ok(()), |p| non_empty("path", p)),
        Action::Emulate(a) => crate::actions::emulate::check(a),
        Action::FillForm(a) => fill_form(a),
        Action::Drag(a) => {
            element_target("browser_drag", &a.target)?;
            match (&a.to_ref, &a.to_selector) {
                (Some(r), None) => reference(r),
                (None, Some(s)) => non_empty("to_selector", s),
                (Some(_), Some(_)) => Err(ActionError::invalid(
                    "browser_drag takes to_ref or to_selector, not both",
                    "Pass the drop target's ref as to_ref only.",
                )),
                (None, None) => Err(ActionError::invalid(
                    "browser_drag needs where to drop: to_ref (or to_selector)",
                    "Pass the drop target's ref from browser_snapshot as to_ref.",
                )),
            }
        }
        Action::Upload(a) => {
            element_target("browser_upload", &a.target)?;
            if a.paths.is_empty() {
                return Err(ActionError::invalid(
                    "paths is empty",
                    "Pass the local files to upload, e.g. {\"paths\": [\"report.pdf\"]}.",
                ));
            }
            a.paths.iter().try_for_each(|p| non_empty("paths[]", p))
        }
        Action::Scroll(a) => scroll(a),
        Action::Handoff(a) => handoff(a),
    }
}

fn handoff(a: &crate::action::HandoffArgs) -> Result<(), ActionError> {
    if a.reason.trim().is_empty() {
        return Err(ActionError::invalid(
            "browser_handoff needs a reason (shown to the person)",
            "Say what the person should do, e.g. {\"reason\": \"Solve the captcha\"}.",
        ));
    }
    if let Some(until) = &a.until {
        let given = [&until.url, &until.text, &until.selector];
        if given.iter().filter(|g| g.is_some()).count() != 1 {
            return Err(ActionError::invalid(
                "until takes exactly one of url, text, selector",
                "Pass one condition, e.g. {\"until\": {\"text\": \"Welcome\"}}.",
            ));
        }
        for (name, value) in [
            ("until.url", &until.url),
            ("until.text", &until.text),
            ("until.selector", &until.selector),
        ] {
            if let Some(v) = value {
                non_empty(name, v)?;
            }
        }
    }
    Ok(())
}

fn wait(a: &WaitArgs) -> Result<(), ActionError> {
    let given = [
        a.text.is_some(),
        a.text_gone.is_some(),
        a.selector.is_some(),
        a.url.is_some(),
        a.time_ms.is_some(),
    ]
    .iter()
    .filter(|g| **g)
    .count();
    if given != 1 {
        return Err(ActionError::invalid(
            format!(
                "browser_wait takes exactly one of text, text_gone, selector, url, time_ms ({given} given)"
            ),
            "Pass one condition, e.g. {\"text\": \"Saved\"}.",
        ));
    }
    for (name, value) in [
        ("text", &a.text),
        ("text_gone", &a.text_gone),
        ("selector", &a.selector),
        ("url", &a.url),
    ] {
        if let Some(v) = value {
            non_empty(name, v)?;
        }
    }
    Ok(())
}

fn evaluate(a: &EvaluateArgs) -> Result<(), ActionError> {
    match (&a.expression, &a.function) {
        (Some(_), Some(_)) => {
            return Err(ActionError::invalid(
                "pass either expression or function, not both",
                "Use expression for a JS expression, function for a function source.",
            ))
        }
        (None, None) => {
            return Err(ActionError::invalid(
                "browser_evaluate needs an expression (or a function)",
                "Pass expression, e.g. {\"expression\": \"document.title\"}.",
            ))
        }
        (Some(e), None) => non_empty("expression", e)?,
        (None, Some(f)) => non_empty("function", f)?,
    }
    if a.reference.is_some() && a.frame.is_some() {
        return Err(ActionError::invalid(
            "pass ref or frame, not both (a ref already names its frame)",
            "Leave frame out when you pass ref.",
        ));
    }
    if let Some(r) = &a.reference {
        reference(r)?;
        if a.function.is_none() {
            return Err(ActionError::invalid(
                "ref needs a function to receive the element",
                "Pass function, e.g. {\"function\": \"el => el.textContent\", \"ref\": \"e12\"}.",
            ));
        }
    }
    Ok(())
}

fn navigate(a: &NavigateArgs) -> Result<(), ActionError> {
    match (&a.url, a.history) {
        (Some(_), Some(_)) => Err(ActionError::invalid(
            "pass either url or history, not both",
            "Call browser_navigate with url to open a page, or history to go back/forward/reload.",
        )),
        (None, None) => Err(ActionError::invalid(
            "browser_navigate needs a url (or history)",
            "Pass url, e.g. {\"url\": \"https://example.com\"}.",
        )),
        (Some(url), None) => non_empty("url", url),
        (None, Some(_)) => Ok(()),
    }
}

/// The URL an action would open, checked against `schemes` (the
/// configuration's `policy.schemes`) before anything is sent to the browser.
pub fn urls(action: &Action, schemes: &[String]) -> Result<(), ActionError> {
    match action {
        Action::Navigate(NavigateArgs { url: Some(u), .. }) | Action::Tabs(TabsArgs { url: Some(u), .. }) => {
            url(u, schemes)
        }
        // `browser_cdp`'s Page.navigate / Target.createTarget.
        Action::Cdp(_) => match crate::session::destination_url(action) {
            Some(u) => url(u, schemes),
            None => Ok(()),
        },
        _ => Ok(()),
    }
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

fn element_target(tool: &str, target: &ElementTarget) -> Result<(), ActionError> {
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

/// Refs look like `e12` (main frame) or `f2e7` (inside frame 2).
pub fn reference(r: &str) -> Result<(), ActionError> {
    let body = match r.strip_prefix('f') {
        Some(rest) => {
            let digits = rest.find('e').map(|i| &rest[..i]).unwrap_or("");
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                ""
            } else {
                &rest[digits.len()..]
            }
        }
        None => r,
    };
    let ok = body
        .strip_prefix('e')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if ok {
        Ok(())
    } else {
        Err(ActionError::invalid(
            format!("\"{}\" is not a ref", truncate(r, 40)),
            "Use a ref exactly as browser_snapshot printed it, e.g. e12 or f2e7.",
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
        for good in ["e1", "e999", "f2e7", "f10e12"] {
            assert!(reference(good).is_ok(), "{good}");
        }
        for bad in ["", "e", "12", "ex", "f2", "fe3", "f2e", "e1 ", "button"] {
            assert!(reference(bad).is_err(), "{bad}");
        }
    }
}

fn fill_form(a: &FillFormArgs) -> Result<(), ActionError> {
    if a.fields.is_empty() {
        return Err(ActionError::invalid(
            "fields is empty",
            "Pass the fields to fill, e.g. {\"fields\": [{\"ref\": \"e3\", \"value\": \"Ada\"}]}.",
        ));
    }
    for (i, field) in a.fields.iter().enumerate() {
        element_target("browser_fill_form", &field.target()).map_err(|e| ActionError {
            message: format!("fields[{i}]: {}", e.message),
            ..e
        })?;
    }
    Ok(())
}

fn scroll(a: &ScrollArgs) -> Result<(), ActionError> {
    let named = a.target.reference.is_some() || a.target.selector.is_some();
    if named {
        element_target("browser_scroll", &a.target)?;
    }
    match (a.direction, a.amount) {
        (None, None) if !named => Err(ActionError::invalid(
            "browser_scroll needs a ref (to scroll it into view) or a direction",
            "Pass {\"direction\": \"down\"} to scroll the page, or the ref of an element to bring into view.",
        )),
        (None, Some(_)) => Err(ActionError::invalid(
            "amount needs a direction",
            "Add direction: up, down, left or right.",
        )),
        (Some(_), Some(0)) => Err(ActionError::invalid(
            "amount must be at least 1 pixel",
            "Leave amount out to scroll one viewport.",
        )),
        _ => Ok(()),
    }
}
