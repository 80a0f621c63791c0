//! `osf` (passive OS fingerprint): an expression nft writes that
//! [`Expr::parse`](super::Expr::parse) keeps raw, typed here for the nft rule codec, read from
//! and written to [`OtherExpr`] with `from_other`/`to_other`, attributes in the order the
//! kernel lists them.

use super::{OtherExpr, attrs_of, other_expr};
use crate::WireError;

/// `osf dreg <dreg> [ttl <ttl>] [flags]`: the passive OS fingerprint's name or version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Osf {
    /// `NFTA_OSF_DREG`.
    pub dreg: u32,
    /// `NFTA_OSF_TTL`: 0 true, 1 loose, 2 skip.
    pub ttl: Option<u8>,
    /// `NFTA_OSF_FLAGS`: 1 (`NFT_OSF_F_VERSION`) for the version.
    pub flags: Option<u32>,
}

impl Osf {
    /// The osf load an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        let Some(attrs) = attrs_of(o, "osf", &[1, 2, 3])? else {
            return Ok(None);
        };
        let mut x = Osf {
            dreg: 0,
            ttl: None,
            flags: None,
        };
        for a in attrs {
            let a = a?;
            match a.ty {
                1 => x.dreg = a.u32_be("NFTA_OSF_DREG")?,
                2 => x.ttl = Some(a.u8("NFTA_OSF_TTL")?),
                _ => x.flags = Some(a.u32_be("NFTA_OSF_FLAGS")?),
            }
        }
        Ok(Some(x))
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr("osf", |w| {
            if let Some(t) = self.ttl {
                w.u8(2, t);
            }
            if let Some(f) = self.flags {
                w.u32_be(3, f);
            }
            w.u32_be(1, self.dreg);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_the_raw_expression() {
        let f = Osf {
            dreg: 1,
            ttl: Some(1),
            flags: None,
        };
        assert_eq!(Osf::from_other(&f.to_other()).unwrap(), Some(f));
    }
}
