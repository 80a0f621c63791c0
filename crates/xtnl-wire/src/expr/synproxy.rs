//! `synproxy`: an expression nft writes that
//! [`Expr::parse`](super::Expr::parse) keeps raw, typed here for the nft rule codec, read from
//! and written to [`OtherExpr`] with `from_other`/`to_other`, attributes in the order the
//! kernel lists them.

use super::{OtherExpr, attrs_of, other_expr};
use crate::WireError;

/// `synproxy mss <mss> wscale <wscale> [timestamp] [sack-perm]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synproxy {
    /// `NFTA_SYNPROXY_MSS`.
    pub mss: Option<u16>,
    /// `NFTA_SYNPROXY_WSCALE`.
    pub wscale: Option<u8>,
    /// `NFTA_SYNPROXY_FLAGS` (`NF_SYNPROXY_OPT_*`: mss 1, wscale 2, sack-perm 4, timestamp 8).
    pub flags: u32,
}

impl Synproxy {
    /// The synproxy an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        let Some(attrs) = attrs_of(o, "synproxy", &[1, 2, 3])? else {
            return Ok(None);
        };
        let mut p = Synproxy {
            mss: None,
            wscale: None,
            flags: 0,
        };
        for a in attrs {
            let a = a?;
            match a.ty {
                1 => {
                    let b = <[u8; 2]>::try_from(a.payload).map_err(|_| {
                        WireError::bad_value("not 2 bytes").within("NFTA_SYNPROXY_MSS")
                    })?;
                    p.mss = Some(u16::from_be_bytes(b));
                }
                2 => p.wscale = Some(a.u8("NFTA_SYNPROXY_WSCALE")?),
                _ => p.flags = a.u32_be("NFTA_SYNPROXY_FLAGS")?,
            }
        }
        Ok(Some(p))
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr("synproxy", |w| {
            if let Some(m) = self.mss {
                w.bytes(1, &m.to_be_bytes());
            }
            if let Some(s) = self.wscale {
                w.u8(2, s);
            }
            w.u32_be(3, self.flags);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_the_raw_expression() {
        let p = Synproxy {
            mss: Some(1460),
            wscale: Some(7),
            flags: 0xf,
        };
        assert_eq!(Synproxy::from_other(&p.to_other()).unwrap(), Some(p));
    }
}
