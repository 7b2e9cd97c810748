//! Resolving a name for the egress gate and judging the addresses it gives:
//! the gate connects only to an address it checked, so a name that
//! resolves differently a moment later (DNS rebinding) cannot slip past.
//!
//! Owns the list of address ranges `[policy] block_private_networks`
//! refuses, and the addresses of the names the host-level denies write
//! ([`DeniedNames`], looked up when a connection needs them and kept for
//! [`NAMES_KEPT`]). Pure but for the lookups.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::policy::canonical;
use crate::policy::connection::ConnectionRules;

/// How long the addresses of a denied name are kept before it is looked up
/// again (a CDN's addresses move; a name's owner may move it).
pub const NAMES_KEPT: Duration = Duration::from_secs(30);

/// How long looking up one denied name may take. A name that cannot be
/// looked up refuses nothing (its deny still refuses the name itself).
const NAME_LOOKUP: Duration = Duration::from_secs(5);

/// The addresses of the names host-level denies write (`bank.example` in
/// `deny "https://{*.}?bank.example/*"`): a connection to one of them at a
/// port the deny covers is refused whatever name or address the page wrote
/// (issue 34, finding 3: "deny always wins").
pub struct DeniedNames {
    names: Vec<String>,
    /// Each name's addresses and when they were looked up. Locked for
    /// microseconds, never across a lookup.
    kept: Mutex<HashMap<String, Looked>>,
}

/// When a name was looked up, and its addresses.
type Looked = (Instant, Arc<Vec<IpAddr>>);

impl DeniedNames {
    pub fn new(names: Vec<String>) -> DeniedNames {
        DeniedNames {
            names,
            kept: Mutex::default(),
        }
    }

    /// The deny that refuses a connection to `addresses` at `port` because
    /// one of them is an address of a denied name: `(rule, name, address)`.
    pub async fn refusing(
        &self,
        rules: &ConnectionRules,
        addresses: &[SocketAddr],
        port: u16,
    ) -> Option<(String, String, IpAddr)> {
        for name in &self.names {
            let Some(rule) = rules.denies_host(name, port) else {
                continue;
            };
            let theirs = self.addresses(name).await;
            for address in addresses {
                if theirs.iter().any(|ip| same_host(*ip, address.ip())) {
                    return Some((rule.to_owned(), name.clone(), address.ip()));
                }
            }
        }
        None
    }

    async fn addresses(&self, name: &str) -> Arc<Vec<IpAddr>> {
        if let Some((at, kept)) = self.kept.lock().unwrap().get(name) {
            if at.elapsed() < NAMES_KEPT {
                return kept.clone();
            }
        }
        let found = match tokio::time::timeout(NAME_LOOKUP, lookup(name, 0)).await {
            Ok(Ok(found)) => found.iter().map(|a| a.ip()).collect(),
            Ok(Err(e)) => {
                tracing::debug!("egress gate: the denied name {name} does not resolve: {e}");
                Vec::new()
            }
            Err(_) => {
                tracing::warn!("egress gate: looking up the denied name {name} took over {NAME_LOOKUP:?}");
                Vec::new()
            }
        };
        let found = Arc::new(found);
        self.kept
            .lock()
            .unwrap()
            .insert(name.to_owned(), (Instant::now(), found.clone()));
        found
    }
}

/// The address as a connection reaches it: an IPv4-mapped (or compatible,
/// or NAT64) IPv6 address as its IPv4.
pub fn plain(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => canonical::mapped_v4(&v6)
            .map(IpAddr::V4)
            .unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    }
}

/// Whether two addresses reach the same host: equal once plain, or both
/// the local host (`127/8`, `0/8`, `::1`, `::`).
fn same_host(a: IpAddr, b: IpAddr) -> bool {
    let (a, b) = (plain(a), plain(b));
    let local = |ip: IpAddr| match ip {
        IpAddr::V4(v4) => v4.is_loopback() || v4.octets()[0] == 0,
        IpAddr::V6(v6) => v6.is_loopback() || v6.is_unspecified(),
    };
    a == b || (local(a) && local(b))
}

/// Why an address is private, or `None` for a public one: loopback,
/// private (RFC 1918, unique local), shared (CGNAT), link-local, cloud
/// metadata, unspecified, broadcast, and their IPv4-mapped IPv6 forms.
pub fn is_private(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => private_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => private_v4(v4),
            None => private_v6(v6),
        },
    }
}

