//! Expressions that write packet state or keep state of their own: `meta set`, `ct set`,
//! `numgen` (a load), `dynset` (set statements), `objref` (named counters, quotas, limits,
//! ct helpers, ...), `notrack`.

use xtnl_nft_json::{
    CounterStmt, Ct as JCt, Elem, ExprObject, Expression, LimitStmt, Mangle, Numgen as JNumgen,
    QuotaStmt, SetStmt, Statement, SynproxyStmt,
};
use xtnl_wire::expr::{CtSet, Dynset, MetaSet, Numgen, Objref, OtherExpr};

use super::{Decoder, Reg, obj, reg32, value_expr};
use crate::proto::{ct_key, meta_key};
use crate::value::{Field, decode_fields};
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
