//! The native nf_tables encoding of the rule model, byte for byte what `nft` 1.0.6 emits for
//! the same rule, and the decoder that turns any rule's expressions back into the model.
//!
//! Decoding is a pattern match over the expression list: known sequences (a load then a
//! compare, immediates then nat, ...) become model parts; anything else is kept as
//! [`Opaque`] in place, so the rule still prints in full and is flagged as not rewritable.
//!
//! Over 600 lines: encoder and decoder side by side, so that each model part's two
//! directions stay in view; issue 14 splits them into `encode`/`decode` modules.

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

/// An anonymous set a rule needs (nft's `{ ... }`), created in the rule's batch; the rule's
/// `lookup` names it by its position in [`NativeRule::sets`] until the batch assigns ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnonSet {
    pub interval: bool,
    pub elements: Vec<SetElem>,
}

/// A rule's native encoding: expressions, userdata, and the anonymous sets it looks up.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NativeRule {
    pub exprs: Vec<Expr>,
    pub userdata: Option<Vec<u8>>,
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

/// Decodes any rule's expressions. Never fails: what is not understood becomes [`Opaque`].
/// A lookup in a set stays opaque here; see [`decode_with_sets`].
pub fn decode(family: Family, exprs: &[Expr], userdata: Option<&[u8]>) -> Rule {
    decode_with_sets(family, exprs, userdata, &|_| None)
}

/// Like [`decode`], with the elements of the sets the rule looks up (by set name).
pub fn decode_with_sets(
    family: Family,
    exprs: &[Expr],
    userdata: Option<&[u8]>,
    sets: &dyn Fn(&str) -> Option<Vec<SetElem>>,
) -> Rule {
    let mut d = Decoder {
        sets,
        family,
        l3: match family {
            Family::Ipv4 => Some(true),
            Family::Ipv6 => Some(false),
            Family::Inet => None,
        },
        rule: Rule::default(),
    };
    let mut i = 0;
    while i < exprs.len() {
        let rest = &exprs[i..];
        let used = d.step(rest, i + rest.len() == exprs.len());
        match used {
            Some(n) => i += n,
            None => {
                d.opaque(exprs[i].clone());
                i += 1;
            }
        }
    }
    if let Some(u) = userdata {
        d.rule.comment = udata::comment(u);
        if d.rule.comment.is_none() && !u.is_empty() {
            // Userdata that is not a comment is not part of the model; keep the rule honest.
            d.rule
                .matches
                .push(Match::Opaque(Opaque { exprs: Vec::new() }));
        }
    }
    d.rule
}

struct Decoder<'a> {
    sets: &'a dyn Fn(&str) -> Option<Vec<SetElem>>,
    family: Family,
    /// Whether addresses are IPv4 (`Some(true)`), IPv6, or not yet known (inet).
    l3: Option<bool>,
    rule: Rule,
}

