//! `objref`: a reference to a named stateful object (counter, quota, limit, ct helper, ...).
//! Read raw like [`Limit`](super::Limit).

use std::fmt;

use super::{OtherExpr, all_known, other_expr};
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

/// `objref type <type> name <name>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Objref {
    /// `NFTA_OBJREF_IMM_TYPE` (`NFT_OBJECT_COUNTER` 1, `_QUOTA` 2, `_CT_HELPER` 3, `_LIMIT`
    /// 4, `_CT_TIMEOUT` 7, `_SECMARK` 8, `_CT_EXPECT` 9, `_SYNPROXY` 10).
    pub kind: u32,
    /// `NFTA_OBJREF_IMM_NAME`.
    pub name: String,
}

impl Objref {
    /// The expression's name.
    pub const NAME: &'static str = "objref";

    /// Decodes the expression's attributes; `None` for another form (a map of objects).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        if !all_known(data, &[1, 2])? {
            return Ok(None);
        }
        let (mut kind, mut name) = (None, None);
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                1 => kind = Some(a.u32_be("NFTA_OBJREF_IMM_TYPE")?),
                2 => name = Some(a.string("NFTA_OBJREF_IMM_NAME")?),
                _ => {}
            }
        }
        Ok(Some(Objref {
            kind: kind.ok_or_else(|| WireError::missing("NFTA_OBJREF_IMM_TYPE"))?,
            name: name.ok_or_else(|| WireError::missing("NFTA_OBJREF_IMM_NAME"))?,
        }))
    }

    /// Encodes the expression's attributes (in the order the kernel lists them).
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.strz(2, &self.name).u32_be(1, self.kind);
    }

    /// The reference an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        if o.name != Self::NAME {
            return Ok(None);
        }
        Self::parse(&o.data)
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr(Self::NAME, |w| self.emit(w))
    }
}

impl fmt::Display for Objref {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "objref type {} name {}", self.kind, self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objref_round_trips() {
        let r = Objref {
            kind: 1,
            name: "cnt1".into(),
        };
        let o = r.to_other();
        assert_eq!(&o.data[..4], &[9, 0, 2, 0]);
        assert_eq!(Objref::from_other(&o).unwrap(), Some(r));
    }
}
