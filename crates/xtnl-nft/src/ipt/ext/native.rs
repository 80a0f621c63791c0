//! The extensions iptables-nft 1.8.9 writes as native nf_tables expressions instead of
//! nft_compat (its `add_match`: `limit`, `mark`, and tcp/udp, whose ports xtnl already
//! encodes natively), found with `nft --debug=netlink list ruleset` after `iptables-nft -A`:
//!
//! ```text
//! -m mark --mark 0x1/0xff   [ meta load mark => reg 1 ] [ bitwise reg 1 = ( reg 1 & 0x000000ff ) ^ 0x00000000 ] [ cmp eq reg 1 0x00000001 ]
//! -m mark ! --mark 0x4      [ meta load mark => reg 1 ] [ cmp neq reg 1 0x00000004 ]
//! -m limit --limit 5/min --limit-burst 7   [ limit rate 5/minute burst 7 type packets flags 0x0 ]
//! -j NFLOG --nflog-prefix p --nflog-group 5 --nflog-size 128 --nflog-threshold 2
//!                           [ log prefix p group 5 snaplen 128 qthreshold 2 ]  (its `add_action`)
//! ```
//!
//! `encode` writes exactly those; `decode_at` reads them back (and only them: a form
//! iptables-nft would not write stays opaque).

use super::super::rule::{IptMatch, IptTarget, XtPayload};
use crate::ipt::rule::{Neg, PortsMatch};
use crate::model::Family;
use crate::model::PortRange;
use crate::nft::codec::{cmp, load, meta};
use crate::wire::attr::{AttrWriter, Attrs};
use crate::wire::expr::{Bitwise, CmpOp, Expr, MetaKey, OtherExpr, REG_1};
use crate::wire::expr::{Cmp, PayloadBase, Range};
use crate::xt::Tcp;
use crate::xt::layout::Raw;
use crate::xt::limit::{LIMIT_SCALE, Rateinfo};
use crate::xt::mark::MarkMatch;
use crate::xt::nflog::{NFLOG_F_COPY_LEN, Nflog};

mod limit_attr {
    pub const RATE: u16 = 1;
    pub const UNIT: u16 = 2;
    pub const BURST: u16 = 3;
    pub const TYPE: u16 = 4;
    pub const FLAGS: u16 = 5;
}

mod log_attr {
    pub const GROUP: u16 = 1;
    pub const PREFIX: u16 = 2;
    pub const SNAPLEN: u16 = 3;
    pub const QTHRESHOLD: u16 = 4;
}

/// The native expression for a target iptables-nft writes natively (NFLOG), or `None`.
pub(crate) fn encode_target(p: &XtPayload) -> Option<Vec<Expr>> {
    if (p.name.as_str(), p.rev) == ("TRACE", 0) {
        return Some(super::trace::native());
    }
    if (p.name.as_str(), p.rev) != ("NFLOG", 0) {
        return None;
    }
    let l = Nflog::decode(&p.info).ok()?;
    let mut data = Vec::new();
    let mut overflow = false;
    let mut w = AttrWriter::new(&mut data, &mut overflow);
    if l.prefix.0[0] != 0 {
        w.strz(log_attr::PREFIX, &l.prefix.text());
    }
    w.bytes(log_attr::GROUP, &l.group.to_be_bytes());
    if l.flags & NFLOG_F_COPY_LEN != 0 {
        w.u32_be(log_attr::SNAPLEN, l.len);
    }
    if l.threshold != 0 {
        w.bytes(log_attr::QTHRESHOLD, &l.threshold.to_be_bytes());
    }
    Some(vec![Expr::Other(OtherExpr {
        name: "log".into(),
        data,
    })])
}

/// `-j TRACE` as iptables-nft writes it (two expressions; see `super::trace`).
pub(crate) fn decode_trace(exprs: &[Expr], family: Family) -> Option<IptTarget> {
    // Without the registry nothing could print an extension's payload: the expressions
    // stay opaque (here and below), whole, and the rule is shown as one iptables cannot say.
    if !super::ENABLED {
        return None;
    }
    super::trace::decode_native(exprs, family)
}

