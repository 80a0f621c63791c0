//! iptables' view of a rule ([`IptRule`]) <-> an x_tables rule ([`Rule`]), with the same
//! payloads iptables-nft puts in nft_compat expressions ([`crate::ipt::xt_bridge`]), and
//! the header fields as iptables-legacy 1.8.9 fills them (checked byte for byte against its
//! blobs in tests/legacy_diff.rs).

use super::blob::{self, Entry, EntryParts, Ext, IFNAMSIZ, IpHeader, flags, inv, verdict};
use super::table::{Carry, Raw, Rule, Verdict};
use crate::error::{Error, Result};
use crate::ipt::xt_bridge::{self, XtLeftover};
use crate::ipt::{IptMatch, IptRule, IptTarget, Neg};
use crate::model::{Counters, Family, Interface, IpNet, L4Proto, Opaque};
use crate::wire::expr::{Match, Target};

fn iface(n: &Neg<Interface>) -> ([u8; IFNAMSIZ], [u8; IFNAMSIZ]) {
    // iptables keeps the `+` in the name and masks the bytes before it; an exact name is
    // masked with its NUL.
    let (prefix, wildcard) = n.value.prefix();
    let mut name = [0u8; IFNAMSIZ];
    let mut mask = [0u8; IFNAMSIZ];
    let s = n.value.as_str().as_bytes();
    name[..s.len()].copy_from_slice(s);
    let masked = if wildcard {
        prefix.len()
    } else {
        prefix.len() + 1
    };
    mask[..masked.min(IFNAMSIZ)].fill(0xff);
    (name, mask)
}

/// The x_tables rule for `rule` in `table`; counters start from zero.
pub fn to_rule(family: Family, table: &str, rule: &IptRule) -> Result<Rule> {
    if !rule.is_expressible() {
        return Err(Error::InvalidInput(
            "the rule holds parts iptables syntax cannot express; refusing to rewrite it".into(),
        ));
    }
    crate::ipt::compat::check_target_fits_table(table, rule)?;
    let mut ip = IpHeader::any(family);
    let v6 = family == Family::Ipv6;
    let addr = |n: &Neg<IpNet>| -> Result<(Vec<u8>, Vec<u8>)> {
        if n.value.is_ipv4() == v6 {
            return Err(Error::InvalidInput(format!(
                "address {} is not of family {family}",
                n.value
            )));
        }
        Ok((n.value.octets(), n.value.mask_octets()))
    };
    if let Some(s) = &rule.src {
        (ip.src, ip.smsk) = addr(s)?;
        if s.negated {
            ip.invflags |= inv::SRCIP;
        }
    }
    if let Some(d) = &rule.dst {
        (ip.dst, ip.dmsk) = addr(d)?;
        if d.negated {
            ip.invflags |= inv::DSTIP;
        }
    }
    if let Some(i) = &rule.in_iface {
        (ip.iniface, ip.iniface_mask) = iface(i);
        if i.negated {
            ip.invflags |= inv::VIA_IN;
        }
    }
    if let Some(o) = &rule.out_iface {
        (ip.outiface, ip.outiface_mask) = iface(o);
        if o.negated {
            ip.invflags |= inv::VIA_OUT;
        }
    }
    if let Some(p) = &rule.proto {
        ip.proto = u16::from(p.value.number());
        if p.negated {
            ip.invflags |= inv::PROTO;
        }
        if v6 {
            ip.flags |= flags::V6_PROTO;
        }
    }
    let mut matches = Vec::new();
    for m in &rule.matches {
        let x = xt_bridge::match_to_xt(m, family)?;
        matches.push(Ext {
            name: x.name().to_string(),
            revision: rev(x.revision())?,
            data: x.encode(),
        });
    }
    let verdict = match &rule.target {
        None => Verdict::Fallthrough,
        Some(IptTarget::Accept) => Verdict::Accept,
        Some(IptTarget::Drop) => Verdict::Drop,
        Some(IptTarget::Return) => Verdict::Return,
        Some(IptTarget::Jump(c)) => Verdict::Jump(c.clone()),
        Some(IptTarget::Goto(c)) => Verdict::Goto(c.clone()),
        Some(_) => Verdict::Ext,
    };
    let target = match (&rule.target, &verdict) {
        (Some(t), Verdict::Ext) => {
            let x = xt_bridge::target_to_xt(t, family)?;
            Ext {
                name: x.name().to_string(),
                revision: rev(x.revision())?,
                data: x.encode(),
            }
        }
        (_, Verdict::Accept) => Ext::standard(verdict::ACCEPT),
        (_, Verdict::Drop) => Ext::standard(verdict::DROP),
        (_, Verdict::Return) => Ext::standard(verdict::RETURN),
        // Offsets, written when the table is laid out.
        _ => Ext::standard(0),
    };
    let extra_flags = match verdict {
        Verdict::Goto(_) => goto_flag(family),
        _ => 0,
    };
    let mut bytes = Vec::new();
    blob::encode_parts(
        family,
        &EntryParts {
            ip: &ip,
            extra_flags,
            nfcache: 0,
            comefrom: 0,
            counters: Counters::default(),
            matches: &matches,
            target: &target,
        },
        &mut bytes,
    )
    .map_err(Error::from)?;
    Ok(Rule {
        raw: Raw::owned(family, bytes),
        verdict,
        counters: Counters::default(),
        carry: rule.counters.map_or(Carry::Zero, Carry::Start),
    })
}

