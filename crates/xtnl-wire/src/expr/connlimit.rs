//! `connlimit` (`ct count`): an expression nft writes that
//! [`Expr::parse`](super::Expr::parse) keeps raw, typed here for the nft rule codec, read from
//! and written to [`OtherExpr`] with `from_other`/`to_other`, attributes in the order the
//! kernel lists them.

use super::{OtherExpr, attrs_of, other_expr};
use crate::WireError;

/// `connlimit count <count> flags <flags>` (`ct count [over] N`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connlimit {
    /// `NFTA_CONNLIMIT_COUNT`.
    pub count: u32,
    /// `NFTA_CONNLIMIT_FLAGS`: 1 (`NFT_CONNLIMIT_F_INV`) for `over`.
    pub flags: u32,
}

impl Connlimit {
    /// The limit an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        let Some(attrs) = attrs_of(o, "connlimit", &[1, 2])? else {
            return Ok(None);
        };
        let mut c = Connlimit { count: 0, flags: 0 };
        for a in attrs {
            let a = a?;
            match a.ty {
                1 => c.count = a.u32_be("NFTA_CONNLIMIT_COUNT")?,
                _ => c.flags = a.u32_be("NFTA_CONNLIMIT_FLAGS")?,
            }
        }
        Ok(Some(c))
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr("connlimit", |w| {
            w.u32_be(1, self.count).u32_be(2, self.flags);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_the_raw_expression() {
        let c = Connlimit {
            count: 20,
            flags: 1,
        };
        assert_eq!(Connlimit::from_other(&c.to_other()).unwrap(), Some(c));
        // Another kind is not read as this one.
        let t = super::super::Tproxy {
            family: 2,
            reg_addr: Some(1),
            reg_port: Some(2),
        };
        assert_eq!(Connlimit::from_other(&t.to_other()).unwrap(), None);
    }
}
