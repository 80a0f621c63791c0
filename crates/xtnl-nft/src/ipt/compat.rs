//! How iptables rules are stored in nf_tables, both ways.
//!
//! In iptables' own tables (filter, nat, mangle, raw, security) rules are encoded exactly as
//! iptables-nft 1.8.9 encodes them, so that `iptables -S` and `iptables -D` keep working on
//! them: native meta/payload/cmp/range for interfaces, protocol, addresses and ports, a
//! counter, verdicts as immediates, and everything else as x_tables matches and targets run
//! by nft_compat (comment, multiport, state/conntrack; DNAT, SNAT, MASQUERADE, REDIRECT,
//! REJECT, LOG). In any other table the rule model's native encoding is used.
//!
//! Decoding accepts both, and rules nft wrote: what iptables syntax cannot say stays
//! [`IptMatch::Opaque`] / [`IptTarget::Opaque`].

#![deny(missing_docs)]

use super::rule::{IptMatch, IptRule, IptTarget, Neg, PortsMatch, RejectWith};
use super::tables;
use super::xt_bridge;
use crate::error::{Error, Result};
use crate::model::{self, Action, Dir, Family, L4Proto, Match, Opaque, RejectKind};
use crate::nft::codec::{self, cmp, meta, verdict};
use crate::nft::{EncodedRule, RawRule, TableRef};
use crate::wire::expr::{Counter, Expr, MetaKey, Verdict};
use crate::wire::nftables::RuleCompat;
use crate::xt::{Tcp, Udp, XtMatch};

mod decode;

pub use decode::decode;

/// Encodes an iptables rule for `table`.
pub fn encode(table: &TableRef, rule: &IptRule) -> Result<EncodedRule> {
    if !rule.is_expressible() {
        return Err(Error::InvalidInput(
            "the rule holds parts iptables syntax cannot express; refusing to rewrite it".into(),
        ));
    }
    if !tables::is_iptables_table(&table.name) {
        let native = codec::encode_native(&to_model(rule, table.family)?, table.family)?;
        return Ok(EncodedRule {
            exprs: native.exprs,
            userdata: native.userdata,
            compat: None,
            sets: native.sets,
        });
    }
    if table.family == Family::Inet {
        return Err(Error::InvalidInput(
            "iptables' tables are ip or ip6, not inet".into(),
        ));
    }
    check_target_fits_table(&table.name, rule)?;
    let mut out = Vec::new();
    let iface = |out: &mut Vec<Expr>, key: MetaKey, n: &Neg<model::Interface>| {
        // iptables-nft compares the name and its NUL (len + 1 bytes), or only the prefix
        // for a `+` wildcard.
        let (prefix, wildcard) = n.value.prefix();
        let mut bytes = prefix.as_bytes().to_vec();
        if !wildcard {
            bytes.push(0);
        }
        out.push(meta(key));
        out.push(cmp(n.negated, bytes));
    };
    if let Some(i) = &rule.in_iface {
        iface(&mut out, MetaKey::IIFNAME, i);
    }
    if let Some(o) = &rule.out_iface {
        iface(&mut out, MetaKey::OIFNAME, o);
    }
    if let Some(p) = &rule.proto {
        out.push(meta(MetaKey::L4PROTO));
        out.push(cmp(p.negated, vec![p.value.number()]));
    }
    for (dir, net) in [(Dir::Source, &rule.src), (Dir::Destination, &rule.dst)] {
        if let Some(n) = net {
            if n.value.is_ipv4() != (table.family == Family::Ipv4) {
                return Err(Error::InvalidInput(format!(
                    "address {} does not belong in a {} table",
                    n.value, table.family
                )));
            }
            codec::encode_address(&mut out, dir, &n.value, n.negated);
        }
    }
    for m in &rule.matches {
        match m {
            IptMatch::Tcp(p) | IptMatch::Udp(p) if p.sport.is_none() && p.dport.is_none() => {
                // A bare `-m tcp`/`-m udp` has no native form: iptables-nft 1.8.9 keeps the
                // x_tables match with its defaults (any port), and `-S`/`-D` see it.
                let any = [0, u16::MAX];
                let xt = match m {
                    IptMatch::Tcp(_) => XtMatch::Tcp(Tcp {
                        spts: any,
                        dpts: any,
                        option: 0,
                        flg_mask: 0,
                        flg_cmp: 0,
                        invflags: 0,
                    }),
                    _ => XtMatch::Udp(Udp {
                        spts: any,
                        dpts: any,
                        invflags: 0,
                    }),
                };
                out.push(Expr::Match(xt.to_expr()));
            }
            // iptables-nft's forms, merged sport+dport and `lte` included.
            IptMatch::Tcp(p) | IptMatch::Udp(p) => out.extend(super::ext::native::ports(p)),
            IptMatch::Opaque(_) => unreachable_opaque()?,
            IptMatch::Ext(x) => match super::ext::native::encode(x) {
                Some(exprs) => out.extend(exprs),
                None => out.push(Expr::Match(crate::wire::expr::Match {
                    name: x.name.clone(),
                    rev: x.rev,
                    info: x.info.clone(),
                })),
            },
            other => {
                out.push(Expr::Match(
                    xt_bridge::match_to_xt(other, table.family)?.to_expr(),
                ));
            }
        }
    }
    // Counters start from zero, or from what `restore -c` gives.
    let start = rule.counters.unwrap_or_default();
    out.push(Expr::Counter(Counter {
        packets: start.packets,
        bytes: start.bytes,
    }));
    match &rule.target {
        None => {}
        Some(IptTarget::Accept) => out.push(verdict(Verdict::Accept)),
        Some(IptTarget::Drop) => out.push(verdict(Verdict::Drop)),
        Some(IptTarget::Return) => out.push(verdict(Verdict::Return)),
        Some(IptTarget::Jump(c)) => out.push(verdict(Verdict::Jump(c.clone()))),
        Some(IptTarget::Goto(c)) => out.push(verdict(Verdict::Goto(c.clone()))),
        Some(IptTarget::Opaque(_)) => unreachable_opaque()?,
        Some(IptTarget::Ext(x)) if super::ext::native::encode_target(x).is_some() => {
            out.extend(super::ext::native::encode_target(x).unwrap_or_default());
        }
        Some(t) => out.push(Expr::Target(
            xt_bridge::target_to_xt(t, table.family)?.to_expr(),
        )),
    }
    // x_tables extensions check the rule's protocol (multiport needs tcp/udp) and nft_compat
    // takes it from NFTA_RULE_COMPAT; iptables-nft sends it for every rule with `-p`.
    let compat = rule
        .proto
        .as_ref()
        .map(|p| RuleCompat::new(p.value.number(), p.negated));
    Ok(EncodedRule {
        exprs: out,
        userdata: None,
        compat,
        sets: Vec::new(),
    })
}

