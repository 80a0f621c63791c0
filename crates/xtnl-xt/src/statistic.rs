//! `-m statistic` rev 0: `struct xt_statistic_info` (the kernel's `master` pointer at
//! offset 16 is private and reads back as zeros).

use super::layout::xt_struct;

/// `XT_STATISTIC_MODE_RANDOM`: `--mode random --probability p`.
pub const MODE_RANDOM: u16 = 0;
/// `XT_STATISTIC_MODE_NTH`: `--mode nth --every n --packet p`.
pub const MODE_NTH: u16 = 1;
/// `XT_STATISTIC_INVERT` (in `flags`): `!` before the mode's option.
pub const INVERT: u16 = 1;

xt_struct!(
    /// `probability` is `every` in nth mode (same offset, a union).
    Statistic, "xt_statistic_info", 24, {
    mode: u16 = 0,
    flags: u16 = 2,
    probability_or_every: u32 = 4,
    packet: u32 = 8,
    count: u32 = 12,
});
