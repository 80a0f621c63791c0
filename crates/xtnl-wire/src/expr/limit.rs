//! `limit`: a token bucket. Not part of [`Expr`](super::Expr)'s typed variants (xtnl's iptables
//! front reads it raw, as [`Expr::Other`](super::Expr::Other)); the nft rule codec reads and
//! writes it through [`Limit::from_other`] and [`Limit::to_other`].

use std::fmt;

use super::{OtherExpr, all_known, other_expr};
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

mod attr {
    pub const RATE: u16 = 1;
    pub const UNIT: u16 = 2;
    pub const BURST: u16 = 3;
    pub const TYPE: u16 = 4;
    pub const FLAGS: u16 = 5;
}

/// `limit rate [over] <rate>/<unit> burst <burst> type <pkts|bytes>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    /// `NFTA_LIMIT_RATE`: packets or bytes per `unit`.
    pub rate: u64,
    /// `NFTA_LIMIT_UNIT`: the period in seconds.
    pub unit: u64,
    /// `NFTA_LIMIT_BURST`.
    pub burst: u32,
    /// `NFTA_LIMIT_TYPE`: [`Limit::PKTS`] or [`Limit::BYTES`].
    pub kind: u32,
    /// `NFTA_LIMIT_FLAGS`: [`Limit::F_INV`] for `over`.
    pub flags: u32,
}

impl Limit {
    /// The expression's name.
    pub const NAME: &'static str = "limit";
    /// `NFT_LIMIT_PKTS`.
    pub const PKTS: u32 = 0;
    /// `NFT_LIMIT_PKT_BYTES`.
    pub const BYTES: u32 = 1;
    /// `NFT_LIMIT_F_INV`: matches over the rate.
    pub const F_INV: u32 = 1;

    /// Decodes the expression's attributes; `None` for a form this type does not model.
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        if !all_known(
            data,
            &[attr::RATE, attr::UNIT, attr::BURST, attr::TYPE, attr::FLAGS],
        )? {
            return Ok(None);
        }
        let mut l = Limit {
            rate: 0,
            unit: 0,
            burst: 0,
            kind: Self::PKTS,
            flags: 0,
        };
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                attr::RATE => l.rate = a.u64_be("NFTA_LIMIT_RATE")?,
                attr::UNIT => l.unit = a.u64_be("NFTA_LIMIT_UNIT")?,
                attr::BURST => l.burst = a.u32_be("NFTA_LIMIT_BURST")?,
                attr::TYPE => l.kind = a.u32_be("NFTA_LIMIT_TYPE")?,
                attr::FLAGS => l.flags = a.u32_be("NFTA_LIMIT_FLAGS")?,
                _ => {}
            }
        }
        Ok(Some(l))
    }

    /// Encodes the expression's attributes, as nft sends them.
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.u64_be(attr::RATE, self.rate)
            .u64_be(attr::UNIT, self.unit)
            .u32_be(attr::BURST, self.burst)
            .u32_be(attr::TYPE, self.kind)
            .u32_be(attr::FLAGS, self.flags);
    }

    /// The limit an expression kept raw holds; `None` for another kind or form.
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

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "limit rate {}/{}s burst {} type {} flags {:#x}",
            self.rate, self.unit, self.burst, self.kind, self.flags
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Expr;

    #[test]
    fn captured_limit_parses_and_re_emits_identically() {
        // `limit rate 5/second burst 10 packets` (NFTA_EXPR_DATA, attributes in nft's order).
        let data: &[u8] = &[
            12, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 5, // rate 5
            12, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1, // unit 1 s
            8, 0, 3, 0, 0, 0, 0, 10, // burst 10
            8, 0, 4, 0, 0, 0, 0, 0, // packets
            8, 0, 5, 0, 0, 0, 0, 0, // flags 0
        ];
        let o = OtherExpr {
            name: "limit".into(),
            data: data.to_vec(),
        };
        let l = Limit::from_other(&o).unwrap().unwrap();
        assert_eq!((l.rate, l.unit, l.burst, l.kind, l.flags), (5, 1, 10, 0, 0));
        assert_eq!(l.to_other(), o);
        // Expr::parse keeps it raw.
        let mut buf = Vec::new();
        let mut of = false;
        Expr::Other(o.clone()).emit(&mut AttrWriter::new(&mut buf, &mut of));
        assert_eq!(Expr::parse(&buf).unwrap(), Expr::Other(o));
    }
}