fn unreachable_opaque() -> Result<()> {
    Err(Error::InvalidInput(
        "refusing to encode a rule with opaque parts".into(),
    ))
}

/// NAT targets are valid only in the nat table; REJECT only in filter-type tables.
pub fn check_target_fits_table(table: &str, rule: &IptRule) -> Result<()> {
    let nat = matches!(
        rule.target,
        Some(
            IptTarget::Dnat(_)
                | IptTarget::Snat(_)
                | IptTarget::Masquerade(_)
                | IptTarget::Redirect(_)
        )
    );
    if nat && table != "nat" {
        return Err(Error::InvalidInput(format!(
            "the {} target is only valid in the nat table, not in {table}",
            target_word(rule)
        )));
    }
    if matches!(rule.target, Some(IptTarget::Reject(_))) && table == "nat" {
        return Err(Error::InvalidInput(
            "the REJECT target is not valid in the nat table".into(),
        ));
    }
    Ok(())
}

fn target_word(rule: &IptRule) -> &'static str {
    match rule.target {
        Some(IptTarget::Dnat(_)) => "DNAT",
        Some(IptTarget::Snat(_)) => "SNAT",
        Some(IptTarget::Masquerade(_)) => "MASQUERADE",
        Some(IptTarget::Redirect(_)) => "REDIRECT",
        _ => "target",
    }
}

