//! `-m length` rev 0: `struct xt_length_info`.

use super::layout::xt_struct;

xt_struct!(
    /// `--length min[:max]`.
    Length, "xt_length_info", 6, {
    min: u16 = 0,
    max: u16 = 2,
    invert: u8 = 4,
});