impl Decoder<'_> {
    fn opaque(&mut self, e: Expr) {
        if self.rule.action.is_some() {
            // Something after the action: keep it, flagged, as part of an opaque action.
            let prev = self.rule.action.take();
            let mut exprs = Vec::new();
            if let Some(Action::Opaque(o)) = prev {
                exprs = o.exprs;
            } else if let Some(a) = prev {
                // Re-encoding a known action cannot fail for what we just decoded.
                if let Ok((mut ex, _)) = encode(&Rule::new().action(a), Family::Inet) {
                    exprs.append(&mut ex);
                }
            }
            exprs.push(e);
            self.rule.action = Some(Action::Opaque(Opaque { exprs }));
            return;
        }
        if let Some(Match::Opaque(o)) = self.rule.matches.last_mut() {
            o.exprs.push(e);
        } else {
            self.rule
                .matches
                .push(Match::Opaque(Opaque { exprs: vec![e] }));
        }
    }

    fn push_match(&mut self, m: Match) -> bool {
        if self.rule.counter.is_some() || self.rule.action.is_some() {
            return false; // a match after the counter/action changes meaning; keep it opaque
        }
        self.rule.matches.push(m);
        true
    }

    /// Tries to recognise a pattern at the head of `e`; returns how many expressions it used.
    fn step(&mut self, e: &[Expr], _last: bool) -> Option<usize> {
        match e {
            [Expr::Meta(m), Expr::Cmp(c), ..] if m.dreg == c.sreg && is_eq_or_neq(c.op) => {
                let negated = c.op == CmpOp::Neq;
                let matched = match m.key {
                    MetaKey::L4PROTO if c.data.len() == 1 => Match::Protocol {
                        proto: L4Proto::from_number(c.data[0]),
                        negated,
                    },
                    MetaKey::IIFNAME => Match::InInterface {
                        name: ifname_from(&c.data)?,
                        negated,
                    },
                    MetaKey::OIFNAME => Match::OutInterface {
                        name: ifname_from(&c.data)?,
                        negated,
                    },
                    MetaKey::NFPROTO
                        if self.family == Family::Inet && !negated && c.data.len() == 1 =>
                    {
                        // The l3 dependency nft puts before address matches in inet tables.
                        let v4 = match c.data[0] {
                            nfproto::IPV4 => true,
                            nfproto::IPV6 => false,
                            _ => return None,
                        };
                        if self.l3.is_some_and(|l| l != v4) {
                            return None;
                        }
                        let next_is_address = matches!(
                            e.get(2),
                            Some(Expr::Payload(p)) if p.base == PayloadBase::Network
                        );
                        if !next_is_address {
                            return None;
                        }
                        self.l3 = Some(v4);
                        return Some(2);
                    }
                    _ => return None,
                };
                self.push_match(matched).then_some(2)
            }
            [Expr::Payload(p), rest @ ..] if p.base == PayloadBase::Network => {
                self.decode_address(p, rest)
            }
            [Expr::Payload(p), rest @ ..]
                if p.base == PayloadBase::Transport
                    && p.len == 2
                    && (p.offset == 0 || p.offset == 2) =>
            {
                let dir = if p.offset == 0 {
                    Dir::Source
                } else {
                    Dir::Destination
                };
                let has_proto = self.rule.matches.iter().any(
                    |m| matches!(m, Match::Protocol { proto, negated: false } if proto.has_ports()),
                );
                if !has_proto {
                    return None;
                }
                if let [Expr::Lookup(l), ..] = rest
                    && l.sreg == p.dreg
                    && l.dreg.is_none()
                {
                    let ports = ports_of_elements(&(self.sets)(&l.set)?)?;
                    let m = Match::PortSet {
                        dir,
                        ports,
                        negated: l.inverted(),
                    };
                    return self.push_match(m).then_some(2);
                }
                let (ports, negated, used) = decode_ports(p.dreg, rest)?;
                self.push_match(Match::Port {
                    dir,
                    ports,
                    negated,
                })
                .then_some(1 + used)
            }
            [Expr::Counter(c), ..] if self.rule.counter.is_none() && self.rule.action.is_none() => {
                self.rule.counter = Some(Counters {
                    packets: c.packets,
                    bytes: c.bytes,
                });
                Some(1)
            }
            [
                Expr::Immediate(Immediate {
                    dreg: REG_VERDICT,
                    data: ImmediateData::Verdict(v),
                }),
                ..,
            ] if self.rule.action.is_none() => {
                let a = match v {
                    Verdict::Accept => Action::Accept,
                    Verdict::Drop => Action::Drop,
                    Verdict::Return => Action::Return,
                    Verdict::Jump(c) => Action::Jump(c.clone()),
                    Verdict::Goto(c) => Action::Goto(c.clone()),
                    _ => return None,
                };
                self.rule.action = Some(a);
                Some(1)
            }
            [Expr::Immediate(_), ..]
            | [Expr::Nat(_), ..]
            | [Expr::Masq(_), ..]
            | [Expr::Redir(_), ..]
                if self.rule.action.is_none() =>
            {
                self.decode_nat(e)
            }
            [Expr::Ct(ct), rest @ ..] if ct.key == Ct::KEY_STATE && ct.direction.is_none() => {
                let (states, negated, used) = decode_ct_state(ct.dreg, rest)?;
                self.push_match(Match::CtState { states, negated })
                    .then_some(1 + used)
            }
            [Expr::Reject(r), ..] if self.rule.action.is_none() => {
                let kind = match (r.kind, r.code, self.family) {
                    (Reject::TCP_RST, None, _) => RejectKind::TcpReset,
                    (Reject::ICMP_UNREACH, Some(c), Family::Ipv4) => RejectKind::Icmp(c),
                    (Reject::ICMP_UNREACH, Some(c), Family::Ipv6) => RejectKind::Icmpv6(c),
                    (Reject::ICMPX_UNREACH, Some(c), _) if c <= 3 => RejectKind::Icmpx(c),
                    _ => return None,
                };
                self.rule.action = Some(Action::Reject(kind));
                Some(1)
            }
            [Expr::Log(l), ..] if self.rule.action.is_none() && l.flags.unwrap_or(0) == 0 => {
                let level = match l.level {
                    None => LOG_DEFAULT_LEVEL,
                    Some(n) if n <= 7 => n as u8,
                    Some(_) => return None,
                };
                self.rule.action = Some(Action::Log {
                    prefix: l.prefix.clone(),
                    level,
                });
                Some(1)
            }
            _ => None,
        }
    }

    fn decode_address(&mut self, p: &Payload, rest: &[Expr]) -> Option<usize> {
        let v4 = self.l3?;
        let full = if v4 { 4 } else { 16 };
        let dir = [Dir::Source, Dir::Destination]
            .into_iter()
            .find(|d| address_offset(v4, *d) == p.offset)?;
        let (net, cmp_at) = match rest {
            [Expr::Bitwise(b), Expr::Cmp(c), ..]
                if p.len as usize == full
                    && b.sreg == p.dreg
                    && b.dreg == p.dreg
                    && b.xor.iter().all(|&x| x == 0)
                    && c.sreg == p.dreg =>
            {
                (IpNet::from_octets_and_mask(&c.data, &b.mask)?, 2)
            }
            [Expr::Cmp(c), ..]
                if c.sreg == p.dreg
                    && c.data.len() == p.len as usize
                    && (1..=full).contains(&c.data.len()) =>
            {
                let mut bytes = c.data.clone();
                bytes.resize(full, 0);
                let mask: Vec<u8> = (0..full)
                    .map(|i| if i < c.data.len() { 0xff } else { 0 })
                    .collect();
                (IpNet::from_octets_and_mask(&bytes, &mask)?, 1)
            }
            _ => return None,
        };
        let op = match &rest[cmp_at - 1] {
            Expr::Cmp(c) => c.op,
            _ => return None,
        };
        if !is_eq_or_neq(op) {
            return None;
        }
        let m = Match::Address {
            dir,
            net,
            negated: op == CmpOp::Neq,
        };
        self.push_match(m).then_some(1 + cmp_at)
    }

    fn decode_nat(&mut self, e: &[Expr]) -> Option<usize> {
        // Collect leading immediates into registers, then expect nat or masq.
        let mut regs: Vec<(u32, &[u8])> = Vec::new();
        let mut i = 0;
        while let Some(Expr::Immediate(Immediate {
            dreg,
            data: ImmediateData::Value(v),
        })) = e.get(i)
        {
            if *dreg == REG_VERDICT {
                return None;
            }
            regs.push((*dreg, v));
            i += 1;
        }
        let reg = |r: Option<u32>| -> Option<Option<&[u8]>> {
            match r {
                None => Some(None),
                Some(r) => regs
                    .iter()
                    .rev()
                    .find(|(d, _)| *d == r)
                    .map(|(_, v)| Some(*v)),
            }
        };
        let port = |b: &[u8]| -> Option<u16> { Some(u16::from_be_bytes(b.try_into().ok()?)) };
        let ports = |min: Option<&[u8]>, max: Option<&[u8]>| -> Option<Option<PortRange>> {
            match (min, max) {
                (None, None) => Some(None),
                (Some(a), None) => Some(Some(PortRange::single(port(a)?))),
                (Some(a), Some(b)) => Some(Some(PortRange::new(port(a)?, port(b)?).ok()?)),
                (None, Some(_)) => None,
            }
        };
        let action = match e.get(i)? {
            Expr::Nat(n) => {
                if n.reg_addr_max.is_some() && n.reg_addr_max != n.reg_addr_min {
                    return None;
                }
                if !nat_flags_plain(n.flags, n.reg_addr_min.is_some(), n.reg_proto_min.is_some()) {
                    return None;
                }
                let addr = crate::model::ip_from_octets(reg(n.reg_addr_min)??)?;
                let fam_ok = match n.family as u8 {
                    nfproto::IPV4 => addr.is_ipv4(),
                    nfproto::IPV6 => addr.is_ipv6(),
                    _ => false,
                };
                if !fam_ok {
                    return None;
                }
                let ports = ports(reg(n.reg_proto_min)?, reg(n.reg_proto_max)?)?;
                let t = NatTarget { addr, ports };
                if n.kind == NatKind::Dnat {
                    Action::Dnat(t)
                } else {
                    Action::Snat(t)
                }
            }
            Expr::Masq(m) => {
                let ports = ports(reg(m.reg_proto_min)?, reg(m.reg_proto_max)?)?;
                if !nat_flags_plain(m.flags, false, ports.is_some()) {
                    return None;
                }
                Action::Masquerade { ports }
            }
            Expr::Redir(m) => {
                let ports = ports(reg(m.reg_proto_min)?, reg(m.reg_proto_max)?)?;
                if !nat_flags_plain(m.flags, false, ports.is_some()) {
                    return None;
                }
                Action::Redirect { ports }
            }
            _ => return None,
        };
        // Every immediate must have fed the nat expression.
        let used: Vec<u32> = match &e[i] {
            Expr::Nat(n) => [n.reg_addr_min, n.reg_proto_min, n.reg_proto_max]
                .into_iter()
                .flatten()
                .collect(),
            Expr::Masq(m) => [m.reg_proto_min, m.reg_proto_max]
                .into_iter()
                .flatten()
                .collect(),
            Expr::Redir(m) => [m.reg_proto_min, m.reg_proto_max]
                .into_iter()
                .flatten()
                .collect(),
            _ => Vec::new(),
        };
        if regs.iter().any(|(d, _)| !used.contains(d)) {
            return None;
        }
        self.rule.action = Some(action);
        Some(i + 1)
    }
}

