//! The write forms of `meta` and `ct` (`meta mark set ...`, `ct mark set ...`), which
//! [`Meta`](super::Meta) and [`Ct`](super::Ct) (loads) do not model: [`Expr::parse`]
//! keeps them raw, and the nft rule codec reads and writes them through
//! [`MetaSet::from_other`] / [`CtSet::from_other`] and `to_other`.

use std::fmt;

use super::{OtherExpr, all_known, other_expr};
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

/// `meta set <key> with reg <sreg>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaSet {
    /// `NFTA_META_KEY`.
    pub key: u32,
    /// `NFTA_META_SREG`: the register holding the value.
    pub sreg: u32,
}

impl MetaSet {
    const KEY: u16 = 2;
    const SREG: u16 = 3;

    /// Decodes the expression's attributes; `None` for another form (a load).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        if !all_known(data, &[Self::KEY, Self::SREG])? {
            return Ok(None);
        }
        let (mut key, mut sreg) = (None, None);
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                Self::KEY => key = Some(a.u32_be("NFTA_META_KEY")?),
                Self::SREG => sreg = Some(a.u32_be("NFTA_META_SREG")?),
                _ => {}
            }
        }
        let Some(sreg) = sreg else { return Ok(None) };
        Ok(Some(MetaSet {
            key: key.ok_or_else(|| WireError::missing("NFTA_META_KEY"))?,
            sreg,
        }))
    }

    /// Encodes the expression's attributes.
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.u32_be(Self::KEY, self.key).u32_be(Self::SREG, self.sreg);
    }

    /// The write an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        if o.name != "meta" {
            return Ok(None);
        }
        Self::parse(&o.data)
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr("meta", |w| self.emit(w))
    }
}

impl fmt::Display for MetaSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "meta set {} with reg {}", self.key, self.sreg)
    }
}

/// `ct set <key> with reg <sreg>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CtSet {
    /// `NFTA_CT_KEY`.
    pub key: u32,
    /// `NFTA_CT_DIRECTION`.
    pub direction: Option<u8>,
    /// `NFTA_CT_SREG`.
    pub sreg: u32,
}

impl CtSet {
    const KEY: u16 = 2;
    const DIRECTION: u16 = 3;
    const SREG: u16 = 4;

    /// Decodes the expression's attributes; `None` for another form (a load).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        if !all_known(data, &[Self::KEY, Self::DIRECTION, Self::SREG])? {
            return Ok(None);
        }
        let (mut key, mut dir, mut sreg) = (None, None, None);
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                Self::KEY => key = Some(a.u32_be("NFTA_CT_KEY")?),
                Self::DIRECTION => dir = Some(a.u8("NFTA_CT_DIRECTION")?),
                Self::SREG => sreg = Some(a.u32_be("NFTA_CT_SREG")?),
                _ => {}
            }
        }
        let Some(sreg) = sreg else { return Ok(None) };
        Ok(Some(CtSet {
            key: key.ok_or_else(|| WireError::missing("NFTA_CT_KEY"))?,
            direction: dir,
            sreg,
        }))
    }

    /// Encodes the expression's attributes (in the order the kernel lists them).
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.u32_be(Self::SREG, self.sreg).u32_be(Self::KEY, self.key);
        if let Some(d) = self.direction {
            w.u8(Self::DIRECTION, d);
        }
    }

    /// The write an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        if o.name != "ct" {
            return Ok(None);
        }
        Self::parse(&o.data)
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr("ct", |w| self.emit(w))
    }
}

impl fmt::Display for CtSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ct set {} with reg {}", self.key, self.sreg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captured_writes_round_trip_and_loads_are_not_writes() {
        // `meta set mark with reg 1`.
        let data: &[u8] = &[8, 0, 2, 0, 0, 0, 0, 3, 8, 0, 3, 0, 0, 0, 0, 1];
        let o = OtherExpr {
            name: "meta".into(),
            data: data.to_vec(),
        };
        let m = MetaSet::from_other(&o).unwrap().unwrap();
        assert_eq!(m, MetaSet { key: 3, sreg: 1 });
        assert_eq!(m.to_other(), o);
        // `meta load mark => reg 1` (NFTA_META_DREG = 1) is a load, not a write.
        let load: &[u8] = &[8, 0, 2, 0, 0, 0, 0, 3, 8, 0, 1, 0, 0, 0, 0, 1];
        assert_eq!(MetaSet::parse(load).unwrap(), None);
        // `ct set mark with reg 1`.
        let c = CtSet {
            key: 3,
            direction: None,
            sreg: 1,
        };
        let back = CtSet::from_other(&c.to_other()).unwrap().unwrap();
        assert_eq!(back, c);
    }
}
