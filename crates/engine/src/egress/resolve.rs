//! Resolving a name for the egress gate and judging the addresses it gives:
//! the gate connects only to an address it checked, so a name that
//! resolves differently a moment later (DNS rebinding) cannot slip past.
//!
//! Owns the list of address ranges `[policy] block_private_networks`
//! refuses. Pure but for the lookup.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

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
