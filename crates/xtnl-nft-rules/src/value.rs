//! The value codec: a key's bytes to the JSON value `nft -j` prints, and back; a set's
//! elements (intervals, prefixes, map data) likewise.

use xtnl_nft_json::Expression;
use xtnl_wire::set::ElemRepr;

use crate::{ByteOrder, DataType, RuleError, SetView};

/// `NFTNL_UDATA_SET_KEYBYTEORDER` in a set's userdata, if nft wrote it.
pub(crate) fn key_order_from_userdata(udata: Option<&[u8]>) -> Option<ByteOrder> {
    let mut rest = udata?;
    while rest.len() >= 2 {
        let (ty, len) = (rest[0], usize::from(rest[1]));
        let val = rest.get(2..2 + len)?;
        if ty == xtnl_wire::set::udata::SET_KEYBYTEORDER && len == 4 {
            let v = u32::from_ne_bytes([val[0], val[1], val[2], val[3]]);
            return match v {
                1 => Some(ByteOrder::Host),
                2 => Some(ByteOrder::Big),
                _ => None,
            };
        }
        rest = &rest[2 + len..];
    }
    None
}

/// A key's bytes (one type, or a concatenation with each field padded to 4 bytes) to the
/// value `nft -j` prints: `"192.0.2.1"`, `22`, `"tcp"`, `{"concat": ["tcp", 8080]}`.
pub fn decode_value(types: &[DataType], bytes: &[u8]) -> Result<Expression, RuleError> {
    let _ = (types, bytes);
    Err(RuleError::unsupported(
        "",
        "value decoding: not yet supported",
    ))
}

/// A value as `nft -j` writes it to the key's bytes (the reverse of [`decode_value`]).
pub fn encode_value(types: &[DataType], value: &Expression) -> Result<Vec<u8>, RuleError> {
    let _ = (types, value);
    Err(RuleError::unsupported(
        "",
        "value encoding: not yet supported",
    ))
}

/// A set's elements as the kernel holds them to what `nft -j` prints in the set's `"elem"`
/// (intervals merged into prefixes and ranges; a map's elements as `[KEY, DATA]`).
pub fn decode_elements(set: &SetView, elems: &[ElemRepr]) -> Result<Vec<Expression>, RuleError> {
    let _ = (set, elems);
    Err(RuleError::unsupported(
        "",
        "set elements: not yet supported",
    ))
}

/// A set's elements as `nft -j` writes them to the kernel's elements (an interval set's
/// ranges as start and end elements, as nft sends them).
pub fn encode_elements(set: &SetView, elems: &[Expression]) -> Result<Vec<ElemRepr>, RuleError> {
    let _ = (set, elems);
    Err(RuleError::unsupported(
        "",
        "set elements: not yet supported",
    ))
}
