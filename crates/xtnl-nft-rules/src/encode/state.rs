//! Statements that write packet state or use stateful objects: `mangle` of meta and ct keys,
//! set updates from the packet (`dynset`), named objects (`objref`).

use xtnl_nft_json::{Elem, ExprObject, Expression, Mangle, SetStmt};
use xtnl_wire::expr::{Bitwise, CtSet, Dynset, Expr, Immediate, ImmediateData, MetaSet, Objref};

use super::{Encoder, obj_of};
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
    fn value_into_reg1(&mut self, v: &Expression, field: Field) -> Result<(), RuleError> {
        let binop = match obj_of(v) {
            Some(ExprObject::Or(a)) if a.len() == 2 => Some(('|', &a[0], &a[1])),
            Some(ExprObject::Xor(a)) if a.len() == 2 => Some(('^', &a[0], &a[1])),
            Some(ExprObject::And(a)) if a.len() == 2 => Some(('&', &a[0], &a[1])),
            _ => None,
        };
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
            return Ok(());
        }
        if matches!(obj_of(v), Some(ExprObject::Map(_))) {
            return Err(RuleError::unsupported("", "a map lookup as a value to set"));
        }
        if obj_of(v).is_some() {
            self.deps(v)?;
            self.load(v, 0, None)?;
            return Ok(());
        }
        let b = encode_fields(&[field], v)?;
        self.out.push(Expr::Immediate(Immediate {
            dreg: 1,
            data: ImmediateData::Value(b),
        }));
        Ok(())
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
            _ => Err(RuleError::unsupported(
                "",
                format!(
                    "a mangle of {} (payload, exthdr and tcp option writes)",
                    show(&m.key)
                ),
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
}
