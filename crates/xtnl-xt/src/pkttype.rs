//! `-m pkttype` rev 0: `struct xt_pkttype_info`.

use super::layout::xt_struct;

xt_struct!(
    /// `PACKET_*` type and invert.
    Pkttype, "xt_pkttype_info", 8, {
    pkttype: i32 = 0,
    invert: i32 = 4,
});
