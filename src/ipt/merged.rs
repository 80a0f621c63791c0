//! Encodings iptables-nft 1.8.9 merges: `-p tcp|udp --sport X --dport Y` (both single ports,
//! neither negated) is written as one 4-byte transport payload load at offset 0 and one
//! `cmp eq` of both ports, not as two loads (captured with `nft --debug=netlink`:
//! `[ payload load 4b @ transport header + 0 => reg 1 ] [ cmp eq reg 1 0x43004400 ]` for
//! `-p udp --sport 68 --dport 67`).

use super::rule::{IptMatch, Neg, PortsMatch};
use crate::model::{L4Proto, PortRange};
use crate::wire::expr::{CmpOp, Expr, PayloadBase};

/// The tcp/udp match the first two expressions say, when they are the merged port form and
/// the rule's protocol is tcp or udp (not negated).
pub(crate) fn ports(exprs: &[Expr], proto: Option<&Neg<L4Proto>>) -> Option<IptMatch> {
    let (Some(Expr::Payload(p)), Some(Expr::Cmp(c))) = (exprs.first(), exprs.get(1)) else {
        return None;
    };
    let proto = proto.filter(|p| !p.negated)?.value;
    if p.base != PayloadBase::Transport
        || p.offset != 0
        || p.len != 4
        || c.op != CmpOp::Eq
        || c.sreg != p.dreg
        || c.data.len() != 4
    {
        return None;
    }
    let sport = u16::from_be_bytes([c.data[0], c.data[1]]);
    let dport = u16::from_be_bytes([c.data[2], c.data[3]]);
    let m = PortsMatch {
        sport: Some(Neg::new(PortRange::single(sport), false)),
        dport: Some(Neg::new(PortRange::single(dport), false)),
    };
    match proto {
        L4Proto::Tcp => Some(IptMatch::Tcp(m)),
        L4Proto::Udp => Some(IptMatch::Udp(m)),
        _ => None,
    }
}