/// After `ct load state`: a mask then `cmp neq 0` (one of the states) or `cmp eq 0` (none
/// of them), or a plain compare with a single state's value.
fn decode_ct_state(reg: u32, rest: &[Expr]) -> Option<(CtStateSet, bool, usize)> {
    let word = |b: &[u8]| -> Option<u32> { Some(u32::from_ne_bytes(b.try_into().ok()?)) };
    let known = |s: u32| (s != 0 && s & !CtStateSet::ALL == 0).then_some(CtStateSet(s));
    match rest {
        [Expr::Bitwise(b), Expr::Cmp(c), ..]
            if b.sreg == reg
                && b.dreg == reg
                && b.len == 4
                && b.xor == [0; 4]
                && c.sreg == reg
                && word(&c.data)? == 0 =>
        {
            let negated = match c.op {
                CmpOp::Neq => false,
                CmpOp::Eq => true,
                _ => return None,
            };
            Some((known(word(&b.mask)?)?, negated, 2))
        }
        [Expr::Cmp(c), ..] if c.sreg == reg && is_eq_or_neq(c.op) => {
            let v = word(&c.data)?;
            (v.count_ones() == 1).then_some(())?;
            Some((known(v)?, c.op == CmpOp::Neq, 1))
        }
        _ => None,
    }
}

