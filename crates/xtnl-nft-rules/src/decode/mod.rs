//! Delinearization: a rule's expressions to the statements `nft -j list` prints. Registers are
//! tracked as nft's netlink_delinearize.c does: a load (payload, meta, ct, fib, immediate, a map
//! lookup) fills a register, and a `cmp`, `lookup`, `nat` or `range` that reads it makes the
//! statement; the protocol dependencies nft adds (`meta nfproto` before an `ip` field in an
//! inet table, `meta l4proto` before a `tcp` field) are taken out again.

use std::collections::HashMap;

use xtnl_nft_json::{
    CounterStmt, CounterValues, ExprObject, Expression, Match, Payload as JPayload, Prefix,
    Statement, Xt,
};
use xtnl_wire::expr::{
    Bitwise, CmpOp, Expr, Fib, Immediate, ImmediateData, Limit, Payload, PayloadBase,
};
use xtnl_wire::nftables::nfproto;

use crate::elements::range_expr;
use crate::proto::{ct_key, field_at, l4_name, meta_key};
use crate::symbols::is_flags;
use crate::value::{Field, decode_fields, decode_int, to_int};
use crate::{ByteOrder, DataType, RuleError, SetLookup};

mod stmt;
pub(crate) use stmt::{NAT_FLAGS, PER};
use stmt::{limit_stmt, nat_stmt, verdict_stmt};

mod sets;
mod state;

/// Whether payloads nft prints as raw bits (`@nh,64,8`) are decoded as such; off until the
/// field table covers every field nft names.
const RAW_PAYLOADS: bool = false;

/// What a register holds.
#[derive(Debug, Clone)]
pub(super) enum Reg {
    /// A value loaded from the packet or its metadata (boxed: it is much larger than the
    /// other kinds).
    Load(Box<Load>),
    /// A constant (`immediate`).
    Imm(Vec<u8>),
    /// The data of a map lookup: `{"map": {...}}`.
    Map(Expression),
    /// The rest of a map lookup's data wider than 4 bytes (`: ipv4_addr . inet_service`):
    /// the port a NAT statement takes from it is implied by the map.
    MapPart,
}

