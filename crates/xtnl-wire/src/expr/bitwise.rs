use std::fmt;

use super::all_known;
use super::data::{emit_value, hex, value};
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

mod attr {
    pub const SREG: u16 = 1;
    pub const DREG: u16 = 2;
    pub const LEN: u16 = 3;
    pub const MASK: u16 = 4;
    pub const XOR: u16 = 5;
    pub const OP: u16 = 6;
}

/// The boolean form `reg <dreg> = (reg <sreg> & mask) ^ xor`. Shifts and the other
/// operations (`NFTA_BITWISE_OP` other than 0) are kept raw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bitwise {
    /// `NFTA_BITWISE_SREG`: the register read.
    pub sreg: u32,
    /// `NFTA_BITWISE_DREG`: the register written.
    pub dreg: u32,
    /// `NFTA_BITWISE_LEN`: bytes operated on.
    pub len: u32,
    /// `NFTA_BITWISE_MASK`: ANDed with the source (`len` bytes).
    pub mask: Vec<u8>,
    /// `NFTA_BITWISE_XOR`: XORed after the mask (`len` bytes).
    pub xor: Vec<u8>,
}

impl Bitwise {
    /// Decodes the expression's attributes (the inside of `NFTA_EXPR_DATA`); `None` for a form
    /// this type does not model, which the caller keeps as [`Expr::Other`](super::Expr::Other).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        if !all_known(
            data,
            &[
                attr::SREG,
                attr::DREG,
                attr::LEN,
                attr::MASK,
                attr::XOR,
                attr::OP,
            ],
        )? {
            return Ok(None);
        }
        let (mut sreg, mut dreg, mut len, mut mask, mut xor) = (None, None, None, None, None);
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                attr::SREG => sreg = Some(a.u32_be("NFTA_BITWISE_SREG")?),
                attr::DREG => dreg = Some(a.u32_be("NFTA_BITWISE_DREG")?),
                attr::LEN => len = Some(a.u32_be("NFTA_BITWISE_LEN")?),
                attr::MASK => mask = Some(value(&a, "NFTA_BITWISE_MASK")?),
                attr::XOR => xor = Some(value(&a, "NFTA_BITWISE_XOR")?),
                attr::OP if a.u32_be("NFTA_BITWISE_OP")? != 0 => return Ok(None),
                _ => {}
            }
        }
        let (Some(mask), Some(xor)) = (mask, xor) else {
            return Ok(None);
        };
        Ok(Some(Bitwise {
            sreg: sreg.ok_or_else(|| WireError::missing("NFTA_BITWISE_SREG"))?,
            dreg: dreg.ok_or_else(|| WireError::missing("NFTA_BITWISE_DREG"))?,
            len: len.ok_or_else(|| WireError::missing("NFTA_BITWISE_LEN"))?,
            mask,
            xor,
        }))
    }

    /// Encodes the expression's attributes (the inside of `NFTA_EXPR_DATA`).
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.u32_be(attr::SREG, self.sreg)
            .u32_be(attr::DREG, self.dreg)
            .u32_be(attr::LEN, self.len);
        emit_value(w, attr::MASK, &self.mask);
        emit_value(w, attr::XOR, &self.xor);
    }
}

impl fmt::Display for Bitwise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bitwise reg {} = ( reg {} & {} ) ^ {}",
            self.dreg,
            self.sreg,
            hex(&self.mask),
            hex(&self.xor)
        )
    }
}
