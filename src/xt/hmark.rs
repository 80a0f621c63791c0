//! `-j HMARK` revision 0: `struct xt_hmark_info` (both families).

use super::layout::{Raw, xt_struct};

/// `XT_HMARK_FLAG(XT_HMARK_*)`: which fields are set.
pub mod hmark_flags {
    pub const SADDR_MASK: u32 = 1 << 0;
    pub const DADDR_MASK: u32 = 1 << 1;
    pub const SPI: u32 = 1 << 2;
    pub const SPI_MASK: u32 = 1 << 3;
    pub const SPORT: u32 = 1 << 4;
    pub const DPORT: u32 = 1 << 5;
    pub const SPORT_MASK: u32 = 1 << 6;
    pub const DPORT_MASK: u32 = 1 << 7;
    pub const PROTO_MASK: u32 = 1 << 8;
    pub const RND: u32 = 1 << 9;
    pub const MODULUS: u32 = 1 << 10;
    pub const OFFSET: u32 = 1 << 11;
    pub const CT: u32 = 1 << 12;
    pub const METHOD_L3: u32 = 1 << 13;
    pub const METHOD_L3_4: u32 = 1 << 14;
}

xt_struct!(
    /// Address masks (`union nf_inet_addr`), `union hmark_ports` mask and set (two `__be16`
    /// ports, or one `__be32` SPI, in network order), flags, protocol mask, hash seed,
    /// modulus and offset.
    HmarkTarget, "xt_hmark_info", 60, {
    src_mask: Raw<16> = 0,
    dst_mask: Raw<16> = 16,
    port_mask: Raw<4> = 32,
    port_set: Raw<4> = 36,
    flags: u32 = 40,
    proto_mask: u16 = 44,
    hashrnd: u32 = 48,
    hmodulus: u32 = 52,
    hoffset: u32 = 56,
});
