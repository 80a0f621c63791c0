//! `fib`: a routing lookup (`fib daddr type`, `fib saddr . iif oif`). Read raw like
//! [`Limit`](super::Limit): [`Fib::from_other`], [`Fib::to_other`].

use std::fmt;

use super::{OtherExpr, all_known, other_expr};
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

mod attr {
    pub const DREG: u16 = 1;
    pub const RESULT: u16 = 2;
    pub const FLAGS: u16 = 3;
}

/// `fib <flags> <result> => reg <dreg>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fib {
    /// `NFTA_FIB_DREG`.
    pub dreg: u32,
    /// `NFTA_FIB_RESULT`: [`Fib::RESULT_OIF`], [`Fib::RESULT_OIFNAME`], [`Fib::RESULT_ADDRTYPE`].
    pub result: u32,
    /// `NFTA_FIB_FLAGS` (`NFTA_FIB_F_*`: saddr 1, daddr 2, mark 4, iif 8, oif 16, present 32).
    pub flags: u32,
}

impl Fib {
    /// The expression's name.
    pub const NAME: &'static str = "fib";
    /// `NFT_FIB_RESULT_OIF`.
    pub const RESULT_OIF: u32 = 1;
    /// `NFT_FIB_RESULT_OIFNAME`.
    pub const RESULT_OIFNAME: u32 = 2;
    /// `NFT_FIB_RESULT_ADDRTYPE`.
    pub const RESULT_ADDRTYPE: u32 = 3;

    /// Decodes the expression's attributes; `None` for a form this type does not model.
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        if !all_known(data, &[attr::DREG, attr::RESULT, attr::FLAGS])? {
            return Ok(None);
        }
        let (mut dreg, mut result, mut flags) = (None, None, None);
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                attr::DREG => dreg = Some(a.u32_be("NFTA_FIB_DREG")?),
                attr::RESULT => result = Some(a.u32_be("NFTA_FIB_RESULT")?),
                attr::FLAGS => flags = Some(a.u32_be("NFTA_FIB_FLAGS")?),
                _ => {}
            }
        }
        Ok(Some(Fib {
            dreg: dreg.ok_or_else(|| WireError::missing("NFTA_FIB_DREG"))?,
            result: result.ok_or_else(|| WireError::missing("NFTA_FIB_RESULT"))?,
            flags: flags.unwrap_or(0),
        }))
    }

    /// Encodes the expression's attributes, as nft sends them.
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.u32_be(attr::DREG, self.dreg)
            .u32_be(attr::RESULT, self.result)
            .u32_be(attr::FLAGS, self.flags);
    }

    /// The fib an expression kept raw holds; `None` for another kind or form.
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

impl fmt::Display for Fib {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "fib flags {:#x} result {} => reg {}",
            self.flags, self.result, self.dreg
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captured_fib_round_trips() {
        // `fib daddr type => reg 1`.
        let data: &[u8] = &[
            8, 0, 1, 0, 0, 0, 0, 1, 8, 0, 2, 0, 0, 0, 0, 3, 8, 0, 3, 0, 0, 0, 0, 2,
        ];
        let o = OtherExpr {
            name: "fib".into(),
            data: data.to_vec(),
        };
        let f = Fib::from_other(&o).unwrap().unwrap();
        assert_eq!(
            f,
            Fib {
                dreg: 1,
                result: Fib::RESULT_ADDRTYPE,
                flags: 2
            }
        );
        assert_eq!(f.to_other(), o);
    }
}
