//! Set lookups (named and anonymous sets, verdict maps, maps feeding NAT) and the values
//! NAT reads from registers.

use xtnl_nft_json::{ExprObject, Expression, MapLookup, Match, Statement, Vmap};
use xtnl_wire::expr::Lookup;

use super::{Decoder, Load, Reg, obj, reg32};
use crate::elements::key_fields;
use crate::value::{Field, decode_fields, decode_int, to_int};
use crate::{ByteOrder, DataType, RuleError, SetView, decode_elements};

impl Decoder<'_> {
    /// The key a lookup reads: one register, or a concatenation over consecutive ones.
    pub(super) fn key(&self, sreg: u32, set: &SetView) -> Result<Expression, RuleError> {
        let plain = |l: Load| -> Result<Expression, RuleError> {
            if l.mask.is_some() || l.binop.is_some() || l.full_len.is_some() || l.bit_load.is_some()
            {
                return Err(RuleError::unsupported("", "a set lookup of a masked value"));
            }
            Ok(l.expr)
        };
        if set.key.len() <= 1 {
            return plain(self.load(sreg)?);
        }
        let fs = key_fields(set)?;
        let mut r = reg32(sreg);
        let mut parts = Vec::new();
        for f in fs {
            parts.push(plain(self.load(r)?)?);
            r += f.len.div_ceil(4) as u32;
        }
        Ok(obj(ExprObject::Concat(parts)))
    }

    pub(super) fn set_ref(&self, l: &Lookup) -> Result<(Expression, &SetView), RuleError> {
        let set = self.sets.set(&l.set).ok_or_else(|| {
            RuleError::invalid(
                "",
                format!(
                    "the rule looks up set {:?}, which the table does not have",
                    l.set
                ),
            )
        })?;
        if set.is_anonymous() {
            let elems = decode_elements(set, &set.elements)
                .map_err(|e| e.within(&format!("set {}", set.name)))?;
            Ok((obj(ExprObject::Set(Expression::List(elems))), set))
        } else {
            Ok((Expression::String(format!("@{}", set.name)), set))
        }
    }

    /// An anonymous set whose keys are a bit field's values shifted into place (`ip dscp {
    /// cs0, af11 }`): its elements shifted back.
    pub(super) fn shifted_set_ref(
        &self,
        l: &Lookup,
        shift: u32,
    ) -> Result<(Expression, &SetView), RuleError> {
        let set = self
            .sets
            .set(&l.set)
            .ok_or_else(|| RuleError::invalid("", format!("the table has no set {:?}", l.set)))?;
        if !set.is_anonymous() || set.key.len() != 1 || set.is_interval() || set.is_map() {
            return Err(RuleError::unsupported(
                "",
                "a bit field looked up in this kind of set",
            ));
        }
        let mut vals = Vec::new();
        for e in &set.elements {
            let v = to_int(ByteOrder::Big, &e.key)
                .filter(|v| shift < 64 && v & ((1u64 << shift) - 1) == 0)
                .ok_or_else(|| RuleError::invalid("", "a bit field element outside its bits"))?;
            vals.push(v >> shift);
        }
        vals.sort_unstable();
        let elems = vals
            .into_iter()
            .map(|v| decode_int(set.key[0], v))
            .collect();
        Ok((obj(ExprObject::Set(Expression::List(elems))), set))
    }

    pub(super) fn lookup(&mut self, l: &Lookup) -> Result<(), RuleError> {
        let shift = match self.reg(l.sreg)? {
            Reg::Load(k) => k.shift.filter(|s| *s != 0),
            _ => None,
        };
        let (data, set) = match shift {
            None => self.set_ref(l)?,
            Some(sh) => self.shifted_set_ref(l, sh)?,
        };
        let key = self.key(l.sreg, set)?;
        let inv = l.flags.unwrap_or(0) & Lookup::F_INV != 0;
        match l.dreg {
            None => {
                self.push(Statement::Match(Match {
                    op: if inv { "!=" } else { "==" }.into(),
                    left: key,
                    right: data,
                }));
            }
            Some(0) => {
                self.push(Statement::Vmap(Vmap { key, data }));
            }
            Some(dreg) => {
                let slots = set.data_len.div_ceil(4).max(1);
                let m = obj(ExprObject::Map(MapLookup { key, data }));
                self.regs.insert(reg32(dreg), Reg::Map(m));
                for k in 1..slots {
                    self.regs.insert(reg32(dreg) + k, Reg::MapPart);
                }
            }
        }
        Ok(())
    }

    /// A NAT address or port from its registers: a value, a range, or a map's data.
    pub(super) fn regs_value(
        &self,
        min: Option<u32>,
        max: Option<u32>,
        field: Field,
    ) -> Result<Option<Expression>, RuleError> {
        let Some(min) = min else { return Ok(None) };
        match self.reg(min)? {
            Reg::Map(m) => Ok(Some(m.clone())),
            // nft prints the map alone: the port is the map's.
            Reg::MapPart => Ok(None),
            Reg::Imm(lo) => {
                let f = Field {
                    len: field.len.min(lo.len()),
                    ..field
                };
                let lo_v = decode_fields(&[f], &lo[..f.len])?;
                match max.filter(|m| reg32(*m) != reg32(min)) {
                    None => Ok(Some(lo_v)),
                    Some(max) => match self.reg(max)? {
                        Reg::Imm(hi) if hi.len() >= f.len => {
                            let hi_v = decode_fields(&[f], &hi[..f.len])?;
                            Ok(Some(obj(ExprObject::Range(vec![lo_v, hi_v]))))
                        }
                        _ => Err(RuleError::unsupported("", "a NAT range of non-constants")),
                    },
                }
            }
            Reg::Load(l) => Ok(Some(l.expr.clone())),
        }
    }

    pub(super) fn ports(
        &self,
        min: Option<u32>,
        max: Option<u32>,
    ) -> Result<Option<Expression>, RuleError> {
        self.regs_value(min, max, Field::of(DataType::InetService))
    }
}