/// A target iptables-nft wrote natively (NFLOG as a `log` expression with a group).
pub(crate) fn decode_target(e: &Expr, family: Family) -> Option<IptTarget> {
    if !super::ENABLED {
        return None;
    }
    let Expr::Other(o) = e else { return None };
    if o.name != "log" {
        return None;
    }
    let mut l = Nflog::default();
    let mut group = false;
    for a in Attrs::new(&o.data) {
        let a = a.ok()?;
        match a.ty {
            log_attr::GROUP => {
                l.group = u16::from_be_bytes(a.payload.try_into().ok()?);
                group = true;
            }
            log_attr::PREFIX => {
                let p = a.string("prefix").ok()?;
                l.prefix = Raw::from_str(&p, "prefix").ok()?;
            }
            log_attr::SNAPLEN => {
                l.len = a.u32_be("snaplen").ok()?;
                l.flags |= NFLOG_F_COPY_LEN;
            }
            log_attr::QTHRESHOLD => l.threshold = u16::from_be_bytes(a.payload.try_into().ok()?),
            _ => return None,
        }
    }
    if !group {
        return None;
    }
    Some(IptTarget::Ext(XtPayload {
        name: "NFLOG".into(),
        rev: 0,
        info: l.encode(),
        family,
    }))
}

/// iptables-nft's units for a limit, largest first (`add_nft_limit`).
const MULT: [u64; 4] = [
    LIMIT_SCALE as u64 * 24 * 60 * 60,
    LIMIT_SCALE as u64 * 60 * 60,
    LIMIT_SCALE as u64 * 60,
    LIMIT_SCALE as u64,
];

fn cmp_op(op: CmpOp, data: Vec<u8>) -> Expr {
    Expr::Cmp(Cmp {
        sreg: REG_1,
        op,
        data,
    })
}

/// One port range as iptables-nft compares it (`expr_gen_range_cmp16`): `cmp` for one
/// port, `cmp lte`/`gt` for `0:hi`, `range` otherwise.
fn range_cmp16(lo: u16, hi: u16, invert: bool) -> Expr {
    if lo == hi {
        cmp(invert, lo.to_be_bytes().to_vec())
    } else if lo == 0 && hi < u16::MAX {
        cmp_op(
            if invert { CmpOp::Gt } else { CmpOp::Lte },
            hi.to_be_bytes().to_vec(),
        )
    } else {
        Expr::Range(Range {
            sreg: REG_1,
            op: if invert { CmpOp::Neq } else { CmpOp::Eq },
            from: lo.to_be_bytes().to_vec(),
            to: hi.to_be_bytes().to_vec(),
        })
    }
}

/// tcp/udp ports as iptables-nft 1.8.9 writes them (`add_nft_tcpudp`): both single ports
/// with the same negation merge into one 4-byte load and compare.
pub(crate) fn tcpudp(spts: [u16; 2], inv_s: bool, dpts: [u16; 2], inv_d: bool) -> Vec<Expr> {
    let mut out = Vec::new();
    if spts[0] != 0 && spts[0] == spts[1] && dpts[0] != 0 && dpts[0] == dpts[1] && inv_s == inv_d {
        let combined = (u32::from(spts[0]) << 16) | u32::from(dpts[0]);
        out.push(load(PayloadBase::Transport, 0, 4));
        out.push(cmp(inv_s, combined.to_be_bytes().to_vec()));
        return out;
    }
    for (off, r, inv) in [(0, spts, inv_s), (2, dpts, inv_d)] {
        if r[0] != 0 || r[1] < u16::MAX {
            out.push(load(PayloadBase::Transport, off, 2));
            out.push(range_cmp16(r[0], r[1], inv));
        }
    }
    out
}

/// `-j NFLOG --nflog-range N` as nf_tables holds it: iptables-nft writes no snaplen without
/// `--nflog-size`, so the range is not in the kernel, and iptables-nft's `-C`/`-D` find the
/// rule with or without it.
pub fn normalize_nflog(r: &mut crate::ipt::IptRule) {
    if let Some(IptTarget::Ext(p)) = &mut r.target
        && (p.name.as_str(), p.rev) == ("NFLOG", 0)
        && let Ok(mut l) = Nflog::decode(&p.info)
        && l.flags & NFLOG_F_COPY_LEN == 0
        && l.len != 0
    {
        l.len = 0;
        p.info = l.encode();
    }
}

