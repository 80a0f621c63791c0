//! iptables' modules and targets <-> their x_tables payloads ([`crate::xt`]). A payload
//! with options iptables syntax here does not cover (`--random`, `--ctproto`, log flags...)
//! maps to `None`, and the caller keeps that part opaque.

#![deny(missing_docs)]

use super::rule::{
    IptMatch, IptTarget, LogOpts, Multiport, MultiportDir, NatRange, Neg, PortsMatch, RejectWith,
};
use crate::error::{Error, Result};
use crate::model::{Family, PortRange};
use crate::wire::WireError;
use crate::wire::expr::{Match, Target};
use crate::xt::{
    self, Comment, ConntrackV3, CtStates, Log, NatInfo, NatRev0, PortSpec, Reject, RejectV4,
    RejectV6, StateInfo, XtMatch, XtTarget, ct_flags, nat_flags,
};

/// What the x_tables backend read and iptables syntax here has no word for, kept as x_tables
/// says it inside a [`crate::model::Opaque`] (the nf_tables backend keeps its expressions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum XtLeftover {
    /// A part of the rule's `ipt_entry`/`ip6t_entry` header (a flag, an IPv6 detail).
    Header(String),
    /// The QUEUE verdict (a standard target iptables prints as `-j QUEUE`).
    Queue,
    /// A match no extension here decodes.
    Match(Match),
    /// A target no extension here decodes.
    Target(Target),
}

impl std::fmt::Display for XtLeftover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            XtLeftover::Header(what) => write!(f, "[ x_tables header: {what} ]"),
            XtLeftover::Queue => f.write_str("[ QUEUE ]"),
            XtLeftover::Match(m) => write!(f, "[ {m} ]"),
            XtLeftover::Target(t) => write!(f, "[ {t} ]"),
        }
    }
}

fn invalid(e: WireError) -> Error {
    Error::InvalidInput(e.to_string())
}

fn range_pair(p: PortRange) -> (u16, u16) {
    (p.first(), p.last())
}

fn pair_range((a, b): (u16, u16)) -> Option<PortRange> {
    PortRange::new(a, b).ok()
}

/// The payload iptables-nft writes for one of iptables' modules (not tcp/udp ports, which
/// are native expressions in nf_tables).
pub fn match_to_xt(m: &IptMatch, _family: Family) -> Result<XtMatch> {
    Ok(match m {
        IptMatch::Ext(x) => XtMatch::Other {
            name: x.name.clone(),
            rev: x.rev,
            info: x.info.clone(),
        },
        IptMatch::Comment(c) => XtMatch::Comment(Comment::new(c.clone()).map_err(invalid)?),
        IptMatch::Multiport(mp) => {
            let dir = match mp.dir {
                MultiportDir::Source => xt::MultiportDir::Source,
                MultiportDir::Destination => xt::MultiportDir::Destination,
                MultiportDir::Either => xt::MultiportDir::Either,
            };
            let ports = mp
                .ports
                .iter()
                .map(|p| {
                    if p.is_single() {
                        PortSpec::Port(p.first())
                    } else {
                        PortSpec::Range(p.first(), p.last())
                    }
                })
                .collect();
            XtMatch::Multiport(xt::Multiport::new(dir, ports, mp.negated).map_err(invalid)?)
        }
        // iptables 1.8.9 writes `-m state` as conntrack rev 3 with the state-alias flag.
        IptMatch::State(s) => XtMatch::Conntrack(ConntrackV3::state(s.value, s.negated)),
        IptMatch::Conntrack(s) => XtMatch::Conntrack(ConntrackV3::ctstate(s.value, s.negated)),
        IptMatch::Tcp(p) | IptMatch::Udp(p) => {
            let (s, d) = (p.sport.as_ref(), p.dport.as_ref());
            let spts = s
                .map(|x| [x.value.first(), x.value.last()])
                .unwrap_or([0, u16::MAX]);
            let dpts = d
                .map(|x| [x.value.first(), x.value.last()])
                .unwrap_or([0, u16::MAX]);
            let inv = u8::from(s.is_some_and(|x| x.negated))
                | (u8::from(d.is_some_and(|x| x.negated)) << 1);
            if matches!(m, IptMatch::Tcp(_)) {
                XtMatch::Tcp(xt::Tcp {
                    spts,
                    dpts,
                    option: 0,
                    flg_mask: 0,
                    flg_cmp: 0,
                    invflags: inv,
                })
            } else {
                XtMatch::Udp(xt::Udp {
                    spts,
                    dpts,
                    invflags: inv,
                })
            }
        }
        IptMatch::Opaque(_) => {
            return Err(Error::InvalidInput(
                "an opaque match has no x_tables payload".into(),
            ));
        }
    })
}

