//! Who owns the other end of a loopback socket: the one rule cdpilot
//! applies to every local peer (issues 34 and 41). Loopback is reachable
//! by every local user, so a port on it proves nothing: a file naming a
//! port (`serve.json`, `extension-mcp.json`, Chrome's
//! `DevToolsActivePort`) may outlive the process that wrote it, and
//! another user may bind the freed port. cdpilot trusts a loopback socket
//! only when its owner is cdpilot's own user (the same effective uid as
//! this process):
//!
//! - [`is_ours`]: a connection *to* one of cdpilot's ports (the egress
//!   gate's doors) was opened by a socket of this user;
//! - [`listener_is_ours`]: every socket listening where a connection to a
//!   loopback address would go belongs to this user, and, when the file
//!   named a process, one of them is that process's (its inode is among
//!   the process's descriptors). Checked *before* connecting: a neighbour's
//!   port gets not even the TCP handshake.
//!
//! Why the owner's uid and not a secret: a process of the same user is not
//! kept out by anything (it can read the same files, the environment and
//! drive the user's browser profiles anyway), so the boundary that holds
//! is the user; the kernel knows the owner of every socket.
//!
//! Linux: owners are read from `/proc/net/tcp` and `/proc/net/tcp6`, a
//! process's descriptors from `/proc/PID/fd`. Elsewhere there is no such
//! table and the check is not made (the docs say so). Pure but for reading
//! those files; knows nothing of CDP.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Whether the connection from `peer` to the door at `door` was opened by
/// a socket of this process's user. `Err` says why not (the uid found, or
/// that no socket was found: refused either way).
#[cfg(target_os = "linux")]
pub fn is_ours(peer: SocketAddr, door: SocketAddr) -> Result<(), String> {
    let ours = our_uid();
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

/// A socket listening on loopback (or on every address): its owner and
/// its inode (what `/proc/PID/fd/N` links to as `socket:[INODE]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listener {
    pub uid: u32,
    pub inode: u64,
}

/// This process's effective uid.
pub fn our_uid() -> u32 {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() }
}

/// Whether `address` may be connected to: every socket listening where a
/// connection to it would go belongs to this user and, with `pid`, one of
/// them is that process's. `Err` says what was found (the owner's uid,
/// nobody listening, another process's socket), for a message naming the
/// file that named the address. Not a loopback address: not a
/// neighbour's to take, `Ok` (a remote peer proves itself otherwise).
#[cfg(target_os = "linux")]
pub fn listener_is_ours(address: SocketAddr, pid: Option<u32>) -> Result<(), String> {
    if !address.ip().is_loopback() && !plain(address.ip()).is_loopback() {
        return Ok(());
    }
    if let Some(pid) = pid {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            return Err(format!("process {pid}, which it names, is not running"));
        }
    }
    let mut found = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        if let Ok(text) = std::fs::read_to_string(table) {
            found.extend(listening(&text, address));
        }
    }
    let ours = our_uid();
    if found.is_empty() {
        return Err(format!("nothing listens on {address}"));
    }
    if let Some(other) = found.iter().find(|l| l.uid != ours) {
        return Err(format!(
            "{address} is listened on by uid {}, not by you (uid {ours})",
            other.uid
        ));
    }
    let Some(pid) = pid else { return Ok(()) };
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map_err(|e| format!("cannot read process {pid}'s descriptors: {e}"))?;
    let sockets: Vec<String> = found.iter().map(|l| format!("socket:[{}]", l.inode)).collect();
    let held = fds.flatten().any(|fd| {
        std::fs::read_link(fd.path())
            .is_ok_and(|target| sockets.iter().any(|s| target.as_os_str() == s.as_str()))
    });
    match held {
        true => Ok(()),
        false => Err(format!(
            "{address} is listened on by a socket of yours that process {pid}, which it names, does not hold"
        )),
    }
}

/// Not Linux: no table of sockets' owners to read; every loopback port is
/// taken as named (see the module's doc).
#[cfg(not(target_os = "linux"))]
pub fn listener_is_ours(_address: SocketAddr, _pid: Option<u32>) -> Result<(), String> {
    Ok(())
}

/// The rows of `table` in state LISTEN (`0A`) that a connection to
/// `address` would reach: its port, and its address or a wildcard one.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn listening(table: &str, address: SocketAddr) -> Vec<Listener> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (local, state) = (parse(fields.get(1)?)?, *fields.get(3)?);
            let (uid, inode) = (fields.get(7)?.parse().ok()?, fields.get(9)?.parse().ok()?);
            let reaches = local.port() == address.port()
                && (local.ip().is_unspecified() || plain(local.ip()) == plain(address.ip()));
            (state == "0A" && reaches).then_some(Listener { uid, inode })
        })
        .collect()
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
    a.port() == b.port() && plain(a.ip()) == plain(b.ip())
}

/// An IPv4-mapped IPv6 address as its IPv4.
fn plain(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    }
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

    #[test]
    fn a_listener_is_found_on_its_port_and_on_the_wildcard() {
        let ne = |ip: [u8; 4]| format!("{:08X}", u32::from_ne_bytes(ip));
        let (lo, any) = (ne([127, 0, 0, 1]), ne([0, 0, 0, 0]));
        let table = format!(
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
             0: {lo}:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 65534        0 11\n\
             1: {lo}:1F90 {lo}:C350 01 00000000:00000000 00:00000000 00000000     0        0 12\n\
             2: {any}:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 13\n\
             3: {lo}:1F92 00000000:0000 01 00000000:00000000 00:00000000 00000000  1000        0 14\n"
        );
        let at = |port: u16| listening(&table, SocketAddr::from(([127, 0, 0, 1], port)));
        assert_eq!(
            at(8080),
            vec![Listener {
                uid: 65534,
                inode: 11
            }]
        );
        assert_eq!(at(8081), vec![Listener { uid: 1000, inode: 13 }]);
        assert_eq!(at(8082), vec![], "not listening");
    }

    /// This process's own listener is its own, and held by its pid; a
    /// dead pid or a port nobody listens on is refused, saying why.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_listener_of_this_process_is_ours() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        assert_eq!(listener_is_ours(address, None), Ok(()));
        assert_eq!(listener_is_ours(address, Some(std::process::id())), Ok(()));
        let e = listener_is_ours(address, Some(1)).unwrap_err();
        assert!(e.contains("does not hold") || e.contains("descriptors"), "{e}");
        let e = listener_is_ours(address, Some(u32::MAX - 1)).unwrap_err();
        assert!(e.contains("not running"), "{e}");
        drop(listener);
        let e = listener_is_ours(address, None).unwrap_err();
        assert!(e.contains("nothing listens"), "{e}");
    }
}
