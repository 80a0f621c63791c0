//! `-m addrtype` rev 1: `struct xt_addrtype_info_v1`.

use super::layout::xt_struct;

/// `XT_ADDRTYPE_*` bits of `flags`.
pub mod addrtype_flags {
    /// `XT_ADDRTYPE_INVERT_SOURCE`: `! --src-type`.
    pub const INVERT_SOURCE: u32 = 0x1;
    /// `XT_ADDRTYPE_INVERT_DEST`: `! --dst-type`.
    pub const INVERT_DEST: u32 = 0x2;
    /// `XT_ADDRTYPE_LIMIT_IFACE_IN`: `--limit-iface-in` (route types of the input interface only).
    pub const LIMIT_IFACE_IN: u32 = 0x4;
    /// `XT_ADDRTYPE_LIMIT_IFACE_OUT`: `--limit-iface-out`.
    pub const LIMIT_IFACE_OUT: u32 = 0x8;
}

/// Route types in the order of their bits (`1 << RTN_*`), by iptables' names.
pub const ADDR_TYPES: [&str; 12] = [
    "UNSPEC",
    "UNICAST",
    "LOCAL",
    "BROADCAST",
    "ANYCAST",
    "MULTICAST",
    "BLACKHOLE",
    "UNREACHABLE",
    "PROHIBIT",
    "THROW",
    "NAT",
    "XRESOLVE",
];

xt_struct!(
    /// Source and destination route-type masks and flags.
    AddrtypeV1, "xt_addrtype_info_v1", 8, {
    source: u16 = 0,
    dest: u16 = 2,
    flags: u32 = 4,
});
