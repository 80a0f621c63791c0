//! The decoder: any rule's expressions back into the model. A pattern match over the list;
//! what it does not recognise stays, in place, as [`Opaque`] parts ([`Exprs`]).

use super::*;

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
                .push(Match::Opaque(Opaque::new(Exprs::default())));
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
                exprs = o.parts::<Exprs>().map(|x| x.0.clone()).unwrap_or_default();
            } else if let Some(a) = prev {
                // Re-encoding a known action cannot fail for what we just decoded.
                if let Ok((mut ex, _)) = encode(&Rule::new().action(a), Family::Inet) {
                    exprs.append(&mut ex);
                }
            }
            exprs.push(e);
            self.rule.action = Some(Action::Opaque(Opaque::new(Exprs(exprs))));
            return;
        }
        if let Some(Match::Opaque(o)) = self.rule.matches.last_mut()
            && let Some(x) = o.parts_mut::<Exprs>()
        {
            x.0.push(e);
        } else {
            self.rule
                .matches
                .push(Match::Opaque(Opaque::new(Exprs(vec![e]))));
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
