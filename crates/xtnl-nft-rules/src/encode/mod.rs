//! Linearization: statements to the expressions nft gives the kernel, with the protocol
//! dependencies nft adds (`meta nfproto` before an `ip` field in an inet table, `meta l4proto`
//! before a `tcp` field) and the registers nft picks (one 16-byte register per value, a
//! concatenation's fields in consecutive 4-byte registers), and the anonymous sets a rule
//! needs.

use xtnl_nft_json::{CounterStmt, ExprObject, Expression, OneOrMany, Statement};
use xtnl_wire::expr::{
    Cmp, CmpOp, Counter, Ct, Expr, Fib, Immediate, ImmediateData, Lookup, Masq, Meta, MetaKey,
    NatKind, Payload, Redir, Verdict,
};
use xtnl_wire::nftables::nfproto;

use crate::options;
use crate::proto::{ct_named, field_named, l4_number, meta_named};
use crate::value::{Field, show};
use crate::{AnonSet, ByteOrder, DataType, EncodedRule, RuleError, SetLookup};

mod matches;
mod state;
mod stmt;

/// A 4-byte register slot (0 = the start of `NFT_REG_1`) as nft numbers it: the 16-byte
/// register when the slot starts one, the 4-byte register otherwise.
pub(super) fn reg_of(slot: u32) -> u32 {
    if slot % 4 == 0 {
        1 + slot / 4
    } else {
        8 + slot
    }
}

pub(super) fn obj_of(e: &Expression) -> Option<&ExprObject> {
    match e {
        Expression::Object(o) => Some(o.as_ref()),
        _ => None,
    }
}

/// What a left-hand expression loads.
#[derive(Debug, Clone, Copy)]
pub(super) struct Loaded {
    field: Field,
    /// `meta nfproto`, `meta l4proto`, `ip protocol`, `ip6 nexthdr`: a context it sets.
    ctx: Option<Ctx>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ctx {
    NfProto,
    L4Proto,
}

pub(super) struct Encoder<'a> {
    family: u8,
    sets: &'a dyn SetLookup,
    out: Vec<Expr>,
    anon: Vec<AnonSet>,
    nfproto: Option<u8>,
    l4proto: Option<u8>,
    linktype: bool,
}

/// A rule's statements (as `nft -j -f` reads them) to the expressions nft would give the
/// kernel, with the anonymous sets they need. `family` is the table's; `sets` has the
/// table's named sets (those the batch creates included).
pub fn encode_rule(
    family: u8,
    stmts: &[Statement],
    sets: &dyn SetLookup,
) -> Result<EncodedRule, RuleError> {
    let mut e = Encoder {
        family,
        sets,
        out: Vec::new(),
        anon: Vec::new(),
        nfproto: None,
        l4proto: None,
        linktype: false,
    };
    for (i, s) in stmts.iter().enumerate() {
        e.stmt(s).map_err(|err| err.within(&format!("expr[{i}]")))?;
    }
    Ok(EncodedRule {
        exprs: e.out,
        anon_sets: e.anon,
    })
}