fn goto_flag(family: Family) -> u8 {
    if family == Family::Ipv6 {
        flags::V6_GOTO
    } else {
        flags::V4_GOTO
    }
}

fn rev(r: u32) -> Result<u8> {
    u8::try_from(r).map_err(|_| Error::InvalidInput(format!("revision {r} does not fit x_tables")))
}

/// A part of the header iptables syntax here has no word for, kept visible and unmatched.
fn opaque_header(what: &str) -> IptMatch {
    IptMatch::Opaque(Opaque::new(XtLeftover::Header(what.to_string())))
}

fn net_of(addr: &[u8], mask: &[u8], negated: bool) -> Option<Option<Neg<IpNet>>> {
    if mask.iter().all(|&b| b == 0) && addr.iter().all(|&b| b == 0) && !negated {
        return Some(None);
    }
    IpNet::from_octets_and_mask(addr, mask).map(|n| Some(Neg::new(n, negated)))
}

fn iface_of(
    name: &[u8; IFNAMSIZ],
    mask: &[u8; IFNAMSIZ],
    negated: bool,
) -> Option<Option<Neg<Interface>>> {
    let len = name.iter().position(|&b| b == 0).unwrap_or(IFNAMSIZ);
    if len == 0 {
        return (!negated && mask.iter().all(|&b| b == 0)).then_some(None);
    }
    let s = std::str::from_utf8(&name[..len]).ok()?;
    let i = Interface::new(s).ok()?;
    // The mask iptables writes for this name; anything else is not iptables syntax.
    let (_, want) = iface(&Neg::plain(i.clone()));
    (want == *mask).then_some(Some(Neg::new(i, negated)))
}

/// iptables' view of an x_tables rule; parts it cannot express become opaque matches (the
/// rule then lists on a `#` line and is never matched by `-D`/`-C`).
pub fn to_ipt(family: Family, r: &Rule) -> IptRule {
    let mut out = IptRule {
        counters: Some(r.counters),
        ..Default::default()
    };
    // Sizes and offsets were checked when the table was read; an extension name that is not
    // UTF-8 is all that can still fail here.
    let Ok((e, _)) = Entry::decode(family, r.raw.bytes()) else {
        out.matches.push(opaque_header("undecodable entry"));
        return out;
    };
    let mut ip = e.ip;
    // [`Verdict::Goto`] carries the goto flag.
    ip.flags &= !goto_flag(family);
    let ip = &ip;
    let mut odd = Vec::new();
    match net_of(&ip.src, &ip.smsk, ip.invflags & inv::SRCIP != 0) {
        Some(n) => out.src = n,
        None => odd.push("source"),
    }
    match net_of(&ip.dst, &ip.dmsk, ip.invflags & inv::DSTIP != 0) {
        Some(n) => out.dst = n,
        None => odd.push("destination"),
    }
    match iface_of(
        &ip.iniface,
        &ip.iniface_mask,
        ip.invflags & inv::VIA_IN != 0,
    ) {
        Some(n) => out.in_iface = n,
        None => odd.push("in-interface"),
    }
    match iface_of(
        &ip.outiface,
        &ip.outiface_mask,
        ip.invflags & inv::VIA_OUT != 0,
    ) {
        Some(n) => out.out_iface = n,
        None => odd.push("out-interface"),
    }
    let v6 = family == Family::Ipv6;
    let neg_proto = ip.invflags & inv::PROTO != 0;
    match u8::try_from(ip.proto) {
        Ok(0) if !neg_proto => {}
        Ok(p) if p != 0 => out.proto = Some(Neg::new(L4Proto::from_number(p), neg_proto)),
        _ => odd.push("protocol"),
    }
    let known_flags = if v6 { flags::V6_PROTO } else { 0 };
    let known_inv = inv::VIA_IN | inv::VIA_OUT | inv::SRCIP | inv::DSTIP | inv::PROTO;
    if ip.flags & !known_flags != 0 || ip.invflags & !known_inv != 0 || ip.tos != 0 {
        odd.push("flags");
    }
    out.matches.extend(odd.into_iter().map(opaque_header));
    // The decoded entry is this function's own: its names and payloads move, not copied.
    for m in e.matches {
        let wire = Match {
            name: m.name,
            rev: u32::from(m.revision),
            info: m.data,
        };
        match xt_bridge::match_from_xt(&wire, family) {
            Some(x) => out.matches.push(x),
            None => out
                .matches
                .push(IptMatch::Opaque(Opaque::new(XtLeftover::Match(wire)))),
        }
    }
    out.target = match &r.verdict {
        Verdict::Accept => Some(IptTarget::Accept),
        Verdict::Drop => Some(IptTarget::Drop),
        Verdict::Return => Some(IptTarget::Return),
        Verdict::Jump(c) => Some(IptTarget::Jump(c.clone())),
        Verdict::Goto(c) => Some(IptTarget::Goto(c.clone())),
        Verdict::Fallthrough => None,
        Verdict::Queue => Some(IptTarget::Opaque(Opaque::new(XtLeftover::Queue))),
        Verdict::Ext => {
            let t = e.target;
            let wire = Target {
                name: t.name,
                rev: u32::from(t.revision),
                info: t.data,
            };
            Some(
                xt_bridge::target_from_xt(&wire, family)
                    .unwrap_or_else(|| IptTarget::Opaque(Opaque::new(XtLeftover::Target(wire)))),
            )
        }
    };
    out
}
