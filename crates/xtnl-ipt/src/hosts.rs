//! Host names in `-s`/`-d` and in `-L` without `-n`, as iptables resolves them through the C
//! library: a numeric address first, then the names of `/etc/hosts`, then DNS
//! ([`crate::ipt::dns`]). xtnl is a static binary without NSS, so it reads `/etc/hosts`
//! itself. Only the fixed path is read: nothing the caller's environment says (such as
//! `HOSTALIASES` or `RES_OPTIONS`) steers it, so a delegated run resolves as root would.

#![deny(missing_docs)]

use std::net::IpAddr;

use crate::model::Family;

/// The hosts file glibc's `files` source reads.
const HOSTS: &str = "/etc/hosts";

/// `(address, names)` for each line of the hosts file: comments and lines without an address
/// skipped.
fn entries() -> Vec<(IpAddr, Vec<String>)> {
    let Ok(text) = std::fs::read_to_string(HOSTS) else {
        return Vec::new();
    };
    parse(&text)
}

fn parse(text: &str) -> Vec<(IpAddr, Vec<String>)> {
    text.lines()
        .filter_map(|l| {
            let l = l.split('#').next()?;
            let mut f = l.split_whitespace();
            let addr: IpAddr = f.next()?.parse().ok()?;
            let names: Vec<String> = f.map(str::to_owned).collect();
            (!names.is_empty()).then_some((addr, names))
        })
        .collect()
}

fn of_family(a: &IpAddr, family: Family) -> bool {
    a.is_ipv4() == (family != Family::Ipv6)
}

/// The addresses of `name` of `family`, in the file's order, without repeats (what
/// `getaddrinfo` answers from the `files` source). Empty when the name is not there.
pub fn lookup(name: &str, family: Family) -> Vec<IpAddr> {
    lookup_in(&entries(), name, family)
}

fn lookup_in(entries: &[(IpAddr, Vec<String>)], name: &str, family: Family) -> Vec<IpAddr> {
    let mut out = Vec::new();
    for (a, names) in entries {
        if of_family(a, family)
            && names.iter().any(|n| n.eq_ignore_ascii_case(name))
            && !out.contains(a)
        {
            out.push(*a);
        }
    }
    out
}

/// The name `-L` shows for a host address: the first name of the first line holding it
/// (`gethostbyaddr` from the `files` source), if any.
pub fn reverse(addr: IpAddr) -> Option<String> {
    reverse_in(&entries(), addr)
}

fn reverse_in(entries: &[(IpAddr, Vec<String>)], addr: IpAddr) -> Option<String> {
    entries
        .iter()
        .find(|(a, _)| *a == addr)
        .and_then(|(_, names)| names.first().cloned())
}

/// The networks file `getnetbyaddr` reads.
const NETWORKS: &str = "/etc/networks";

/// The name `-L` shows for an address (iptables' `xtables_ipaddr_to_anyname`): a host name
/// from `/etc/hosts`, else for IPv4 a network name from `/etc/networks` (Debian's names
/// 127.0.0.0 `loopback`), else `None` (the number is shown).
pub fn any_name(addr: IpAddr) -> Option<String> {
    reverse(addr).or_else(|| match addr {
        IpAddr::V4(a) => {
            let text = std::fs::read_to_string(NETWORKS).ok()?;
            network_in(&text, u32::from(a))
        }
        IpAddr::V6(_) => None,
    })
}

/// The first network of `text` (the networks file) whose number is `net`, read as
/// `inet_network` reads it (`127` is 0x7f, `127.0.0.0` is 0x7f000000).
fn network_in(text: &str, net: u32) -> Option<String> {
    text.lines().find_map(|l| {
        let l = l.split('#').next()?;
        let mut f = l.split_whitespace();
        let name = f.next()?;
        let parts: Vec<&str> = f.next()?.split('.').collect();
        if parts.len() > 4 {
            return None;
        }
        let mut value: u32 = 0;
        for p in parts {
            value = (value << 8) | u32::from(p.parse::<u8>().ok()?);
        }
        (value == net).then(|| name.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_addresses_as_the_files_source_reads_them() {
        let e = parse(
            "# comment\n127.0.0.1 localhost runsc\n::1 localhost ip6-localhost\n\
             192.0.2.7\tgw GW.example # trailing\n192.0.2.8 gw\n192.0.2.7 gw\nbogus line\n",
        );
        assert_eq!(
            lookup_in(&e, "localhost", Family::Ipv4),
            vec!["127.0.0.1".parse::<IpAddr>().unwrap()]
        );
        assert_eq!(
            lookup_in(&e, "localhost", Family::Ipv6),
            vec!["::1".parse::<IpAddr>().unwrap()]
        );
        assert_eq!(lookup_in(&e, "GW", Family::Ipv4).len(), 2);
        assert!(lookup_in(&e, "nowhere", Family::Ipv4).is_empty());
        assert_eq!(
            reverse_in(&e, "127.0.0.1".parse().unwrap()).as_deref(),
            Some("localhost")
        );
        assert_eq!(
            reverse_in(&e, "192.0.2.7".parse().unwrap()).as_deref(),
            Some("gw")
        );
        assert_eq!(reverse_in(&e, "192.0.2.9".parse().unwrap()), None);
        let nets = "default\t\t0.0.0.0\nloopback\t127.0.0.0\nshort 10 # ten\n";
        assert_eq!(network_in(nets, 0x7f00_0000).as_deref(), Some("loopback"));
        assert_eq!(network_in(nets, 10).as_deref(), Some("short"));
        assert_eq!(network_in(nets, 0x0a00_0000), None);
    }
}
