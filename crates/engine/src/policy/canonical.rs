//! The canonical form of a URL the rules are also judged against (issue
//! 20, findings 4 and 5): the same server is reached by many spellings of
//! its host and path, and a rule written for one spelling must hold for
//! them all.
//!
//! The WHATWG parse (`url::Url::parse`) already lowercases the host, maps
//! IDN names to punycode, turns decimal, hex, octal and short IPv4
//! spellings into the dotted form, reads `\` as `/` in http(s) paths and
//! resolves dot segments (`%2e` included). What it keeps, and this module
//! removes: a trailing dot on a name (`localhost.`), an IPv4-mapped IPv6
//! address (`[::ffff:127.0.0.1]`, which connects to 127.0.0.1), repeated
//! slashes in the path (servers merge them) and percent-escapes of
//! unreserved characters (`%73ecret` is `secret` to every server).
//!
//! Pure: owns no state. [`crate::policy::Policy::judge`] judges the raw
//! and the canonical form; the egress gate's connection rules
//! ([`crate::policy::connection`]) judge a host and port through [`host`].

use std::net::Ipv6Addr;

use url::{Host, Url};

/// The canonical form of `url` (equal to it when nothing changes).
pub fn url(url: &Url) -> Url {
    let mut canonical = url.clone();
    if let Some(host) = url.host() {
        let host = canonical_host(&host);
        if canonical.host_str() != Some(host.as_str()) {
            // Re-parsed by the setter: an IPv4 spelling that only parses
            // once its trailing dot is gone comes out dotted.
            let _ = canonical.set_host(Some(&host));
        }
    }
    if !canonical.cannot_be_a_base() {
        let path = path(canonical.path());
        if path != canonical.path() {
            // The setter resolves the dot segments decoding may have made.
            canonical.set_path(&path);
        }
    }
    canonical
}

/// The canonical form of a host name or address as a connection target
/// gives it (`LocalHost.`, `[::ffff:7f00:1]`, `0x7f.1`, `bücher.example`):
/// lowercase, punycode, no trailing dot, IPv4 dotted (an IPv4-mapped IPv6
/// address as its IPv4), IPv6 in brackets. `None` when it is not a host.
pub fn host(host: &str) -> Option<String> {
    let bare = host.trim();
    let parsed = if bare.contains(':') && !bare.starts_with('[') {
        Host::parse(&format!("[{bare}]"))
    } else {
        Host::parse(bare)
    }
    .ok()?;
    let canonical = canonical_host(&parsed);
    // A name that was only an IPv4 spelling once its dot was dropped.
    match Host::parse(&canonical) {
        Ok(Host::Ipv4(ip)) => Some(ip.to_string()),
        _ => Some(canonical),
    }
}

fn canonical_host<S: AsRef<str>>(host: &Host<S>) -> String {
    match host {
        Host::Domain(name) => {
            let name = name.as_ref();
            let trimmed = name.trim_end_matches('.');
            if trimmed.is_empty() {
                name.to_string()
            } else {
                trimmed.to_ascii_lowercase()
            }
        }
        Host::Ipv4(ip) => ip.to_string(),
        Host::Ipv6(ip) => match mapped_v4(ip) {
            Some(v4) => v4.to_string(),
            None => format!("[{ip}]"),
        },
    }
}

/// `::ffff:a.b.c.d` connects to `a.b.c.d`.
fn mapped_v4(ip: &Ipv6Addr) -> Option<std::net::Ipv4Addr> {
    ip.to_ipv4_mapped()
}

/// A path with unreserved percent-escapes decoded, `\` as `/` and
/// repeated slashes collapsed.
fn path(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                let b = h * 16 + l;
                if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                    decoded.push(b);
                    i += 3;
                    continue;
                }
            }
        }
        decoded.push(if bytes[i] == b'\\' { b'/' } else { bytes[i] });
        i += 1;
    }
    let mut out = String::with_capacity(decoded.len());
    let mut previous_slash = false;
    // Only ASCII bytes were decoded, so the bytes stay valid UTF-8.
    for c in String::from_utf8_lossy(&decoded).chars() {
        if c == '/' && previous_slash {
            continue;
        }
        previous_slash = c == '/';
        out.push(c);
    }
    out
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        url(&Url::parse(s).unwrap()).to_string()
    }

    #[test]
    fn host_spellings_come_out_in_one_form() {
        let table = [
            ("http://localhost.:8080/", "http://localhost:8080/"),
            ("http://LocalHost..:8080/", "http://localhost:8080/"),
            ("http://[::ffff:127.0.0.1]:8080/", "http://127.0.0.1:8080/"),
            ("http://[::FFFF:7f00:1]:8080/a", "http://127.0.0.1:8080/a"),
            ("http://2130706433:8080/", "http://127.0.0.1:8080/"),
            ("http://0x7f000001:8080/", "http://127.0.0.1:8080/"),
            ("http://0177.0.0.1:8080/", "http://127.0.0.1:8080/"),
            ("http://127.1:8080/", "http://127.0.0.1:8080/"),
            ("http://0x7f.1.:8080/", "http://127.0.0.1:8080/"),
            ("http://127.0.0.1.:8080/", "http://127.0.0.1:8080/"),
            ("https://BANK.example./x", "https://bank.example/x"),
            ("https://bücher.example/", "https://xn--bcher-kva.example/"),
            ("http://[::1]:8080/", "http://[::1]:8080/"),
        ];
        for (spelling, want) in table {
            assert_eq!(canon(spelling), want, "{spelling}");
        }
    }

    #[test]
    fn path_spellings_come_out_in_one_form() {
        let table = [
            ("http://h/secret/x", "http://h/secret/x"),
            ("http://h//secret/x", "http://h/secret/x"),
            ("http://h///secret//x", "http://h/secret/x"),
            ("http://h/\\secret\\x", "http://h/secret/x"),
            ("http://h\\secret\\x", "http://h/secret/x"),
            ("http://h/%73ecret/x", "http://h/secret/x"),
            ("http://h/%73%65%63%72%65%74/x", "http://h/secret/x"),
            ("http://h/a/../secret/x", "http://h/secret/x"),
            ("http://h/a/%2e%2e/secret/x", "http://h/secret/x"),
            ("http://h/a/%2E./secret/x", "http://h/secret/x"),
            ("http://h/public/%2e%2E%2fsecret", "http://h/public/..%2fsecret"),
            ("http://h/a%2Fb", "http://h/a%2Fb"),
            ("http://h/%7Euser/%41", "http://h/~user/A"),
            ("http://h/x?q=%73//y", "http://h/x?q=%73//y"),
        ];
        for (spelling, want) in table {
            assert_eq!(canon(spelling), want, "{spelling}");
        }
    }

    #[test]
    fn connection_targets_come_out_in_one_form() {
        let table = [
            ("localhost.", "localhost"),
            ("LOCALHOST", "localhost"),
            ("[::ffff:127.0.0.1]", "127.0.0.1"),
            ("::ffff:7f00:1", "127.0.0.1"),
            ("2130706433", "127.0.0.1"),
            ("0x7f.1.", "127.0.0.1"),
            ("::1", "[::1]"),
            ("bücher.example.", "xn--bcher-kva.example"),
        ];
        for (spelling, want) in table {
            assert_eq!(host(spelling).as_deref(), Some(want), "{spelling}");
        }
        assert_eq!(host("a b"), None);
    }
}