fn private_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip == Ipv4Addr::new(169, 254, 169, 254) {
        Some("a cloud metadata address")
    } else if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_private() {
        Some("a private address")
    } else if ip.is_link_local() {
        Some("a link-local address")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a shared (carrier-grade NAT) address")
    } else if a == 0 || ip.is_broadcast() {
        Some("an unspecified address")
    } else {
        None
    }
}

fn private_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    if ip == "fd00:ec2::254".parse::<Ipv6Addr>().unwrap() {
        Some("a cloud metadata address")
    } else if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() {
        Some("an unspecified address")
    } else if first & 0xfe00 == 0xfc00 {
        Some("a private (unique local) address")
    } else if first & 0xffc0 == 0xfe80 || first & 0xffc0 == 0xfec0 {
        Some("a link-local address")
    } else if ip
        .to_ipv4()
        .is_some_and(|v4| ip.segments()[..6] == [0; 6] && !v4.is_unspecified())
    {
        // IPv4-compatible (::a.b.c.d), deprecated but still routed by some stacks.
        private_v4(ip.to_ipv4().unwrap())
    } else {
        None
    }
}

/// The addresses of `host` (an IP literal is its own), in the resolver's
/// order.
pub async fn lookup(host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    Ok(tokio::net::lookup_host((bare, port)).await?.collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_local_host_and_mapped_forms_are_the_same_host() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert!(same_host(ip("127.0.0.1"), ip("::ffff:127.0.0.1")));
        assert!(same_host(ip("127.0.0.1"), ip("0.0.0.0")));
        assert!(same_host(ip("::1"), ip("::")));
        assert!(same_host(ip("10.0.0.1"), ip("64:ff9b::a00:1")));
        assert!(!same_host(ip("10.0.0.1"), ip("10.0.0.2")));
        assert!(!same_host(ip("127.0.0.1"), ip("10.0.0.1")));
    }

    /// Issue 34, finding 3: a deny written with a name refuses the
    /// addresses the name resolves to (`localhost` resolves to loopback on
    /// every machine; it is judged by name, not listed, so `vm`-like names
    /// are what this covers: here the machine's own name when it resolves).
    #[tokio::test]
    async fn a_denied_names_addresses_are_refused() {
        let policy =
            crate::policy::tests::policy("allow", &[("deny", "http://localhost.test.invalid:8080/*")]);
        let rules = policy.connection_rules();
        let names = DeniedNames::new(vec!["localhost".into()]);
        let at = |s: &str| vec![SocketAddr::new(s.parse().unwrap(), 8080)];
        // `localhost` is no deny's name here: nothing is refused.
        assert!(names.refusing(&rules, &at("127.0.0.1"), 8080).await.is_none());
        let policy = crate::policy::tests::policy("allow", &[("deny", "http://localhost:8080/*")]);
        let rules = policy.connection_rules();
        let refused = names.refusing(&rules, &at("0.0.0.0"), 8080).await;
        assert!(
            refused
                .as_ref()
                .is_some_and(|(rule, name, _)| rule.contains("policy.rules[0]") && name == "localhost"),
            "{refused:?}"
        );
        assert!(names.refusing(&rules, &at("127.0.0.1"), 8081).await.is_none());
    }

    #[test]
    fn private_ranges_are_named() {
        for (ip, why) in [
            ("127.0.0.1", "loopback"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("192.168.1.1", "private"),
            ("169.254.169.254", "metadata"),
            ("169.254.1.1", "link-local"),
            ("100.64.0.1", "shared"),
            ("0.0.0.0", "unspecified"),
            ("::1", "loopback"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:10.0.0.1", "private"),
            ("fd00:ec2::254", "metadata"),
            ("fd12::1", "private"),
            ("fe80::1", "link-local"),
            ("::", "unspecified"),
        ] {
            let why_not = is_private(ip.parse().unwrap());
            assert!(why_not.is_some_and(|w| w.contains(why)), "{ip}: {why_not:?}");
        }
        for ip in ["8.8.8.8", "172.32.0.1", "2606:4700::1111", "100.128.0.1"] {
            assert_eq!(is_private(ip.parse().unwrap()), None, "{ip}");
        }
    }
}
