//! `-j HMARK` revision 0: `struct xt_hmark_info` (both families).

use super::layout::{Raw, xt_struct};

/// `XT_HMARK_FLAG(XT_HMARK_*)`: which fields are set.
pub mod hmark_flags {
    /// `XT_HMARK_SADDR_MASK`: `--hmark-src-prefix` given.
    pub const SADDR_MASK: u32 = 1 << 0;
    /// `XT_HMARK_DADDR_MASK`: `--hmark-dst-prefix` given.
    pub const DADDR_MASK: u32 = 1 << 1;
    /// `XT_HMARK_SPI`: `--hmark-spi` given.
    pub const SPI: u32 = 1 << 2;
    /// `XT_HMARK_SPI_MASK`: `--hmark-spi-mask` given.
    pub const SPI_MASK: u32 = 1 << 3;
    /// `XT_HMARK_SPORT`: `--hmark-sport` given.
    pub const SPORT: u32 = 1 << 4;
    /// `XT_HMARK_DPORT`: `--hmark-dport` given.
    pub const DPORT: u32 = 1 << 5;
    /// `XT_HMARK_SPORT_MASK`: `--hmark-sport-mask` given.
    pub const SPORT_MASK: u32 = 1 << 6;
    /// `XT_HMARK_DPORT_MASK`: `--hmark-dport-mask` given.
    pub const DPORT_MASK: u32 = 1 << 7;
    /// `XT_HMARK_PROTO_MASK`: `--hmark-proto-mask` given.
    pub const PROTO_MASK: u32 = 1 << 8;
    /// `XT_HMARK_RND`: `--hmark-rnd` given.
    pub const RND: u32 = 1 << 9;
    /// `XT_HMARK_MODULUS`: `--hmark-mod` given.
    pub const MODULUS: u32 = 1 << 10;
    /// `XT_HMARK_OFFSET`: `--hmark-offset` given.
    pub const OFFSET: u32 = 1 << 11;
    /// `XT_HMARK_CT`: `--hmark-tuple ct` (hash the conntrack tuple, not the packet).
    pub const CT: u32 = 1 << 12;
    /// `XT_HMARK_METHOD_L3`: hash layer-3 fields only.
    pub const METHOD_L3: u32 = 1 << 13;
    /// `XT_HMARK_METHOD_L3_4`: hash layer-3 and layer-4 fields.
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
