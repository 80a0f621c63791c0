use std::fmt;

use super::all_known;
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

mod attr {
    pub const BYTES: u16 = 1;
    pub const PACKETS: u16 = 2;
    pub const PAD: u16 = 3;
}

/// `counter packets <p> bytes <b>`: counts what reaches it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Counter {
    /// `NFTA_COUNTER_PACKETS`.
    pub packets: u64,
    /// `NFTA_COUNTER_BYTES`.
    pub bytes: u64,
}

impl Counter {
    /// Decodes the expression's attributes (the inside of `NFTA_EXPR_DATA`); `None` for a form
    /// this type does not model, which the caller keeps as [`Expr::Other`](super::Expr::Other).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        if !all_known(data, &[attr::BYTES, attr::PACKETS, attr::PAD])? {
            return Ok(None);
        }
        let mut c = Counter::default();
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                attr::BYTES => c.bytes = a.u64_be("NFTA_COUNTER_BYTES")?,
                attr::PACKETS => c.packets = a.u64_be("NFTA_COUNTER_PACKETS")?,
                _ => {}
            }
        }
        Ok(Some(c))
    }

    /// Encodes the expression's attributes (the inside of `NFTA_EXPR_DATA`).
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.u64_be(attr::BYTES, self.bytes)
            .u64_be(attr::PACKETS, self.packets);
    }
}

impl fmt::Display for Counter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "counter pkts {} bytes {}", self.packets, self.bytes)
    }
}
