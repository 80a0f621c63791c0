//! The native nf_tables encoding of the rule model, byte for byte what `nft` 1.0.6 emits for
//! the same rule, and the decoder that turns any rule's expressions back into the model.
//!
//! Decoding is a pattern match over the expression list: known sequences (a load then a
//! compare, immediates then nat, ...) become model parts; anything else is kept as
//! [`Opaque`] in place, so the rule still prints in full and is flagged as not rewritable.
//!
//! This file is the encoder; [`decode`] lives in `codec/decode.rs`. Each model part's two
//! directions share the helpers here (register loads, compares, port and address layout).

#![deny(missing_docs)]

use std::fmt;
use std::net::IpAddr;

use crate::model::{
    Action, Counters, CtStateSet, Dir, Family, Interface, IpNet, L4Proto, Match, NatTarget, Opaque,
    PortRange, RejectKind, Rule,
};
use crate::wire::expr::{
    Bitwise, Cmp, CmpOp, Counter, Ct, Expr, Immediate, ImmediateData, Log, Lookup, Masq, Meta,
    MetaKey, Nat, NatKind, Payload, PayloadBase, REG_1, REG_2, REG_VERDICT, Range, Redir, Reject,
    Verdict,
};
use crate::wire::nftables::{SetElem, nfproto, udata};

/// NF_NAT_RANGE_PROTO_SPECIFIED: nft sets it whenever a port is given.
const NAT_PROTO_SPECIFIED: u32 = 0x2;
/// NF_NAT_RANGE_MAP_IPS: the kernel adds it on read-back whenever an address is given.
const NAT_MAP_IPS: u32 = 0x1;

/// Whether nat/masq flags say no more than the registers do (the kernel reports MAP_IPS and
/// PROTO_SPECIFIED itself; random, persistent, netmap... are not modelled).
fn nat_flags_plain(flags: Option<u32>, has_addr: bool, has_proto: bool) -> bool {
    let f = flags.unwrap_or(0);
    let allowed = if has_addr { NAT_MAP_IPS } else { 0 } | NAT_PROTO_SPECIFIED;
    f & !allowed == 0 && (f & NAT_PROTO_SPECIFIED != 0 || !has_proto || flags.is_none())
}
const IFNAMSIZ: usize = 16;

mod decode;
#[cfg(test)]
mod tests;

pub use decode::{decode, decode_with_sets};

/// The nf_tables backend's [`Opaque`] parts: expressions as the kernel reported them, which
/// the decoder could not turn into model parts (the iptables-nft decoder reads them on).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Exprs(pub Vec<Expr>);

impl fmt::Display for Exprs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

/// An anonymous set a rule needs (nft's `{ ... }`), created in the rule's batch; the rule's
/// `lookup` names it by its position in [`NativeRule::sets`] until the batch assigns ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnonSet {
    /// Whether elements are ranges (an interval set).
    pub interval: bool,
    /// The elements.
    pub elements: Vec<SetElem>,
}

/// A rule's native encoding: expressions, userdata, and the anonymous sets it looks up.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NativeRule {
    /// The expressions.
    pub exprs: Vec<Expr>,
    /// The userdata (a comment TLV), if any.
    pub userdata: Option<Vec<u8>>,
    /// The anonymous sets its lookups name, in order.
    pub sets: Vec<AnonSet>,
}

/// The name an anonymous set is created with; the kernel replaces `%d` with a free number.
pub const ANON_SET_NAME: &str = "__set%d";

/// Encodes a validated rule that needs no set: its expressions and its userdata.
pub fn encode(rule: &Rule, family: Family) -> crate::Result<(Vec<Expr>, Option<Vec<u8>>)> {
    let n = encode_native(rule, family)?;
    if !n.sets.is_empty() {
        return Err(crate::Error::InvalidInput(
            "the rule needs an anonymous set; encode it with encode_native".into(),
        ));
    }
    Ok((n.exprs, n.userdata))
}

