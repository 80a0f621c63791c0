//! `-j RATEEST` revision 0 (`struct xt_rateest_target_info`) and `-m rateest` revision 0
//! (`struct xt_rateest_match_info`), both families. The kernel's estimator pointers at the
//! end are never handed back (zeros).

use super::layout::{Raw, xt_struct};

/// `enum xt_rateest_match_flags`.
pub mod rateest_flags {
    /// `XT_RATEEST_MATCH_INVERT`: `!` before the comparison.
    pub const INVERT: u16 = 1 << 0;
    /// `XT_RATEEST_MATCH_ABS`: one estimator against fixed rates.
    pub const ABS: u16 = 1 << 1;
    /// `XT_RATEEST_MATCH_REL`: two estimators compared (`--rateest2`).
    pub const REL: u16 = 1 << 2;
    /// `XT_RATEEST_MATCH_DELTA`: `--rateest-delta`.
    pub const DELTA: u16 = 1 << 3;
    /// `XT_RATEEST_MATCH_BPS`: the byte rates are compared.
    pub const BPS: u16 = 1 << 4;
    /// `XT_RATEEST_MATCH_PPS`: the packet rates are compared.
    pub const PPS: u16 = 1 << 5;
}

/// `enum xt_rateest_match_mode`: `XT_RATEEST_MATCH_EQ` (`--rateest-eq`).
pub const RATEEST_EQ: u16 = 1;
/// `XT_RATEEST_MATCH_LT` (`--rateest-lt`).
pub const RATEEST_LT: u16 = 2;
/// `XT_RATEEST_MATCH_GT` (`--rateest-gt`).
pub const RATEEST_GT: u16 = 3;

xt_struct!(
    /// `--rateest-name NAME --rateest-interval T --rateest-ewmalog T`: the interval as
    /// `2^(interval+2)/4` seconds (a signed byte, -2..3), the averaging constant as its log.
    RateestTarget, "xt_rateest_target_info", 32, {
    name: Raw<16> = 0,
    interval: u8 = 16,
    ewma_log: u8 = 17,
});

xt_struct!(
    /// `--rateest NAME` / `--rateest1 NAME --rateest2 NAME`, the comparison and its rates.
    RateestMatch, "xt_rateest_match_info", 72, {
    name1: Raw<16> = 0,
    name2: Raw<16> = 16,
    flags: u16 = 32,
    mode: u16 = 34,
    bps1: u32 = 36,
    pps1: u32 = 40,
    bps2: u32 = 44,
    pps2: u32 = 48,
});
