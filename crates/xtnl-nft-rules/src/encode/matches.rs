//! Matches (`{"match": {"op", "left", "right"}}`) and the sets they look up.

use xtnl_nft_json::{ExprObject, Expression, Match};
use xtnl_wire::expr::{Bitwise, Cmp, CmpOp, Expr, Lookup, Payload, Range};
use xtnl_wire::set::{DATA_VERDICT, SetDefRepr, flags as set_flags};

use super::{Ctx, Encoder, has_interval, obj_of};
use crate::elements::bounds;
use crate::proto::{BitField, bit_field_named};
use crate::symbols::is_flags;
use crate::value::{Field, encode_fields, encode_int, from_int, show};
use crate::{AnonSet, ByteOrder, DataType, RuleError, SetView, encode_elements};

impl Encoder<'_> {
    pub(super) fn matches(&mut self, m: &Match) -> Result<(), RuleError> {
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
        if let Some(bf) = bit_field_of(left) {
            if mask.is_some() || flag_test {
                return Err(RuleError::unsupported(".match", "a masked bit field"));
            }
            return self.bit_field_match(bf, op, right).map_err(at);
        }
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

    /// A match of a header field that is not byte-aligned: the bytes that hold it, masked,
    /// compared with the value shifted into place, or looked up in an anonymous set of
    /// shifted values (as nft does).
    fn bit_field_match(
        &mut self,
        bf: BitField,
        op: CmpOp,
        right: &Expression,
    ) -> Result<(), RuleError> {
        let len = bf.len() as usize;
        self.out.push(Expr::Payload(Payload {
            dreg: 1,
            base: bf.base,
            offset: bf.offset(),
            len: len as u32,
        }));
        self.out.push(Expr::Bitwise(Bitwise {
            sreg: 1,
            dreg: 1,
            len: len as u32,
            mask: bf.mask(),
            xor: vec![0; len],
        }));
        let shifted = |e: &Expression| -> Result<u64, RuleError> {
            let v = encode_int(bf.dtype, e)
                .filter(|v| *v < 1u64 << bf.bits)
                .ok_or_else(|| {
                    RuleError::invalid(
                        ".right",
                        format!("{} is not a value of {} {}", show(e), bf.proto, bf.field),
                    )
                })?;
            Ok(v << bf.shift())
        };
        let raw = Field {
            dtype: DataType::Integer,
            order: ByteOrder::Big,
            len,
        };
        match (right, obj_of(right)) {
            (_, Some(ExprObject::Set(inner))) => {
                let items: Vec<&Expression> = match inner {
                    Expression::List(v) => v.iter().collect(),
                    one => vec![one],
                };
                let mut nums = Vec::new();
                for e in items {
                    nums.push(Expression::Number(shifted(e)?));
                }
                let set = Expression::Object(Box::new(ExprObject::Set(Expression::List(nums))));
                let (name, id) = self.set_ref(&set, &[raw], None)?;
                if let Some(a) = self.anon.last_mut() {
                    a.def.key_type = bf.dtype.id();
                }
                self.out.push(Expr::Lookup(Lookup {
                    set: name,
                    sreg: 1,
                    set_id: id,
                    dreg: None,
                    flags: Some(if op == CmpOp::Neq { Lookup::F_INV } else { 0 }),
                }));
                Ok(())
            }
            (Expression::String(s), _) if s.starts_with('@') => Err(RuleError::unsupported(
                ".right",
                "a bit field looked up in a named set",
            )),
            (_, Some(_)) => Err(RuleError::unsupported(
                ".right",
                format!("{} for a bit field", show(right)),
            )),
            _ => {
                let data = from_int(ByteOrder::Big, len, shifted(right)?)
                    .ok_or_else(|| RuleError::invalid(".right", "a value outside the field"))?;
                self.out.push(Expr::Cmp(Cmp { sreg: 1, op, data }));
                Ok(())
            }
        }
    }
}

/// The bit field a left-hand expression names (`ip dscp`), if it is one.
fn bit_field_of(e: &Expression) -> Option<BitField> {
    match obj_of(e)? {
        ExprObject::Payload(p) => bit_field_named(p.protocol.as_deref()?, p.field.as_deref()?),
        _ => None,
    }
}
