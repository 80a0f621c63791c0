//! `tproxy`: an expression nft writes that
//! [`Expr::parse`](super::Expr::parse) keeps raw, typed here for the nft rule codec, read from
//! and written to [`OtherExpr`] with `from_other`/`to_other`, attributes in the order the
//! kernel lists them.

use super::{OtherExpr, attrs_of, other_expr};
use crate::WireError;

/// `tproxy <family> addr reg <a> port reg <p>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tproxy {
    /// `NFTA_TPROXY_FAMILY` (`NFPROTO_IPV4`, `NFPROTO_IPV6`, or unspecified in inet).
    pub family: u32,
    /// `NFTA_TPROXY_REG_ADDR`.
    pub reg_addr: Option<u32>,
    /// `NFTA_TPROXY_REG_PORT`.
    pub reg_port: Option<u32>,
}

impl Tproxy {
    /// The tproxy an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        let Some(attrs) = attrs_of(o, "tproxy", &[1, 2, 3])? else {
            return Ok(None);
        };
        let mut t = Tproxy {
            family: 0,
            reg_addr: None,
            reg_port: None,
        };
        for a in attrs {
            let a = a?;
            match a.ty {
                1 => t.family = a.u32_be("NFTA_TPROXY_FAMILY")?,
                2 => t.reg_addr = Some(a.u32_be("NFTA_TPROXY_REG_ADDR")?),
                _ => t.reg_port = Some(a.u32_be("NFTA_TPROXY_REG_PORT")?),
            }
        }
        Ok(Some(t))
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr("tproxy", |w| {
            w.u32_be(1, self.family);
            if let Some(r) = self.reg_addr {
                w.u32_be(2, r);
            }
            if let Some(r) = self.reg_port {
                w.u32_be(3, r);
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_the_raw_expression() {
        let t = Tproxy {
            family: 2,
            reg_addr: Some(1),
            reg_port: Some(2),
        };
        assert_eq!(Tproxy::from_other(&t.to_other()).unwrap(), Some(t.clone()));
    }
}
