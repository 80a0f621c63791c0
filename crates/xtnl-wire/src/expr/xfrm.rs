//! `xfrm` (`ipsec`): an expression nft writes that
//! [`Expr::parse`](super::Expr::parse) keeps raw, typed here for the nft rule codec, read from
//! and written to [`OtherExpr`] with `from_other`/`to_other`, attributes in the order the
//! kernel lists them.

use super::{OtherExpr, attrs_of, other_expr};
use crate::WireError;

/// `xfrm load <dir> <spnum> <key> => reg <dreg>` (`ipsec in reqid`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Xfrm {
    /// `NFTA_XFRM_DREG`.
    pub dreg: u32,
    /// `NFTA_XFRM_KEY` (`enum nft_xfrm_keys`: daddr ip 1, daddr ip6 2, saddr ip 3, saddr ip6
    /// 4, reqid 5, spi 6).
    pub key: u32,
    /// `NFTA_XFRM_DIR`: 0 in, 1 out.
    pub dir: u8,
    /// `NFTA_XFRM_SPNUM`.
    pub spnum: u32,
}

impl Xfrm {
    /// The xfrm load an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        let Some(attrs) = attrs_of(o, "xfrm", &[1, 2, 3, 4])? else {
            return Ok(None);
        };
        let mut x = Xfrm {
            dreg: 0,
            key: 0,
            dir: 0,
            spnum: 0,
        };
        for a in attrs {
            let a = a?;
            match a.ty {
                1 => x.dreg = a.u32_be("NFTA_XFRM_DREG")?,
                2 => x.key = a.u32_be("NFTA_XFRM_KEY")?,
                3 => x.dir = a.u8("NFTA_XFRM_DIR")?,
                _ => x.spnum = a.u32_be("NFTA_XFRM_SPNUM")?,
            }
        }
        Ok(Some(x))
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr("xfrm", |w| {
            w.u32_be(1, self.dreg)
                .u32_be(2, self.key)
                .u8(3, self.dir)
                .u32_be(4, self.spnum);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_the_raw_expression() {
        let x = Xfrm {
            dreg: 1,
            key: 5,
            dir: 0,
            spnum: 0,
        };
        assert_eq!(Xfrm::from_other(&x.to_other()).unwrap(), Some(x));
    }
}
