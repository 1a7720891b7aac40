//! What Facter would say about the host `puppet lookup` runs on, for the server facts
//! (`$serverip`, `$serverip6`): the addresses of the primary interface, the one that holds
//! the default route. Linux only (elsewhere: none, as when Facter cannot tell).

/// The IPv4 and IPv6 address of the primary interface.
pub(crate) fn primary_addresses() -> (Option<String>, Option<String>) {
    let Some(iface) = default_route_interface() else {
        return (None, None);
    };
    (ipv4_of(&iface), ipv6_of(&iface))
}

/// The interface of the IPv4 default route (/proc/net/route: destination 0).
fn default_route_interface() -> Option<String> {
    let text = std::fs::read_to_string("/proc/net/route").ok()?;
    text.lines().skip(1).find_map(|l| {
        let mut w = l.split_whitespace();
        let iface = w.next()?;
        (w.next()? == "00000000").then(|| iface.to_string())
    })
}

/// The first global IPv6 address of `iface` (/proc/net/if_inet6, scope 00).
fn ipv6_of(iface: &str) -> Option<String> {
    let text = std::fs::read_to_string("/proc/net/if_inet6").ok()?;
    text.lines().find_map(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() < 6 || w[5] != iface || w[3] != "00" || w[0].len() != 32 {
            return None;
        }
        let v = u128::from_str_radix(w[0], 16).ok()?;
        Some(std::net::Ipv6Addr::from(v).to_string())
    })
}

/// The first IPv4 address of `iface` (getifaddrs).
#[cfg(target_os = "linux")]
fn ipv4_of(iface: &str) -> Option<String> {
    // SAFETY: getifaddrs fills a linked list that is only read here and freed once; every
    // pointer is checked for null before it is dereferenced.
    unsafe {
        let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
        if libc::getifaddrs(&mut list) != 0 {
            return None;
        }
        let mut found = None;
        let mut cur = list;
        while !cur.is_null() {
            let ifa = &*cur;
            cur = ifa.ifa_next;
            if ifa.ifa_addr.is_null() || ifa.ifa_name.is_null() {
                continue;
            }
            if i32::from((*ifa.ifa_addr).sa_family) != libc::AF_INET {
                continue;
            }
            let name = std::ffi::CStr::from_ptr(ifa.ifa_name);
            if name.to_bytes() != iface.as_bytes() {
                continue;
            }
            let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
            found = Some(std::net::Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)).to_string());
            break;
        }
        libc::freeifaddrs(list);
        found
    }
}

#[cfg(not(target_os = "linux"))]
fn ipv4_of(_iface: &str) -> Option<String> {
    None
}
