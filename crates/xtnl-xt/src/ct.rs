//! `-j CT` rev 1 and 2 and `-j NOTRACK`: `struct xt_ct_target_info_v1` (the kernel's `ct`
//! pointer at offset 64 is private and reads back as zeros).

use super::layout::{Raw, xt_struct};

/// `XT_CT_NOTRACK`: `--notrack`, no connection tracking.
pub const CT_NOTRACK: u16 = 1 << 0;
/// `XT_CT_NOTRACK_ALIAS`: written by `-j NOTRACK`, so iptables prints it back as such.
pub const CT_NOTRACK_ALIAS: u16 = 1 << 1;
/// `XT_CT_ZONE_DIR_ORIG`: the zone applies to the original direction (`--zone-orig`).
pub const CT_ZONE_DIR_ORIG: u16 = 1 << 2;
/// `XT_CT_ZONE_DIR_REPL`: the zone applies to the reply direction (`--zone-reply`).
pub const CT_ZONE_DIR_REPL: u16 = 1 << 3;
/// `XT_CT_ZONE_MARK`: the zone is taken from the packet mark (`--zone mark`).
pub const CT_ZONE_MARK: u16 = 1 << 4;

xt_struct!(
    /// Notrack, zone, event masks, helper and timeout policy names.
    CtTargetV1, "xt_ct_target_info_v1", 72, {
    flags: u16 = 0,
    zone: u16 = 2,
    ct_events: u32 = 4,
    exp_events: u32 = 8,
    helper: Raw<16> = 12,
    timeout: Raw<32> = 28,
});
