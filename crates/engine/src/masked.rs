//! A URL as cdpilot shows it (issue 41, finding 6): the one masking of the
//! credentials an address may carry, used wherever a configured address is
//! named (`[browser] cdp_url`, `endpoints`, `grid`: messages, tool errors,
//! logs, `/metrics` labels, `doctor`). A `user:password@` keeps its user
//! and loses its password; every query value becomes `***` (`?token=` is
//! how hosted browsers take their key, and a query's other values are not
//! cdpilot's to judge). Pure.

/// `url` with its password and its query's values replaced by `***`.
pub fn url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.has_host() => {
            let mut changed = false;
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("***"));
                changed = true;
            }
            if parsed.query().is_some() {
                let masked = query(parsed.query().unwrap_or(""));
                parsed.set_query(Some(&masked));
                changed = true;
            }
            match changed {
                true => parsed.to_string(),
                false => url.to_owned(),
            }
        }
        // Not a URL: whatever stands between `//` and the last `@` of the
        // authority may be a password, whatever follows `?` a token.
        _ => {
            let (head, tail) = match url.split_once('?') {
                Some((head, tail)) => (head, Some(query(tail))),
                None => (url, None),
            };
            let start = head.find("://").map_or(0, |i| i + 3);
            let end = head[start..].find('/').map_or(head.len(), |i| start + i);
            let head = match head[start..end].rfind('@') {
                Some(at) => format!("{}***@{}", &head[..start], &head[start + at + 1..]),
                None => head.to_owned(),
            };
            match tail {
                Some(tail) => format!("{head}?{tail}"),
                None => head,
            }
        }
    }
}

/// `text` (an error, a log line) with every secret of `url` that appears
/// in it masked: the whole address as typed, its password and its query's
/// values (a message may quote them apart, or resolved into another URL).
pub fn in_text(text: &str, url: &str) -> String {
    if url.is_empty() {
        return text.to_owned();
    }
    let mut text = text.replace(url, &self::url(url));
    for secret in secrets(url) {
        text = text.replace(&secret, "***");
    }
    text
}

/// The password and query values of `url`, longest first (a short one
/// inside a long one is replaced after it); values under 3 characters are
/// not secrets worth the noise of masking every `1` in a message.
fn secrets(url: &str) -> Vec<String> {
    let mut found = Vec::new();
    if let Ok(parsed) = url::Url::parse(url) {
        if let Some(password) = parsed.password() {
            found.push(password.to_owned());
        }
        if let Some(query) = parsed.query() {
            found.extend(
                query
                    .split('&')
                    .filter_map(|pair| pair.split_once('='))
                    .map(|(_, v)| v.to_owned()),
            );
        }
    }
    found.retain(|s| s.len() >= 3 && s != "***");
    found.sort_by_key(|s| std::cmp::Reverse(s.len()));
    found
}

fn query(query: &str) -> String {
    query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, _)) => format!("{key}=***"),
            None => pair.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_and_query_values_are_masked() {
        assert_eq!(
            url("ws://me:hunter22@host:9222/devtools/browser/x?token=s3cret&x=1"),
            "ws://me:***@host:9222/devtools/browser/x?token=***&x=***"
        );
        assert_eq!(url("http://127.0.0.1:9222"), "http://127.0.0.1:9222");
        // Not a URL (a bad IPv6 host): masked all the same.
        assert_eq!(url("ws://me:pw@[bad/x?token=abc"), "ws://***@[bad/x?token=***");
        let message = "cannot open ws://me:hunter22@host/x?token=s3cret: refused (s3cret)";
        let shown = in_text(message, "ws://me:hunter22@host/x?token=s3cret");
        assert!(
            !shown.contains("s3cret") && !shown.contains("hunter22"),
            "{shown}"
        );
        assert!(shown.contains("host"), "{shown}");
    }
}