/// Elements of a port set as nft writes them: single ports as they are; with any range an
/// interval set, led by `0 [end]`, each range as its first port and, flagged as an end, the
/// port after its last.
fn port_set_elements(ports: &[PortRange]) -> AnonSet {
    let mut sorted = ports.to_vec();
    sorted.sort_by_key(|p| p.first());
    // Adjacent ranges become one, as nft merges them (`1-5, 6-9` is `1-9`).
    let mut merged: Vec<PortRange> = Vec::with_capacity(sorted.len());
    for p in sorted {
        match merged.last_mut() {
            Some(last) if last.last().checked_add(1) == Some(p.first()) => {
                if let Ok(joined) = PortRange::new(last.first(), p.last()) {
                    *last = joined;
                }
            }
            _ => merged.push(p),
        }
    }
    let sorted = merged;
    let key = |p: u16| p.to_be_bytes().to_vec();
    let interval = sorted.iter().any(|p| !p.is_single());
    let mut elements = Vec::new();
    if interval {
        elements.push(SetElem {
            key: key(0),
            flags: SetElem::F_INTERVAL_END,
        });
        for p in &sorted {
            elements.push(SetElem {
                key: key(p.first()),
                flags: 0,
            });
            if let Some(end) = p.last().checked_add(1) {
                elements.push(SetElem {
                    key: key(end),
                    flags: SetElem::F_INTERVAL_END,
                });
            }
        }
    } else {
        elements.extend(sorted.iter().map(|p| SetElem {
            key: key(p.first()),
            flags: 0,
        }));
    }
    AnonSet { interval, elements }
}

/// The ports of a set's elements (the inverse of [`port_set_elements`]).
fn ports_of_elements(elements: &[SetElem]) -> Option<Vec<PortRange>> {
    let mut v: Vec<(u16, bool)> = elements
        .iter()
        .map(|e| {
            Some((
                u16::from_be_bytes(e.key.as_slice().try_into().ok()?),
                e.flags & SetElem::F_INTERVAL_END != 0,
            ))
        })
        .collect::<Option<_>>()?;
    // An end sorts before a start at the same port (adjacent ranges).
    v.sort_by_key(|(p, end)| (*p, !*end));
    if !v.iter().any(|(_, end)| *end) {
        return Some(v.into_iter().map(|(p, _)| PortRange::single(p)).collect());
    }
    let mut out = Vec::new();
    let mut start: Option<u16> = None;
    for (p, end) in v {
        match (end, start) {
            (false, None) => start = Some(p),
            (true, Some(s)) => {
                out.push(PortRange::new(s, p.checked_sub(1)?).ok()?);
                start = None;
            }
            (true, None) => {} // the leading `0 [end]`
            (false, Some(_)) => return None,
        }
    }
    if let Some(s) = start {
        out.push(PortRange::new(s, u16::MAX).ok()?);
    }
    Some(out)
}

