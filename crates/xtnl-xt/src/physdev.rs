//! `-m physdev` rev 0: `struct xt_physdev_info`.

use super::layout::{Raw, xt_struct};

/// `XT_PHYSDEV_OP_IN`: `--physdev-in` is tested.
pub const PHYSDEV_OP_IN: u8 = 0x01;
/// `XT_PHYSDEV_OP_OUT`: `--physdev-out` is tested.
pub const PHYSDEV_OP_OUT: u8 = 0x02;
/// `XT_PHYSDEV_OP_BRIDGED`: `--physdev-is-bridged`.
pub const PHYSDEV_OP_BRIDGED: u8 = 0x04;
/// `XT_PHYSDEV_OP_ISIN`: `--physdev-is-in`.
pub const PHYSDEV_OP_ISIN: u8 = 0x08;
/// `XT_PHYSDEV_OP_ISOUT`: `--physdev-is-out`.
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
