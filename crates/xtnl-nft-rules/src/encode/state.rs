//! Statements that write packet state or use stateful objects: `mangle` of meta and ct keys,
//! set updates from the packet (`dynset`), named objects (`objref`).

use xtnl_nft_json::{Elem, ExprObject, Expression, Mangle, SetStmt, Tproxy as JTproxy};
use xtnl_wire::expr::{
    Bitwise, Byteorder, CtSet, Dynset, Expr, Immediate, ImmediateData, MetaSet, Objref, Shift,
};

use super::{Encoder, exthdr_of, obj_of};
use crate::ByteOrder;
use crate::RuleError;
use crate::proto::{ct_named, meta_named};
use crate::value::{Field, encode_fields, show};

impl Encoder<'_> {
    /// `{"counter": "NAME"}` and the other references to named objects.
    pub(super) fn objref(&mut self, kind: u32, name: &str) -> Result<(), RuleError> {
        self.out.push(Expr::Other(
            Objref {
                kind,
                name: name.to_owned(),
            }
            .to_other(),
        ));
        Ok(())
    }

    /// Puts a value (a constant, a loaded expression, or `EXPR | c`, `EXPR ^ c`, `EXPR & c`)
    /// into register 1 for a write of a `field`.
    fn value_into_reg1(&mut self, v: &Expression, field: Field) -> Result<Field, RuleError> {
        let binop = match obj_of(v) {
            Some(ExprObject::Or(a)) if a.len() == 2 => Some(('|', &a[0], &a[1])),
            Some(ExprObject::Xor(a)) if a.len() == 2 => Some(('^', &a[0], &a[1])),
            Some(ExprObject::And(a)) if a.len() == 2 => Some(('&', &a[0], &a[1])),
            Some(ExprObject::Lshift(a)) if a.len() == 2 => Some(('<', &a[0], &a[1])),
            Some(ExprObject::Rshift(a)) if a.len() == 2 => Some(('>', &a[0], &a[1])),
            _ => None,
        };
        if let Some((op @ ('<' | '>'), inner, n)) = binop {
            self.deps(inner)?;
            let l = self.load(inner, 0, None)?;
            let Expression::Number(n) = n else {
                return Err(RuleError::invalid("", format!("a shift by {}", show(n))));
            };
            let n = u32::try_from(*n)
                .ok()
                .filter(|n| *n < 32 * 4)
                .ok_or_else(|| RuleError::invalid("", format!("a shift by {n}")))?;
            self.out.push(Expr::Other(
                Shift {
                    sreg: 1,
                    dreg: 1,
                    len: l.field.len as u32,
                    left: op == '<',
                    amount: n.to_ne_bytes().to_vec(),
                }
                .to_other(),
            ));
            return Ok(l.field);
        }
        if let Some((op, inner, c)) = binop {
            self.deps(inner)?;
            let l = self.load(inner, 0, None)?;
            let f = l.field;
            let cb = encode_fields(&[f], c)?;
            let (mask, xor) = match op {
                '|' => (cb.iter().map(|b| !b).collect(), cb),
                '^' => (vec![0xff; f.len], cb),
                _ => (cb, vec![0; f.len]),
            };
            self.out.push(Expr::Bitwise(Bitwise {
                sreg: 1,
                dreg: 1,
                len: f.len as u32,
                mask,
                xor,
            }));
            return Ok(f);
        }
        if matches!(obj_of(v), Some(ExprObject::Map(_))) {
            return Err(RuleError::unsupported("", "a map lookup as a value to set"));
        }
        if obj_of(v).is_some() {
            self.deps(v)?;
            return Ok(self.load(v, 0, None)?.field);
        }
        let b = encode_fields(&[field], v)?;
        self.out.push(Expr::Immediate(Immediate {
            dreg: 1,
            data: ImmediateData::Value(b),
        }));
        Ok(field)
    }

    /// `{"mangle": {"key": {"meta": ...} | {"ct": ...}, "value": ...}}`.
    pub(super) fn mangle(&mut self, m: &Mangle) -> Result<(), RuleError> {
        match obj_of(&m.key) {
            Some(ExprObject::Meta(k)) => {
                let (key, field) = meta_named(&k.key).ok_or_else(|| {
                    RuleError::unsupported("", format!("the meta key {:?}", k.key))
                })?;
                self.value_into_reg1(&m.value, field)?;
                self.out
                    .push(Expr::Other(MetaSet { key, sreg: 1 }.to_other()));
                Ok(())
            }
            Some(ExprObject::Ct(c)) => {
                let (key, field) = ct_named(&c.key, c.family.as_deref())
                    .ok_or_else(|| RuleError::unsupported("", format!("the ct key {:?}", c.key)))?;
                let direction = match c.dir.as_deref() {
                    None => None,
                    Some("original") => Some(0),
                    Some("reply") => Some(1),
                    Some(d) => return Err(RuleError::invalid("", format!("ct dir {d:?}"))),
                };
                self.value_into_reg1(&m.value, field)?;
                self.out.push(Expr::Other(
                    CtSet {
                        key,
                        direction,
                        sreg: 1,
                    }
                    .to_other(),
                ));
                Ok(())
            }
            Some(
                o @ (ExprObject::Exthdr(_) | ExprObject::TcpOption(_) | ExprObject::IpOption(_)),
            ) => {
                let (x, field) = exthdr_of(o)?;
                if x.flags != Some(0) {
                    return Err(RuleError::invalid(
                        "",
                        "a header option without a field to set",
                    ));
                }
                let vf = self.value_into_reg1(&m.value, field)?;
                // A host-order value goes into the header in network order, as nft converts it.
                if vf.order == ByteOrder::Host && field.len > 1 {
                    if vf.len != field.len {
                        return Err(RuleError::invalid(
                            "",
                            format!("a {}-byte value for a {}-byte field", vf.len, field.len),
                        ));
                    }
                    self.out.push(Expr::Other(
                        Byteorder {
                            sreg: 1,
                            dreg: 1,
                            op: Byteorder::HTON,
                            len: field.len as u32,
                            size: field.len as u32,
                        }
                        .to_other(),
                    ));
                }
                self.out.push(Expr::Other(
                    xtnl_wire::expr::Exthdr { sreg: Some(1), ..x }.to_other(),
                ));
                Ok(())
            }
            Some(ExprObject::Payload(p)) => {
                let (Some(proto), Some(field)) = (p.protocol.as_deref(), p.field.as_deref()) else {
                    return Err(RuleError::unsupported("", "a write of a raw payload"));
                };
                self.payload_write(&m.key, proto, field, &m.value)
            }
            _ => Err(RuleError::unsupported(
                "",
                format!("a mangle of {}", show(&m.key)),
            )),
        }
    }

    /// `{"set": {"op", "elem", "set"}}`: add, update or delete an element from the packet.
    pub(super) fn dynset(&mut self, s: &SetStmt) -> Result<(), RuleError> {
        let op = match s.op.as_str() {
            "add" => Dynset::ADD,
            "update" => Dynset::UPDATE,
            "delete" => Dynset::DELETE,
            o => return Err(RuleError::invalid("", format!("set op {o:?}"))),
        };
        if s.stmt.is_some() {
            return Err(RuleError::unsupported(
                "",
                "statements attached to a set element",
            ));
        }
        let name = s
            .set
            .strip_prefix('@')
            .ok_or_else(|| RuleError::invalid("", format!("{:?} is not \"@NAME\"", s.set)))?;
        if self.sets.set(name).is_none() {
            return Err(RuleError::invalid(
                "",
                format!("the table has no set {name:?}"),
            ));
        }
        let (val, timeout) = match obj_of(&s.elem) {
            Some(ExprObject::Elem(Elem {
                val,
                timeout,
                expires: None,
                comment: None,
                counter: None,
            })) => (val, timeout.unwrap_or(0)),
            Some(ExprObject::Elem(_)) => {
                return Err(RuleError::unsupported(
                    "",
                    "an element with expires, comment or counter from a rule",
                ));
            }
            _ => (&s.elem, 0),
        };
        self.deps(val)?;
        self.load(val, 0, None)?;
        self.out.push(Expr::Other(
            Dynset {
                set: name.to_owned(),
                set_id: None,
                op,
                sreg_key: 1,
                sreg_data: None,
                // The kernel lists the timeout and the flags even when 0.
                timeout_ms: Some(timeout.saturating_mul(1000)),
                flags: Some(0),
            }
            .to_other(),
        ));
        Ok(())
    }

    /// `{"tproxy": {"family", "addr", "port"}}`: address and port in registers, as nft puts
    /// them.
    pub(super) fn tproxy(&mut self, t: &JTproxy) -> Result<(), RuleError> {
        use xtnl_wire::nftables::nfproto;
        let family = match (t.family.as_deref(), self.family) {
            (Some("ip"), _) | (None, nfproto::IPV4) => 2,
            (Some("ip6"), _) | (None, nfproto::IPV6) => 10,
            (None, _) if t.addr.is_none() => 0,
            (f, _) => return Err(RuleError::invalid("", format!("tproxy family {f:?}"))),
        };
        let addr_t = if family == 10 {
            crate::DataType::Ipv6Addr
        } else {
            crate::DataType::Ipv4Addr
        };
        let mut slot = 0;
        let mut reg_addr = None;
        if let Some(a) = &t.addr {
            let ((r, _), next) = self.nat_value(a, Field::of(addr_t), slot)?;
            reg_addr = Some(r);
            slot = next;
        }
        let mut reg_port = None;
        if let Some(p) = &t.port {
            let ((r, _), _) = self.nat_value(p, Field::of(crate::DataType::InetService), slot)?;
            reg_port = Some(r);
        }
        self.out.push(Expr::Other(
            xtnl_wire::expr::Tproxy {
                family,
                reg_addr,
                reg_port,
            }
            .to_other(),
        ));
        Ok(())
    }

    /// `{"mangle": {"key": {"payload": ...}, "value": CONSTANT}}`: as nft writes it, a
    /// constant into the field's bytes, or, for a bit field or a field of a checksummed
    /// header that is not a whole 16-bit word, the surrounding words loaded, masked, xored
    /// with the value and written back; with the header's checksum to fix (and the transport
    /// checksum too for IPv4 addresses).
    fn payload_write(
        &mut self,
        key: &Expression,
        proto: &str,
        field: &str,
        value: &Expression,
    ) -> Result<(), RuleError> {
        use crate::proto::{bit_field_named, field_named};
        use xtnl_wire::expr::{Payload, PayloadBase, PayloadSet};
        let (csum_type, csum_offset, csum_flags) = match (proto, field) {
            ("ip", "saddr" | "daddr") => (1, 10, 1),
            ("ip", _) => (1, 10, 0),
            ("tcp", _) => (1, 16, 0),
            ("udp", _) => (1, 6, 0),
            ("ip6", "saddr" | "daddr") => {
                return Err(RuleError::unsupported("", "a write of an IPv6 address"));
            }
            ("ip6" | "ether", _) => (0, 0, 0),
            _ => {
                return Err(RuleError::unsupported(
                    "",
                    format!("a write of {proto} {field}"),
                ));
            }
        };
        if obj_of(value).is_some() || matches!(value, Expression::List(_)) {
            return Err(RuleError::unsupported(
                "",
                "a payload write of a non-constant value",
            ));
        }
        // The field: its base, first bit, bits and datatype.
        let (base, bit_off, bits, dtype) = if let Some(h) = field_named(proto, field) {
            (h.base, h.offset * 8, h.len * 8, h.dtype)
        } else if let Some(b) = bit_field_named(proto, field) {
            (b.base, b.bit_offset, b.bits, b.dtype)
        } else {
            return Err(RuleError::unsupported(
                "",
                format!("a write of {proto} {field}"),
            ));
        };
        self.deps(key)?;
        let (mut off, mut end) = (bit_off / 8, (bit_off + bits).div_ceil(8));
        let whole = bit_off % 8 == 0 && bits % 8 == 0;
        if csum_type != 0 {
            off &= !1;
            end = end.div_ceil(2) * 2;
        }
        let len = end - off;
        let base_n = match base {
            PayloadBase::Link => 0,
            PayloadBase::Network => 1,
            _ => 2,
        };
        if whole && off * 8 == bit_off && len * 8 == bits {
            let f = Field {
                dtype,
                order: ByteOrder::Big,
                len: len as usize,
            };
            let b = encode_fields(&[f], value)?;
            self.out.push(Expr::Immediate(Immediate {
                dreg: 1,
                data: ImmediateData::Value(b),
            }));
        } else {
            if bits > 32 {
                return Err(RuleError::unsupported(
                    "",
                    "a write of a wide field in part",
                ));
            }
            let v = crate::value::encode_int(dtype, value)
                .filter(|v| *v < 1u64 << bits)
                .ok_or_else(|| {
                    RuleError::invalid(
                        "",
                        format!("{} is not a value of {proto} {field}", show(value)),
                    )
                })?;
            let shift = len * 8 - (bit_off - off * 8) - bits;
            let ones = ((1u64 << bits) - 1) << shift;
            let full = if len >= 8 {
                u64::MAX
            } else {
                (1u64 << (len * 8)) - 1
            };
            let to = |x: u64| x.to_be_bytes()[8 - len as usize..].to_vec();
            self.out.push(Expr::Payload(Payload {
                dreg: 1,
                base,
                offset: off,
                len,
            }));
            self.out.push(Expr::Bitwise(Bitwise {
                sreg: 1,
                dreg: 1,
                len,
                mask: to(full & !ones),
                xor: to(v << shift),
            }));
        }
        self.out.push(Expr::Other(
            PayloadSet {
                sreg: 1,
                base: base_n,
                offset: off,
                len,
                csum_type,
                csum_offset,
                csum_flags,
            }
            .to_other(),
        ));
        Ok(())
    }
}
