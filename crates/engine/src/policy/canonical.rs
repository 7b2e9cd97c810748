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
//! The local host (issue 34, finding 3) has many names besides its
//! canonical spellings: `localhost` (and `*.localhost`), every `127/8`
//! address, `[::1]`, and the unspecified addresses `0.0.0.0/8` and `[::]`,
//! which a connection reaches the local host through. A URL on any of them
//! is also judged as each of [`LOCAL_HOST`] ([`local_spellings`]), so a rule
//! written for one holds for all (a deny on any wins).
//!
//! Pure: owns no state. [`crate::policy::Policy::judge`] judges the raw
//! and the canonical form; the egress gate's connection rules
//! ([`crate::policy::connection`]) judge a host and port through [`host`].

use std::net::{Ipv4Addr, Ipv6Addr};

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

/// The IPv4 address an IPv6 one stands for: IPv4-mapped (`::ffff:a.b.c.d`,
/// which connects to `a.b.c.d`), IPv4-compatible (`::a.b.c.d`, deprecated,
/// still routed by some stacks; not `::` nor `::1`) and NAT64's well-known
/// prefix (`64:ff9b::a.b.c.d`, which a NAT64 gateway turns into
/// `a.b.c.d`).
pub fn mapped_v4(ip: &Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    let compatible = s[..6] == [0; 6] && !ip.is_unspecified() && !ip.is_loopback();
    let nat64 = s[..6] == [0x64, 0xff9b, 0, 0, 0, 0];
    (compatible || nat64).then_some(low)
}

/// The spellings every URL on the local host is also judged as: a rule
/// written for any of them holds for all.
pub const LOCAL_HOST: [&str; 5] = ["localhost", "127.0.0.1", "[::1]", "0.0.0.0", "[::]"];

/// Whether a host in canonical form ([`host`]) is the local host:
/// `localhost` and `*.localhost` (Chromium and most resolvers answer them
/// with loopback), `127/8`, `[::1]`, and the unspecified `0.0.0.0/8` and
/// `[::]` (a connection to them reaches the local host).
pub fn is_local_host(canonical: &str) -> bool {
    if canonical == "localhost" || canonical.ends_with(".localhost") {
        return true;
    }
    if let Ok(v4) = canonical.parse::<Ipv4Addr>() {
        return v4.is_loopback() || v4.octets()[0] == 0;
    }
    canonical
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .and_then(|h| h.parse::<Ipv6Addr>().ok())
        .is_some_and(|v6| v6.is_loopback() || v6.is_unspecified())
}

/// The other spellings of `url`'s host it is also judged as: every one of
/// [`LOCAL_HOST`] when its (canonical) host is the local host, else none.
pub fn local_spellings(url: &Url) -> Vec<Url> {
    let Some(host) = url.host().map(|h| canonical_host(&h)) else {
        return Vec::new();
    };
    if !is_local_host(&host) {
        return Vec::new();
    }
    LOCAL_HOST
        .iter()
        .filter(|spelling| **spelling != host)
        .filter_map(|spelling| {
            let mut other = self::url(url);
            other.set_host(Some(spelling)).ok()?;
            Some(other)
        })
        .collect()
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
            ("http://[::127.0.0.1]:8080/", "http://127.0.0.1:8080/"),
            ("http://[64:ff9b::7f00:1]:8080/", "http://127.0.0.1:8080/"),
            ("http://[::]:8080/", "http://[::]:8080/"),
            ("http://0:8080/", "http://0.0.0.0:8080/"),
            ("http://0x0:8080/", "http://0.0.0.0:8080/"),
            ("http://0.0.0.0.:8080/", "http://0.0.0.0:8080/"),
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

    /// Issue 34, finding 3: the unspecified addresses, `[::1]`, every
    /// `127/8` address and `*.localhost` are the local host; other hosts
    /// (a private address, a name merely containing "localhost") are not.
    #[test]
    fn the_local_host_is_every_spelling_of_it() {
        for local in [
            "localhost",
            "a.localhost",
            "127.0.0.1",
            "127.3.2.1",
            "0.0.0.0",
            "0.1.2.3",
            "[::1]",
            "[::]",
        ] {
            assert!(is_local_host(local), "{local}");
        }
        for other in [
            "10.0.0.1",
            "localhost.example",
            "notlocalhost",
            "[::2]",
            "[fe80::1]",
        ] {
            assert!(!is_local_host(other), "{other}");
        }
        let spellings = |u: &str| -> Vec<String> {
            local_spellings(&Url::parse(u).unwrap())
                .iter()
                .map(|u| u.to_string())
                .collect()
        };
        assert_eq!(
            spellings("http://[::ffff:0:0]:8080/x"),
            [
                "http://localhost:8080/x",
                "http://127.0.0.1:8080/x",
                "http://[::1]:8080/x",
                "http://[::]:8080/x"
            ]
        );
        assert_eq!(spellings("http://[::1]:8080/").len(), 4);
        assert!(spellings("http://10.0.0.1:8080/").is_empty());
    }
}
