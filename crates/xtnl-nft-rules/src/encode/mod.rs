//! Linearization: statements to the expressions nft gives the kernel, with the protocol
//! dependencies nft adds (`meta nfproto` before an `ip` field in an inet table, `meta l4proto`
//! before a `tcp` field) and the registers nft picks (one 16-byte register per value, a
//! concatenation's fields in consecutive 4-byte registers), and the anonymous sets a rule
//! needs.

use xtnl_nft_json::{CounterStmt, ExprObject, Expression, Match, OneOrMany, Statement};
use xtnl_wire::expr::{
    Bitwise, Cmp, CmpOp, Counter, Ct, Expr, Fib, Immediate, ImmediateData, Lookup, Masq, Meta,
    MetaKey, NatKind, Payload, Range, Redir, Verdict,
};
use xtnl_wire::nftables::nfproto;
use xtnl_wire::set::{DATA_VERDICT, SetDefRepr, flags as set_flags};

use crate::elements::bounds;
use crate::encode_elements;

mod state;
mod stmt;
use crate::proto::{ct_named, field_named, l4_number, meta_named};
use crate::symbols::is_flags;
use crate::value::{Field, encode_fields, show};
use crate::{AnonSet, ByteOrder, DataType, EncodedRule, RuleError, SetLookup, SetView};

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
            Some(ExprObject::Numgen(_)) => Ok(vec![numgen_field()]),
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
            Statement::Notrack(()) => {
                self.out.push(Expr::Other(xtnl_wire::expr::OtherExpr {
                    name: "notrack".into(),
                    data: Vec::new(),
                }));
                Ok(())
            }
            Statement::Mangle(m) => self.mangle(m),
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

    fn matches(&mut self, m: &Match) -> Result<(), RuleError> {
        let at = |e: RuleError| e.within(".match");
        let op = match m.op.as_str() {
            "==" => CmpOp::Eq,
            "!=" => CmpOp::Neq,
            "<" => CmpOp::Lt,
            "<=" => CmpOp::Lte,
            ">" => CmpOp::Gt,
            ">=" => CmpOp::Gte,
            "in" => CmpOp::Eq,
            o => {
                return Err(RuleError::unsupported(
                    ".match.op",
                    format!("operator {o:?}"),
                ));
            }
        };
        let flag_test = m.op == "in";
        // A binop `&` on the left: load, mask, compare.
        let (left, mask) = match obj_of(&m.left) {
            Some(ExprObject::And(v)) if v.len() == 2 => (&v[0], Some(&v[1])),
            _ => (&m.left, None),
        };
        self.deps(left).map_err(at)?;
        // The right side decides the form.
        let right = &m.right;
        let set_like = matches!(right, Expression::String(s) if s.starts_with('@'))
            || matches!(obj_of(right), Some(ExprObject::Set(_)));
        if set_like {
            if mask.is_some() {
                return Err(RuleError::unsupported(".match", "a masked set lookup"));
            }
            let fields = self.key_of(left).map_err(at)?;
            let l = self.load(left, 0, None).map_err(at)?;
            let _ = l;
            let (name, id) = self.set_ref(right, &fields, None).map_err(at)?;
            self.out.push(Expr::Lookup(Lookup {
                set: name,
                sreg: 1,
                set_id: id,
                dreg: None,
                flags: Some(if op == CmpOp::Neq { Lookup::F_INV } else { 0 }),
            }));
            return Ok(());
        }
        // A byte-aligned prefix of a header address loads fewer bytes.
        if let (Some(ExprObject::Prefix(p)), None) = (obj_of(right), mask) {
            let probe = self.key_of(left).map_err(at)?;
            let f = probe[0];
            let (lo, _) = bounds(f, right).map_err(at)?;
            let is_payload = matches!(obj_of(left), Some(ExprObject::Payload(_)));
            if is_payload && p.len % 8 == 0 && p.len > 0 && (p.len as usize) < f.len * 8 {
                let n = (p.len / 8) as usize;
                self.load(left, 0, Some(n as u32)).map_err(at)?;
                self.out.push(Expr::Cmp(Cmp {
                    sreg: 1,
                    op,
                    data: lo[..n].to_vec(),
                }));
                return Ok(());
            }
            self.load(left, 0, None).map_err(at)?;
            let mut m = vec![0u8; f.len];
            for i in 0..(p.len as usize).min(f.len * 8) {
                m[i / 8] |= 0x80 >> (i % 8);
            }
            self.out.push(Expr::Bitwise(Bitwise {
                sreg: 1,
                dreg: 1,
                len: f.len as u32,
                mask: m,
                xor: vec![0; f.len],
            }));
            self.out.push(Expr::Cmp(Cmp {
                sreg: 1,
                op,
                data: lo,
            }));
            return Ok(());
        }
        let l = self.load(left, 0, None).map_err(at)?;
        let f = l.field;
        if let Some(mask) = mask {
            let mb = encode_fields(&[f], mask).map_err(|e| at(e.within(".left.&[1]")))?;
            self.out.push(Expr::Bitwise(Bitwise {
                sreg: 1,
                dreg: 1,
                len: f.len as u32,
                mask: mb,
                xor: vec![0; f.len],
            }));
        }
        if flag_test && is_flags(f.dtype) && mask.is_none() {
            let mb = encode_fields(&[f], right).map_err(|e| at(e.within(".right")))?;
            self.out.push(Expr::Bitwise(Bitwise {
                sreg: 1,
                dreg: 1,
                len: f.len as u32,
                mask: mb,
                xor: vec![0; f.len],
            }));
            self.out.push(Expr::Cmp(Cmp {
                sreg: 1,
                op: CmpOp::Neq,
                data: vec![0; f.len],
            }));
            return Ok(());
        }
        if let Some(ExprObject::Range(r)) = obj_of(right) {
            if r.len() != 2 {
                return Err(RuleError::invalid(".match.right", "a range of two values"));
            }
            let lo = encode_fields(&[f], &r[0]).map_err(at)?;
            let hi = encode_fields(&[f], &r[1]).map_err(at)?;
            if op == CmpOp::Eq {
                self.out.push(Expr::Cmp(Cmp {
                    sreg: 1,
                    op: CmpOp::Gte,
                    data: lo,
                }));
                self.out.push(Expr::Cmp(Cmp {
                    sreg: 1,
                    op: CmpOp::Lte,
                    data: hi,
                }));
            } else {
                self.out.push(Expr::Range(Range {
                    sreg: 1,
                    op,
                    from: lo,
                    to: hi,
                }));
            }
            return Ok(());
        }
        // `iifname "eth*"`: the name's bytes without the NUL.
        if let (DataType::IfName | DataType::String, Expression::String(s)) = (f.dtype, right) {
            if let Some(stem) = s.strip_suffix('*') {
                if !stem.ends_with('\\') {
                    self.out.push(Expr::Cmp(Cmp {
                        sreg: 1,
                        op,
                        data: stem.as_bytes().to_vec(),
                    }));
                    return Ok(());
                }
            }
        }
        let data = encode_fields(&[f], right).map_err(|e| at(e.within(".right")))?;
        self.out.push(Expr::Cmp(Cmp {
            sreg: 1,
            op,
            data: data.clone(),
        }));
        if op == CmpOp::Eq && mask.is_none() && data.len() == 1 {
            match l.ctx {
                Some(Ctx::NfProto) => self.nfproto = Some(data[0]),
                Some(Ctx::L4Proto) => self.l4proto = Some(data[0]),
                None => {}
            }
        }
        Ok(())
    }

    /// A set operand: `"@name"` (a named set) or `{"set": [...]}` (an anonymous set created
    /// with the rule). Returns the name and, for an anonymous set, its id.
    pub(super) fn set_ref(
        &mut self,
        e: &Expression,
        key: &[Field],
        data: Option<(DataType, u32)>,
    ) -> Result<(String, Option<u32>), RuleError> {
        if let Expression::String(s) = e {
            let name = s.strip_prefix('@').ok_or_else(|| {
                RuleError::invalid("", format!("{} is not a set (\"@NAME\")", show(e)))
            })?;
            if self.sets.set(name).is_none() {
                return Err(RuleError::invalid(
                    "",
                    format!("the table has no set {name:?}"),
                ));
            }
            return Ok((name.to_owned(), None));
        }
        let Some(ExprObject::Set(inner)) = obj_of(e) else {
            return Err(RuleError::unsupported("", format!("{} as a set", show(e))));
        };
        let elems: Vec<Expression> = match inner {
            Expression::List(v) => v.clone(),
            one => vec![one.clone()],
        };
        let is_map = data.is_some();
        let interval = elems.iter().any(|el| {
            let key = match (is_map, el) {
                (true, Expression::List(kv)) if kv.len() == 2 => &kv[0],
                _ => el,
            };
            has_interval(key)
        });
        let mut flags = set_flags::ANONYMOUS | set_flags::CONSTANT;
        if interval {
            flags |= set_flags::INTERVAL;
            if key.len() > 1 {
                flags |= set_flags::CONCAT;
            }
        }
        if is_map {
            flags |= set_flags::MAP;
        }
        let dtypes: Vec<DataType> = key.iter().map(|f| f.dtype).collect();
        let key_len: usize = if key.len() == 1 {
            key[0].len
        } else {
            key.iter().map(|f| f.len.div_ceil(4) * 4).sum()
        };
        let id = self.anon.len() as u32;
        let name = if is_map { "__map%d" } else { "__set%d" };
        let view = SetView {
            name: name.into(),
            key: dtypes.clone(),
            key_len: key_len as u32,
            key_order: key[0].order,
            data: data.map(|d| d.0),
            data_len: data.map_or(0, |d| d.1),
            flags,
            elements: Vec::new(),
        };
        let elements = encode_elements(&view, &elems)?;
        let mut def = SetDefRepr {
            name: name.into(),
            flags,
            key_type: DataType::pack(&dtypes),
            key_len: key_len as u32,
            id: Some(id),
            size: Some(elems.len() as u32),
            ..Default::default()
        };
        if let Some((dt, len)) = data {
            if dt == DataType::Verdict {
                def.data_type = Some(DATA_VERDICT);
                def.data_len = Some(0);
            } else {
                def.data_type = Some(dt.id());
                def.data_len = Some(len);
            }
        }
        if interval && key.len() > 1 {
            def.concat = key.iter().map(|f| f.len as u32).collect();
        }
        let order = match key[0].order {
            ByteOrder::Big => xtnl_wire::set::udata::BYTEORDER_BIG,
            ByteOrder::Host => xtnl_wire::set::udata::BYTEORDER_HOST,
        };
        let mut udata = Vec::new();
        xtnl_wire::set::udata::push(
            &mut udata,
            xtnl_wire::set::udata::SET_KEYBYTEORDER,
            &order.to_ne_bytes(),
        );
        def.userdata = Some(udata);
        self.anon.push(AnonSet { def, elements });
        Ok((name.to_owned(), Some(id)))
    }
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
fn has_interval(e: &Expression) -> bool {
    match obj_of(e) {
        Some(ExprObject::Range(_) | ExprObject::Prefix(_)) => true,
        Some(ExprObject::Concat(p)) => p.iter().any(has_interval),
        Some(ExprObject::Elem(el)) => has_interval(&el.val),
        _ => false,
    }
}
