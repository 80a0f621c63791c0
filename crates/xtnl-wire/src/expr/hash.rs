//! `hash` (`jhash`, `symhash`): an expression nft writes that
//! [`Expr::parse`](super::Expr::parse) keeps raw, typed here for the nft rule codec, read from
//! and written to [`OtherExpr`] with `from_other`/`to_other`, attributes in the order the
//! kernel lists them.

use super::{OtherExpr, attrs_of, other_expr};
use crate::WireError;

/// `hash reg <dreg> = jhash(reg <sreg>, <len>, <seed>) % mod <modulus> [+ <offset>]`, or
/// `symhash() % mod <modulus>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hash {
    /// `NFTA_HASH_SREG` (jhash).
    pub sreg: Option<u32>,
    /// `NFTA_HASH_DREG`.
    pub dreg: u32,
    /// `NFTA_HASH_LEN`: bytes hashed (jhash).
    pub len: Option<u32>,
    /// `NFTA_HASH_MODULUS`.
    pub modulus: u32,
    /// `NFTA_HASH_SEED` (jhash).
    pub seed: Option<u32>,
    /// `NFTA_HASH_OFFSET`.
    pub offset: Option<u32>,
    /// `NFTA_HASH_TYPE`: [`Hash::JENKINS`] or [`Hash::SYM`].
    pub kind: u32,
}

impl Hash {
    /// `NFT_HASH_JENKINS`.
    pub const JENKINS: u32 = 0;
    /// `NFT_HASH_SYM`.
    pub const SYM: u32 = 1;

    /// The hash an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        let Some(attrs) = attrs_of(o, "hash", &[1, 2, 3, 4, 5, 6, 7])? else {
            return Ok(None);
        };
        let mut h = Hash {
            sreg: None,
            dreg: 0,
            len: None,
            modulus: 0,
            seed: None,
            offset: None,
            kind: Self::JENKINS,
        };
        for a in attrs {
            let a = a?;
            match a.ty {
                1 => h.sreg = Some(a.u32_be("NFTA_HASH_SREG")?),
                2 => h.dreg = a.u32_be("NFTA_HASH_DREG")?,
                3 => h.len = Some(a.u32_be("NFTA_HASH_LEN")?),
                4 => h.modulus = a.u32_be("NFTA_HASH_MODULUS")?,
                5 => h.seed = Some(a.u32_be("NFTA_HASH_SEED")?),
                6 => h.offset = Some(a.u32_be("NFTA_HASH_OFFSET")?),
                _ => h.kind = a.u32_be("NFTA_HASH_TYPE")?,
            }
        }
        Ok(Some(h))
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr("hash", |w| {
            if let Some(s) = self.sreg {
                w.u32_be(1, s);
            }
            w.u32_be(2, self.dreg);
            if let Some(l) = self.len {
                w.u32_be(3, l);
            }
            w.u32_be(4, self.modulus);
            if let Some(s) = self.seed {
                w.u32_be(5, s);
            }
            if let Some(o) = self.offset {
                w.u32_be(6, o);
            }
            w.u32_be(7, self.kind);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_the_raw_expression() {
        let h = Hash {
            sreg: Some(2),
            dreg: 1,
            len: Some(8),
            modulus: 8,
            seed: Some(0xdead),
            offset: None,
            kind: Hash::JENKINS,
        };
        assert_eq!(Hash::from_other(&h.to_other()).unwrap(), Some(h));
    }
}
