//! `NFTA_DATA_*`: the nested value/verdict container used by cmp, range, bitwise, immediate.

use crate::WireError;
use crate::attr::{Attr, AttrWriter};

pub const NFTA_DATA_VALUE: u16 = 1;
pub const NFTA_DATA_VERDICT: u16 = 2;

/// Reads the `NFTA_DATA_VALUE` inside a data attribute.
pub fn value(attr: &Attr<'_>, name: &'static str) -> Result<Vec<u8>, WireError> {
    for a in attr.nested() {
        let a = a.map_err(|e| e.within(name))?;
        if a.ty == NFTA_DATA_VALUE {
            return Ok(a.payload.to_vec());
        }
    }
    Err(WireError::missing("NFTA_DATA_VALUE").within(name))
}

pub fn emit_value(w: &mut AttrWriter<'_>, ty: u16, value: &[u8]) {
    w.nested(ty, |w| {
        w.bytes(NFTA_DATA_VALUE, value);
    });
}

/// Hex as `nft --debug=netlink` prints register data: 32-bit words, host order.
pub fn hex(data: &[u8]) -> String {
    data.chunks(4)
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            format!("0x{:08x}", u32::from_ne_bytes(w))
        })
        .collect::<Vec<_>>()
        .join(" ")
}