impl Encoder<'_> {
    pub(super) fn inet_like(&self) -> bool {
        !matches!(self.family, nfproto::IPV4 | nfproto::IPV6)
    }

    pub(super) fn dep(&mut self, ctx: Ctx, v: u8) {
        let (key, cur) = match ctx {
            Ctx::NfProto => (MetaKey::NFPROTO, &mut self.nfproto),
            Ctx::L4Proto => (MetaKey::L4PROTO, &mut self.l4proto),
        };
        if *cur == Some(v) {
            return;
        }
        *cur = Some(v);
        self.out.push(Expr::Meta(Meta { key, dreg: 1 }));
        self.out.push(Expr::Cmp(Cmp {
            sreg: 1,
            op: CmpOp::Eq,
            data: vec![v],
        }));
    }

    /// `meta iiftype ether` (2 bytes, host order) before a link-layer field in an ip, ip6 or
    /// inet table, as nft adds it.
    fn dep_linktype(&mut self) {
        if self.linktype || !matches!(self.family, nfproto::IPV4 | nfproto::IPV6 | nfproto::INET) {
            return;
        }
        self.linktype = true;
        self.out.push(Expr::Meta(Meta {
            key: MetaKey(8),
            dreg: 1,
        }));
        self.out.push(Expr::Cmp(Cmp {
            sreg: 1,
            op: CmpOp::Eq,
            data: 1u16.to_ne_bytes().to_vec(),
        }));
    }

    /// The dependencies a left-hand expression needs, emitted before it is loaded.
    pub(super) fn deps(&mut self, e: &Expression) -> Result<(), RuleError> {
        let Some(o) = obj_of(e) else { return Ok(()) };
        match o {
            ExprObject::Payload(p) => {
                let (Some(proto), Some(_)) = (&p.protocol, &p.field) else {
                    return Ok(());
                };
                match proto.as_str() {
                    "ip" if self.inet_like() => self.dep(Ctx::NfProto, 2),
                    "ip6" if self.inet_like() => self.dep(Ctx::NfProto, 10),
                    "ether" => self.dep_linktype(),
                    "th" | "ip" | "ip6" => {}
                    l4 => {
                        let n = l4_number(l4).ok_or_else(|| {
                            RuleError::unsupported("", format!("the protocol {l4:?}"))
                        })?;
                        // An ICMP header implies its IP version: nft matches that first.
                        let version = match l4 {
                            "icmp" => Some(2),
                            "icmpv6" => Some(10),
                            _ => None,
                        };
                        if let Some(v) = version {
                            if self.inet_like() && self.l4proto != Some(n) {
                                self.dep(Ctx::NfProto, v);
                            }
                        }
                        self.dep(Ctx::L4Proto, n);
                    }
                }
            }
            ExprObject::Concat(parts) => {
                for p in parts {
                    self.deps(p)?;
                }
            }
            ExprObject::And(v) if v.len() == 2 => self.deps(&v[0])?,
            ExprObject::Jhash(h) => self.deps(&h.expr)?,
            _ => {}
        }
        Ok(())
    }

    /// Loads a left-hand expression into the register at `slot`.
    pub(super) fn load(
        &mut self,
        e: &Expression,
        slot: u32,
        len: Option<u32>,
    ) -> Result<Loaded, RuleError> {
        let dreg = reg_of(slot);
        let o = obj_of(e).ok_or_else(|| {
            RuleError::unsupported("", format!("{} as the left side of a match", show(e)))
        })?;
        Ok(match o {
            ExprObject::Payload(p) => {
                let (Some(proto), Some(field)) = (&p.protocol, &p.field) else {
                    return Err(RuleError::unsupported("", "a raw payload expression"));
                };
                let h = field_named(proto, field).ok_or_else(|| {
                    RuleError::unsupported("", format!("the header field {proto} {field}"))
                })?;
                self.out.push(Expr::Payload(Payload {
                    dreg,
                    base: h.base,
                    offset: h.offset,
                    len: len.unwrap_or(h.len),
                }));
                let ctx = match (proto.as_str(), field.as_str()) {
                    ("ip", "protocol") | ("ip6", "nexthdr") => Some(Ctx::L4Proto),
                    _ => None,
                };
                Loaded {
                    field: Field {
                        dtype: h.dtype,
                        order: ByteOrder::Big,
                        len: h.len as usize,
                    },
                    ctx,
                }
            }
            ExprObject::Meta(k) => {
                let (key, field) = meta_named(&k.key).ok_or_else(|| {
                    RuleError::unsupported("", format!("the meta key {:?}", k.key))
                })?;
                self.out.push(Expr::Meta(Meta {
                    key: MetaKey(key),
                    dreg,
                }));
                let ctx = match k.key.as_str() {
                    "nfproto" => Some(Ctx::NfProto),
                    "l4proto" => Some(Ctx::L4Proto),
                    _ => None,
                };
                Loaded { field, ctx }
            }
            ExprObject::Ct(c) => {
                let (key, field) = ct_named(&c.key, c.family.as_deref())
                    .ok_or_else(|| RuleError::unsupported("", format!("the ct key {:?}", c.key)))?;
                let direction = match c.dir.as_deref() {
                    None => None,
                    Some("original") => Some(0),
                    Some("reply") => Some(1),
                    Some(d) => {
                        return Err(RuleError::invalid("", format!("ct direction {d:?}")));
                    }
                };
                self.out.push(Expr::Ct(Ct {
                    key,
                    dreg,
                    direction,
                }));
                Loaded { field, ctx: None }
            }
            ExprObject::Fib(f) => {
                let (result, dtype, len) = match f.result.as_str() {
                    "oif" => (Fib::RESULT_OIF, DataType::IfaceIndex, 4),
                    "oifname" => (Fib::RESULT_OIFNAME, DataType::IfName, 16),
                    "type" => (Fib::RESULT_ADDRTYPE, DataType::FibAddrType, 4),
                    r => return Err(RuleError::unsupported("", format!("fib result {r:?}"))),
                };
                let names: Vec<&str> = match &f.flags {
                    None => Vec::new(),
                    Some(OneOrMany::One(s)) => vec![s.as_str()],
                    Some(OneOrMany::Many(v)) => v.iter().map(String::as_str).collect(),
                };
                let mut flags = 0;
                for n in names {
                    flags |= match n {
                        "saddr" => 1,
                        "daddr" => 2,
                        "mark" => 4,
                        "iif" => 8,
                        "oif" => 16,
                        _ => return Err(RuleError::unsupported("", format!("fib flag {n:?}"))),
                    };
                }
                self.out.push(Expr::Other(
                    Fib {
                        dreg,
                        result,
                        flags,
                    }
                    .to_other(),
                ));
                Loaded {
                    field: Field {
                        dtype,
                        order: ByteOrder::Host,
                        len,
                    },
                    ctx: None,
                }
            }
            ExprObject::Jhash(h) => {
                // The hashed value goes into the next 16-byte register, as nft does.
                let inner = self.load(&h.expr, slot + 4, None)?;
                let small = |v: u64, what: &str| {
                    u32::try_from(v)
                        .map_err(|_| RuleError::invalid("", format!("jhash {what} {v}")))
                };
                self.out.push(Expr::Other(
                    xtnl_wire::expr::Hash {
                        sreg: Some(reg_of(slot + 4)),
                        dreg,
                        len: Some(inner.field.len as u32),
                        modulus: small(h.modulus, "mod")?,
                        seed: h.seed.map(|s| small(s, "seed")).transpose()?,
                        offset: h
                            .offset
                            .filter(|o| *o != 0)
                            .map(|o| small(o, "offset"))
                            .transpose()?,
                        kind: xtnl_wire::expr::Hash::JENKINS,
                    }
                    .to_other(),
                ));
                Loaded {
                    field: numgen_field(),
                    ctx: None,
                }
            }
            ExprObject::Symhash(h) => {
                let small = |v: u64, what: &str| {
                    u32::try_from(v)
                        .map_err(|_| RuleError::invalid("", format!("symhash {what} {v}")))
                };
                self.out.push(Expr::Other(
                    xtnl_wire::expr::Hash {
                        sreg: None,
                        dreg,
                        len: None,
                        modulus: small(h.modulus, "mod")?,
                        seed: None,
                        offset: h
                            .offset
                            .filter(|o| *o != 0)
                            .map(|o| small(o, "offset"))
                            .transpose()?,
                        kind: xtnl_wire::expr::Hash::SYM,
                    }
                    .to_other(),
                ));
                Loaded {
                    field: numgen_field(),
                    ctx: None,
                }
            }
            ExprObject::Exthdr(_) | ExprObject::TcpOption(_) | ExprObject::IpOption(_) => {
                let (x, field) = exthdr_of(o)?;
                self.out.push(Expr::Other(
                    xtnl_wire::expr::Exthdr {
                        dreg: Some(dreg),
                        ..x
                    }
                    .to_other(),
                ));
                Loaded { field, ctx: None }
            }
            ExprObject::Ipsec(x) => {
                let (key, field) = match (x.key.as_str(), x.family.as_deref()) {
                    ("daddr", Some("ip")) => (1, f4(DataType::Ipv4Addr, 4, ByteOrder::Big)),
                    ("daddr", Some("ip6")) => (2, f4(DataType::Ipv6Addr, 16, ByteOrder::Big)),
                    ("saddr", Some("ip")) => (3, f4(DataType::Ipv4Addr, 4, ByteOrder::Big)),
                    ("saddr", Some("ip6")) => (4, f4(DataType::Ipv6Addr, 16, ByteOrder::Big)),
                    ("reqid", None) => (5, f4(DataType::Integer, 4, ByteOrder::Host)),
                    ("spi", None) => (6, f4(DataType::Integer, 4, ByteOrder::Big)),
                    (k, fam) => {
                        return Err(RuleError::unsupported(
                            "",
                            format!("ipsec key {k:?} (family {fam:?})"),
                        ));
                    }
                };
                let dir = match x.dir.as_deref() {
                    Some("in") => 0,
                    Some("out") => 1,
                    d => return Err(RuleError::invalid("", format!("ipsec dir {d:?}"))),
                };
                let spnum = u32::try_from(x.spnum.unwrap_or(0))
                    .map_err(|_| RuleError::invalid("", "ipsec spnum"))?;
                self.out.push(Expr::Other(
                    xtnl_wire::expr::Xfrm {
                        dreg,
                        key,
                        dir,
                        spnum,
                    }
                    .to_other(),
                ));
                Loaded { field, ctx: None }
            }
            ExprObject::Osf(x) => {
                let ttl = match x.ttl.as_deref() {
                    None => None,
                    Some("loose") => Some(1),
                    Some("skip") => Some(2),
                    Some(t) => return Err(RuleError::invalid("", format!("osf ttl {t:?}"))),
                };
                // The kernel lists the flags even when 0.
                let flags = match x.key.as_str() {
                    "name" => Some(0),
                    "version" => Some(1),
                    k => return Err(RuleError::invalid("", format!("osf key {k:?}"))),
                };
                self.out.push(Expr::Other(
                    xtnl_wire::expr::Osf { dreg, ttl, flags }.to_other(),
                ));
                Loaded {
                    field: f4(DataType::String, 16, ByteOrder::Host),
                    ctx: None,
                }
            }
            ExprObject::Rt(_) | ExprObject::Socket(_) => {
                let (kind, key, level, field) = key_load_of(o)?;
                self.out.push(Expr::Other(
                    xtnl_wire::expr::KeyLoad {
                        kind,
                        dreg,
                        key,
                        level,
                    }
                    .to_other(),
                ));
                Loaded { field, ctx: None }
            }
            ExprObject::Numgen(n) => {
                let kind = match n.mode.as_str() {
                    "inc" => xtnl_wire::expr::Numgen::INC,
                    "random" => xtnl_wire::expr::Numgen::RANDOM,
                    m => return Err(RuleError::invalid("", format!("numgen mode {m:?}"))),
                };
                let small = |v: u64, what: &str| {
                    u32::try_from(v)
                        .map_err(|_| RuleError::invalid("", format!("numgen {what} {v}")))
                };
                self.out.push(Expr::Other(
                    xtnl_wire::expr::Numgen {
                        dreg,
                        modulus: small(n.modulus, "mod")?,
                        kind,
                        offset: Some(small(n.offset.unwrap_or(0), "offset")?),
                    }
                    .to_other(),
                ));
                Loaded {
                    field: numgen_field(),
                    ctx: None,
                }
            }
            ExprObject::Concat(parts) => {
                let mut at = slot;
                let mut dtypes = Vec::new();
                let mut total = 0;
                for p in parts {
                    let l = self.load(p, at, None)?;
                    let padded = l.field.len.div_ceil(4) * 4;
                    at += (padded / 4) as u32;
                    total += padded;
                    dtypes.push(l.field.dtype);
                }
                Loaded {
                    field: Field {
                        dtype: DataType::Other(DataType::pack(&dtypes)),
                        order: ByteOrder::Big,
                        len: total,
                    },
                    ctx: None,
                }
            }
            other => {
                return Err(RuleError::unsupported(
                    "",
                    format!(
                        "{} as the left side of a match",
                        serde_json::to_string(other).unwrap_or_default()
                    ),
                ));
            }
        })
    }

    /// The datatypes of a left-hand expression (more than one for a concatenation), and the
    /// fields of its key.
    pub(super) fn key_of(&self, e: &Expression) -> Result<Vec<Field>, RuleError> {
        match obj_of(e) {
            Some(ExprObject::Concat(parts)) => {
                let mut out = Vec::new();
                for p in parts {
                    out.extend(self.key_of(p)?);
                }
                Ok(out)
            }
            Some(ExprObject::Numgen(_) | ExprObject::Jhash(_) | ExprObject::Symhash(_)) => {
                Ok(vec![numgen_field()])
            }
            Some(o @ (ExprObject::Rt(_) | ExprObject::Socket(_))) => Ok(vec![key_load_of(o)?.3]),
            Some(
                o @ (ExprObject::Exthdr(_) | ExprObject::TcpOption(_) | ExprObject::IpOption(_)),
            ) => Ok(vec![exthdr_of(o)?.1]),
            Some(ExprObject::Payload(p)) => {
                let (Some(pr), Some(f)) = (&p.protocol, &p.field) else {
                    return Err(RuleError::unsupported("", "a raw payload expression"));
                };
                let h = field_named(pr, f).ok_or_else(|| {
                    RuleError::unsupported("", format!("the header field {pr} {f}"))
                })?;
                Ok(vec![Field {
                    dtype: h.dtype,
                    order: ByteOrder::Big,
                    len: h.len as usize,
                }])
            }
            Some(ExprObject::Meta(k)) => Ok(vec![
                meta_named(&k.key)
                    .ok_or_else(|| RuleError::unsupported("", format!("meta key {:?}", k.key)))?
                    .1,
            ]),
            Some(ExprObject::Ct(c)) => Ok(vec![
                ct_named(&c.key, c.family.as_deref())
                    .ok_or_else(|| RuleError::unsupported("", format!("ct key {:?}", c.key)))?
                    .1,
            ]),
            _ => Err(RuleError::unsupported(
                "",
                format!("{} as a set's key", show(e)),
            )),
        }
    }

    fn stmt(&mut self, s: &Statement) -> Result<(), RuleError> {
        match s {
            Statement::Match(m) => self.matches(m),
            Statement::Accept(()) => self.verdict(Verdict::Accept),
            Statement::Drop(()) => self.verdict(Verdict::Drop),
            Statement::Continue(()) => self.verdict(Verdict::Continue),
            Statement::Return(()) => self.verdict(Verdict::Return),
            Statement::Jump(t) => self.verdict(Verdict::Jump(t.target.clone())),
            Statement::Goto(t) => self.verdict(Verdict::Goto(t.target.clone())),
            Statement::Vmap(v) => {
                self.deps(&v.key)?;
                let fields = self.key_of(&v.key)?;
                self.load(&v.key, 0, None)?;
                let (name, id) = self.set_ref(&v.data, &fields, Some((DataType::Verdict, 0)))?;
                self.out.push(Expr::Lookup(Lookup {
                    set: name,
                    sreg: 1,
                    set_id: id,
                    dreg: Some(0),
                    flags: Some(0),
                }));
                Ok(())
            }
            Statement::Counter(c) => {
                let (packets, bytes) = match c {
                    None => (0, 0),
                    Some(CounterStmt::Anonymous(v)) => {
                        (v.packets.unwrap_or(0), v.bytes.unwrap_or(0))
                    }
                    Some(CounterStmt::Named(n)) => return self.objref(1, n),
                };
                self.out.push(Expr::Counter(Counter { packets, bytes }));
                Ok(())
            }
            Statement::Limit(xtnl_nft_json::LimitStmt::Named(n)) => self.objref(4, n),
            Statement::Quota(xtnl_nft_json::QuotaStmt::Named(n)) => self.objref(2, n),
            Statement::CtHelper(n) => self.objref(3, n),
            Statement::CtTimeout(n) => self.objref(7, n),
            Statement::Secmark(n) => self.objref(8, n),
            Statement::CtExpectation(n) => self.objref(9, n),
            Statement::Synproxy(xtnl_nft_json::SynproxyStmt::Named(n)) => self.objref(10, n),
            Statement::Synproxy(xtnl_nft_json::SynproxyStmt::Anonymous(v)) => {
                let mut flags = 0;
                let mss = v
                    .mss
                    .map(|m| u16::try_from(m).map_err(|_| RuleError::invalid("", "synproxy mss")))
                    .transpose()?;
                let wscale = v
                    .wscale
                    .map(|w| u8::try_from(w).map_err(|_| RuleError::invalid("", "synproxy wscale")))
                    .transpose()?;
                if mss.is_some() {
                    flags |= 1;
                }
                if wscale.is_some() {
                    flags |= 2;
                }
                let names: Vec<&str> = match &v.flags {
                    None => Vec::new(),
                    Some(OneOrMany::One(s)) => vec![s.as_str()],
                    Some(OneOrMany::Many(v)) => v.iter().map(String::as_str).collect(),
                };
                for n in names {
                    flags |= match n {
                        "timestamp" => 8,
                        "sack-perm" => 4,
                        _ => return Err(RuleError::invalid("", format!("synproxy flag {n:?}"))),
                    };
                }
                self.out.push(Expr::Other(
                    xtnl_wire::expr::Synproxy { mss, wscale, flags }.to_other(),
                ));
                Ok(())
            }
            Statement::Notrack(()) => {
                self.out.push(Expr::Other(xtnl_wire::expr::OtherExpr {
                    name: "notrack".into(),
                    data: Vec::new(),
                }));
                Ok(())
            }
            Statement::Mangle(m) => self.mangle(m),
            Statement::CtCount(c) => {
                let count = u32::try_from(c.val)
                    .map_err(|_| RuleError::invalid("", format!("ct count {}", c.val)))?;
                self.out.push(Expr::Other(
                    xtnl_wire::expr::Connlimit {
                        count,
                        flags: u32::from(c.inv == Some(true)),
                    }
                    .to_other(),
                ));
                Ok(())
            }
            Statement::Tproxy(t) => self.tproxy(t),
            Statement::Set(st) => self.dynset(st),
            Statement::Limit(l) => self.limit(l),
            Statement::Log(l) => self.log(l.as_ref()),
            Statement::Reject(r) => self.reject(r.as_ref()),
            Statement::Snat(n) => self.nat(NatKind::Snat, n.as_ref()),
            Statement::Dnat(n) => self.nat(NatKind::Dnat, n.as_ref()),
            Statement::Masquerade(n) => {
                let (flags, regs) = self.nat_ports(n.as_ref(), 0)?;
                self.out.push(Expr::Masq(Masq {
                    flags: (flags != 0).then_some(flags),
                    reg_proto_min: regs.map(|r| r.0),
                    reg_proto_max: regs.map(|r| r.1),
                }));
                Ok(())
            }
            Statement::Redirect(n) => {
                let (flags, regs) = self.nat_ports(n.as_ref(), 0)?;
                self.out.push(Expr::Redir(Redir {
                    reg_proto_min: regs.map(|r| r.0),
                    reg_proto_max: regs.map(|r| r.1),
                    flags: (flags != 0).then_some(flags),
                }));
                Ok(())
            }
            Statement::Xt(x) => Err(RuleError::unsupported(
                "",
                format!(
                    "an xt statement ({} {:?}): nft's JSON does not carry the extension's data",
                    x.kind, x.name
                ),
            )),
            Statement::Other(v) => Err(RuleError::unsupported("", format!("the statement {v}"))),
            other => {
                let name = serde_json::to_value(other)
                    .ok()
                    .and_then(|v| v.as_object().and_then(|o| o.keys().next().cloned()))
                    .unwrap_or_else(|| "?".into());
                Err(RuleError::unsupported(
                    "",
                    format!("the {name:?} statement"),
                ))
            }
        }
    }

    fn verdict(&mut self, v: Verdict) -> Result<(), RuleError> {
        self.out.push(Expr::Immediate(Immediate {
            dreg: 0,
            data: ImmediateData::Verdict(v),
        }));
        Ok(())
    }
}

