//! Expressions that write packet state or keep state of their own: `meta set`, `ct set`,
//! `numgen` (a load), `dynset` (set statements), `objref` (named counters, quotas, limits,
//! ct helpers, ...), `notrack`.

use xtnl_nft_json::{
    CounterStmt, Ct as JCt, Elem, ExprObject, Expression, LimitStmt, Mangle, Numgen as JNumgen,
    QuotaStmt, SetStmt, Statement, SynproxyStmt,
};
use xtnl_nft_json::{
    CtCount, Jhash as JJhash, Rt as JRt, Socket as JSocket, Symhash as JSymhash, Tproxy as JTproxy,
};
use xtnl_nft_json::{Ipsec as JIpsec, OneOrMany, Osf as JOsf, SynproxyValues};
use xtnl_wire::expr::{
    Byteorder, Connlimit, CtSet, Dynset, Exthdr, Hash, KeyLoad, MetaSet, Numgen, Objref, Osf,
    OtherExpr, PayloadBase, PayloadSet, Shift, Synproxy, Tproxy, Xfrm,
};

use super::{BinOp, Decoder, Reg, obj, reg32, value_expr};
use crate::options;
use crate::proto::{ct_key, meta_key};
use crate::value::{Field, decode_fields, decode_int, to_int};
use crate::{ByteOrder, DataType, RuleError};