/// Encodes a validated rule for a table of `family`.
pub fn encode_native(rule: &Rule, family: Family) -> crate::Result<NativeRule> {
    rule.validate(family)?;
    let mut sets: Vec<AnonSet> = Vec::new();
    let mut out = Vec::with_capacity(rule.matches.len() * 3 + 3);
    let mut l3_dependency_done = false;
    for m in &rule.matches {
        match m {
            Match::Protocol { proto, negated } => {
                out.push(meta(MetaKey::L4PROTO));
                out.push(cmp(*negated, vec![proto.number()]));
            }
            Match::Address { dir, net, negated } => {
                if family == Family::Inet && !l3_dependency_done {
                    let v = if net.is_ipv4() {
                        nfproto::IPV4
                    } else {
                        nfproto::IPV6
                    };
                    out.push(meta(MetaKey::NFPROTO));
                    out.push(cmp(false, vec![v]));
                    l3_dependency_done = true;
                }
                encode_address(&mut out, *dir, net, *negated);
            }
            Match::Port {
                dir,
                ports,
                negated,
            } => {
                let offset = if *dir == Dir::Source { 0 } else { 2 };
                out.push(load(PayloadBase::Transport, offset, 2));
                encode_port_range(&mut out, *ports, *negated);
            }
            Match::InInterface { name, negated } => {
                out.push(meta(MetaKey::IIFNAME));
                out.push(cmp(*negated, ifname_bytes(name)));
            }
            Match::OutInterface { name, negated } => {
                out.push(meta(MetaKey::OIFNAME));
                out.push(cmp(*negated, ifname_bytes(name)));
            }
            Match::CtState { states, negated } => encode_ct_state(&mut out, *states, *negated),
            Match::PortSet {
                dir,
                ports,
                negated,
            } => {
                let offset = if *dir == Dir::Source { 0 } else { 2 };
                out.push(load(PayloadBase::Transport, offset, 2));
                out.push(Expr::Lookup(Lookup {
                    set: ANON_SET_NAME.into(),
                    sreg: REG_1,
                    set_id: Some(sets.len() as u32),
                    dreg: None,
                    flags: negated.then_some(Lookup::F_INV),
                }));
                sets.push(port_set_elements(ports));
            }
            Match::Opaque(_) => unreachable_opaque()?,
        }
    }
    if let Some(c) = rule.counter {
        out.push(Expr::Counter(Counter {
            packets: c.packets,
            bytes: c.bytes,
        }));
    }
    match &rule.action {
        None => {}
        Some(Action::Accept) => out.push(verdict(Verdict::Accept)),
        Some(Action::Drop) => out.push(verdict(Verdict::Drop)),
        Some(Action::Return) => out.push(verdict(Verdict::Return)),
        Some(Action::Jump(c)) => out.push(verdict(Verdict::Jump(c.clone()))),
        Some(Action::Goto(c)) => out.push(verdict(Verdict::Goto(c.clone()))),
        Some(Action::Dnat(t)) => encode_nat(&mut out, NatKind::Dnat, t),
        Some(Action::Snat(t)) => encode_nat(&mut out, NatKind::Snat, t),
        Some(Action::Masquerade { ports }) => {
            // nft loads both ends for masquerade, even for one port.
            let (min, max) = port_registers(&mut out, *ports, REG_1, true);
            out.push(Expr::Masq(Masq {
                flags: min.map(|_| NAT_PROTO_SPECIFIED),
                reg_proto_min: min,
                reg_proto_max: max,
            }));
        }
        Some(Action::Redirect { ports }) => {
            let (min, max) = port_registers(&mut out, *ports, REG_1, false);
            out.push(Expr::Redir(Redir {
                reg_proto_min: min,
                reg_proto_max: max,
                flags: min.map(|_| NAT_PROTO_SPECIFIED),
            }));
        }
        Some(Action::Reject(kind)) => out.push(Expr::Reject(match kind {
            RejectKind::TcpReset => Reject {
                kind: Reject::TCP_RST,
                code: None,
            },
            RejectKind::Icmp(c) | RejectKind::Icmpv6(c) => Reject {
                kind: Reject::ICMP_UNREACH,
                code: Some(*c),
            },
            RejectKind::Icmpx(c) => Reject {
                kind: Reject::ICMPX_UNREACH,
                code: Some(*c),
            },
        })),
        Some(Action::Log { prefix, level }) => out.push(Expr::Log(Log {
            prefix: prefix.clone(),
            // nft sends no level for the default (warning); the kernel reports 4 either way.
            level: (*level != LOG_DEFAULT_LEVEL).then_some(u32::from(*level)),
            flags: None,
        })),
        Some(Action::Opaque(_)) => unreachable_opaque()?,
    }
    let userdata = match &rule.comment {
        Some(c) => Some(udata::encode_comment(c).ok_or_else(|| {
            crate::Error::InvalidInput(format!("comment of {} bytes does not fit", c.len()))
        })?),
        None => None,
    };
    Ok(NativeRule {
        exprs: out,
        userdata,
        sets,
    })
}

const LOG_DEFAULT_LEVEL: u8 = 4;

/// `ct state S` loads the state, masks it and compares with zero (nft's form); a negated
/// single state compares the value itself, as nft writes `ct state != invalid`.
fn encode_ct_state(out: &mut Vec<Expr>, states: CtStateSet, negated: bool) {
    out.push(Expr::Ct(Ct {
        key: Ct::KEY_STATE,
        dreg: REG_1,
        direction: None,
    }));
    let zero = vec![0; 4];
    if negated && states.0.count_ones() == 1 {
        out.push(Expr::Cmp(Cmp {
            sreg: REG_1,
            op: CmpOp::Neq,
            data: states.0.to_ne_bytes().to_vec(),
        }));
        return;
    }
    out.push(Expr::Bitwise(Bitwise {
        sreg: REG_1,
        dreg: REG_1,
        len: 4,
        mask: states.0.to_ne_bytes().to_vec(),
        xor: zero.clone(),
    }));
    out.push(Expr::Cmp(Cmp {
        sreg: REG_1,
        op: if negated { CmpOp::Eq } else { CmpOp::Neq },
        data: zero,
    }));
}

fn unreachable_opaque() -> crate::Result<()> {
    // `validate` refuses opaque parts first; this keeps the encoder total without a panic.
    Err(crate::Error::InvalidInput(
        "refusing to encode a rule with opaque parts".into(),
    ))
}

pub(crate) fn meta(key: MetaKey) -> Expr {
    Expr::Meta(Meta { key, dreg: REG_1 })
}
pub(crate) fn load(base: PayloadBase, offset: u32, len: u32) -> Expr {
    Expr::Payload(Payload {
        dreg: REG_1,
        base,
        offset,
        len,
    })
}
pub(crate) fn cmp(negated: bool, data: Vec<u8>) -> Expr {
    Expr::Cmp(Cmp {
        sreg: REG_1,
        op: if negated { CmpOp::Neq } else { CmpOp::Eq },
        data,
    })
}
pub(crate) fn imm(dreg: u32, data: Vec<u8>) -> Expr {
    Expr::Immediate(Immediate {
        dreg,
        data: ImmediateData::Value(data),
    })
}
pub(crate) fn verdict(v: Verdict) -> Expr {
    Expr::Immediate(Immediate {
        dreg: REG_VERDICT,
        data: ImmediateData::Verdict(v),
    })
}