/// iptables' view of an xt match payload, when it is one of the modules covered here.
pub fn match_from_xt(m: &Match, family: Family) -> Option<IptMatch> {
    let registry = || super::ext::decode(&m.name, m.rev, &m.info, false, family).map(IptMatch::Ext);
    Some(match XtMatch::from_expr(m).ok()? {
        XtMatch::Comment(c) => IptMatch::Comment(c.text().to_string()),
        XtMatch::Multiport(mp) => IptMatch::Multiport(Multiport {
            dir: match mp.dir() {
                xt::MultiportDir::Source => MultiportDir::Source,
                xt::MultiportDir::Destination => MultiportDir::Destination,
                xt::MultiportDir::Either => MultiportDir::Either,
            },
            ports: mp
                .ports()
                .iter()
                .map(|p| match *p {
                    PortSpec::Port(n) => Some(PortRange::single(n)),
                    PortSpec::Range(a, b) => PortRange::new(a, b).ok(),
                })
                .collect::<Option<Vec<_>>>()?,
            negated: mp.invert(),
        }),
        XtMatch::Conntrack(ct) => {
            // Only a pure state match is iptables syntax here; other conntrack options stay
            // opaque.
            let plain = ct.match_flags & !(ct_flags::STATE | ct_flags::STATE_ALIAS) == 0
                && ct.invert_flags & !ct_flags::STATE == 0;
            let Some((states, negated)) = ct.states().filter(|_| plain) else {
                return registry();
            };
            if ct.is_state_alias() {
                IptMatch::State(Neg::new(states, negated))
            } else {
                IptMatch::Conntrack(Neg::new(states, negated))
            }
        }
        XtMatch::State(s) => IptMatch::State(Neg::plain(state_bits(&s)?)),
        XtMatch::Tcp(t) => {
            if t.option != 0 || t.flg_mask != 0 || t.invflags & !0x3 != 0 {
                return registry();
            }
            IptMatch::Tcp(ports_of(t.spts, t.dpts, t.invflags)?)
        }
        XtMatch::Udp(u) => {
            if u.invflags & !0x3 != 0 {
                return None;
            }
            IptMatch::Udp(ports_of(u.spts, u.dpts, u.invflags)?)
        }
        XtMatch::Other { .. } => return registry(),
    })
}

/// xt_tcp/xt_udp port ranges; the full range means no match on that port.
fn ports_of(spts: [u16; 2], dpts: [u16; 2], inv: u8) -> Option<PortsMatch> {
    let one = |r: [u16; 2], negated: bool| -> Option<Option<Neg<PortRange>>> {
        if r == [0, u16::MAX] && !negated {
            return Some(None);
        }
        Some(Some(Neg::new(PortRange::new(r[0], r[1]).ok()?, negated)))
    };
    Some(PortsMatch {
        sport: one(spts, inv & 1 != 0)?,
        dport: one(dpts, inv & 2 != 0)?,
    })
}

/// xt_state's mask in conntrack's bits (xt_state's UNTRACKED is bit 6, conntrack's bit 8).
fn state_bits(s: &StateInfo) -> Option<CtStates> {
    let mut out = 0u16;
    for (from, to) in [
        (StateInfo::INVALID, CtStates::INVALID),
        (StateInfo::ESTABLISHED, CtStates::ESTABLISHED),
        (StateInfo::RELATED, CtStates::RELATED),
        (StateInfo::NEW, CtStates::NEW),
        (StateInfo::UNTRACKED, CtStates::UNTRACKED),
    ] {
        if s.mask & from != 0 {
            out |= to.0;
        }
    }
    let known = StateInfo::INVALID
        | StateInfo::ESTABLISHED
        | StateInfo::RELATED
        | StateInfo::NEW
        | StateInfo::UNTRACKED;
    (s.mask & !known == 0).then_some(CtStates(out))
}

fn nat_addrs(r: &NatRange) -> Option<(std::net::IpAddr, std::net::IpAddr)> {
    r.addr_min.map(|a| (a, r.addr_max.unwrap_or(a)))
}