impl Decoder<'_> {
    /// An expression `Expr::parse` keeps raw that the codec types.
    pub(super) fn other(&mut self, o: &OtherExpr) -> Result<(), RuleError> {
        let form = |what: &str| RuleError::unsupported("", format!("this form of {what}"));
        match o.name.as_str() {
            "meta" => {
                let m = MetaSet::from_other(o)
                    .ok()
                    .flatten()
                    .ok_or_else(|| form("meta"))?;
                let (name, field) = meta_key(m.key)
                    .ok_or_else(|| RuleError::unsupported("", format!("meta key {}", m.key)))?;
                let key = Expression::meta(name);
                self.mangle(key, field, m.sreg)
            }
            "ct" => {
                let c = CtSet::from_other(o)
                    .ok()
                    .flatten()
                    .ok_or_else(|| form("ct"))?;
                let (name, fam, field) = ct_key(c.key)
                    .ok_or_else(|| RuleError::unsupported("", format!("ct key {}", c.key)))?;
                let dir = match c.direction {
                    None => None,
                    Some(0) => Some("original".to_owned()),
                    Some(1) => Some("reply".to_owned()),
                    Some(n) => return Err(RuleError::unsupported("", format!("ct dir {n}"))),
                };
                let key = obj(ExprObject::Ct(JCt {
                    key: name.to_owned(),
                    family: fam.map(str::to_owned),
                    dir,
                }));
                self.mangle(key, field, c.sreg)
            }
            "numgen" => {
                let n = Numgen::from_other(o)
                    .ok()
                    .flatten()
                    .ok_or_else(|| form("numgen"))?;
                let mode = match n.kind {
                    Numgen::INC => "inc",
                    Numgen::RANDOM => "random",
                    k => return Err(RuleError::unsupported("", format!("numgen type {k}"))),
                };
                let e = obj(ExprObject::Numgen(JNumgen {
                    mode: mode.into(),
                    modulus: u64::from(n.modulus),
                    offset: Some(u64::from(n.offset.unwrap_or(0))),
                }));
                let f = Field {
                    dtype: DataType::Integer,
                    order: ByteOrder::Host,
                    len: 4,
                };
                self.set_load(n.dreg, e, f, None, None);
                Ok(())
            }
            "dynset" => {
                let d = Dynset::from_other(o)
                    .ok()
                    .flatten()
                    .ok_or_else(|| form("dynset (with element statements)"))?;
                if d.sreg_data.is_some() {
                    return Err(RuleError::unsupported("", "a map update from the packet"));
                }
                let op = match d.op {
                    Dynset::ADD => "add",
                    Dynset::UPDATE => "update",
                    Dynset::DELETE => "delete",
                    k => return Err(RuleError::unsupported("", format!("dynset op {k}"))),
                };
                let key = self.load(d.sreg_key)?;
                let val = value_expr(&key)?;
                let elem = match d.timeout_ms.unwrap_or(0) {
                    0 => val,
                    t if t % 1000 == 0 => obj(ExprObject::Elem(Elem {
                        val,
                        timeout: Some(t / 1000),
                        expires: None,
                        comment: None,
                        counter: None,
                    })),
                    t => {
                        return Err(RuleError::unsupported(
                            "",
                            format!("an element timeout of {t} ms"),
                        ));
                    }
                };
                self.push(Statement::Set(SetStmt {
                    op: op.into(),
                    elem,
                    set: format!("@{}", d.set),
                    stmt: None,
                }));
                Ok(())
            }
            "objref" => {
                let r = Objref::from_other(o)
                    .ok()
                    .flatten()
                    .ok_or_else(|| form("objref"))?;
                let n = r.name.clone();
                let s = match r.kind {
                    1 => Statement::Counter(Some(CounterStmt::Named(n))),
                    2 => Statement::Quota(QuotaStmt::Named(n)),
                    3 => Statement::CtHelper(n),
                    4 => Statement::Limit(LimitStmt::Named(n)),
                    7 => Statement::CtTimeout(n),
                    8 => Statement::Secmark(n),
                    9 => Statement::CtExpectation(n),
                    10 => Statement::Synproxy(SynproxyStmt::Named(n)),
                    k => return Err(RuleError::unsupported("", format!("object type {k}"))),
                };
                self.push(s);
                Ok(())
            }
            "connlimit" => {
                let c = Connlimit::from_other(o)
                    .ok()
                    .flatten()
                    .ok_or_else(|| form("connlimit"))?;
                self.push(Statement::CtCount(CtCount {
                    val: u64::from(c.count),
                    inv: (c.flags & 1 != 0).then_some(true),
                }));
                Ok(())
            }
            "hash" => {
                let h = Hash::from_other(o)
                    .ok()
                    .flatten()
                    .ok_or_else(|| form("hash"))?;
                let offset = h.offset.filter(|o| *o != 0).map(u64::from);
                let e = match (h.kind, h.sreg, h.len) {
                    (Hash::JENKINS, Some(sreg), Some(len)) => {
                        let expr = self.gather(sreg, len as usize)?;
                        obj(ExprObject::Jhash(JJhash {
                            modulus: u64::from(h.modulus),
                            offset,
                            expr,
                            seed: h.seed.map(u64::from),
                        }))
                    }
                    (Hash::SYM, None, None) => obj(ExprObject::Symhash(JSymhash {
                        modulus: u64::from(h.modulus),
                        offset,
                    })),
                    _ => return Err(form("hash")),
                };
                let f = Field {
                    dtype: DataType::Integer,
                    order: ByteOrder::Host,
                    len: 4,
                };
                self.set_load(h.dreg, e, f, None, None);
                Ok(())
            }
            "rt" | "socket" => {
                let k = KeyLoad::from_other(o)
                    .ok()
                    .flatten()
                    .ok_or_else(|| form(&o.name))?;
                let (e, f) = key_load(&k)?;
                self.set_load(k.dreg, e, f, None, None);
                Ok(())
            }
            "tproxy" => {
                let t = Tproxy::from_other(o)
                    .ok()
                    .flatten()
                    .ok_or_else(|| form("tproxy"))?;
                let (fam, addr_t) = match t.family {
                    2 => (Some("ip"), DataType::Ipv4Addr),
                    10 => (Some("ip6"), DataType::Ipv6Addr),
                    0 => (None, DataType::Ipv4Addr),
                    f => return Err(RuleError::unsupported("", format!("tproxy family {f}"))),
                };
                if fam.is_none() && t.reg_addr.is_some() {
                    return Err(form("tproxy"));
                }
                let addr = self.regs_value(t.reg_addr, None, Field::of(addr_t))?;
                let port = self.ports(t.reg_port, None)?;
                let family = fam
                    .filter(|_| self.family == xtnl_wire::nftables::nfproto::INET)
                    .map(str::to_owned);
                self.push(Statement::Tproxy(JTproxy { family, addr, port }));
                Ok(())
            }
            "bitwise" => {
                let sh = Shift::from_other(o)
                    .ok()
                    .flatten()
                    .ok_or_else(|| form("bitwise"))?;
                let mut l = self.load(sh.sreg)?;
                if l.mask.is_some() || l.binop.is_some() {
                    return Err(RuleError::unsupported(
                        "",
                        "two bitwise operations on one value",
                    ));
                }
                let op = if sh.left { BinOp::Shl } else { BinOp::Shr };
                l.binop = Some((op, sh.amount.clone()));
                self.regs.insert(reg32(sh.dreg), Reg::Load(Box::new(l)));
                Ok(())
            }
            "exthdr" => {
                let x = Exthdr::from_other(o)
                    .ok()
                    .flatten()
                    .ok_or_else(|| form("exthdr"))?;
                let op = x.op.unwrap_or(Exthdr::OP_IPV6);
                let opt = options::by_number(op, x.kind).ok_or_else(|| {
                    RuleError::unsupported("", format!("exthdr op {op} type {}", x.kind))
                })?;
                let present = x.flags.unwrap_or(0) & Exthdr::F_PRESENT != 0;
                let (field_name, field) = if present && x.offset == 0 && x.len == 1 {
                    (None, Field::of(DataType::Boolean))
                } else if x.flags.unwrap_or(0) == 0 {
                    let (name, _, len) = opt
                        .fields
                        .iter()
                        .find(|(_, off, len)| *off == x.offset && *len == x.len)
                        .ok_or_else(|| {
                            RuleError::unsupported(
                                "",
                                format!("{} {} at {} + {}", opt.json, opt.name, x.offset, x.len),
                            )
                        })?;
                    let f = Field {
                        dtype: DataType::Integer,
                        order: ByteOrder::Big,
                        len: *len as usize,
                    };
                    (Some(*name), f)
                } else {
                    return Err(form("exthdr"));
                };
                let e = obj(options::json_of(opt, field_name));
                match (x.dreg, x.sreg) {
                    (Some(dreg), None) => {
                        self.set_load(dreg, e, field, None, None);
                        Ok(())
                    }
                    (None, Some(sreg)) if field_name.is_some() => self.mangle(e, field, sreg),
                    _ => Err(form("exthdr")),
                }
            }
            "byteorder" => {
                // nft converts a host-order value before writing it into a header: the
                // value is the same expression.
                let b = Byteorder::from_other(o)
                    .ok()
                    .flatten()
                    .ok_or_else(|| form("byteorder"))?;
                let l = self.load(b.sreg)?;
                if b.op != Byteorder::HTON || b.len as usize != l.field.len || b.size != b.len {
                    return Err(form("byteorder"));
                }
                self.regs.insert(reg32(b.dreg), Reg::Load(Box::new(l)));
                Ok(())
            }
            "payload" => {
                let w = PayloadSet::from_other(o)
                    .ok()
                    .flatten()
                    .ok_or_else(|| form("payload"))?;
                self.payload_write(&w)
            }
            "synproxy" => {
                let p = Synproxy::from_other(o)
                    .ok()
                    .flatten()
                    .ok_or_else(|| form("synproxy"))?;
                if p.flags & !0xf != 0 {
                    return Err(form("synproxy (ecn)"));
                }
                let mut flags: Vec<String> = Vec::new();
                if p.flags & 8 != 0 {
                    flags.push("timestamp".into());
                }
                if p.flags & 4 != 0 {
                    flags.push("sack-perm".into());
                }
                let flags = match flags.len() {
                    0 => None,
                    1 => Some(OneOrMany::One(flags.remove(0))),
                    _ => Some(OneOrMany::Many(flags)),
                };
                self.push(Statement::Synproxy(SynproxyStmt::Anonymous(
                    SynproxyValues {
                        mss: p.mss.filter(|_| p.flags & 1 != 0).map(u64::from),
                        wscale: p.wscale.filter(|_| p.flags & 2 != 0).map(u64::from),
                        flags,
                    },
                )));
                Ok(())
            }
            "xfrm" => {
                let x = Xfrm::from_other(o)
                    .ok()
                    .flatten()
                    .ok_or_else(|| form("xfrm"))?;
                let f = |dtype, len, order| Field { dtype, len, order };
                let (key, fam, field) = match x.key {
                    1 => (
                        "daddr",
                        Some("ip"),
                        f(DataType::Ipv4Addr, 4, ByteOrder::Big),
                    ),
                    2 => (
                        "daddr",
                        Some("ip6"),
                        f(DataType::Ipv6Addr, 16, ByteOrder::Big),
                    ),
                    3 => (
                        "saddr",
                        Some("ip"),
                        f(DataType::Ipv4Addr, 4, ByteOrder::Big),
                    ),
                    4 => (
                        "saddr",
                        Some("ip6"),
                        f(DataType::Ipv6Addr, 16, ByteOrder::Big),
                    ),
                    5 => ("reqid", None, f(DataType::Integer, 4, ByteOrder::Host)),
                    6 => ("spi", None, f(DataType::Integer, 4, ByteOrder::Big)),
                    k => return Err(RuleError::unsupported("", format!("xfrm key {k}"))),
                };
                let dir = match x.dir {
                    0 => "in",
                    1 => "out",
                    d => return Err(RuleError::unsupported("", format!("xfrm dir {d}"))),
                };
                let e = obj(ExprObject::Ipsec(JIpsec {
                    key: key.into(),
                    family: fam.map(str::to_owned),
                    dir: Some(dir.into()),
                    spnum: Some(u64::from(x.spnum)),
                }));
                self.set_load(x.dreg, e, field, None, None);
                Ok(())
            }
            "osf" => {
                let x = Osf::from_other(o)
                    .ok()
                    .flatten()
                    .ok_or_else(|| form("osf"))?;
                let ttl = match x.ttl {
                    None | Some(0) => None,
                    Some(1) => Some("loose".to_owned()),
                    Some(2) => Some("skip".to_owned()),
                    Some(t) => return Err(RuleError::unsupported("", format!("osf ttl {t}"))),
                };
                let key = match x.flags.unwrap_or(0) {
                    0 => "name",
                    1 => "version",
                    f => return Err(RuleError::unsupported("", format!("osf flags {f}"))),
                };
                let e = obj(ExprObject::Osf(JOsf {
                    key: key.into(),
                    ttl,
                }));
                let field = Field {
                    dtype: DataType::String,
                    order: ByteOrder::Host,
                    len: 16,
                };
                self.set_load(x.dreg, e, field, None, None);
                Ok(())
            }
            "notrack" if o.data.is_empty() => {
                self.push(Statement::Notrack(()));
                Ok(())
            }
            name => Err(RuleError::unsupported(
                "",
                format!("the nf_tables expression {name:?} (or this form of it)"),
            )),
        }
    }

    /// `meta KEY set VALUE`, `ct KEY set VALUE`: the value from the source register.
    fn mangle(&mut self, key: Expression, field: Field, sreg: u32) -> Result<(), RuleError> {
        let value = match self.regs.get(&reg32(sreg)) {
            Some(Reg::Imm(b)) => decode_fields(
                &[Field {
                    len: b.len().min(field.len),
                    ..field
                }],
                &b[..b.len().min(field.len)],
            )?,
            Some(Reg::Load(l)) => value_expr(l)?,
            Some(Reg::Map(m)) => m.clone(),
            Some(Reg::MapPart) => {
                return Err(RuleError::unsupported(
                    "",
                    "a part of a map's data as a value",
                ));
            }
            None => {
                return Err(RuleError::invalid(
                    "",
                    format!("register {sreg} read before it is written"),
                ));
            }
        };
        self.push(Statement::Mangle(Mangle { key, value }));
        Ok(())
    }
}

