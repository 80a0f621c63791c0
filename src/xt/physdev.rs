//! `-m physdev` rev 0: `struct xt_physdev_info`.

use super::layout::{Raw, xt_struct};

pub const PHYSDEV_OP_IN: u8 = 0x01;
pub const PHYSDEV_OP_OUT: u8 = 0x02;
pub const PHYSDEV_OP_BRIDGED: u8 = 0x04;
pub const PHYSDEV_OP_ISIN: u8 = 0x08;
pub const PHYSDEV_OP_ISOUT: u8 = 0x10;

xt_struct!(
    /// Bridge port names with masks as iptables writes them for `-i`/`-o`.
    Physdev, "xt_physdev_info", 66, {
    physindev: Raw<16> = 0,
    in_mask: Raw<16> = 16,
    physoutdev: Raw<16> = 32,
    out_mask: Raw<16> = 48,
    invert: u8 = 64,
    bitmask: u8 = 65,
});
