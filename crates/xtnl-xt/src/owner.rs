//! `-m owner` rev 1: `struct xt_owner_match_info`.

use super::layout::xt_struct;

/// `XT_OWNER_UID`: `--uid-owner` is tested.
pub const OWNER_UID: u8 = 1 << 0;
/// `XT_OWNER_GID`: `--gid-owner` is tested.
pub const OWNER_GID: u8 = 1 << 1;
/// `XT_OWNER_SOCKET`: `--socket-exists` is tested.
pub const OWNER_SOCKET: u8 = 1 << 2;
/// `XT_OWNER_SUPPL_GROUPS`: `--suppl-groups` (the gid test includes supplementary groups).
pub const OWNER_SUPPL_GROUPS: u8 = 1 << 3;

xt_struct!(
    /// uid and gid ranges; `match_` and `invert` are `XT_OWNER_*` bits.
    Owner, "xt_owner_match_info", 20, {
    uid_min: u32 = 0,
    uid_max: u32 = 4,
    gid_min: u32 = 8,
    gid_max: u32 = 12,
    match_: u8 = 16,
    invert: u8 = 17,
});
