use std::fmt;

use super::all_known;
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

mod attr {
    pub const DREG: u16 = 1;
    pub const KEY: u16 = 2;
    pub const DIRECTION: u16 = 3;
}

/// `ct load <key> => reg <dreg>`. The `ct set` form is not modelled (kept raw).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ct {
    /// `enum nft_ct_keys`; 0 is the connection state.
    pub key: u32,
    /// `NFTA_CT_DREG`: where the value is loaded.
    pub dreg: u32,
    /// `NFTA_CT_DIRECTION`: original (0) or reply (1), for per-direction keys.
    pub direction: Option<u8>,
}

impl Ct {
    /// `NFT_CT_STATE`: the connection's state bits (`NF_CT_STATE_*_BIT`).
    pub const KEY_STATE: u32 = 0;

    /// Decodes the expression's attributes (the inside of `NFTA_EXPR_DATA`); `None` for a form
    /// this type does not model, which the caller keeps as [`Expr::Other`](super::Expr::Other).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        if !all_known(data, &[attr::DREG, attr::KEY, attr::DIRECTION])? {
            return Ok(None);
        }
        let (mut dreg, mut key, mut direction) = (None, None, None);
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                attr::DREG => dreg = Some(a.u32_be("NFTA_CT_DREG")?),
                attr::KEY => key = Some(a.u32_be("NFTA_CT_KEY")?),
                attr::DIRECTION => direction = Some(a.u8("NFTA_CT_DIRECTION")?),
                _ => {}
            }
        }
        let Some(dreg) = dreg else { return Ok(None) };
        let key = key.ok_or_else(|| WireError::missing("NFTA_CT_KEY"))?;
        Ok(Some(Ct {
            key,
            dreg,
            direction,
        }))
    }

    /// Encodes the expression's attributes (the inside of `NFTA_EXPR_DATA`).
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.u32_be(attr::DREG, self.dreg).u32_be(attr::KEY, self.key);
        if let Some(d) = self.direction {
            w.u8(attr::DIRECTION, d);
        }
    }
}

impl fmt::Display for Ct {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.key {
            Ct::KEY_STATE => write!(f, "ct load state => reg {}", self.dreg),
            k => write!(f, "ct load key {k} => reg {}", self.dreg),
        }
    }
}
