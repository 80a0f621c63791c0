//! The shift form of `bitwise`: an expression nft writes that
//! [`Expr::parse`](super::Expr::parse) keeps raw, typed here for the nft rule codec, read from
//! and written to [`OtherExpr`] with `from_other`/`to_other`, attributes in the order the
//! kernel lists them.

use super::data::value;
use super::{OtherExpr, attrs_of, other_expr};
use crate::WireError;
use crate::attr::AttrWriter;

/// `NFTA_DATA_VALUE` inside an `NFTA_DATA` attribute.
const NFTA_DATA_VALUE: u16 = 1;

/// `bitwise reg <dreg> = ( reg <sreg> << n )` or `>> n`: the shift form of `bitwise`
/// (`NFTA_BITWISE_OP` 1 or 2, the amount in `NFTA_BITWISE_DATA`, host order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shift {
    /// `NFTA_BITWISE_SREG`.
    pub sreg: u32,
    /// `NFTA_BITWISE_DREG`.
    pub dreg: u32,
    /// `NFTA_BITWISE_LEN`.
    pub len: u32,
    /// `true` for `<<` (`NFT_BITWISE_LSHIFT`), `false` for `>>`.
    pub left: bool,
    /// `NFTA_BITWISE_DATA`: the amount, as the kernel holds it (a host-order u32).
    pub amount: Vec<u8>,
}

impl Shift {
    /// The shift an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        let Some(attrs) = attrs_of(o, "bitwise", &[1, 2, 3, 6, 7])? else {
            return Ok(None);
        };
        let (mut sreg, mut dreg, mut len, mut op, mut amount) = (None, None, None, None, None);
        for a in attrs {
            let a = a?;
            match a.ty {
                1 => sreg = Some(a.u32_be("NFTA_BITWISE_SREG")?),
                2 => dreg = Some(a.u32_be("NFTA_BITWISE_DREG")?),
                3 => len = Some(a.u32_be("NFTA_BITWISE_LEN")?),
                6 => op = Some(a.u32_be("NFTA_BITWISE_OP")?),
                _ => amount = Some(value(&a, "NFTA_BITWISE_DATA")?),
            }
        }
        let left = match op {
            Some(1) => true,
            Some(2) => false,
            _ => return Ok(None),
        };
        Ok(Some(Shift {
            sreg: sreg.ok_or_else(|| WireError::missing("NFTA_BITWISE_SREG"))?,
            dreg: dreg.ok_or_else(|| WireError::missing("NFTA_BITWISE_DREG"))?,
            len: len.ok_or_else(|| WireError::missing("NFTA_BITWISE_LEN"))?,
            left,
            amount: amount.ok_or_else(|| WireError::missing("NFTA_BITWISE_DATA"))?,
        }))
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr("bitwise", |w: &mut AttrWriter<'_>| {
            w.u32_be(1, self.sreg)
                .u32_be(2, self.dreg)
                .u32_be(3, self.len)
                .u32_be(6, if self.left { 1 } else { 2 });
            // NFTA_BITWISE_DATA holds one NFTA_DATA_VALUE; the kernel lists it without
            // NLA_F_NESTED, and so it is written here (the kernel reads both).
            let mut inner = Vec::new();
            let mut overflow = false;
            AttrWriter::new(&mut inner, &mut overflow).bytes(NFTA_DATA_VALUE, &self.amount);
            w.bytes(7, &inner);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_the_raw_expression() {
        let s = Shift {
            sreg: 1,
            dreg: 1,
            len: 4,
            left: true,
            amount: 1u32.to_ne_bytes().to_vec(),
        };
        assert_eq!(Shift::from_other(&s.to_other()).unwrap(), Some(s));
    }
}
