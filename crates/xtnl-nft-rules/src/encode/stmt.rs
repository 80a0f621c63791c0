//! The statements after the matches: limit, log, reject, NAT, masquerade, redirect.

use xtnl_nft_json::{
    ExprObject, Expression, LimitStmt, Log as JLog, Nat as JNat, OneOrMany, Reject as JReject,
};
use xtnl_wire::expr::{
    Expr, Immediate, ImmediateData, Limit, LogAll, Lookup, Nat, NatKind, Reject,
};
use xtnl_wire::nftables::nfproto;

use super::{Ctx, Encoder, obj_of, reg_of};
use crate::decode::{NAT_FLAGS, PER};
use crate::value::{Field, encode_fields, show};
use crate::{DataType, RuleError};

impl Encoder<'_> {
    pub(super) fn limit(&mut self, l: &LimitStmt) -> Result<(), RuleError> {
        let v = match l {
            LimitStmt::Anonymous(v) => v,
            LimitStmt::Named(n) => {
                return Err(RuleError::unsupported(
                    "",
                    format!("a named limit ({n:?}): objref"),
                ));
            }
        };
        let per = v.per.as_deref().unwrap_or("second");
        let unit = PER
            .iter()
            .find(|(_, n)| *n == per)
            .map(|(s, _)| *s)
            .ok_or_else(|| RuleError::invalid("", format!("limit per {per:?}")))?;
        let bytes_unit = |u: Option<&str>| -> Result<Option<u64>, RuleError> {
            Ok(match u {
                None => None,
                Some("bytes") => Some(1),
                Some("kbytes") => Some(1024),
                Some("mbytes") => Some(1024 * 1024),
                Some(u) => return Err(RuleError::invalid("", format!("limit unit {u:?}"))),
            })
        };
        let ru = bytes_unit(v.rate_unit.as_deref())?;
        let bu = bytes_unit(v.burst_unit.as_deref())?;
        let (kind, rate, burst) = match ru {
            None => (Limit::PKTS, v.rate, v.burst.unwrap_or(5)),
            Some(m) => (
                Limit::BYTES,
                v.rate.saturating_mul(m),
                v.burst.unwrap_or(0).saturating_mul(bu.unwrap_or(1)),
            ),
        };
        let burst = u32::try_from(burst)
            .map_err(|_| RuleError::invalid("", format!("limit burst {burst}")))?;
        self.out.push(Expr::Other(
            Limit {
                rate,
                unit,
                burst,
                kind,
                flags: if v.inv == Some(true) { Limit::F_INV } else { 0 },
            }
            .to_other(),
        ));
        Ok(())
    }

    pub(super) fn log(&mut self, l: Option<&JLog>) -> Result<(), RuleError> {
        let mut out = LogAll::default();
        let Some(l) = l else {
            out.level = Some(4);
            self.out.push(out.to_expr());
            return Ok(());
        };
        out.prefix = l.prefix.clone();
        if let Some(g) = l.group {
            out.group = Some(
                u16::try_from(g).map_err(|_| RuleError::invalid("", format!("log group {g}")))?,
            );
            // The kernel lists snaplen and the queue threshold only when not 0.
            out.snaplen = l.snaplen.filter(|s| *s != 0).map(|s| s as u32);
            out.qthreshold = l.queue_threshold.filter(|q| *q != 0).map(|q| q as u16);
            if l.level.is_some() || l.flags.is_some() {
                return Err(RuleError::invalid(
                    "",
                    "log level or flags with a group (nflog)",
                ));
            }
        } else {
            let lv = l.level.as_deref().unwrap_or("warn");
            let levels = [
                "emerg", "alert", "crit", "err", "warn", "notice", "info", "debug", "audit",
            ];
            out.level = Some(
                levels
                    .iter()
                    .position(|x| *x == lv)
                    .ok_or_else(|| RuleError::invalid("", format!("log level {lv:?}")))?
                    as u32,
            );
            let names: Vec<&str> = match &l.flags {
                None => Vec::new(),
                Some(OneOrMany::One(s)) => vec![s.as_str()],
                Some(OneOrMany::Many(v)) => v.iter().map(String::as_str).collect(),
            };
            let mut f = 0;
            for n in names {
                f |= match n {
                    "tcp sequence" => 1,
                    "tcp options" => 2,
                    "ip options" => 4,
                    "skuid" => 8,
                    "ether" => 0x20,
                    "all" => 0x2f,
                    _ => return Err(RuleError::invalid("", format!("log flag {n:?}"))),
                };
            }
            out.flags = (f != 0).then_some(f);
            if l.snaplen.is_some() || l.queue_threshold.is_some() {
                return Err(RuleError::invalid(
                    "",
                    "log snaplen or queue-threshold without a group",
                ));
            }
        }
        self.out.push(out.to_expr());
        Ok(())
    }

    pub(super) fn reject(&mut self, r: Option<&JReject>) -> Result<(), RuleError> {
        let kind = r.and_then(|r| r.kind.as_deref());
        let code_expr = r.and_then(|r| r.expr.as_ref());
        let code_of = |t: DataType, default: u64| -> Result<u8, RuleError> {
            match code_expr {
                None => Ok(default as u8),
                Some(e) => {
                    let v = crate::value::encode_int(t, e).ok_or_else(|| {
                        RuleError::invalid("", format!("{} is not an ICMP code", show(e)))
                    })?;
                    u8::try_from(v).map_err(|_| RuleError::invalid("", format!("code {v}")))
                }
            }
        };
        let kind = kind.unwrap_or(match self.family {
            nfproto::IPV4 => "icmp",
            nfproto::IPV6 => "icmpv6",
            _ => "icmpx",
        });
        let (k, code) = match kind {
            "tcp reset" => {
                self.dep(Ctx::L4Proto, 6);
                // The kernel keeps no code for a TCP reset.
                (Reject::TCP_RST, None)
            }
            "icmpx" => (
                Reject::ICMPX_UNREACH,
                Some(code_of(DataType::IcmpxCode, 1)?),
            ),
            "icmp" => {
                if self.inet_like() {
                    self.dep(Ctx::NfProto, 2);
                }
                (Reject::ICMP_UNREACH, Some(code_of(DataType::IcmpCode, 3)?))
            }
            "icmpv6" => {
                if self.inet_like() {
                    self.dep(Ctx::NfProto, 10);
                }
                (
                    Reject::ICMP_UNREACH,
                    Some(code_of(DataType::Icmpv6Code, 4)?),
                )
            }
            k => return Err(RuleError::invalid("", format!("reject type {k:?}"))),
        };
        self.out.push(Expr::Reject(Reject { kind: k, code }));
        Ok(())
    }

    /// Loads a NAT value (`addr` or `port`) into registers from `slot` (16-byte units): a
    /// value, a range, or a map lookup. Returns (min, max) registers and the next free slot.
    pub(super) fn nat_value(
        &mut self,
        e: &Expression,
        f: Field,
        slot: u32,
    ) -> Result<((u32, u32), u32), RuleError> {
        if let Some(ExprObject::Map(m)) = obj_of(e) {
            self.deps(&m.key)?;
            let fields = self.key_of(&m.key)?;
            self.load(&m.key, slot, None)?;
            let (name, id) = self.set_ref(&m.data, &fields, Some((f.dtype, f.len as u32)))?;
            let r = reg_of(slot);
            self.out.push(Expr::Lookup(Lookup {
                set: name,
                sreg: r,
                set_id: id,
                dreg: Some(r),
                flags: Some(0),
            }));
            return Ok(((r, r), slot + 4));
        }
        let imm = |this: &mut Self, v: &Expression, s: u32| -> Result<u32, RuleError> {
            let b = encode_fields(&[f], v)?;
            let r = reg_of(s);
            this.out.push(Expr::Immediate(Immediate {
                dreg: r,
                data: ImmediateData::Value(b),
            }));
            Ok(r)
        };
        if let Some(ExprObject::Range(r)) = obj_of(e) {
            if r.len() != 2 {
                return Err(RuleError::invalid("", "a range of two values"));
            }
            let lo = imm(self, &r[0], slot)?;
            let hi = imm(self, &r[1], slot + 4)?;
            return Ok(((lo, hi), slot + 8));
        }
        let r = imm(self, e, slot)?;
        Ok(((r, r), slot + 4))
    }

    pub(super) fn nat_flags(n: Option<&JNat>) -> Result<u32, RuleError> {
        let names: Vec<&str> = match n.and_then(|n| n.flags.as_ref()) {
            None => Vec::new(),
            Some(OneOrMany::One(s)) => vec![s.as_str()],
            Some(OneOrMany::Many(v)) => v.iter().map(String::as_str).collect(),
        };
        let mut f = 0;
        for name in names {
            f |= NAT_FLAGS
                .iter()
                .find(|(_, n)| *n == name)
                .map(|(b, _)| *b)
                .ok_or_else(|| RuleError::invalid("", format!("NAT flag {name:?}")))?;
        }
        if n.and_then(|n| n.type_flags.as_ref()).is_some() {
            return Err(RuleError::unsupported("", "NAT type_flags"));
        }
        Ok(f)
    }

    /// masquerade and redirect: flags and port registers.
    pub(super) fn nat_ports(
        &mut self,
        n: Option<&JNat>,
        slot: u32,
    ) -> Result<(u32, Option<(u32, u32)>), RuleError> {
        let mut flags = Self::nat_flags(n)?;
        if n.is_some_and(|n| n.addr.is_some() || n.family.is_some()) {
            return Err(RuleError::invalid(
                "",
                "an address for masquerade or redirect",
            ));
        }
        let regs = match n.and_then(|n| n.port.as_ref()) {
            None => None,
            Some(p) => {
                flags |= 2;
                Some(self.nat_value(p, Field::of(DataType::InetService), slot)?.0)
            }
        };
        Ok((flags, regs))
    }

    pub(super) fn nat(&mut self, kind: NatKind, n: Option<&JNat>) -> Result<(), RuleError> {
        let fam = match (n.and_then(|n| n.family.as_deref()), self.family) {
            (Some("ip"), _) | (None, nfproto::IPV4) => 2,
            (Some("ip6"), _) | (None, nfproto::IPV6) => 10,
            (Some(f), _) => return Err(RuleError::invalid("", format!("NAT family {f:?}"))),
            (None, _) => {
                return Err(RuleError::invalid(
                    "",
                    "NAT in an inet table needs a family (\"ip\" or \"ip6\")",
                ));
            }
        };
        let addr_t = if fam == 2 {
            DataType::Ipv4Addr
        } else {
            DataType::Ipv6Addr
        };
        let mut flags = Self::nat_flags(n)?;
        let mut slot = 0;
        let mut addr = None;
        let mut port = None;
        if let Some(a) = n.and_then(|n| n.addr.as_ref()) {
            let addr_slot = slot;
            let (regs, next) = self.nat_value(a, Field::of(addr_t), slot)?;
            addr = Some(regs);
            slot = next;
            flags |= 1;
            // A named map to `address . port`: the port is the data's second field, in the
            // next 4-byte register.
            if let Some(ExprObject::Map(m)) = obj_of(a) {
                let data = match &m.data {
                    Expression::String(s) => s
                        .strip_prefix('@')
                        .and_then(|name| self.sets.set(name))
                        .and_then(|set| set.data),
                    _ => None,
                };
                if let Some(dt) = data.filter(|d| d.id() >= 1 << crate::CONCAT_TYPE_BITS) {
                    let types = DataType::unpack(dt.id());
                    if types != [addr_t, DataType::InetService] {
                        return Err(RuleError::unsupported(
                            "",
                            format!("NAT from a map to {types:?}"),
                        ));
                    }
                    if n.is_some_and(|n| n.port.is_some()) {
                        return Err(RuleError::invalid(
                            "",
                            "a port with a map that gives the port",
                        ));
                    }
                    let r = reg_of(addr_slot + addr_t.len().div_ceil(4));
                    port = Some((r, r));
                    flags |= 2;
                }
            }
        }
        if let Some(p) = n.and_then(|n| n.port.as_ref()) {
            let (regs, _) = self.nat_value(p, Field::of(DataType::InetService), slot)?;
            port = Some(regs);
            flags |= 2;
        }
        self.out.push(Expr::Nat(Nat {
            kind,
            family: fam,
            reg_addr_min: addr.map(|r| r.0),
            reg_addr_max: addr.map(|r| r.1),
            reg_proto_min: port.map(|r| r.0),
            reg_proto_max: port.map(|r| r.1),
            flags: (flags != 0).then_some(flags),
        }));
        Ok(())
    }
}