/// `! --dport 0:hi` as iptables-nft reads it back (`--dport hi+1:65535`), so that `-C`/`-D`
/// find what they wrote.
pub fn normalize_ports(r: &mut crate::ipt::IptRule) {
    let fix = |x: &mut Option<Neg<PortRange>>| {
        if let Some(n) = x
            && n.negated
            && n.value.first() == 0
            && n.value.last() < u16::MAX
            && let Ok(v) = PortRange::new(n.value.last() + 1, u16::MAX)
        {
            *n = Neg::plain(v);
        }
    };
    for m in &mut r.matches {
        match m {
            IptMatch::Tcp(p) | IptMatch::Udp(p) => {
                fix(&mut p.sport);
                fix(&mut p.dport);
            }
            IptMatch::Ext(x) if x.name == "tcp" && x.rev == 0 => {
                if let Ok(mut t) = Tcp::decode(&x.info) {
                    for (r, inv) in [(&mut t.spts, Tcp::INV_SRCPT), (&mut t.dpts, Tcp::INV_DSTPT)] {
                        if t.invflags & inv != 0 && r[0] == 0 && r[1] < u16::MAX {
                            *r = [r[1] + 1, u16::MAX];
                            t.invflags &= !inv;
                        }
                    }
                    x.info = t.encode();
                }
            }
            _ => {}
        }
    }
}

/// `-m tcp`/`-m udp` ports of the typed variants.
pub(crate) fn ports(p: &PortsMatch) -> Vec<Expr> {
    let r = |x: &Option<Neg<PortRange>>| {
        x.as_ref()
            .map(|n| ([n.value.first(), n.value.last()], n.negated))
            .unwrap_or(([0, u16::MAX], false))
    };
    let ((s, si), (d, di)) = (r(&p.sport), r(&p.dport));
    tcpudp(s, si, d, di)
}

/// The native expressions for a payload iptables-nft writes natively, or `None`.
pub(crate) fn encode(p: &XtPayload) -> Option<Vec<Expr>> {
    match (p.name.as_str(), p.rev) {
        ("tcp", 0) => {
            let t = Tcp::decode(&p.info).ok()?;
            if t.option != 0
                || t.invflags & !(Tcp::INV_SRCPT | Tcp::INV_DSTPT | Tcp::INV_FLAGS) != 0
            {
                return None;
            }
            let mut out = Vec::new();
            if t.flg_mask != 0 {
                out.push(load(PayloadBase::Transport, 13, 1));
                out.push(Expr::Bitwise(Bitwise {
                    sreg: REG_1,
                    dreg: REG_1,
                    len: 1,
                    mask: vec![t.flg_mask],
                    xor: vec![0],
                }));
                out.push(cmp(t.invflags & Tcp::INV_FLAGS != 0, vec![t.flg_cmp]));
            }
            out.extend(tcpudp(
                t.spts,
                t.invflags & Tcp::INV_SRCPT != 0,
                t.dpts,
                t.invflags & Tcp::INV_DSTPT != 0,
            ));
            Some(out)
        }
        ("mark", 1) => {
            let m = MarkMatch::decode(&p.info).ok()?;
            let mut out = vec![meta(MetaKey::MARK)];
            if m.mask != u32::MAX {
                out.push(Expr::Bitwise(Bitwise {
                    sreg: REG_1,
                    dreg: REG_1,
                    len: 4,
                    mask: m.mask.to_ne_bytes().to_vec(),
                    xor: vec![0; 4],
                }));
            }
            out.push(cmp(m.invert != 0, m.mark.to_ne_bytes().to_vec()));
            Some(out)
        }
        ("limit", 0) => {
            let r = Rateinfo::decode(&p.info).ok()?;
            let avg = u64::from(r.avg.max(1));
            let mut i = 1;
            while i < MULT.len() {
                if avg > MULT[i] || MULT[i] / avg < MULT[i] % avg {
                    break;
                }
                i += 1;
            }
            let mut data = Vec::new();
            let mut overflow = false;
            AttrWriter::new(&mut data, &mut overflow)
                .u64_be(limit_attr::RATE, MULT[i - 1] / avg)
                .u64_be(limit_attr::UNIT, MULT[i - 1] / u64::from(LIMIT_SCALE))
                .u32_be(limit_attr::BURST, r.burst)
                .u32_be(limit_attr::TYPE, 0)
                .u32_be(limit_attr::FLAGS, 0);
            Some(vec![Expr::Other(OtherExpr {
                name: "limit".into(),
                data,
            })])
        }
        _ => None,
    }
}