/// The `exthdr` expression (registers unset) for an extension header, TCP option or IPv4
/// option, and the field it loads: the named field, or a one-byte existence test.
pub(super) fn exthdr_of(o: &ExprObject) -> Result<(xtnl_wire::expr::Exthdr, Field), RuleError> {
    let (json, x) = options::of_json(o)
        .ok_or_else(|| RuleError::unsupported("", "this expression as a header option"))?;
    let opt = options::by_name(json, &x.name)
        .ok_or_else(|| RuleError::unsupported("", format!("the {json} {:?}", x.name)))?;
    if x.offset.is_some() {
        return Err(RuleError::unsupported(
            "",
            format!("a {json} with an offset"),
        ));
    }
    let (offset, len, flags, field) = match &x.field {
        None => (
            0,
            1,
            xtnl_wire::expr::Exthdr::F_PRESENT,
            Field::of(DataType::Boolean),
        ),
        Some(name) => {
            let (_, off, len) = opt
                .fields
                .iter()
                .find(|(n, _, _)| n == name)
                .ok_or_else(|| {
                    RuleError::unsupported("", format!("the {json} {} field {name:?}", opt.name))
                })?;
            let f = Field {
                dtype: DataType::Integer,
                order: ByteOrder::Big,
                len: *len as usize,
            };
            (*off, *len, 0, f)
        }
    };
    let e = xtnl_wire::expr::Exthdr {
        dreg: None,
        sreg: None,
        kind: opt.kind,
        offset,
        len,
        // The kernel lists the flags and the op even when 0.
        flags: Some(flags),
        op: Some(opt.op),
    };
    Ok((e, field))
}

