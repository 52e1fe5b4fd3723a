//! The address the node agents connect back to (`remote`): `--iface NAME`'s address, else
//! `OXMPI_HEAD_ADDR` (`IP` or `IP:PORT`), else loopback when every host is this machine, else
//! this machine's name's address if it is not a loopback one (Debian maps the host name to
//! 127.0.1.1), else the first address of an interface that is up and not loopback.
use std::ffi::CStr;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

/// The environment variable that chooses the head's address.
pub const ENV: &str = "OXMPI_HEAD_ADDR";

/// The addresses of this machine's interfaces that are up: (interface, address).
fn interface_addrs() -> Vec<(String, IpAddr)> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we free below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return out;
    }
    let mut p = head;
    while !p.is_null() {
        // SAFETY: `p` is a node of the list getifaddrs returned, valid until freeifaddrs.
        let ifa = unsafe { &*p };
        p = ifa.ifa_next;
        if ifa.ifa_addr.is_null() || ifa.ifa_flags & libc::IFF_UP as u32 == 0 {
            continue;
        }
        // SAFETY: ifa_name is a NUL-terminated string of the list.
        let name = unsafe { CStr::from_ptr(ifa.ifa_name) }.to_string_lossy().into_owned();
        // SAFETY: the family says which sockaddr type ifa_addr points to.
        let addr = unsafe {
            match i32::from((*ifa.ifa_addr).sa_family) {
                libc::AF_INET => {
                    let a = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                    Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr))))
                }
                libc::AF_INET6 => {
                    let a = &*(ifa.ifa_addr as *const libc::sockaddr_in6);
                    Some(IpAddr::V6(Ipv6Addr::from(a.sin6_addr.s6_addr)))
                }
                _ => None,
            }
        };
        if let Some(a) = addr {
            out.push((name, a));
        }
    }
    // SAFETY: the list getifaddrs returned, freed once.
    unsafe { libc::freeifaddrs(head) };
    out
}

/// A usable address of interface `iface` (IPv4 first; IPv6 link-local ones need a scope, so not those).
fn of_interface(iface: &str, addrs: &[(String, IpAddr)]) -> Option<IpAddr> {
    let mine = || addrs.iter().filter(|(n, _)| n == iface).map(|(_, a)| *a);
    mine().find(IpAddr::is_ipv4).or_else(|| mine().find(|a| matches!(a, IpAddr::V6(v) if v.segments()[0] & 0xffc0 != 0xfe80)))
}

/// Where the head listens and what the agents are told; Err: one line for the user.
pub fn choose(iface: Option<&str>, env: Option<&str>, all_local: bool, own_name: &str) -> Result<SocketAddr, String> {
    if let Some(i) = iface {
        let addrs = interface_addrs();
        return of_interface(i, &addrs).map(|a| SocketAddr::new(a, 0)).ok_or_else(|| {
            let mut names: Vec<&str> = Vec::new();
            for (n, _) in &addrs {
                if !names.contains(&n.as_str()) {
                    names.push(n);
                }
            }
            format!("--iface {i}: no such interface with an address that is up (interfaces: {})", names.join(", "))
        });
    }
    if let Some(v) = env.filter(|v| !v.is_empty()) {
        if let Ok(sa) = v.parse::<SocketAddr>() {
            return Ok(sa);
        }
        return v.parse::<IpAddr>().map(|a| SocketAddr::new(a, 0)).map_err(|_| format!("{ENV}={v} is not an IP address (or IP:PORT) of this machine"));
    }
    if all_local {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0));
    }
    let by_name = (own_name, 0).to_socket_addrs().ok().and_then(|mut it| it.find(|a| !a.ip().is_loopback() && a.is_ipv4()));
    if let Some(a) = by_name {
        return Ok(a);
    }
    let any = interface_addrs().into_iter().find(|(_, a)| a.is_ipv4() && !a.is_loopback()).map(|(_, a)| SocketAddr::new(a, 0));
    Ok(any.unwrap_or(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices() {
        assert_eq!(choose(None, Some("10.0.0.1"), false, "x").unwrap(), "10.0.0.1:0".parse().unwrap());
        assert_eq!(choose(None, Some("10.0.0.1:5000"), true, "x").unwrap(), "10.0.0.1:5000".parse().unwrap());
        assert!(choose(None, Some("nowhere"), false, "x").unwrap_err().starts_with("OXMPI_HEAD_ADDR=nowhere"));
        assert!(choose(None, None, true, "x").unwrap().ip().is_loopback());
        assert_eq!(choose(Some("lo"), None, false, "x").unwrap().ip(), IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert!(choose(Some("no-such-if0"), None, false, "x").unwrap_err().starts_with("--iface no-such-if0: no such interface"));
    }
}
