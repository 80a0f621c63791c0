//! The statements that end a rule's expressions: NAT, reject, log, limit, fib, verdicts.

use xtnl_nft_json::{
    ExprObject, Expression, Fib as JFib, LimitStmt, LimitValues, Log as JLog, Nat as JNat,
    OneOrMany, Reject as JReject, Statement, Target,
};
use xtnl_wire::expr::{Expr, Fib, Limit, LogAll, Nat, NatKind, Verdict};
use xtnl_wire::nftables::nfproto;

use super::{Decoder, obj, reg32};
use crate::value::{Field, decode_int};
use crate::{ByteOrder, DataType, RuleError};

impl Decoder<'_> {
    pub(super) fn nat(&mut self, n: &Nat) -> Result<(), RuleError> {
        let (fam, addr_type) = match n.family {
            2 => ("ip", DataType::Ipv4Addr),
            10 => ("ip6", DataType::Ipv6Addr),
            f => return Err(RuleError::unsupported("", format!("NAT family {f}"))),
        };
        let addr = self.regs_value(n.reg_addr_min, n.reg_addr_max, Field::of(addr_type))?;
        let port = self.ports(n.reg_proto_min, n.reg_proto_max)?;
        // A port taken from a map's data is printed only with that map as the address.
        let from_part = |r: Option<u32>| {
            r.is_some_and(|r| matches!(self.regs.get(&reg32(r)), Some(super::Reg::MapPart)))
        };
        if from_part(n.reg_proto_min)
            && !n
                .reg_addr_min
                .is_some_and(|r| matches!(self.regs.get(&reg32(r)), Some(super::Reg::Map(_))))
        {
            return Err(RuleError::unsupported(
                "",
                "a NAT port from a map without its address",
            ));
        }
        let family = (self.family == nfproto::INET).then(|| fam.to_owned());
        let s = nat_stmt(family, addr, port, n.flags.unwrap_or(0));
        self.push(match n.kind {
            NatKind::Snat => Statement::Snat(s),
            NatKind::Dnat => Statement::Dnat(s),
        });
        Ok(())
    }

    pub(super) fn reject(&mut self, kind: u32, code: Option<u8>) -> Result<(), RuleError> {
        let code = u64::from(code.unwrap_or(0));
        let (ty, expr) = match kind {
            xtnl_wire::expr::Reject::TCP_RST => {
                // As nft lists it: in an inet table `meta l4proto tcp` stays and a
                // `meta nfproto` before it goes; in ip and ip6 `meta l4proto tcp` goes.
                let inet = !matches!(self.family, nfproto::IPV4 | nfproto::IPV6);
                if inet {
                    if let Some(d) = self.nfproto {
                        self.kill_dep(Some(d));
                    }
                } else if let Some(d) = self.l4proto.filter(|d| d.value == 6) {
                    self.kill_dep(Some(d));
                }
                ("tcp reset", None)
            }
            xtnl_wire::expr::Reject::ICMPX_UNREACH => {
                ("icmpx", Some(decode_int(DataType::IcmpxCode, code)))
            }
            xtnl_wire::expr::Reject::ICMP_UNREACH => {
                let v6 = match self.family {
                    nfproto::IPV6 => true,
                    nfproto::INET | nfproto::BRIDGE | nfproto::NETDEV => match self.nfproto {
                        Some(d) => {
                            self.kill_dep(Some(d));
                            d.value == 10
                        }
                        None => false,
                    },
                    _ => false,
                };
                if v6 {
                    ("icmpv6", Some(decode_int(DataType::Icmpv6Code, code)))
                } else {
                    ("icmp", Some(decode_int(DataType::IcmpCode, code)))
                }
            }
            k => return Err(RuleError::unsupported("", format!("reject type {k}"))),
        };
        self.push(Statement::Reject(Some(JReject {
            kind: Some(ty.into()),
            expr,
        })));
        Ok(())
    }

    pub(super) fn log(&mut self, e: &Expr) -> Result<(), RuleError> {
        let l = LogAll::from_expr(e)
            .ok()
            .flatten()
            .ok_or_else(|| RuleError::unsupported("", "this form of log"))?;
        let level = match l.level {
            None | Some(4) => None,
            Some(n) => Some(
                [
                    "emerg", "alert", "crit", "err", "warn", "notice", "info", "debug", "audit",
                ]
                .get(n as usize)
                .ok_or_else(|| RuleError::unsupported("", format!("log level {n}")))?
                .to_string(),
            ),
        };
        let flags = match l.flags.unwrap_or(0) {
            0 => None,
            0x2f => Some(OneOrMany::One("all".into())),
            f => {
                let mut names = Vec::new();
                for (bit, name) in [
                    (1, "tcp sequence"),
                    (2, "tcp options"),
                    (4, "ip options"),
                    (8, "skuid"),
                    (0x20, "ether"),
                ] {
                    if f & bit != 0 {
                        names.push(name.to_string());
                    }
                }
                if f & !0x2f != 0 {
                    return Err(RuleError::unsupported("", format!("log flags {f:#x}")));
                }
                Some(if names.len() == 1 {
                    OneOrMany::One(names.remove(0))
                } else {
                    OneOrMany::Many(names)
                })
            }
        };
        let j = JLog {
            prefix: l.prefix,
            group: l.group.map(u64::from),
            snaplen: l.snaplen.map(u64::from).filter(|s| *s != 0),
            queue_threshold: l.qthreshold.map(u64::from).filter(|q| *q != 0),
            level,
            flags,
        };
        let empty = j
            == JLog {
                prefix: None,
                group: None,
                snaplen: None,
                queue_threshold: None,
                level: None,
                flags: None,
            };
        self.push(Statement::Log((!empty).then_some(j)));
        Ok(())
    }

    pub(super) fn fib(&mut self, f: &Fib) -> Result<(), RuleError> {
        let (result, dtype, len) = match f.result {
            Fib::RESULT_OIF => ("oif", DataType::IfaceIndex, 4),
            Fib::RESULT_OIFNAME => ("oifname", DataType::IfName, 16),
            Fib::RESULT_ADDRTYPE => ("type", DataType::FibAddrType, 4),
            r => return Err(RuleError::unsupported("", format!("fib result {r}"))),
        };
        let mut flags = Vec::new();
        for (bit, name) in [
            (1, "saddr"),
            (2, "daddr"),
            (4, "mark"),
            (8, "iif"),
            (16, "oif"),
        ] {
            if f.flags & bit != 0 {
                flags.push(name.to_string());
            }
        }
        if f.flags & !0x1f != 0 {
            return Err(RuleError::unsupported(
                "",
                format!("fib flags {:#x}", f.flags),
            ));
        }
        let e = obj(ExprObject::Fib(JFib {
            result: result.into(),
            flags: Some(OneOrMany::Many(flags)),
        }));
        let field = Field {
            dtype,
            order: ByteOrder::Host,
            len,
        };
        self.set_load(f.dreg, e, field, None, None);
        Ok(())
    }
}