fn payload(name: &str, rev: u32, info: Vec<u8>, family: Family) -> IptMatch {
    IptMatch::Ext(XtPayload {
        name: name.into(),
        rev,
        info,
        family,
    })
}

/// Puts a decoded port into the tcp/udp module just before, if that one has the slot free
/// (iptables-nft writes one module's ports one after the other).
pub(crate) fn merge_port(
    last: Option<&mut IptMatch>,
    source: bool,
    range: PortRange,
    negated: bool,
) -> bool {
    let v = Some(Neg::new(range, negated));
    match last {
        Some(IptMatch::Tcp(p) | IptMatch::Udp(p)) => {
            let slot = if source { &mut p.sport } else { &mut p.dport };
            if slot.is_some() {
                return false;
            }
            *slot = v;
            true
        }
        Some(IptMatch::Ext(x)) if x.name == "tcp" && x.rev == 0 => {
            let Ok(mut t) = Tcp::decode(&x.info) else {
                return false;
            };
            let (slot, inv) = if source {
                (&mut t.spts, Tcp::INV_SRCPT)
            } else {
                (&mut t.dpts, Tcp::INV_DSTPT)
            };
            if *slot != [0, u16::MAX] || t.invflags & inv != 0 {
                return false;
            }
            *slot = [range.first(), range.last()];
            if negated {
                t.invflags |= inv;
            }
            x.info = t.encode();
            true
        }
        _ => false,
    }
}

fn port_of(e: &Expr) -> Option<(u32, u32)> {
    match e {
        Expr::Payload(p) if p.base == PayloadBase::Transport => Some((p.offset, p.len)),
        _ => None,
    }
}

/// The tcp/udp port forms the model's decoder leaves opaque (merged, `lte`/`gt`), into the
/// module before (`last`) or a new one; the number of expressions used.
pub(crate) fn decode_ports(
    exprs: &[Expr],
    tcp: bool,
    last: Option<&mut IptMatch>,
) -> Option<(Option<IptMatch>, usize)> {
    let (off, len) = port_of(exprs.first()?)?;
    let Expr::Cmp(c) = exprs.get(1)? else {
        return None;
    };
    let mut pm = PortsMatch::default();
    match (off, len, c.op, c.data.len()) {
        (0, 4, CmpOp::Eq | CmpOp::Neq, 4) => {
            let neg = c.op == CmpOp::Neq;
            let (s, d) = (
                u16::from_be_bytes([c.data[0], c.data[1]]),
                u16::from_be_bytes([c.data[2], c.data[3]]),
            );
            if s == 0 || d == 0 {
                return None;
            }
            if let Some(m @ IptMatch::Ext(_)) = last {
                let free = merge_port(Some(&mut *m), true, PortRange::single(s), neg);
                if free && merge_port(Some(m), false, PortRange::single(d), neg) {
                    return Some((None, 2));
                }
                return None;
            }
            pm.sport = Some(Neg::new(PortRange::single(s), neg));
            pm.dport = Some(Neg::new(PortRange::single(d), neg));
        }
        (0 | 2, 2, CmpOp::Lte | CmpOp::Gt, 2) => {
            let hi = u16::from_be_bytes([c.data[0], c.data[1]]);
            if hi == u16::MAX {
                return None;
            }
            // iptables-nft reads `gt hi` back as `hi+1:65535` (not as `! 0:hi`).
            let range = if c.op == CmpOp::Gt {
                PortRange::new(hi + 1, u16::MAX).ok()?
            } else {
                PortRange::new(0, hi).ok()?
            };
            let neg = false;
            if merge_port(last, off == 0, range, neg) {
                return Some((None, 2));
            }
            let v = Some(Neg::new(range, neg));
            if off == 0 { pm.sport = v } else { pm.dport = v }
        }
        _ => return None,
    }
    Some((
        Some(if tcp {
            IptMatch::Tcp(pm)
        } else {
            IptMatch::Udp(pm)
        }),
        2,
    ))
}