fn is_eq_or_neq(op: CmpOp) -> bool {
    matches!(op, CmpOp::Eq | CmpOp::Neq)
}

/// A port compare after a 2-byte transport load: eq/neq, a range expression, or gte+lte.
fn decode_ports(reg: u32, rest: &[Expr]) -> Option<(PortRange, bool, usize)> {
    let port = |b: &[u8]| -> Option<u16> { Some(u16::from_be_bytes(b.try_into().ok()?)) };
    match rest {
        [Expr::Cmp(a), Expr::Cmp(b), ..]
            if a.sreg == reg && b.sreg == reg && a.op == CmpOp::Gte && b.op == CmpOp::Lte =>
        {
            Some((
                PortRange::new(port(&a.data)?, port(&b.data)?).ok()?,
                false,
                2,
            ))
        }
        [Expr::Cmp(c), ..] if c.sreg == reg && is_eq_or_neq(c.op) => {
            Some((PortRange::single(port(&c.data)?), c.op == CmpOp::Neq, 1))
        }
        [Expr::Range(r), ..] if r.sreg == reg && is_eq_or_neq(r.op) => Some((
            PortRange::new(port(&r.from)?, port(&r.to)?).ok()?,
            r.op == CmpOp::Neq,
            1,
        )),
        _ => None,
    }
}