/// The rule model of an iptables rule, for tables of our own (native encoding).
pub fn to_model(rule: &IptRule, family: Family) -> Result<model::Rule> {
    let unsupported = |what: &str| {
        Error::InvalidInput(format!(
            "{what} is not supported in tables other than iptables' own yet"
        ))
    };
    let mut r = model::Rule::new();
    if let Some(i) = &rule.in_iface {
        r = r.with(Match::InInterface {
            name: i.value.clone(),
            negated: i.negated,
        });
    }
    if let Some(o) = &rule.out_iface {
        r = r.with(Match::OutInterface {
            name: o.value.clone(),
            negated: o.negated,
        });
    }
    if let Some(p) = &rule.proto {
        r = r.with(Match::Protocol {
            proto: p.value,
            negated: p.negated,
        });
    }
    if let Some(s) = &rule.src {
        r = r.with(Match::Address {
            dir: Dir::Source,
            net: s.value,
            negated: s.negated,
        });
    }
    if let Some(d) = &rule.dst {
        r = r.with(Match::Address {
            dir: Dir::Destination,
            net: d.value,
            negated: d.negated,
        });
    }
    for m in &rule.matches {
        match m {
            IptMatch::Tcp(p) | IptMatch::Udp(p) => {
                if let Some(s) = &p.sport {
                    r = r.with(Match::Port {
                        dir: Dir::Source,
                        ports: s.value,
                        negated: s.negated,
                    });
                }
                if let Some(d) = &p.dport {
                    r = r.with(Match::Port {
                        dir: Dir::Destination,
                        ports: d.value,
                        negated: d.negated,
                    });
                }
            }
            IptMatch::Comment(c) => r.comment = Some(c.clone()),
            IptMatch::Multiport(mp) => {
                let dir = match mp.dir {
                    super::MultiportDir::Source => Dir::Source,
                    super::MultiportDir::Destination => Dir::Destination,
                    super::MultiportDir::Either => return Err(unsupported("-m multiport --ports")),
                };
                r = r.with(Match::PortSet {
                    dir,
                    ports: mp.ports.clone(),
                    negated: mp.negated,
                });
            }
            IptMatch::State(st) | IptMatch::Conntrack(st) => {
                r = r.with(Match::CtState {
                    states: ct_states_native(st.value)?,
                    negated: st.negated,
                });
            }
            IptMatch::Opaque(_) => unreachable_opaque()?,
            IptMatch::Ext(x) => return Err(unsupported(&format!("-m {}", x.name))),
        }
    }
    r.counter = Some(model::Counters::default());
    r.action = match &rule.target {
        None => None,
        Some(IptTarget::Accept) => Some(Action::Accept),
        Some(IptTarget::Drop) => Some(Action::Drop),
        Some(IptTarget::Return) => Some(Action::Return),
        Some(IptTarget::Jump(c)) => Some(Action::Jump(c.clone())),
        Some(IptTarget::Goto(c)) => Some(Action::Goto(c.clone())),
        Some(IptTarget::Dnat(n) | IptTarget::Snat(n)) => {
            let addr = n
                .addr_min
                .ok_or_else(|| unsupported("NAT without an address"))?;
            if n.addr_max.is_some_and(|m| m != addr) {
                return Err(unsupported("a NAT address range"));
            }
            let t = model::NatTarget {
                addr,
                ports: n.ports,
            };
            Some(if matches!(rule.target, Some(IptTarget::Dnat(_))) {
                Action::Dnat(t)
            } else {
                Action::Snat(t)
            })
        }
        Some(IptTarget::Masquerade(p)) => Some(Action::Masquerade { ports: *p }),
        Some(IptTarget::Redirect(p)) => Some(Action::Redirect { ports: *p }),
        Some(IptTarget::Reject(w)) => Some(Action::Reject(reject_native(*w, family)?)),
        Some(IptTarget::Log(l)) => Some(Action::Log {
            prefix: l.prefix.clone(),
            level: l.level,
        }),
        Some(IptTarget::Opaque(_)) => return Err(unsupported("an opaque target")),
        Some(IptTarget::Ext(x)) => return Err(unsupported(&format!("-j {}", x.name))),
    };
    Ok(r)
}

/// xt conntrack states in nf_tables' numbering (UNTRACKED moves from bit 8 to bit 6; SNAT
/// and DNAT are conntrack status, not state, in nf_tables).
fn ct_states_native(s: super::CtStates) -> Result<model::CtStateSet> {
    use super::CtStates as X;
    if s.contains(X::SNAT) || s.contains(X::DNAT) {
        return Err(Error::InvalidInput(
            "--ctstate SNAT/DNAT is not supported in tables other than iptables' own".into(),
        ));
    }
    let bits = CT_STATE_BITS
        .iter()
        .filter(|(x, _)| s.contains(*x))
        .fold(0, |acc, (_, n)| acc | n);
    Ok(model::CtStateSet(bits))
}

