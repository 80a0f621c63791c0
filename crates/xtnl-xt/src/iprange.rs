//! `-m iprange` rev 1: `struct xt_iprange_mtinfo`.

use super::layout::{Raw, xt_struct};

/// `IPRANGE_SRC`: `--src-range` is tested.
pub const IPRANGE_SRC: u8 = 1 << 0;
/// `IPRANGE_DST`: `--dst-range` is tested.
pub const IPRANGE_DST: u8 = 1 << 1;
/// `IPRANGE_SRC_INV`: `! --src-range`.
pub const IPRANGE_SRC_INV: u8 = 1 << 4;
/// `IPRANGE_DST_INV`: `! --dst-range`.
pub const IPRANGE_DST_INV: u8 = 1 << 5;

xt_struct!(
    /// Addresses as `union nf_inet_addr` (an IPv4 address in the first four bytes).
    IprangeV1, "xt_iprange_mtinfo", 68, {
    src_min: Raw<16> = 0,
    src_max: Raw<16> = 16,
    dst_min: Raw<16> = 32,
    dst_max: Raw<16> = 48,
    flags: u8 = 64,
});
