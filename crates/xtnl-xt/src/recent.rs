//! `-m recent` rev 1: `struct xt_recent_mtinfo_v1`.

use super::layout::{Raw, xt_struct};

/// `XT_RECENT_CHECK`: `--rcheck`.
pub const RECENT_CHECK: u8 = 1 << 0;
/// `XT_RECENT_SET`: `--set`.
pub const RECENT_SET: u8 = 1 << 1;
/// `XT_RECENT_UPDATE`: `--update`.
pub const RECENT_UPDATE: u8 = 1 << 2;
/// `XT_RECENT_REMOVE`: `--remove`.
pub const RECENT_REMOVE: u8 = 1 << 3;
/// `XT_RECENT_TTL`: `--rttl` (the TTL must match too).
pub const RECENT_TTL: u8 = 1 << 4;
/// `XT_RECENT_REAP`: `--reap` (purge entries older than `--seconds`).
pub const RECENT_REAP: u8 = 1 << 5;

xt_struct!(
    /// List name, command bits, side and the address mask.
    RecentV1, "xt_recent_mtinfo_v1", 228, {
    seconds: u32 = 0,
    hit_count: u32 = 4,
    check_set: u8 = 8,
    invert: u8 = 9,
    name: Raw<200> = 10,
    side: u8 = 210,
    mask: Raw<16> = 212,
});
