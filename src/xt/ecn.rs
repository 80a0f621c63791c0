//! `-j ECN` revision 0 (IPv4 only): `struct ipt_ECN_info`.

use super::layout::xt_struct;

/// `IPT_ECN_OP_SET_*`.
pub mod ecn_ops {
    pub const SET_IP: u8 = 0x01;
    pub const SET_ECE: u8 = 0x10;
    pub const SET_CWR: u8 = 0x20;
}

xt_struct!(
    /// The operations, the IP ECT codepoint, and `proto.tcp`'s bit fields `ece:1, cwr:1`
    /// (bit 0 and bit 1 of the byte at 2 on the little-endian machines iptables builds
    /// for; the other bits are padding).
    EcnTarget, "ipt_ECN_info", 3, {
    operation: u8 = 0,
    ip_ect: u8 = 1,
    tcp: u8 = 2,
});
