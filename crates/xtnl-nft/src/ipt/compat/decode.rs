//! iptables-nft's encoding read back: any rule's model (see [`crate::nft::codec::decode`])
//! turned into iptables' view, xt matches and targets the nf_tables decoder left opaque
//! decoded on through [`crate::ipt::xt_bridge`].

use super::*;
use crate::nft::codec::Exprs;

/// Decodes a rule of any table into iptables' view of it. Never fails: parts iptables
/// syntax cannot say become opaque and flag the rule.
pub fn decode(table: &TableRef, raw: &RawRule) -> IptRule {
    let family = table.family;
    let m = raw.decode();
    let mut r = IptRule {
        counters: m.counter,
        ..Default::default()
    };
    let n = m.matches.len();
    let opaque = |r: &mut IptRule, o: Opaque| r.matches.push(IptMatch::Opaque(o));
    for (i, part) in m.matches.into_iter().enumerate() {
        match part {
            Match::Protocol { proto, negated } if r.proto.is_none() => {
                r.proto = Some(Neg::new(proto, negated))
            }
            Match::Address {
                dir: Dir::Source,
                net,
                negated,
            } if r.src.is_none() => r.src = Some(Neg::new(net, negated)),
            Match::Address {
                dir: Dir::Destination,
                net,
                negated,
            } if r.dst.is_none() => r.dst = Some(Neg::new(net, negated)),
            Match::InInterface { name, negated } if r.in_iface.is_none() => {
                r.in_iface = Some(Neg::new(name, negated))
            }
            Match::OutInterface { name, negated } if r.out_iface.is_none() => {
                r.out_iface = Some(Neg::new(name, negated))
            }
            Match::Port {
                dir,
                ports,
                negated,
            } => {
                // Into a tcp module with flags just before (`--dport 22 --syn`).
                if matches!(r.matches.last(), Some(IptMatch::Ext(_)))
                    && crate::ipt::ext::native::merge_port(
                        r.matches.last_mut(),
                        dir == Dir::Source,
                        ports,
                        negated,
                    )
                {
                    continue;
                }
                let tcp = r.proto.as_ref().is_some_and(|p| p.value == L4Proto::Tcp);
                let slot_free = |p: &PortsMatch| {
                    if dir == Dir::Source {
                        p.sport.is_none()
                    } else {
                        p.dport.is_none()
                    }
                };
                let reuse = match r.matches.last_mut() {
                    Some(IptMatch::Tcp(p)) if tcp && slot_free(p) => Some(p),
                    Some(IptMatch::Udp(p)) if !tcp && slot_free(p) => Some(p),
                    _ => None,
                };
                let value = Some(Neg::new(ports, negated));
                match reuse {
                    Some(p) => {
                        if dir == Dir::Source {
                            p.sport = value
                        } else {
                            p.dport = value
                        }
                    }
                    None => {
                        let mut p = PortsMatch::default();
                        if dir == Dir::Source {
                            p.sport = value
                        } else {
                            p.dport = value
                        }
                        r.matches.push(if tcp {
                            IptMatch::Tcp(p)
                        } else {
                            IptMatch::Udp(p)
                        });
                    }
                }
            }
            Match::CtState { states, negated } => {
                r.matches
                    .push(IptMatch::State(Neg::new(ct_states_xt(states), negated)));
            }
            Match::PortSet {
                dir,
                ports,
                negated,
            } => {
                let dir = if dir == Dir::Source {
                    crate::ipt::MultiportDir::Source
                } else {
                    crate::ipt::MultiportDir::Destination
                };
                r.matches.push(IptMatch::Multiport(crate::ipt::Multiport {
                    dir,
                    ports,
                    negated,
                }));
            }
            Match::Opaque(o) => {
                // Adjacent parts the model does not know arrive merged; take them one
                // expression at a time: xt matches, and an xt target at the very end.
                let last_part = i + 1 == n && m.action.is_none();
                // What the nf_tables decoder kept; nothing else makes opaque parts here.
                let exprs: &[Expr] = o.parts::<Exprs>().map_or(&[], |x| &x.0);
                let count = exprs.len();
                let mut skip = 0;
                for (k, e) in exprs.iter().enumerate() {
                    if skip > 0 {
                        skip -= 1;
                        continue;
                    }
                    // TRACE: iptables-nft's two expressions at the end of the rule.
                    if last_part
                        && k + 2 == count
                        && let Some(t) = crate::ipt::ext::native::decode_trace(&exprs[k..], family)
                    {
                        r.target = Some(t);
                        skip = 1;
                        continue;
                    }
                    // Modules iptables-nft writes as native expressions (mark, limit, NFLOG).
                    if last_part
                        && k + 1 == count
                        && let Some(t) = crate::ipt::ext::native::decode_target(e, family)
                    {
                        r.target = Some(t);
                        continue;
                    }
                    let tcp = r.proto.as_ref().is_some_and(|p| p.value == L4Proto::Tcp);
                    if r.proto
                        .as_ref()
                        .is_some_and(|p| !p.negated && p.value.has_ports())
                        && let Some((im, used)) = crate::ipt::ext::native::decode_ports(
                            &exprs[k..],
                            tcp,
                            r.matches.last_mut(),
                        )
                    {
                        r.matches.extend(im);
                        skip = used - 1;
                        continue;
                    }
                    if let Some((im, used)) =
                        crate::ipt::ext::native::decode_at(&exprs[k..], family)
                    {
                        r.matches.push(im);
                        skip = used - 1;
                        continue;
                    }
                    match e {
                        Expr::Match(x) => match xt_bridge::match_from_xt(x, family) {
                            Some(im) => r.matches.push(im),
                            None => opaque(&mut r, Opaque::new(Exprs(vec![e.clone()]))),
                        },
                        Expr::Target(t) if last_part && k + 1 == count => {
                            r.target =
                                Some(xt_bridge::target_from_xt(t, family).unwrap_or_else(|| {
                                    IptTarget::Opaque(Opaque::new(Exprs(vec![e.clone()])))
                                }));
                        }
                        _ => opaque(&mut r, Opaque::new(Exprs(vec![e.clone()]))),
                    }
                }
            }
            other => {
                // A second protocol/address/interface match: iptables has one slot each.
                opaque(
                    &mut r,
                    Opaque::new(Exprs(
                        codec::encode(&model::Rule::new().with(other), Family::Inet)
                            .map(|(e, _)| e)
                            .unwrap_or_default(),
                    )),
                );
            }
        }
    }
    if let Some(a) = m.action {
        r.target = Some(match a {
            Action::Accept => IptTarget::Accept,
            Action::Drop => IptTarget::Drop,
            Action::Return => IptTarget::Return,
            Action::Jump(c) => IptTarget::Jump(c),
            Action::Goto(c) => IptTarget::Goto(c),
            Action::Dnat(t) => IptTarget::Dnat(crate::ipt::NatRange {
                addr_min: Some(t.addr),
                addr_max: None,
                ports: t.ports,
            }),
            Action::Snat(t) => IptTarget::Snat(crate::ipt::NatRange {
                addr_min: Some(t.addr),
                addr_max: None,
                ports: t.ports,
            }),
            Action::Masquerade { ports } => IptTarget::Masquerade(ports),
            Action::Redirect { ports } => IptTarget::Redirect(ports),
            Action::Log { prefix, level } => IptTarget::Log(crate::ipt::LogOpts { prefix, level }),
            Action::Reject(kind) => match reject_from_native(kind, family) {
                Some(w) => IptTarget::Reject(w),
                None => IptTarget::Opaque(Opaque::new(Exprs(
                    codec::encode(
                        &model::Rule::new().action(Action::Reject(kind)),
                        Family::Inet,
                    )
                    .map(|(e, _)| e)
                    .unwrap_or_default(),
                ))),
            },
            Action::Opaque(o) => IptTarget::Opaque(o),
        });
    }
    if let Some(c) = m.comment {
        r.matches.push(IptMatch::Comment(c));
    }
    r
}
