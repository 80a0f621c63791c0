//! Values of options: addresses, ports and port lists, NAT ranges, log levels.

use super::*;

/// `-s`/`-d`'s value: one address or a comma-separated list (xtables_ipparse_multiple:
/// blanks before each item skipped, no duplicate removed); a host name gives each of its
/// addresses.
pub(super) fn parse_nets(s: &str, family: Family) -> Result<Vec<IpNet>> {
    let mut out = Vec::new();
    for item in s.split(',') {
        out.extend(parse_host_nets(item.trim_start(), family)?);
    }
    Ok(out)
}

/// One item of `-s`/`-d` as iptables' `xtables_ipparse_any`: with a zero mask the address is
/// not read at all (`0/0`, `::/0` and `anything/0` are every address); otherwise a numeric
/// address, else a host name's addresses from `/etc/hosts` (see [`crate::ipt::hosts`]), else
/// from DNS ([`crate::ipt::dns`]), each under the mask (repeats kept, as iptables keeps them).
fn parse_host_nets(s: &str, family: Family) -> Result<Vec<IpNet>> {
    let any = if family == Family::Ipv6 {
        "::"
    } else {
        "0.0.0.0"
    };
    let addr = crate::ipt::args::address_part(s);
    let mask = s.get(addr.len()..).unwrap_or_default();
    // A mask of decimal digits other than zero is not a zero mask: no address to try.
    let nonzero =
        |m: &str| m.bytes().all(|b| b.is_ascii_digit()) && m.parse::<u32>().is_ok_and(|n| n > 0);
    if let Some(m) = mask.strip_prefix('/')
        && !nonzero(m)
        && let Ok(zero) = parse_net(&format!("{any}/{m}"), family)
        && zero.prefix() == Some(0)
    {
        return Ok(vec![zero]);
    }
    match parse_net(s, family) {
        Ok(net) => Ok(vec![net]),
        Err(e) => {
            if addr.parse::<std::net::IpAddr>().is_ok() {
                return Err(e);
            }
            let mut found = crate::ipt::hosts::lookup(addr, family);
            if found.is_empty() {
                found = crate::ipt::dns::lookup(addr, family);
            }
            if found.is_empty() {
                return Err(e);
            }
            // one rule per address, also where the mask makes two the same (iptables'
            // xtables_ipparse_multiple keeps such repeats)
            found
                .iter()
                .map(|a| parse_net(&format!("{a}{mask}"), family))
                .collect()
        }
    }
}

pub(super) fn parse_net(s: &str, family: Family) -> Result<IpNet> {
    // An address already in its normal form (most are) is parsed as it is, not copied.
    let normalized;
    let text = if crate::ipt::args::is_normal_net(s) {
        s
    } else {
        normalized = crate::ipt::args::normalize_net(s, family);
        normalized.as_str()
    };
    let net: IpNet = text.parse().map_err(|_| {
        bad(format!(
            "host/network `{}' not found",
            crate::ipt::args::address_part(s)
        ))
    })?;
    if net.is_ipv4() != (family != Family::Ipv6) {
        return Err(bad(format!(
            "host/network `{s}' is not an {} address",
            if family == Family::Ipv6 {
                "IPv6"
            } else {
                "IPv4"
            }
        )));
    }
    Ok(net)
}

/// A port number or service name.
pub(super) fn port(s: &str) -> Result<u16> {
    if let Ok(n) = s.parse::<u16>() {
        return Ok(n);
    }
    services(s).ok_or_else(|| bad(format!("invalid port/service `{s}' specified")))
}

fn services(name: &str) -> Option<u16> {
    let text = std::fs::read_to_string("/etc/services").ok()?;
    text.lines().find_map(|l| {
        let l = l.split('#').next()?;
        let mut f = l.split_whitespace();
        let n = f.next()?;
        let port = f.next()?.split('/').next()?.parse().ok()?;
        (n == name || f.any(|alias| alias == name)).then_some(port)
    })
}

/// `p`, `a:b`, `a:` (to 65535) or `:b` (from 0), as tcp/udp `--sport/--dport` take them.
pub(crate) fn parse_ports(s: &str, opt: &str) -> Result<PortRange> {
    let (a, b) = match s.split_once(':') {
        Some((a, b)) => (
            if a.is_empty() { 0 } else { port(a)? },
            if b.is_empty() { 65535 } else { port(b)? },
        ),
        None => {
            let p = port(s)?;
            (p, p)
        }
    };
    PortRange::new(a, b).map_err(|_| {
        bad(format!(
            "invalid portrange ({s}) specified for {opt}: the first port is higher than the second"
        ))
    })
}