#[derive(Debug, Clone)]
pub(super) struct Load {
    expr: Expression,
    field: Field,
    /// The full field's bytes when fewer were loaded (a byte-aligned address prefix).
    full_len: Option<usize>,
    /// A `bitwise` mask applied to it.
    mask: Option<Vec<u8>>,
    /// Bytes of a header loaded for a bit field, before the mask that says which one:
    /// (protocol, base, offset, length).
    bit_load: Option<(&'static str, PayloadBase, u32, u32)>,
    /// A bit field's shift: its value sits this many bits up in the loaded bytes.
    shift: Option<u32>,
    /// Header bytes loaded only to be masked and written back (`ip ttl set 64` loads two
    /// bytes): the header, base, offset, length; and the mask and xor applied.
    raw: Option<(&'static str, PayloadBase, u32, u32)>,
    write_mask: Option<(Vec<u8>, Vec<u8>)>,
    /// A `bitwise` that sets (`|`) or flips (`^`) bits: the operator and the bits.
    binop: Option<(BinOp, Vec<u8>)>,
    /// `meta nfproto` / `meta l4proto` / `ip protocol`: a protocol match that may be a
    /// dependency of what follows.
    dep: Option<DepKind>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BinOp {
    Or,
    Xor,
    Shl,
    Shr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DepKind {
    /// `meta iiftype ether` before a link-layer field in an ip, ip6 or inet table.
    LinkType,
    NfProto,
    L4Proto,
    /// `ip6 nexthdr` (and `ip protocol` outside ip tables): sets the context, but nft does not
    /// remove it.
    L4ProtoKept,
}

/// A statement that set a protocol context, and where it is in the output.
#[derive(Debug, Clone, Copy)]
pub(super) struct Dep {
    kind: DepKind,
    value: u8,
    stmt: usize,
}

pub(super) struct Decoder<'a> {
    family: u8,
    sets: &'a dyn SetLookup,
    regs: HashMap<u32, Reg>,
    out: Vec<Option<Statement>>,
    nfproto: Option<Dep>,
    l4proto: Option<Dep>,
    linktype: Option<Dep>,
}

/// The 4-byte register a register number names (`NFT_REG_1..4` are 16 bytes from 8).
pub(super) fn reg32(r: u32) -> u32 {
    match r {
        1..=4 => 8 + (r - 1) * 4,
        r => r,
    }
}

fn obj(o: ExprObject) -> Expression {
    Expression::Object(Box::new(o))
}

fn op_name(op: CmpOp) -> Result<&'static str, RuleError> {
    Ok(match op {
        CmpOp::Eq => "==",
        CmpOp::Neq => "!=",
        CmpOp::Lt => "<",
        CmpOp::Lte => "<=",
        CmpOp::Gt => ">",
        CmpOp::Gte => ">=",
        CmpOp::Unknown(n) => return Err(RuleError::unsupported("", format!("cmp operator {n}"))),
    })
}

/// A rule's expressions (as the kernel lists them) to its statements, as `nft -j list` prints
/// them in the rule's `"expr"`. `family` is the table's (`xtnl_wire::nftables::nfproto`);
/// `sets` has the table's sets, the anonymous ones with their elements.
pub fn decode_rule(
    family: u8,
    exprs: &[Expr],
    sets: &dyn SetLookup,
) -> Result<Vec<Statement>, RuleError> {
    let mut d = Decoder {
        family,
        sets,
        regs: HashMap::new(),
        out: Vec::new(),
        nfproto: None,
        l4proto: None,
        linktype: None,
    };
    let mut i = 0;
    while i < exprs.len() {
        let at = format!("expression {i} ({})", exprs[i].name());
        let used = d
            .expr(&exprs[i], exprs.get(i + 1))
            .map_err(|e| e.within(&at))?;
        i += used;
    }
    Ok(d.out.into_iter().flatten().collect())
}

impl Decoder<'_> {
    pub(super) fn reg(&self, r: u32) -> Result<&Reg, RuleError> {
        self.regs.get(&reg32(r)).ok_or_else(|| {
            RuleError::invalid("", format!("register {r} read before it is written"))
        })
    }

    pub(super) fn load(&self, r: u32) -> Result<Load, RuleError> {
        match self.reg(r)? {
            Reg::Load(l) if l.raw.is_some() => {
                let (pr, base, off, len) = l.raw.unwrap_or(("?", PayloadBase::Unknown(0), 0, 0));
                Err(RuleError::unsupported(
                    "",
                    format!(
                        "a payload field this version does not name ({pr}: {base:?} + {off}, {len} bytes)"
                    ),
                ))
            }
            Reg::Load(l) => Ok((**l).clone()),
            other => Err(RuleError::unsupported(
                "",
                format!("a comparison of a register holding {other:?}"),
            )),
        }
    }

    pub(super) fn push(&mut self, s: Statement) -> usize {
        self.out.push(Some(s));
        self.out.len() - 1
    }

    /// Removes a dependency statement that a field of `proto` made redundant.
    fn kill_dep(&mut self, dep: Option<Dep>) {
        if let Some(d) = dep {
            if d.kind != DepKind::L4ProtoKept {
                self.out[d.stmt] = None;
            }
        }
    }

    /// Decodes one expression; returns how many it consumed (a range is two `cmp`s).
    fn expr(&mut self, e: &Expr, next: Option<&Expr>) -> Result<usize, RuleError> {
        match e {
            Expr::Payload(p) => self.payload(p)?,
            Expr::Meta(m) => {
                let (name, field) = meta_key(m.key.0)
                    .ok_or_else(|| RuleError::unsupported("", format!("meta key {}", m.key.0)))?;
                let dep = match name {
                    "nfproto" => Some(DepKind::NfProto),
                    "l4proto" => Some(DepKind::L4Proto),
                    "iiftype" => Some(DepKind::LinkType),
                    _ => None,
                };
                self.set_load(m.dreg, Expression::meta(name), field, None, dep);
            }
            Expr::Ct(c) => {
                let (name, fam, field) = ct_key(c.key)
                    .ok_or_else(|| RuleError::unsupported("", format!("ct key {}", c.key)))?;
                let dir = match c.direction {
                    None => None,
                    Some(0) => Some("original".to_owned()),
                    Some(1) => Some("reply".to_owned()),
                    Some(n) => {
                        return Err(RuleError::unsupported("", format!("ct direction {n}")));
                    }
                };
                let e = obj(ExprObject::Ct(xtnl_nft_json::Ct {
                    key: name.to_owned(),
                    family: fam.map(str::to_owned),
                    dir,
                }));
                self.set_load(c.dreg, e, field, None, None);
            }
            Expr::Bitwise(b) => self.bitwise(b)?,
            Expr::Cmp(c) => {
                if c.op == CmpOp::Gte {
                    if let Some(Expr::Cmp(hi)) = next {
                        if hi.op == CmpOp::Lte && hi.sreg == c.sreg {
                            self.range(c.sreg, &c.data, &hi.data)?;
                            return Ok(2);
                        }
                    }
                }
                self.cmp(c.sreg, c.op, &c.data)?;
            }
            Expr::Range(r) => {
                let op = match r.op {
                    CmpOp::Eq => CmpOp::Eq,
                    CmpOp::Neq => CmpOp::Neq,
                    other => {
                        return Err(RuleError::unsupported("", format!("range op {other:?}")));
                    }
                };
                let l = self.load(r.sreg)?;
                let right = range_value(&l, &r.from, &r.to)?;
                self.push(Statement::Match(Match {
                    op: op_name(op)?.into(),
                    left: l.expr,
                    right,
                }));
            }
            Expr::Lookup(l) => self.lookup(l)?,
            Expr::Immediate(Immediate { dreg, data }) => match data {
                ImmediateData::Verdict(v) => {
                    let s = verdict_stmt(v)?;
                    self.push(s);
                }
                ImmediateData::Value(b) => {
                    self.regs.insert(reg32(*dreg), Reg::Imm(b.clone()));
                }
            },
            Expr::Counter(c) => {
                self.push(Statement::Counter(Some(CounterStmt::Anonymous(
                    CounterValues {
                        packets: Some(c.packets),
                        bytes: Some(c.bytes),
                    },
                ))));
            }
            Expr::Reject(r) => self.reject(r.kind, r.code)?,
            Expr::Nat(n) => self.nat(n)?,
            Expr::Masq(m) => {
                let port = self.ports(m.reg_proto_min, m.reg_proto_max)?;
                let s = nat_stmt(None, None, port, m.flags.unwrap_or(0));
                self.push(Statement::Masquerade(s));
            }
            Expr::Redir(r) => {
                let port = self.ports(r.reg_proto_min, r.reg_proto_max)?;
                let s = nat_stmt(None, None, port, r.flags.unwrap_or(0));
                self.push(Statement::Redirect(s));
            }
            Expr::Log(_) => self.log(e)?,
            Expr::Match(m) => {
                self.push(Statement::Xt(Xt {
                    kind: "match".into(),
                    name: m.name.clone(),
                }));
            }
            Expr::Target(t) => {
                self.push(Statement::Xt(Xt {
                    kind: "target".into(),
                    name: t.name.clone(),
                }));
            }
            Expr::Other(o) => match o.name.as_str() {
                "log" => self.log(e)?,
                "limit" => {
                    let l = Limit::from_other(o)
                        .ok()
                        .flatten()
                        .ok_or_else(|| RuleError::unsupported("", "this form of limit"))?;
                    self.push(Statement::Limit(limit_stmt(&l)?));
                }
                "meta" | "ct" | "numgen" | "dynset" | "objref" | "notrack" | "connlimit"
                | "hash" | "rt" | "socket" | "tproxy" | "bitwise" | "exthdr" | "byteorder"
                | "payload" | "synproxy" | "xfrm" | "osf" => {
                    self.other(o)?;
                }
                "fib" => {
                    let f = Fib::from_other(o)
                        .ok()
                        .flatten()
                        .ok_or_else(|| RuleError::unsupported("", "this form of fib"))?;
                    self.fib(&f)?;
                }
                name => {
                    return Err(RuleError::unsupported(
                        "",
                        format!("the nf_tables expression {name:?} (or this form of it)"),
                    ));
                }
            },
            other => {
                return Err(RuleError::unsupported(
                    "",
                    format!("the nf_tables expression {:?}", other.name()),
                ));
            }
        }
        Ok(1)
    }

    pub(super) fn set_load(
        &mut self,
        dreg: u32,
        expr: Expression,
        field: Field,
        full_len: Option<usize>,
        dep: Option<DepKind>,
    ) {
        self.regs.insert(
            reg32(dreg),
            Reg::Load(Box::new(Load {
                expr,
                field,
                full_len,
                mask: None,
                bit_load: None,
                shift: None,
                raw: None,
                write_mask: None,
                binop: None,
                dep,
            })),
        );
    }

    /// The header a payload base means here (from the table's family and the protocol
    /// context), and the dependency statement that set it.
    pub(super) fn proto_for(&self, base: PayloadBase) -> (Option<&'static str>, Option<Dep>) {
        match base {
            PayloadBase::Link => (Some("ether"), self.linktype.filter(|d| d.value == 1)),
            PayloadBase::Network => match self.family {
                nfproto::IPV4 => (Some("ip"), None),
                nfproto::IPV6 => (Some("ip6"), None),
                _ => match self.nfproto {
                    Some(d) if d.value == 2 => (Some("ip"), Some(d)),
                    Some(d) if d.value == 10 => (Some("ip6"), Some(d)),
                    _ => (None, None),
                },
            },
            PayloadBase::Transport => match self.l4proto {
                Some(d) => match l4_name(d.value) {
                    Some(n) => (Some(n), Some(d)),
                    None => (None, None),
                },
                None => (Some("th"), None),
            },
            _ => (None, None),
        }
    }

    fn payload(&mut self, p: &Payload) -> Result<(), RuleError> {
        let (proto, dep) = self.proto_for(p.base);
        let found = proto.and_then(|pr| field_at(pr, p.base, p.offset, p.len));
        if let (None, Some(pr)) = (found, proto) {
            let is_bits = crate::proto::BIT_FIELDS.iter().any(|b| {
                b.proto == pr && b.base == p.base && b.offset() == p.offset && b.len() == p.len
            });
            if is_bits {
                // Which bit field it is, the mask that follows says.
                if pr != "th" {
                    self.kill_dep(dep);
                }
                let f = Field {
                    dtype: DataType::Integer,
                    order: ByteOrder::Big,
                    len: p.len as usize,
                };
                self.set_load(p.dreg, Expression::payload(pr, "?"), f, None, None);
                if let Some(Reg::Load(l)) = self.regs.get_mut(&reg32(p.dreg)) {
                    l.bit_load = Some((pr, p.base, p.offset, p.len));
                }
                return Ok(());
            }
        }
        if let (None, Some(pr)) = (found, proto) {
            if pr != "th" {
                let f = Field {
                    dtype: DataType::Integer,
                    order: ByteOrder::Big,
                    len: p.len as usize,
                };
                self.set_load(p.dreg, Expression::payload(pr, "?"), f, None, None);
                if let Some(Reg::Load(l)) = self.regs.get_mut(&reg32(p.dreg)) {
                    l.raw = Some((pr, p.base, p.offset, p.len));
                }
                return Ok(());
            }
        }
        let Some(h) = found else {
            // nft prints raw bits only for what it cannot name; a field it names that this
            // table lacks would print differently, so raw payloads are refused.
            if !RAW_PAYLOADS {
                return Err(RuleError::unsupported(
                    "",
                    format!(
                        "a payload field this version does not name ({:?} + {}, {} bytes)",
                        p.base, p.offset, p.len
                    ),
                ));
            }
            let base = match p.base {
                PayloadBase::Link => "ll",
                PayloadBase::Network => "nh",
                PayloadBase::Transport => "th",
                PayloadBase::Inner => "ih",
                PayloadBase::Unknown(n) => {
                    return Err(RuleError::unsupported("", format!("payload base {n}")));
                }
            };
            let e = obj(ExprObject::Payload(JPayload {
                protocol: None,
                field: None,
                base: Some(base.into()),
                offset: Some(u64::from(p.offset) * 8),
                len: Some(u64::from(p.len) * 8),
            }));
            let f = Field {
                dtype: DataType::Integer,
                order: ByteOrder::Big,
                len: p.len as usize,
            };
            self.set_load(p.dreg, e, f, None, None);
            return Ok(());
        };
        if h.proto != "th" {
            self.kill_dep(dep);
            // An ICMP header implies its IP version: nft drops that dependency too.
            let implied = match h.proto {
                "icmp" => Some(2),
                "icmpv6" => Some(10),
                _ => None,
            };
            if let (Some(v), Some(d)) = (implied, self.nfproto) {
                if d.value == v && p.base == PayloadBase::Transport {
                    self.kill_dep(Some(d));
                }
            }
        }
        let e = Expression::payload(h.proto, h.field);
        let field = Field {
            dtype: h.dtype,
            order: ByteOrder::Big,
            len: h.len as usize,
        };
        let full = (p.len < h.len).then_some(h.len as usize);
        let dep = match (h.proto, h.field) {
            // An explicit `ip protocol` (`ip6 nexthdr`) is a dependency nft lists away in an ip
            // (ip6) table, not in an inet table (where nft's own would be `meta l4proto`).
            ("ip", "protocol") if self.family == nfproto::IPV4 => Some(DepKind::L4Proto),
            ("ip6", "nexthdr") if self.family == nfproto::IPV6 => Some(DepKind::L4Proto),
            ("ip", "protocol") | ("ip6", "nexthdr") => Some(DepKind::L4ProtoKept),
            _ => None,
        };
        let mut field = field;
        if full.is_some() {
            field.len = p.len as usize;
        }
        self.set_load(p.dreg, e, field, full, dep);
        Ok(())
    }

    fn bitwise(&mut self, b: &Bitwise) -> Result<(), RuleError> {
        if let Some(Reg::Load(w)) = self.regs.get(&reg32(b.sreg)) {
            let window = match (w.raw, w.bit_load) {
                (Some(r), _) => Some(r),
                (None, Some(bl)) if b.xor.iter().any(|x| *x != 0) => Some(bl),
                _ => None,
            };
            if let Some(window) = window {
                if w.write_mask.is_some() {
                    return Err(RuleError::unsupported(
                        "",
                        "two bitwise operations on one value",
                    ));
                }
                let mut w = w.clone();
                w.raw = Some(window);
                w.bit_load = None;
                w.write_mask = Some((b.mask.clone(), b.xor.clone()));
                self.regs.insert(reg32(b.dreg), Reg::Load(w));
                return Ok(());
            }
        }
        let mut l = self.load(b.sreg)?;
        if let Some((pr, base, off, len)) = l.bit_load.take() {
            let bf = crate::proto::bit_field_at(pr, base, off, len, &b.mask)
                .filter(|_| b.xor.iter().all(|x| *x == 0))
                .ok_or_else(|| {
                    RuleError::unsupported(
                        "",
                        format!("a part of a {pr} header this version does not name"),
                    )
                })?;
            l.expr = Expression::payload(bf.proto, bf.field);
            l.field.dtype = bf.dtype;
            l.shift = Some(bf.shift());
            self.regs.insert(reg32(b.dreg), Reg::Load(Box::new(l)));
            return Ok(());
        }
        if l.mask.is_some() || l.binop.is_some() || l.shift.is_some() {
            return Err(RuleError::unsupported(
                "",
                "two bitwise operations on one value",
            ));
        }
        let inverse = b.mask.iter().zip(&b.xor).all(|(m, x)| *m == !*x);
        if b.xor.iter().all(|x| *x == 0) {
            l.mask = Some(b.mask.clone());
        } else if inverse && b.mask.len() == b.xor.len() {
            // `x | c` is `(x & ~c) ^ c`.
            l.binop = Some((BinOp::Or, b.xor.clone()));
        } else if b.mask.iter().all(|m| *m == 0xff) {
            l.binop = Some((BinOp::Xor, b.xor.clone()));
        } else {
            return Err(RuleError::unsupported(
                "",
                "a bitwise that is neither &, | nor ^ of a constant",
            ));
        }
        self.regs.insert(reg32(b.dreg), Reg::Load(Box::new(l)));
        Ok(())
    }

    fn cmp(&mut self, sreg: u32, op: CmpOp, data: &[u8]) -> Result<(), RuleError> {
        let l = self.load(sreg)?;
        let mut op = op_name(op)?;
        let mut left = l.expr.clone();
        let right;
        let f = Field {
            len: data.len(),
            ..l.field
        };
        if l.bit_load.is_some() {
            return Err(RuleError::unsupported(
                "",
                "a part of a header this version does not name",
            ));
        }
        if let Some(shift) = l.shift {
            if l.mask.is_some() || l.binop.is_some() {
                return Err(RuleError::unsupported("", "a masked bit field"));
            }
            let v = to_int(ByteOrder::Big, data)
                .filter(|v| shift < 64 && v & ((1u64 << shift) - 1) == 0)
                .ok_or_else(|| RuleError::invalid("", "a bit field value outside its bits"))?;
            right = decode_int(l.field.dtype, v >> shift);
        } else if l.binop.is_some() {
            left = value_expr(&l)?;
            right = decode_fields(&[f], data)?;
        } else if let Some(mask) = &l.mask {
            let zero = data.iter().all(|x| *x == 0);
            let prefix = prefix_bits(mask);
            if is_flags(l.field.dtype) && op == "!=" && zero {
                // `ct state established,related`: a flag test.
                op = "in";
                right = decode_fields(&[f], mask)?;
            } else if let (Some(bits), true) = (
                prefix,
                matches!(l.field.dtype, DataType::Ipv4Addr | DataType::Ipv6Addr),
            ) {
                right = obj(ExprObject::Prefix(Prefix {
                    addr: decode_fields(&[f], data)?,
                    len: u64::from(bits),
                }));
            } else {
                let m = match to_int(f.order, mask) {
                    Some(v) => decode_int(l.field.dtype, v),
                    None => decode_fields(&[f], mask)?,
                };
                left = obj(ExprObject::And(vec![left, m]));
                right = decode_fields(&[f], data)?;
            }
        } else if let Some(full) = l.full_len {
            let mut addr = data.to_vec();
            addr.resize(full, 0);
            right = obj(ExprObject::Prefix(Prefix {
                addr: decode_fields(&[Field { len: full, ..f }], &addr)?,
                len: data.len() as u64 * 8,
            }));
        } else if matches!(l.field.dtype, DataType::IfName | DataType::String)
            && data.len() < l.field.len
            && data.last() != Some(&0)
        {
            // `iifname "eth*"`: a shorter compare without the NUL.
            let s = std::str::from_utf8(data)
                .map_err(|_| RuleError::unsupported("", "a name that is not UTF-8"))?;
            right = Expression::String(format!("{s}*"));
        } else {
            right = decode_fields(&[f], data)?;
        }
        let dep = match (l.dep, data) {
            (Some(DepKind::LinkType), [1, 0]) if op == "==" && cfg!(target_endian = "little") => {
                l.dep
            }
            (Some(DepKind::LinkType), _) => None,
            (dep, [_]) if op == "==" && l.mask.is_none() => dep,
            _ => None,
        };
        let at = self.push(Statement::Match(Match {
            op: op.into(),
            left,
            right,
        }));
        if let Some(kind) = dep {
            let d = Dep {
                kind,
                value: data[0],
                stmt: at,
            };
            match kind {
                DepKind::LinkType => self.linktype = Some(d),
                DepKind::NfProto => self.nfproto = Some(d),
                DepKind::L4Proto | DepKind::L4ProtoKept => self.l4proto = Some(d),
            }
        }
        Ok(())
    }

    fn range(&mut self, sreg: u32, lo: &[u8], hi: &[u8]) -> Result<(), RuleError> {
        let l = self.load(sreg)?;
        let right = range_value(&l, lo, hi)?;
        self.push(Statement::Match(Match {
            op: "==".into(),
            left: l.expr,
            right,
        }));
        Ok(())
    }
}

/// The value of a range comparison of a loaded field.
fn range_value(l: &Load, lo: &[u8], hi: &[u8]) -> Result<Expression, RuleError> {
    let f = Field {
        len: lo.len(),
        ..l.field
    };
    let mut lo = lo.to_vec();
    let mut hi = hi.to_vec();
    if f.order == ByteOrder::Host && cfg!(target_endian = "little") {
        lo.reverse();
        hi.reverse();
    }
    let e = range_expr(f, &lo, &hi)?;
    if lo == hi {
        return Ok(e);
    }
    // A range of addresses prints as a range even when it is a prefix.
    Ok(match e {
        Expression::Object(o) if matches!(*o, ExprObject::Prefix(_)) => {
            let v = |b: &[u8]| decode_fields(&[f], b);
            let (mut a, mut b) = (lo.clone(), hi.clone());
            if f.order == ByteOrder::Host && cfg!(target_endian = "little") {
                a.reverse();
                b.reverse();
            }
            obj(ExprObject::Range(vec![v(&a)?, v(&b)?]))
        }
        e => e,
    })
}

/// A loaded value with the bitwise operation applied to it, as nft prints it in a mangle
/// statement's value or a match's left side: `{"|": [{"meta": {"key": "mark"}}, 16384]}`.
pub(super) fn value_expr(l: &Load) -> Result<Expression, RuleError> {
    let f = l.field;
    let num = |b: &[u8]| -> Result<Expression, RuleError> {
        Ok(match to_int(f.order, b) {
            Some(v) => decode_int(f.dtype, v),
            None => decode_fields(&[Field { len: b.len(), ..f }], b)?,
        })
    };
    if l.full_len.is_some() || l.bit_load.is_some() || l.shift.is_some_and(|s| s != 0) {
        return Err(RuleError::unsupported(
            "",
            "a part of a header field as a value",
        ));
    }
    Ok(match (&l.mask, &l.binop) {
        (Some(m), None) => obj(ExprObject::And(vec![l.expr.clone(), num(m)?])),
        (None, Some((BinOp::Or, v))) => obj(ExprObject::Or(vec![l.expr.clone(), num(v)?])),
        (None, Some((BinOp::Xor, v))) => obj(ExprObject::Xor(vec![l.expr.clone(), num(v)?])),
        (None, Some((op @ (BinOp::Shl | BinOp::Shr), v))) => {
            let n = to_int(ByteOrder::Host, v)
                .ok_or_else(|| RuleError::invalid("", "a shift by more than 8 bytes"))?;
            let args = vec![l.expr.clone(), Expression::Number(n)];
            obj(if *op == BinOp::Shl {
                ExprObject::Lshift(args)
            } else {
                ExprObject::Rshift(args)
            })
        }
        _ => l.expr.clone(),
    })
}

/// How many leading one bits a mask has, if it is a prefix mask.
fn prefix_bits(mask: &[u8]) -> Option<u32> {
    let bits = mask.len() * 8;
    let ones = (0..bits)
        .take_while(|i| mask[i / 8] & (0x80 >> (i % 8)) != 0)
        .count();
    (ones..bits)
        .all(|i| mask[i / 8] & (0x80 >> (i % 8)) == 0)
        .then_some(ones as u32)
}