impl Decoder<'_> {
    /// The value `len` bytes from register `sreg` on: one load, or the loads of a
    /// concatenation in consecutive registers (what `jhash` hashes).
    fn gather(&self, sreg: u32, len: usize) -> Result<Expression, RuleError> {
        let mut r = reg32(sreg);
        let mut parts = Vec::new();
        let mut covered = 0;
        while covered < len {
            let l = self.load(r)?;
            let padded = l.field.len.div_ceil(4) * 4;
            parts.push(value_expr(&l)?);
            covered += if parts.len() == 1 && l.field.len == len {
                len
            } else {
                padded
            };
            r += (padded / 4) as u32;
        }
        if covered != len {
            return Err(RuleError::invalid("", format!("a hash of {len} bytes")));
        }
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            obj(ExprObject::Concat(parts))
        })
    }
}

/// What an `rt` or `socket` key loads, as nft prints it.
fn key_load(k: &KeyLoad) -> Result<(Expression, Field), RuleError> {
    let f = |dtype, len, order| Field { dtype, len, order };
    let bad = || RuleError::unsupported("", format!("{} key {}", k.kind, k.key));
    Ok(match k.kind {
        "rt" => {
            let (key, fam, field) = match k.key {
                0 => ("classid", None, f(DataType::Realm, 4, ByteOrder::Host)),
                1 => (
                    "nexthop",
                    Some("ip"),
                    f(DataType::Ipv4Addr, 4, ByteOrder::Big),
                ),
                2 => (
                    "nexthop",
                    Some("ip6"),
                    f(DataType::Ipv6Addr, 16, ByteOrder::Big),
                ),
                3 => ("mtu", None, f(DataType::Integer, 2, ByteOrder::Host)),
                4 => ("ipsec", None, f(DataType::Boolean, 1, ByteOrder::Host)),
                _ => return Err(bad()),
            };
            let e = obj(ExprObject::Rt(JRt {
                key: key.into(),
                family: fam.map(str::to_owned),
            }));
            (e, field)
        }
        _ => {
            let (key, field) = match k.key {
                0 => ("transparent", f(DataType::Integer, 1, ByteOrder::Host)),
                1 => ("mark", f(DataType::Mark, 4, ByteOrder::Host)),
                2 => ("wildcard", f(DataType::Integer, 1, ByteOrder::Host)),
                3 => ("cgroupv2", f(DataType::CgroupV2, 8, ByteOrder::Host)),
                _ => return Err(bad()),
            };
            let e = obj(ExprObject::Socket(JSocket {
                key: key.into(),
                level: k.level.map(u64::from),
            }));
            (e, field)
        }
    })
}