/// multiport's list: up to 15 ports, a range counting as two.
pub(super) fn parse_port_list(s: &str) -> Result<Vec<PortRange>> {
    let mut out = Vec::new();
    let mut slots = 0;
    for item in s.split(',') {
        let r = match item.split_once(':') {
            Some((a, b)) => PortRange::new(port(a)?, port(b)?)
                .map_err(|_| bad(format!("invalid portrange specified: {item}")))?,
            None => PortRange::single(port(item)?),
        };
        slots += if r.is_single() { 1 } else { 2 };
        out.push(r);
    }
    if slots > 15 {
        return Err(bad(
            "too many ports specified (multiport takes at most 15, a range counting as two)",
        ));
    }
    Ok(out)
}

/// `[addr[-addr]][:port[-port]]`, IPv6 addresses in brackets when a port follows.
pub(crate) fn parse_nat_range(s: &str, family: Family, opt: &str) -> Result<NatRange> {
    let err = || bad(format!("Bad IP address \"{s}\" for {opt}"));
    let (addrs, ports) = if let Some(rest) = s.strip_prefix('[') {
        let (inside, after) = rest.split_once(']').ok_or_else(err)?;
        (inside, after.strip_prefix(':'))
    } else if family == Family::Ipv6 {
        (s, None)
    } else {
        match s.split_once(':') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        }
    };
    let ip = |t: &str| -> Result<IpAddr> {
        let a: IpAddr = t.parse().map_err(|_| err())?;
        if a.is_ipv4() != (family != Family::Ipv6) {
            return Err(err());
        }
        Ok(a)
    };
    let (addr_min, addr_max) = if addrs.is_empty() {
        (None, None)
    } else {
        match addrs.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (ip(a)?, ip(b)?);
                // The kernel takes a reversed range and then maps nothing sensible.
                if a > b {
                    return Err(bad(format!(
                        "address range `{addrs}' for {opt} is reversed: {a} is higher than {b}"
                    )));
                }
                (Some(a), Some(b))
            }
            None => (Some(ip(addrs)?), None),
        }
    };
    let ports = match ports {
        None => None,
        Some(p) => Some(nat_ports(nat_port_spec(p)?, opt)?),
    };
    if addr_min.is_none() && ports.is_none() {
        return Err(err());
    }
    Ok(NatRange {
        addr_min,
        addr_max,
        ports,
    })
}

pub(crate) fn parse_to_ports(s: &str) -> Result<PortRange> {
    nat_port_spec(s).and_then(|r| nat_ports(r, "--to-ports"))
}

/// A NAT target's port or range as iptables 1.8.9's NAT extensions read it: the whole text
/// as a port number or service name first (`ftp-data` is 20), else `FIRST-LAST` in numbers
/// only (`echo-ssh` is refused, not read as 7-22), each refusal naming what iptables names.
fn nat_port_spec(s: &str) -> Result<PortRange> {
    if let Ok(p) = port(s) {
        return Ok(PortRange::single(p));
    }
    let number = |t: &str| t.parse::<u16>().ok();
    let Some((a, b)) = s.split_once('-') else {
        return Err(bad(format!("Port `{s}' not valid")));
    };
    let first = number(a).ok_or_else(|| bad(format!("Port `{s}' not valid")))?;
    let last = number(b).ok_or_else(|| bad(format!("Port `{b}' not valid")))?;
    // iptables says "Port range `LAST' funky"; xtnl names the whole range.
    PortRange::new(first, last).map_err(|_| bad(format!("Port range `{s}' invalid")))
}

/// A NAT rewrites to these ports. Port 0 is accepted, as iptables-nft 1.8.9 and the kernel
/// accept it (`REDIRECT --to-ports 0` is in scripts); a drop-in refuses nothing iptables
/// takes.
pub(super) fn nat_ports(range: PortRange, _opt: &str) -> Result<PortRange> {
    Ok(range)
}

pub(crate) fn log_level(s: &str) -> Result<u8> {
    const NAMES: [&str; 8] = [
        "emerg", "alert", "crit", "error", "warning", "notice", "info", "debug",
    ];
    if let Ok(n) = s.parse::<u8>() {
        if n <= 7 {
            return Ok(n);
        }
    }
    NAMES
        .iter()
        .position(|n| {
            *n == s
                || (s == "panic" && *n == "emerg")
                || (s == "warn" && *n == "warning")
                || (s == "err" && *n == "error")
        })
        .map(|i| i as u8)
        .ok_or_else(|| bad(format!("log-level `{s}' unknown")))
}
