//! Protocol names the way iptables prints and parses them: its own short table first, then
//! the system's `/etc/protocols` (what `getprotobynumber` reads), then the number.

#![deny(missing_docs)]

use std::sync::OnceLock;

/// iptables' `xtables_chain_protos`.
const IPTABLES_PROTOS: [(&str, u8); 11] = [
    ("tcp", 6),
    ("sctp", 132),
    ("udp", 17),
    ("udplite", 136),
    ("icmp", 1),
    ("ipv6-icmp", 58),
    ("esp", 50),
    ("ah", 51),
    ("mobility-header", 135),
    ("ipv6-mh", 135),
    ("mh", 135),
];

fn system() -> &'static Vec<(String, u8, Vec<String>)> {
    static TABLE: OnceLock<Vec<(String, u8, Vec<String>)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let text = std::fs::read_to_string("/etc/protocols").unwrap_or_default();
        text.lines()
            .filter_map(|l| {
                let l = l.split('#').next()?;
                let mut f = l.split_whitespace();
                let name = f.next()?.to_string();
                let num = f.next()?.parse().ok()?;
                Some((name, num, f.map(str::to_string).collect()))
            })
            .collect()
    })
}

/// `getservbyport`: the service name of a port for `tcp` or `udp`, from `/etc/services`.
pub fn service_of(port: u16, proto: &str) -> Option<String> {
    static TABLE: OnceLock<Vec<(String, u16, String)>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let text = std::fs::read_to_string("/etc/services").unwrap_or_default();
        text.lines()
            .filter_map(|l| {
                let l = l.split('#').next()?;
                let mut f = l.split_whitespace();
                let name = f.next()?.to_string();
                let (port, proto) = f.next()?.split_once('/')?;
                Some((name, port.parse().ok()?, proto.to_string()))
            })
            .collect()
    });
    table
        .iter()
        .find(|(_, p, pr)| *p == port && pr == proto)
        .map(|(n, _, _)| n.clone())
}

/// iptables' own short name for a protocol, without looking at the system's list.
pub fn iptables_name(n: u8) -> Option<&'static str> {
    IPTABLES_PROTOS
        .iter()
        .find(|(_, p)| *p == n)
        .map(|(name, _)| *name)
}

/// The name `iptables -S` prints for a protocol number.
pub fn name_of(n: u8) -> String {
    if let Some((name, _)) = IPTABLES_PROTOS.iter().find(|(_, p)| *p == n) {
        return (*name).to_string();
    }
    system()
        .iter()
        .find(|(_, p, _)| *p == n)
        .map(|(name, _, _)| name.clone())
        .unwrap_or_else(|| n.to_string())
}

/// Parses `-p` values: a number, `all` (0), iptables' names, `icmpv6`, or a name or alias
/// from `/etc/protocols`. Case-insensitive like iptables.
pub fn number_of(s: &str) -> Option<u8> {
    if let Ok(n) = s.parse::<u8>() {
        return Some(n);
    }
    let lower = s.to_ascii_lowercase();
    if lower == "all" {
        return Some(0);
    }
    if lower == "icmpv6" {
        return Some(58);
    }
    if let Some((_, n)) = IPTABLES_PROTOS.iter().find(|(name, _)| *name == lower) {
        return Some(*n);
    }
    system()
        .iter()
        .find(|(name, _, aliases)| {
            *name == lower || aliases.iter().any(|a| a.eq_ignore_ascii_case(&lower))
        })
        .map(|(_, n, _)| *n)
}

/// `getprotobyname`: a name or alias of the system's `/etc/protocols` (case-sensitive, as
/// glibc compares them), without iptables' own table.
pub fn system_number_of(s: &str) -> Option<u8> {
    system()
        .iter()
        .find(|(name, _, aliases)| name == s || aliases.iter().any(|a| a == s))
        .map(|(_, n, _)| *n)
}

/// `getprotobynumber`: the system's name for a protocol number.
pub fn system_name_of(n: u8) -> Option<String> {
    system()
        .iter()
        .find(|(_, p, _)| *p == n)
        .map(|(name, _, _)| name.clone())
}
