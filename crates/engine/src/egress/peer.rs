//! Who knocks on a door of the egress gate (issue 34, finding 5): the
//! gate's ports listen on loopback, where every local user can reach them,
//! and what they let through goes out with cdpilot's network position and,
//! with `[browser] upstream_proxy`, the user's proxy credentials. A door
//! serves a connection only when the socket that opened it belongs to
//! cdpilot's own user (the same uid as this process).
//!
//! Why the owner's uid and not a secret the browser presents: Chromium
//! takes no credentials in `--proxy-server` nor in a context's
//! `proxyServer`; answering the proxy's `407` through CDP
//! (`Fetch.authRequired`) covers only the requests a `Fetch` domain
//! intercepts, which leaves out tunnels the network service opens for
//! preconnects, WebSockets, workers not yet attached and Chromium's own
//! background requests. The owner of a loopback socket is known to the
//! kernel for every connection. A process of the same user is not kept
//! out: it can read the same configuration and environment (the upstream
//! credentials among them) and drive the user's browser profiles anyway,
//! so the boundary that holds is the user.
//!
//! Linux: the owner is read from `/proc/net/tcp` and `/proc/net/tcp6` (the
//! connecting socket's row: its local address is the peer's, its remote
//! address the door's). Elsewhere there is no such table and the check is
//! not made (the docs say so). Pure but for reading those files.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Whether the connection from `peer` to the door at `door` was opened by
/// a socket of this process's user. `Err` says why not (the uid found, or
/// that no socket was found: refused either way).
#[cfg(target_os = "linux")]
pub fn is_ours(peer: SocketAddr, door: SocketAddr) -> Result<(), String> {
    // SAFETY: geteuid cannot fail and touches no memory.
    let ours = unsafe { libc::geteuid() };
    let mut found = None;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        if let Some(uid) = owner(&text, peer, door) {
            found = Some(uid);
            break;
        }
    }
    match found {
        Some(uid) if uid == ours => Ok(()),
        Some(uid) => Err(format!("uid {uid}, not cdpilot's ({ours})")),
        None => Err(format!("no socket of {peer} to {door} found in /proc/net/tcp")),
    }
}

/// Not Linux: no table of sockets' owners to read; every local connection
/// is served (see the module's doc).
#[cfg(not(target_os = "linux"))]
pub fn is_ours(_peer: SocketAddr, _door: SocketAddr) -> Result<(), String> {
    Ok(())
}

/// The uid on the row of `table` (`/proc/net/tcp` or `tcp6` text) whose
/// local address is `peer` and remote address `door`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn owner(table: &str, peer: SocketAddr, door: SocketAddr) -> Option<u32> {
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (local, remote, uid) = (fields.get(1)?, fields.get(2)?, fields.get(7)?);
        (same(parse(local)?, peer) && same(parse(remote)?, door))
            .then(|| uid.parse().ok())
            .flatten()
    })
}

/// An address as the kernel prints it: `0100007F:1F90` (IPv4, the address
/// as a native-endian word) or 32 hex digits (IPv6, four such words).
fn parse(field: &str) -> Option<SocketAddr> {
    let (address, port) = field.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |hex: &str| u32::from_str_radix(hex, 16).ok().map(u32::to_ne_bytes);
    let ip = match address.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(address)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for (i, chunk) in bytes.chunks_mut(4).enumerate() {
                chunk.copy_from_slice(&word(&address[i * 8..i * 8 + 8])?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// The same socket address, an IPv4-mapped IPv6 one (a dual-stack socket
/// connecting to `127.0.0.1`) as its IPv4.
fn same(a: SocketAddr, b: SocketAddr) -> bool {
    let plain = |ip: IpAddr| match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    };
    a.port() == b.port() && plain(a.ip()) == plain(b.ip())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_is_read_from_the_connecting_sockets_row() {
        let ne = |ip: [u8; 4]| format!("{:08X}", u32::from_ne_bytes(ip));
        let lo = ne([127, 0, 0, 1]);
        let table = format!(
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
             0: {lo}:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1\n\
             1: {lo}:1F90 {lo}:C350 01 00000000:00000000 00:00000000 00000000     0        0 2\n\
             2: {lo}:C350 {lo}:1F90 01 00000000:00000000 00:00000000 00000000 65534        0 3\n"
        );
        let peer: SocketAddr = "127.0.0.1:50000".parse().unwrap();
        let door: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        assert_eq!(owner(&table, peer, door), Some(65534));
        assert_eq!(owner(&table, door, peer), Some(0));
        assert_eq!(owner(&table, "127.0.0.1:1".parse().unwrap(), door), None);
        let mapped = format!(
            "  sl  local_address rem_address ...\n\
             0: 0000000000000000FFFF0000{lo}:C350 0000000000000000FFFF0000{lo}:1F90 01 0:0 0:0 0 1000 0 4\n"
        );
        assert_eq!(owner(&mapped, peer, door), Some(1000));
    }

    /// This test process's own connection to a listener it holds is its
    /// own.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_connection_of_this_user_is_ours() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let door = listener.local_addr().unwrap();
        let client = std::net::TcpStream::connect(door).unwrap();
        let (_, peer) = listener.accept().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        assert_eq!(is_ours(peer, door), Ok(()));
        assert!(is_ours("127.0.0.1:1".parse().unwrap(), door).is_err());
    }
}
