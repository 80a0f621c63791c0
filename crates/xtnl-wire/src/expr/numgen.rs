//! `numgen`: a counter or random number modulo N, plus an offset. Read raw like
//! [`Limit`](super::Limit).

use std::fmt;

use super::{OtherExpr, all_known, other_expr};
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

/// `numgen reg <dreg> = <inc|random> mod <modulus> [offset <offset>]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Numgen {
    /// `NFTA_NG_DREG`.
    pub dreg: u32,
    /// `NFTA_NG_MODULUS`.
    pub modulus: u32,
    /// `NFTA_NG_TYPE`: [`Numgen::INC`] or [`Numgen::RANDOM`].
    pub kind: u32,
    /// `NFTA_NG_OFFSET`.
    pub offset: Option<u32>,
}

impl Numgen {
    /// The expression's name.
    pub const NAME: &'static str = "numgen";
    /// `NFT_NG_INCREMENTAL`.
    pub const INC: u32 = 0;
    /// `NFT_NG_RANDOM`.
    pub const RANDOM: u32 = 1;

    /// Decodes the expression's attributes; `None` for a form this type does not model.
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        if !all_known(data, &[1, 2, 3, 4])? {
            return Ok(None);
        }
        let (mut dreg, mut modulus, mut kind, mut offset) = (None, None, None, None);
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                1 => dreg = Some(a.u32_be("NFTA_NG_DREG")?),
                2 => modulus = Some(a.u32_be("NFTA_NG_MODULUS")?),
                3 => kind = Some(a.u32_be("NFTA_NG_TYPE")?),
                4 => offset = Some(a.u32_be("NFTA_NG_OFFSET")?),
                _ => {}
            }
        }
        Ok(Some(Numgen {
            dreg: dreg.ok_or_else(|| WireError::missing("NFTA_NG_DREG"))?,
            modulus: modulus.ok_or_else(|| WireError::missing("NFTA_NG_MODULUS"))?,
            kind: kind.ok_or_else(|| WireError::missing("NFTA_NG_TYPE"))?,
            offset,
        }))
    }

    /// Encodes the expression's attributes.
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.u32_be(1, self.dreg)
            .u32_be(2, self.modulus)
            .u32_be(3, self.kind);
        if let Some(o) = self.offset {
            w.u32_be(4, o);
        }
    }

    /// The numgen an expression kept raw holds; `None` for another kind or form.
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

impl fmt::Display for Numgen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "numgen reg {} = {} mod {} offset {:?}",
            self.dreg, self.kind, self.modulus, self.offset
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numgen_round_trips() {
        // `numgen reg 1 = random mod 2`.
        let n = Numgen {
            dreg: 1,
            modulus: 2,
            kind: Numgen::RANDOM,
            offset: Some(0),
        };
        let o = n.to_other();
        assert_eq!(&o.data[..8], &[8, 0, 1, 0, 0, 0, 0, 1]);
        assert_eq!(Numgen::from_other(&o).unwrap(), Some(n));
    }
}