/// A module iptables-nft wrote natively at the start of `exprs`, and how many expressions
/// it took.
pub(crate) fn decode_at(exprs: &[Expr], family: Family) -> Option<(IptMatch, usize)> {
    if !super::ENABLED {
        return None;
    }
    match exprs.first()? {
        Expr::Payload(p) if p.base == PayloadBase::Transport && p.offset == 13 && p.len == 1 => {
            let Expr::Bitwise(b) = exprs.get(1)? else {
                return None;
            };
            let Expr::Cmp(c) = exprs.get(2)? else {
                return None;
            };
            if b.len != 1 || b.mask.len() != 1 || b.xor != [0] || c.data.len() != 1 {
                return None;
            }
            let inv = match c.op {
                CmpOp::Eq => 0,
                CmpOp::Neq => Tcp::INV_FLAGS,
                _ => return None,
            };
            if b.mask[0] == 0 || b.mask[0] & !0x3f != 0 || c.data[0] & !b.mask[0] != 0 {
                return None;
            }
            let t = Tcp {
                spts: [0, u16::MAX],
                dpts: [0, u16::MAX],
                option: 0,
                flg_mask: b.mask[0],
                flg_cmp: c.data[0],
                invflags: inv,
            };
            Some((payload("tcp", 0, t.encode(), family), 3))
        }
        Expr::Meta(m) if m.key == MetaKey::MARK => {
            let reg = m.dreg;
            let (mask, k) = match exprs.get(1)? {
                Expr::Bitwise(b)
                    if b.sreg == reg
                        && b.len == 4
                        && b.xor.iter().all(|&x| x == 0)
                        && b.mask.len() == 4 =>
                {
                    let mask = u32::from_ne_bytes(b.mask[..4].try_into().ok()?);
                    // iptables-nft leaves an all-ones mask out.
                    if mask == u32::MAX {
                        return None;
                    }
                    (mask, 2)
                }
                _ => (u32::MAX, 1),
            };
            let Expr::Cmp(c) = exprs.get(k)? else {
                return None;
            };
            if c.sreg != reg || c.data.len() != 4 {
                return None;
            }
            let invert = match c.op {
                CmpOp::Eq => 0,
                CmpOp::Neq => 1,
                _ => return None,
            };
            let mark = u32::from_ne_bytes(c.data[..4].try_into().ok()?);
            let info = MarkMatch { mark, mask, invert }.encode();
            Some((payload("mark", 1, info, family), k + 1))
        }
        Expr::Other(o) if o.name == "limit" => {
            let (mut rate, mut unit, mut burst, mut ty, mut flags) = (None, None, None, 0, 0);
            for a in Attrs::new(&o.data) {
                let a = a.ok()?;
                match a.ty {
                    limit_attr::RATE => rate = Some(a.u64_be("rate").ok()?),
                    limit_attr::UNIT => unit = Some(a.u64_be("unit").ok()?),
                    limit_attr::BURST => burst = Some(a.u32_be("burst").ok()?),
                    limit_attr::TYPE => ty = a.u32_be("type").ok()?,
                    limit_attr::FLAGS => flags = a.u32_be("flags").ok()?,
                    _ => return None,
                }
            }
            let (rate, unit) = (rate?, unit?);
            if ty != 0 || flags != 0 || rate == 0 {
                return None;
            }
            let avg = u32::try_from(u64::from(LIMIT_SCALE) * unit / rate).ok()?;
            let r = Rateinfo {
                avg,
                burst: burst.unwrap_or(0),
            };
            // Only what re-encodes to the same expression is iptables' form.
            let p = XtPayload {
                name: "limit".into(),
                rev: 0,
                info: r.encode(),
                family,
            };
            let back = encode(&p)?;
            if back.first() != exprs.first() {
                return None;
            }
            Some((IptMatch::Ext(p), 1))
        }
        _ => None,
    }
}
