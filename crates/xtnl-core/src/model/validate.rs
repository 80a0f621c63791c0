use super::{Action, Dir, Family, L4Proto, Match, Rule};
use crate::Error;

pub use crate::limits::{MAX_COMMENT_LEN, MAX_NAME_LEN, MAX_SET_ELEMENTS};

/// Table and chain names: 1..=255 bytes, no NUL or control characters (the nf_tables check,
/// [`crate::limits::check_name`]).
pub fn validate_name(kind: &str, name: &str) -> crate::Result<()> {
    crate::limits::check_name(kind, name)
}

pub(super) fn rule(rule: &Rule, family: Family) -> crate::Result<()> {
    if rule.matches.is_empty() && rule.counter.is_none() && rule.action.is_none() {
        // The kernel would store it, but nft cannot write it and `nft -f` of a listing
        // turns it into a chain comment: the rule would vanish on a save/restore.
        return Err(Error::InvalidInput(
            "a rule needs at least one match, a counter or an action".into(),
        ));
    }
    let mut proto: Option<L4Proto> = None;
    let mut seen_addr_v4 = None;
    for m in &rule.matches {
        match m {
            Match::Protocol { proto: p, negated } => {
                if let L4Proto::Other(n) = p
                    && L4Proto::from_number(*n) != *p
                {
                    return Err(Error::InvalidInput(format!(
                        "protocol number {n} has a name; use L4Proto::{:?}",
                        L4Proto::from_number(*n)
                    )));
                }
                if !negated {
                    proto = Some(*p);
                }
            }
            Match::Address { net, dir, .. } => {
                let ok = match family {
                    Family::Ipv4 => net.is_ipv4(),
                    Family::Ipv6 => !net.is_ipv4(),
                    Family::Inet => true,
                };
                if !ok {
                    return Err(Error::InvalidInput(format!(
                        "{} address {net} does not belong in a {family} table",
                        if *dir == Dir::Source {
                            "source"
                        } else {
                            "destination"
                        }
                    )));
                }
                if let Some(v4) = seen_addr_v4
                    && v4 != net.is_ipv4()
                {
                    return Err(Error::InvalidInput(
                        "a rule cannot match both IPv4 and IPv6 addresses".into(),
                    ));
                }
                seen_addr_v4 = Some(net.is_ipv4());
            }
            Match::PortSet { ports, .. } => {
                if !proto.is_some_and(L4Proto::has_ports) {
                    return Err(Error::InvalidInput(
                        "a port set needs a tcp or udp protocol match before it".into(),
                    ));
                }
                if ports.is_empty() || ports.len() > MAX_SET_ELEMENTS {
                    return Err(Error::InvalidInput(format!(
                        "a port set holds 1 to {MAX_SET_ELEMENTS} ports or ranges, not {}",
                        ports.len()
                    )));
                }
                let mut sorted = ports.clone();
                sorted.sort_by_key(|p| p.first());
                if let Some(w) = sorted.windows(2).find(|w| w[1].first() <= w[0].last()) {
                    return Err(Error::InvalidInput(format!(
                        "ports {} and {} overlap in one set",
                        w[0], w[1]
                    )));
                }
            }
            Match::Port { .. } => {
                if !proto.is_some_and(L4Proto::has_ports) {
                    return Err(Error::InvalidInput(
                        "a port match needs a tcp or udp protocol match before it".into(),
                    ));
                }
            }
            Match::InInterface { .. } | Match::OutInterface { .. } => {}
            Match::CtState { states, .. } => {
                if states.0 == 0 || states.0 & !super::CtStateSet::ALL != 0 {
                    return Err(Error::InvalidInput(format!(
                        "connection state set 0x{:x} is empty or holds unknown states",
                        states.0
                    )));
                }
            }
            Match::Opaque(_) => {
                return Err(Error::InvalidInput(
                    "the rule holds expressions xtnl does not understand; refusing to rewrite it"
                        .into(),
                ));
            }
        }
    }
    match &rule.action {
        Some(Action::Jump(c) | Action::Goto(c)) => validate_name("chain", c)?,
        Some(Action::Dnat(t) | Action::Snat(t)) => {
            let fits = match family {
                Family::Ipv4 => t.addr.is_ipv4(),
                Family::Ipv6 => t.addr.is_ipv6(),
                Family::Inet => true,
            };
            if !fits {
                return Err(Error::InvalidInput(format!(
                    "NAT address {} does not belong in a {family} table",
                    t.addr
                )));
            }
            if let Some(v4) = seen_addr_v4
                && v4 != t.addr.is_ipv4()
            {
                return Err(Error::InvalidInput(
                    "NAT address family differs from the rule's address matches".into(),
                ));
            }
            if t.ports.is_some() && !proto.is_some_and(L4Proto::has_ports) {
                return Err(Error::InvalidInput(
                    "a NAT port needs a tcp or udp protocol match in the rule".into(),
                ));
            }
        }
        Some(Action::Masquerade { ports: Some(_) }) if !proto.is_some_and(L4Proto::has_ports) => {
            return Err(Error::InvalidInput(
                "masquerade ports need a tcp or udp protocol match in the rule".into(),
            ));
        }
        Some(Action::Redirect { ports: Some(_) }) if !proto.is_some_and(L4Proto::has_ports) => {
            return Err(Error::InvalidInput(
                "redirect ports need a tcp or udp protocol match in the rule".into(),
            ));
        }
        Some(Action::Reject(kind)) => {
            let fits = match kind {
                super::RejectKind::TcpReset => proto == Some(L4Proto::Tcp),
                super::RejectKind::Icmp(_) => family == Family::Ipv4,
                super::RejectKind::Icmpv6(_) => family == Family::Ipv6,
                super::RejectKind::Icmpx(c) => *c <= 3,
            };
            if !fits {
                return Err(Error::InvalidInput(format!(
                    "reject {kind:?} does not fit a {family} table (a TCP reset needs a tcp match; \
                     ICMP codes belong in ip, ICMPv6 in ip6, ICMPX (0-3) anywhere)"
                )));
            }
        }
        Some(Action::Log { prefix, level }) => {
            if *level > 7 {
                return Err(Error::InvalidInput(format!(
                    "log level {level} is not a syslog level (0-7)"
                )));
            }
            if let Some(p) = prefix
                && (p.len() > 127 || p.contains('\0'))
            {
                return Err(Error::InvalidInput(
                    "log prefix must be at most 127 bytes without NUL".into(),
                ));
            }
        }
        Some(Action::Opaque(_)) => {
            return Err(Error::InvalidInput(
                "the rule holds an action xtnl does not understand; refusing to rewrite it".into(),
            ));
        }
        _ => {}
    }
    if let Some(c) = &rule.comment {
        if c.len() > MAX_COMMENT_LEN {
            return Err(Error::InvalidInput(format!(
                "comment is {} bytes; at most {MAX_COMMENT_LEN} fit",
                c.len()
            )));
        }
        if c.contains('\0') {
            return Err(Error::InvalidInput("comment holds a NUL byte".into()));
        }
    }
    Ok(())
}