impl Decoder<'_> {
    /// `payload write`: the field it sets, from a constant, or from the header's own bytes
    /// masked and xored (a field narrower than the bytes written: nft writes whole 16-bit
    /// words of a checksummed header).
    fn payload_write(&mut self, w: &PayloadSet) -> Result<(), RuleError> {
        let unsupported =
            |what: &str| RuleError::unsupported("", format!("a payload write {what}"));
        let base = match w.base {
            0 => PayloadBase::Link,
            1 => PayloadBase::Network,
            2 => PayloadBase::Transport,
            _ => return Err(unsupported("at this base")),
        };
        let (proto, dep) = self.proto_for(base);
        let proto = proto
            .filter(|p| *p != "th")
            .ok_or_else(|| unsupported("to a header this version does not name"))?;
        let (key, value) = match self.regs.get(&reg32(w.sreg)) {
            Some(Reg::Imm(b)) if b.len() == w.len as usize => {
                let h = crate::proto::field_at(proto, base, w.offset, w.len)
                    .filter(|h| h.len == w.len)
                    .ok_or_else(|| unsupported("of a field this version does not name"))?;
                let f = Field {
                    dtype: h.dtype,
                    order: ByteOrder::Big,
                    len: h.len as usize,
                };
                (
                    Expression::payload(h.proto, h.field),
                    decode_fields(&[f], b)?,
                )
            }
            Some(Reg::Load(l)) => {
                let (Some((_, lb, loff, llen)), Some((mask, xor))) = (&l.raw, &l.write_mask) else {
                    return Err(unsupported("of a loaded value"));
                };
                if (*lb, *loff, *llen) != (base, w.offset, w.len) || mask.len() != xor.len() {
                    return Err(unsupported("of other bytes than it loaded"));
                }
                let window_bits = w.len * 8;
                // The mask's cleared bits are the field's.
                let cleared: Vec<u32> = (0..window_bits)
                    .filter(|i| mask[(*i / 8) as usize] & (0x80 >> (i % 8)) == 0)
                    .collect();
                let (Some(&first), Some(&last)) = (cleared.first(), cleared.last()) else {
                    return Err(unsupported("that changes nothing"));
                };
                let bits = last - first + 1;
                if cleared.len() as u32 != bits || bits > 63 {
                    return Err(unsupported("of scattered bits"));
                }
                let abs = w.offset * 8 + first;
                let named = crate::proto::BIT_FIELDS
                    .iter()
                    .find(|b| {
                        b.proto == proto && b.base == base && b.bit_offset == abs && b.bits == bits
                    })
                    .map(|b| (b.field, b.dtype))
                    .or_else(|| {
                        crate::proto::FIELDS
                            .iter()
                            .find(|h| {
                                h.proto == proto
                                    && h.base == base
                                    && h.offset * 8 == abs
                                    && h.len * 8 == bits
                            })
                            .map(|h| (h.field, h.dtype))
                    });
                let (field, dtype) =
                    named.ok_or_else(|| unsupported("of a field this version does not name"))?;
                let v =
                    to_int(ByteOrder::Big, xor).ok_or_else(|| unsupported("of 9 bytes or more"))?;
                let shift = window_bits - first - bits;
                let ones = (1u64 << bits) - 1;
                if v & !(ones << shift) != 0 {
                    return Err(unsupported("that sets other bits"));
                }
                (
                    Expression::payload(proto, field),
                    decode_int(dtype, (v >> shift) & ones),
                )
            }
            _ => return Err(unsupported("of this register")),
        };
        self.kill_dep(dep);
        self.push(Statement::Mangle(Mangle { key, value }));
        Ok(())
    }
}