/// The kind, key, level and loaded field of an `rt` or `socket` expression.
fn key_load_of(o: &ExprObject) -> Result<(&'static str, u32, Option<u32>, Field), RuleError> {
    let f = |dtype, len, order| Field { dtype, len, order };
    match o {
        ExprObject::Rt(r) => {
            let (key, field) = match (r.key.as_str(), r.family.as_deref()) {
                ("classid", None) => (0, f(DataType::Realm, 4, ByteOrder::Host)),
                ("nexthop", Some("ip")) => (1, f(DataType::Ipv4Addr, 4, ByteOrder::Big)),
                ("nexthop", Some("ip6")) => (2, f(DataType::Ipv6Addr, 16, ByteOrder::Big)),
                ("mtu", None) => (3, f(DataType::Integer, 2, ByteOrder::Host)),
                ("ipsec", None) => (4, f(DataType::Boolean, 1, ByteOrder::Host)),
                (k, fam) => {
                    return Err(RuleError::unsupported(
                        "",
                        format!("rt key {k:?} (family {fam:?})"),
                    ));
                }
            };
            Ok(("rt", key, None, field))
        }
        ExprObject::Socket(so) => {
            let (key, field) = match so.key.as_str() {
                "transparent" => (0, f(DataType::Integer, 1, ByteOrder::Host)),
                "mark" => (1, f(DataType::Mark, 4, ByteOrder::Host)),
                "wildcard" => (2, f(DataType::Integer, 1, ByteOrder::Host)),
                "cgroupv2" => (3, f(DataType::CgroupV2, 8, ByteOrder::Host)),
                k => return Err(RuleError::unsupported("", format!("socket key {k:?}"))),
            };
            let level = so
                .level
                .map(|l| u32::try_from(l).map_err(|_| RuleError::invalid("", "socket level")))
                .transpose()?;
            Ok(("socket", key, level, field))
        }
        _ => Err(RuleError::unsupported("", "this expression as a key")),
    }
}

/// A field of a type, length and byte order.
fn f4(dtype: DataType, len: usize, order: ByteOrder) -> Field {
    Field { dtype, len, order }
}

/// What `numgen` loads: a 32-bit number in host order.
fn numgen_field() -> Field {
    Field {
        dtype: DataType::Integer,
        order: ByteOrder::Host,
        len: 4,
    }
}

/// Whether a set element's key holds a range or a prefix (the set needs the interval flag).
pub(super) fn has_interval(e: &Expression) -> bool {
    match obj_of(e) {
        Some(ExprObject::Range(_) | ExprObject::Prefix(_)) => true,
        Some(ExprObject::Concat(p)) => p.iter().any(has_interval),
        Some(ExprObject::Elem(el)) => has_interval(&el.val),
        _ => false,
    }
}