pub(super) fn ct_states_xt(s: model::CtStateSet) -> super::CtStates {
    let bits = CT_STATE_BITS
        .iter()
        .filter(|(_, n)| s.0 & n != 0)
        .fold(0, |acc, (x, _)| acc | x.0);
    super::CtStates(bits)
}

/// The same states in xt_conntrack's bits and in nf_tables' (UNTRACKED is bit 8 in one and
/// bit 6 in the other).
const CT_STATE_BITS: [(super::CtStates, u32); 5] = [
    (super::CtStates::INVALID, model::CtStateSet::INVALID),
    (super::CtStates::ESTABLISHED, model::CtStateSet::ESTABLISHED),
    (super::CtStates::RELATED, model::CtStateSet::RELATED),
    (super::CtStates::NEW, model::CtStateSet::NEW),
    (super::CtStates::UNTRACKED, model::CtStateSet::UNTRACKED),
];

/// `--reject-with` names and native reject codes: ICMP in ip tables, ICMPv6 in ip6,
/// ICMPX (the four family-neutral codes) in inet.
const REJECT_CODES: [(RejectWith, Family, u8); 17] = [
    (RejectWith::IcmpNetUnreachable, Family::Ipv4, 0),
    (RejectWith::IcmpHostUnreachable, Family::Ipv4, 1),
    (RejectWith::IcmpProtoUnreachable, Family::Ipv4, 2),
    (RejectWith::IcmpPortUnreachable, Family::Ipv4, 3),
    (RejectWith::IcmpNetProhibited, Family::Ipv4, 9),
    (RejectWith::IcmpHostProhibited, Family::Ipv4, 10),
    (RejectWith::IcmpAdminProhibited, Family::Ipv4, 13),
    (RejectWith::Icmp6NoRoute, Family::Ipv6, 0),
    (RejectWith::Icmp6AdmProhibited, Family::Ipv6, 1),
    (RejectWith::Icmp6AddrUnreachable, Family::Ipv6, 3),
    (RejectWith::Icmp6PortUnreachable, Family::Ipv6, 4),
    (RejectWith::Icmp6PolicyFail, Family::Ipv6, 5),
    (RejectWith::Icmp6RejectRoute, Family::Ipv6, 6),
    (RejectWith::Icmp6NoRoute, Family::Inet, 0),
    (RejectWith::IcmpPortUnreachable, Family::Inet, 1),
    (RejectWith::IcmpHostUnreachable, Family::Inet, 2),
    (RejectWith::IcmpAdminProhibited, Family::Inet, 3),
];

fn reject_native(w: RejectWith, family: Family) -> Result<RejectKind> {
    if w == RejectWith::TcpReset {
        return Ok(RejectKind::TcpReset);
    }
    let code = REJECT_CODES
        .iter()
        .find(|(n, f, _)| *n == w && *f == family)
        .map(|(_, _, c)| *c);
    match (code, family) {
        (Some(c), Family::Ipv4) => Ok(RejectKind::Icmp(c)),
        (Some(c), Family::Ipv6) => Ok(RejectKind::Icmpv6(c)),
        (Some(c), Family::Inet) => Ok(RejectKind::Icmpx(c)),
        (None, _) => Err(Error::InvalidInput(format!(
            "--reject-with {} has no native form in a {family} table",
            w.name()
        ))),
    }
}

pub(super) fn reject_from_native(k: RejectKind, family: Family) -> Option<RejectWith> {
    let (code, fam) = match k {
        RejectKind::TcpReset => return Some(RejectWith::TcpReset),
        RejectKind::Icmp(c) => (c, Family::Ipv4),
        RejectKind::Icmpv6(c) => (c, Family::Ipv6),
        RejectKind::Icmpx(c) => (c, Family::Inet),
    };
    let fam = if family == Family::Inet && fam != Family::Inet {
        return None;
    } else {
        fam
    };
    REJECT_CODES
        .iter()
        .find(|(_, f, c)| *f == fam && *c == code)
        .map(|(n, _, _)| *n)
}