/// Header offsets of the addresses: IPv4 saddr 12, daddr 16; IPv6 saddr 8, daddr 24.
fn address_offset(v4: bool, dir: Dir) -> u32 {
    match (v4, dir) {
        (true, Dir::Source) => 12,
        (true, Dir::Destination) => 16,
        (false, Dir::Source) => 8,
        (false, Dir::Destination) => 24,
    }
}

pub(crate) fn encode_address(out: &mut Vec<Expr>, dir: Dir, net: &IpNet, negated: bool) {
    let offset = address_offset(net.is_ipv4(), dir);
    let octets = net.octets();
    if let Some(p) = net.prefix().filter(|p| p % 8 == 0 && *p > 0) {
        // A byte-aligned prefix loads only the prefix bytes (as nft and iptables-nft do).
        let n = (p / 8) as usize;
        out.push(load(PayloadBase::Network, offset, n as u32));
        out.push(cmp(negated, octets[..n].to_vec()));
    } else {
        // Other prefixes, /0 included (nft emits a zero mask for it, which keeps a negated
        // /0 meaning "never" and an inet rule's family check meaningful), and non-contiguous
        // masks (iptables-nft writes the same three expressions), mask then compare.
        out.push(load(PayloadBase::Network, offset, octets.len() as u32));
        out.push(Expr::Bitwise(Bitwise {
            sreg: REG_1,
            dreg: REG_1,
            len: octets.len() as u32,
            mask: net.mask_octets(),
            xor: vec![0; octets.len()],
        }));
        out.push(cmp(negated, octets));
    }
}

fn encode_port_range(out: &mut Vec<Expr>, p: PortRange, negated: bool) {
    let (a, b) = (
        p.first().to_be_bytes().to_vec(),
        p.last().to_be_bytes().to_vec(),
    );
    if p.is_single() {
        out.push(cmp(negated, a));
    } else if negated {
        out.push(Expr::Range(Range {
            sreg: REG_1,
            op: CmpOp::Neq,
            from: a,
            to: b,
        }));
    } else {
        out.push(Expr::Cmp(Cmp {
            sreg: REG_1,
            op: CmpOp::Gte,
            data: a,
        }));
        out.push(Expr::Cmp(Cmp {
            sreg: REG_1,
            op: CmpOp::Lte,
            data: b,
        }));
    }
}

/// An exact name compares all IFNAMSIZ bytes (NUL padded); a `+` wildcard only the prefix.
fn ifname_bytes(name: &Interface) -> Vec<u8> {
    let (prefix, wildcard) = name.prefix();
    let mut v = prefix.as_bytes().to_vec();
    if !wildcard {
        v.resize(IFNAMSIZ, 0);
    }
    v
}

fn encode_nat(out: &mut Vec<Expr>, kind: NatKind, t: &NatTarget) {
    let (addr, fam) = match t.addr {
        IpAddr::V4(a) => (a.octets().to_vec(), nfproto::IPV4),
        IpAddr::V6(a) => (a.octets().to_vec(), nfproto::IPV6),
    };
    out.push(imm(REG_1, addr));
    let mut nat = Nat {
        kind,
        family: fam as u32,
        reg_addr_min: Some(REG_1),
        reg_addr_max: None,
        reg_proto_min: None,
        reg_proto_max: None,
        flags: None,
    };
    let (min, max) = port_registers(out, t.ports, REG_2, false);
    nat.reg_proto_min = min;
    nat.reg_proto_max = max;
    nat.flags = min.map(|_| NAT_PROTO_SPECIFIED);
    out.push(Expr::Nat(nat));
}

/// Loads a NAT port or range into registers `first` (and `first + 1` for the last port, or
/// always when `both`), as nft does before nat/masq/redir; returns the registers used.
fn port_registers(
    out: &mut Vec<Expr>,
    ports: Option<PortRange>,
    first: u32,
    both: bool,
) -> (Option<u32>, Option<u32>) {
    let Some(p) = ports else { return (None, None) };
    out.push(imm(first, p.first().to_be_bytes().to_vec()));
    if p.is_single() && !both {
        return (Some(first), None);
    }
    out.push(imm(first + 1, p.last().to_be_bytes().to_vec()));
    (Some(first), Some(first + 1))
}