pub(super) fn verdict_stmt(v: &Verdict) -> Result<Statement, RuleError> {
    Ok(match v {
        Verdict::Accept => Statement::Accept(()),
        Verdict::Drop => Statement::Drop(()),
        Verdict::Return => Statement::Return(()),
        Verdict::Continue => Statement::Continue(()),
        Verdict::Jump(c) => Statement::Jump(Target { target: c.clone() }),
        Verdict::Goto(c) => Statement::Goto(Target { target: c.clone() }),
        other => return Err(RuleError::unsupported("", format!("the verdict {other:?}"))),
    })
}

/// NAT flags as nft prints them (`NF_NAT_RANGE_*`; the implicit map-ips and
/// proto-specified bits are not printed).
pub(crate) const NAT_FLAGS: &[(u32, &str)] = &[
    (4, "random"),
    (8, "persistent"),
    (16, "fully-random"),
    (64, "netmap"),
];

pub(super) fn nat_stmt(
    family: Option<String>,
    addr: Option<Expression>,
    port: Option<Expression>,
    flags: u32,
) -> Option<JNat> {
    let mut names: Vec<String> = NAT_FLAGS
        .iter()
        .filter(|(b, _)| flags & b != 0)
        .map(|(_, n)| n.to_string())
        .collect();
    let flags = match names.len() {
        0 => None,
        1 => Some(OneOrMany::One(names.remove(0))),
        _ => Some(OneOrMany::Many(names)),
    };
    if family.is_none() && addr.is_none() && port.is_none() && flags.is_none() {
        return None;
    }
    Some(JNat {
        family,
        addr,
        port,
        flags,
        type_flags: None,
    })
}

pub(crate) const PER: &[(u64, &str)] = &[
    (1, "second"),
    (60, "minute"),
    (3600, "hour"),
    (86400, "day"),
    (604800, "week"),
];

pub(super) fn limit_stmt(l: &Limit) -> Result<LimitStmt, RuleError> {
    let per = PER
        .iter()
        .find(|(s, _)| *s == l.unit)
        .map(|(_, n)| n.to_string())
        .ok_or_else(|| RuleError::unsupported("", format!("a limit per {} s", l.unit)))?;
    let (rate, rate_unit, burst, burst_unit) = match l.kind {
        Limit::PKTS => (l.rate, None, u64::from(l.burst), None),
        Limit::BYTES => {
            let (r, ru) = byte_unit(l.rate);
            let (b, bu) = byte_unit(u64::from(l.burst));
            (r, Some(ru), b, Some(bu))
        }
        k => return Err(RuleError::unsupported("", format!("limit type {k}"))),
    };
    Ok(LimitStmt::Anonymous(LimitValues {
        rate,
        rate_unit,
        // nft prints a byte limit's burst even when 0, a packet limit's when not 0.
        burst: (burst != 0 || l.kind == Limit::BYTES).then_some(burst),
        burst_unit,
        per: Some(per),
        inv: (l.flags & Limit::F_INV != 0).then_some(true),
    }))
}

/// Bytes in the largest of nft's units that divides them.
pub(super) fn byte_unit(v: u64) -> (u64, String) {
    if v != 0 && v % (1024 * 1024) == 0 {
        (v / (1024 * 1024), "mbytes".into())
    } else if v != 0 && v % 1024 == 0 {
        (v / 1024, "kbytes".into())
    } else {
        (v, "bytes".into())
    }
}
