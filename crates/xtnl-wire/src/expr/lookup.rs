use std::fmt;

use super::all_known;
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

mod attr {
    pub const SET: u16 = 1;
    pub const SREG: u16 = 2;
    pub const DREG: u16 = 3;
    pub const SET_ID: u16 = 4;
    pub const FLAGS: u16 = 5;
}

/// `lookup reg <sreg> set <name> [dreg <dreg>]`: whether the register's value is in a set
/// (`!=` with the invert flag), or, with a destination register, a map lookup that loads the
/// element's data there (a verdict map when it is the verdict register, 0). A set created in
/// the same batch is named by its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookup {
    /// `NFTA_LOOKUP_SET`: the set's name (`__set%d` for an anonymous one).
    pub set: String,
    /// `NFTA_LOOKUP_SREG`: the register holding the key.
    pub sreg: u32,
    /// `NFTA_LOOKUP_SET_ID`: the batch-local id of a set created in the same batch.
    pub set_id: Option<u32>,
    /// Maps: where the element's data goes.
    pub dreg: Option<u32>,
    /// `NFTA_LOOKUP_FLAGS`: [`Lookup::F_INV`] for `!=`.
    pub flags: Option<u32>,
}

impl Lookup {
    /// `NFT_LOOKUP_F_INV`: match when the key is not in the set.
    pub const F_INV: u32 = 1;

    /// Decodes the expression's attributes (the inside of `NFTA_EXPR_DATA`); `None` for a form
    /// this type does not model, which the caller keeps as [`Expr::Other`](super::Expr::Other).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        if !all_known(
            data,
            &[attr::SET, attr::SREG, attr::DREG, attr::SET_ID, attr::FLAGS],
        )? {
            return Ok(None);
        }
        let (mut set, mut sreg, mut set_id, mut flags) = (None, None, None, None);
        let mut dreg = None;
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                attr::SET => set = Some(a.string("NFTA_LOOKUP_SET")?),
                attr::SREG => sreg = Some(a.u32_be("NFTA_LOOKUP_SREG")?),
                attr::SET_ID => set_id = Some(a.u32_be("NFTA_LOOKUP_SET_ID")?),
                attr::FLAGS => flags = Some(a.u32_be("NFTA_LOOKUP_FLAGS")?),
                attr::DREG => dreg = Some(a.u32_be("NFTA_LOOKUP_DREG")?),
                _ => {}
            }
        }
        Ok(Some(Lookup {
            set: set.ok_or_else(|| WireError::missing("NFTA_LOOKUP_SET"))?,
            sreg: sreg.ok_or_else(|| WireError::missing("NFTA_LOOKUP_SREG"))?,
            set_id,
            dreg,
            flags,
        }))
    }

    /// Encodes the expression's attributes (the inside of `NFTA_EXPR_DATA`).
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.strz(attr::SET, &self.set).u32_be(attr::SREG, self.sreg);
        if let Some(d) = self.dreg {
            w.u32_be(attr::DREG, d);
        }
        if let Some(id) = self.set_id {
            w.u32_be(attr::SET_ID, id);
        }
        if let Some(f) = self.flags {
            w.u32_be(attr::FLAGS, f);
        }
    }

    /// Whether the lookup is inverted (`!=`).
    pub fn inverted(&self) -> bool {
        self.flags.unwrap_or(0) & Self::F_INV != 0
    }
}

impl fmt::Display for Lookup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "lookup reg {} set {}", self.sreg, self.set)?;
        if let Some(d) = self.dreg {
            write!(f, " dreg {d}")?;
        }
        if self.inverted() {
            write!(f, " 0x1")?;
        }
        Ok(())
    }
}
