//! `-m mac` rev 0: `struct xt_mac_info`.

use super::layout::{Raw, xt_struct};

xt_struct!(
    /// `--mac-source`.
    Mac, "xt_mac_info", 12, {
    srcaddr: Raw<6> = 0,
    invert: i32 = 8,
});