/// "eth0\0..." is an exact name; bytes without a NUL are a prefix (`eth+`).
fn ifname_from(data: &[u8]) -> Option<Interface> {
    match data.iter().position(|&b| b == 0) {
        Some(nul) => {
            if data[nul..].iter().any(|&b| b != 0) {
                return None;
            }
            Interface::new(std::str::from_utf8(&data[..nul]).ok()?).ok()
        }
        None => Interface::new(format!("{}+", std::str::from_utf8(data).ok()?)).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Dir;

    fn round_trip(family: Family, rule: Rule) {
        let (exprs, ud) = encode(&rule, family).unwrap();
        let back = decode(family, &exprs, ud.as_deref());
        assert_eq!(back, rule, "exprs: {exprs:?}");
    }

    #[test]
    fn model_round_trips_through_expressions() {
        let any = || Rule::new();
        round_trip(
            Family::Ipv4,
            any()
                .protocol(L4Proto::Tcp)
                .dport(PortRange::single(22))
                .counted()
                .action(Action::Accept),
        );
        round_trip(
            Family::Ipv4,
            any()
                .source("10.0.0.0/24".parse().unwrap())
                .with(Match::Address {
                    dir: Dir::Destination,
                    net: "10.1.0.0/20".parse().unwrap(),
                    negated: true,
                })
                .action(Action::Drop),
        );
        round_trip(
            Family::Ipv4,
            any()
                .in_interface(Interface::new("eth0").unwrap())
                .with(Match::OutInterface {
                    name: Interface::new("veth+").unwrap(),
                    negated: true,
                })
                .action(Action::Return),
        );
        round_trip(
            Family::Ipv6,
            any()
                .protocol(L4Proto::Tcp)
                .dport(PortRange::new(8000, 8010).unwrap())
                .action(Action::Dnat(NatTarget {
                    addr: "2001:db8::2".parse().unwrap(),
                    ports: Some(PortRange::single(80)),
                })),
        );
        round_trip(
            Family::Inet,
            any()
                .source("192.0.2.0/24".parse().unwrap())
                .comment("hi")
                .action(Action::Jump("x".into())),
        );
        round_trip(
            Family::Ipv4,
            any()
                .protocol(L4Proto::Udp)
                .with(Match::Port {
                    dir: Dir::Source,
                    ports: PortRange::new(100, 200).unwrap(),
                    negated: true,
                })
                .action(Action::Masquerade {
                    ports: Some(PortRange::new(1024, 2048).unwrap()),
                }),
        );
    }

    #[test]
    fn unknown_parts_are_kept_in_place_and_flag_the_rule() {
        let (mut exprs, _) = encode(
            &Rule::new().protocol(L4Proto::Tcp).action(Action::Accept),
            Family::Ipv4,
        )
        .unwrap();
        // meta pkttype compare: not modelled
        exprs.insert(
            0,
            Expr::Meta(Meta {
                key: MetaKey::PKTTYPE,
                dreg: REG_1,
            }),
        );
        exprs.insert(
            1,
            Expr::Cmp(Cmp {
                sreg: REG_1,
                op: CmpOp::Eq,
                data: vec![0],
            }),
        );
        let rule = decode(Family::Ipv4, &exprs, None);
        assert!(!rule.is_expressible());
        assert!(matches!(&rule.matches[0], Match::Opaque(o) if o.exprs.len() == 2));
        assert_eq!(rule.action, Some(Action::Accept));
        assert!(
            encode(&rule, Family::Ipv4).is_err(),
            "opaque rules must not be re-encoded"
        );
    }

    #[test]
    fn port_sets_round_trip_through_nft_element_layout() {
        let p = |a, b| PortRange::new(a, b).unwrap();
        let interval = port_set_elements(&[p(443, 443), p(80, 80), p(1000, 2000)]);
        assert!(interval.interval);
        // `0 [end]`, then start / end+1 pairs, as nft writes `{ 80, 443, 1000-2000 }`.
        let keys: Vec<(u16, u32)> = interval
            .elements
            .iter()
            .map(|e| (u16::from_be_bytes([e.key[0], e.key[1]]), e.flags))
            .collect();
        assert_eq!(
            keys,
            [
                (0, 1),
                (80, 0),
                (81, 1),
                (443, 0),
                (444, 1),
                (1000, 0),
                (2001, 1)
            ]
        );
        assert_eq!(
            ports_of_elements(&interval.elements).unwrap(),
            [p(80, 80), p(443, 443), p(1000, 2000)]
        );
        let merged = port_set_elements(&[p(1, 5), p(6, 9), p(65535, 65535)]);
        assert_eq!(
            ports_of_elements(&merged.elements).unwrap(),
            [p(1, 9), p(65535, 65535)]
        );
        let plain = port_set_elements(&[p(22, 22), p(80, 80)]);
        assert!(!plain.interval);
        assert_eq!(
            ports_of_elements(&plain.elements).unwrap(),
            [p(22, 22), p(80, 80)]
        );
    }

    #[test]
    fn invalid_rules_are_refused_before_encoding() {
        let port_without_proto = Rule::new().dport(PortRange::single(80));
        assert!(encode(&port_without_proto, Family::Ipv4).is_err());
        let v6_in_ip = Rule::new().source("2001:db8::1".parse().unwrap());
        assert!(encode(&v6_in_ip, Family::Ipv4).is_err());
        let long_comment = Rule::new().action(Action::Accept).comment("x".repeat(300));
        assert!(encode(&long_comment, Family::Ipv4).is_err());
        assert!(
            encode(&Rule::new(), Family::Ipv4).is_err(),
            "a rule with no statement"
        );
        assert!(encode(&Rule::new().comment("only a note"), Family::Ipv4).is_err());
        let other_tcp = Rule::new()
            .protocol(L4Proto::Other(6))
            .action(Action::Accept);
        assert!(encode(&other_tcp, Family::Ipv4).is_err(), "Other(6) is Tcp");
        assert!(Interface::new("+").is_err());
        assert!(Interface::new("").is_err());
        assert!(Interface::new("eth+").is_ok());
    }
}
