//! `rt` and `socket` loads of one key: an expression nft writes that
//! [`Expr::parse`](super::Expr::parse) keeps raw, typed here for the nft rule codec, read from
//! and written to [`OtherExpr`] with `from_other`/`to_other`, attributes in the order the
//! kernel lists them.

use super::{OtherExpr, attrs_of, other_expr};
use crate::WireError;

/// A load of one key into a register: `rt load <key>` (`NFTA_RT_DREG` 1, `NFTA_RT_KEY` 2)
/// and `socket load <key>` (`NFTA_SOCKET_KEY` 1, `NFTA_SOCKET_DREG` 2, `NFTA_SOCKET_LEVEL` 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyLoad {
    /// The expression's kind: `rt` or `socket`.
    pub kind: &'static str,
    /// `NFTA_*_DREG`.
    pub dreg: u32,
    /// `NFTA_*_KEY` (`enum nft_rt_keys`, `enum nft_socket_keys`).
    pub key: u32,
    /// `NFTA_SOCKET_LEVEL` (cgroupv2).
    pub level: Option<u32>,
}

impl KeyLoad {
    /// The load an `rt` or `socket` expression kept raw holds; `None` for another kind.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        let kind = match o.name.as_str() {
            "rt" => "rt",
            "socket" => "socket",
            _ => return Ok(None),
        };
        let Some(attrs) = attrs_of(o, kind, &[1, 2, 3])? else {
            return Ok(None);
        };
        // rt: NFTA_RT_DREG 1, NFTA_RT_KEY 2; socket: NFTA_SOCKET_KEY 1, NFTA_SOCKET_DREG 2.
        let (dreg_ty, key_ty) = if kind == "rt" { (1, 2) } else { (2, 1) };
        let (mut dreg, mut key, mut level) = (None, None, None);
        for a in attrs {
            let a = a?;
            match a.ty {
                t if t == dreg_ty => dreg = Some(a.u32_be("DREG")?),
                t if t == key_ty => key = Some(a.u32_be("KEY")?),
                _ => level = Some(a.u32_be("NFTA_SOCKET_LEVEL")?),
            }
        }
        Ok(Some(KeyLoad {
            kind,
            dreg: dreg.ok_or_else(|| WireError::missing("DREG"))?,
            key: key.ok_or_else(|| WireError::missing("KEY"))?,
            level,
        }))
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it (the kernel lists
    /// the key first).
    pub fn to_other(&self) -> OtherExpr {
        other_expr(self.kind, |w| {
            if self.kind == "rt" {
                w.u32_be(2, self.key).u32_be(1, self.dreg);
            } else {
                w.u32_be(1, self.key).u32_be(2, self.dreg);
            }
            if let Some(l) = self.level {
                w.u32_be(3, l);
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_the_raw_expression() {
        use super::super::OtherExpr;
        let r = KeyLoad {
            kind: "rt",
            dreg: 1,
            key: 1,
            level: None,
        };
        assert_eq!(KeyLoad::from_other(&r.to_other()).unwrap(), Some(r));
        // `socket load transparent => reg 1` as the kernel lists it: key 0 first, then dreg.
        let o = OtherExpr {
            name: "socket".into(),
            data: vec![8, 0, 1, 0, 0, 0, 0, 0, 8, 0, 2, 0, 0, 0, 0, 1],
        };
        let so = KeyLoad::from_other(&o).unwrap().unwrap();
        assert_eq!((so.key, so.dreg), (0, 1));
        assert_eq!(so.to_other(), o);
    }
}
