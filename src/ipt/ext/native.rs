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
//! [`encode`] writes exactly those; [`decode_at`] reads them back (and only them: a form
//! iptables-nft would not write stays opaque).

use super::super::rule::{IptMatch, IptTarget, XtPayload};
use crate::model::Family;
use crate::nft::codec::{cmp, meta};
use crate::wire::attr::{AttrWriter, Attrs};
use crate::wire::expr::{Bitwise, CmpOp, Expr, MetaKey, OtherExpr, REG_1};
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

/// A target iptables-nft wrote natively (NFLOG as a `log` expression with a group).
pub(crate) fn decode_target(e: &Expr, family: Family) -> Option<IptTarget> {
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

/// The native expressions for a payload iptables-nft writes natively, or `None`.
pub(crate) fn encode(p: &XtPayload) -> Option<Vec<Expr>> {
    match (p.name.as_str(), p.rev) {
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

/// A module iptables-nft wrote natively at the start of `exprs`, and how many expressions
/// it took.
pub(crate) fn decode_at(exprs: &[Expr], family: Family) -> Option<(IptMatch, usize)> {
    match exprs.first()? {
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