/// The payload iptables-nft writes for a target, in the revision it writes (iptables-nft
/// 1.8.9 misreads other revisions of NAT targets).
pub fn target_to_xt(t: &IptTarget, family: Family) -> Result<XtTarget> {
    let ipv6 = family == Family::Ipv6;
    Ok(match t {
        IptTarget::Ext(x) => XtTarget::Other {
            name: x.name.clone(),
            rev: x.rev,
            info: x.info.clone(),
        },
        IptTarget::Dnat(r) => XtTarget::Dnat(
            NatInfo::for_dnat(family, nat_addrs(r), r.ports.map(range_pair)).map_err(invalid)?,
        ),
        IptTarget::Snat(r) => XtTarget::Snat(
            NatInfo::for_snat(family, nat_addrs(r), r.ports.map(range_pair)).map_err(invalid)?,
        ),
        IptTarget::Masquerade(p) => XtTarget::Masquerade(NatRev0::ports(ipv6, p.map(range_pair))),
        IptTarget::Redirect(p) => XtTarget::Redirect(NatRev0::ports(ipv6, p.map(range_pair))),
        IptTarget::Reject(w) => {
            let bad = || {
                Error::InvalidInput(format!(
                    "--reject-with {} is not valid for {family}",
                    w.name()
                ))
            };
            XtTarget::Reject(if ipv6 {
                Reject::Ipv6(RejectV6::from_name(w.name()).ok_or_else(bad)?)
            } else {
                Reject::Ipv4(RejectV4::from_name(w.name()).ok_or_else(bad)?)
            })
        }
        IptTarget::Log(l) => XtTarget::Log(
            Log::new(l.level, 0, l.prefix.clone().unwrap_or_default()).map_err(invalid)?,
        ),
        IptTarget::Accept
        | IptTarget::Drop
        | IptTarget::Return
        | IptTarget::Jump(_)
        | IptTarget::Goto(_)
        | IptTarget::Opaque(_) => {
            return Err(Error::InvalidInput(
                "verdicts are not x_tables targets".into(),
            ));
        }
    })
}

/// iptables' view of an xt target payload, when its options are covered here.
pub fn target_from_xt(t: &Target, family: Family) -> Option<IptTarget> {
    target_typed(t, family)
        .or_else(|| super::ext::decode(&t.name, t.rev, &t.info, true, family).map(IptTarget::Ext))
}

/// The targets with typed variants of their own.
fn target_typed(t: &Target, family: Family) -> Option<IptTarget> {
    let plain_nat = |flags: u32| flags & !(nat_flags::MAP_IPS | nat_flags::PROTO_SPECIFIED) == 0;
    Some(
        match XtTarget::decode(&t.name, t.rev, &t.info, family).ok()? {
            XtTarget::Dnat(n) | XtTarget::Snat(n) if plain_nat(n.flags()) => {
                let (addr_min, addr_max) = match n.addrs() {
                    Some((a, b)) => (Some(a), (a != b).then_some(b)),
                    None => (None, None),
                };
                let r = NatRange {
                    addr_min,
                    addr_max,
                    ports: match n.ports() {
                        Some(p) => Some(pair_range(p)?),
                        None => None,
                    },
                };
                if t.name == "DNAT" {
                    IptTarget::Dnat(r)
                } else {
                    IptTarget::Snat(r)
                }
            }
            XtTarget::Masquerade(n) | XtTarget::Redirect(n)
                if n.flags() & !nat_flags::PROTO_SPECIFIED == 0 =>
            {
                let p = match n.port_range() {
                    Some(p) => Some(pair_range(p)?),
                    None => None,
                };
                if t.name == "MASQUERADE" {
                    IptTarget::Masquerade(p)
                } else {
                    IptTarget::Redirect(p)
                }
            }
            XtTarget::Reject(r) => {
                let name = match r {
                    Reject::Ipv4(v) => v.name()?,
                    Reject::Ipv6(v) => v.name()?,
                };
                IptTarget::Reject(RejectWith::parse(name, family).ok()?)
            }
            XtTarget::Log(l) if l.flags() == 0 => IptTarget::Log(LogOpts {
                prefix: (!l.prefix().is_empty()).then(|| l.prefix().to_string()),
                level: l.level(),
            }),
            _ => return None,
        },
    )
}
