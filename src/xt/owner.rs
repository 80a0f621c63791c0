//! `-m owner` rev 1: `struct xt_owner_match_info`.

use super::layout::xt_struct;

pub const OWNER_UID: u8 = 1 << 0;
pub const OWNER_GID: u8 = 1 << 1;
pub const OWNER_SOCKET: u8 = 1 << 2;
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
