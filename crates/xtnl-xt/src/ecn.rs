//! `-j ECN` rev 0, IPv4 (`struct ipt_ECN_info`, include/uapi/linux/netfilter_ipv4/
//! ipt_ECN.h): the operations, the IP ECT codepoint, and the TCP bits `ece` (bit 0) and
//! `cwr` (bit 1) of a one-byte bitfield.

use super::layout::xt_struct;

/// `IPT_ECN_OP_SET_IP`: `--ecn-ip-ect` (rewrite the IP ECN codepoint).
pub const OP_SET_IP: u8 = 0x01;
/// `IPT_ECN_OP_SET_ECE`: `--ecn-tcp-ece` (set the TCP ECE bit as given).
pub const OP_SET_ECE: u8 = 0x10;
/// `IPT_ECN_OP_SET_CWR`: `--ecn-tcp-cwr` (set the TCP CWR bit as given).
pub const OP_SET_CWR: u8 = 0x20;
/// The `ece` bit of the `proto.tcp` bitfield (bit 0): the value ECE is set to.
pub const TCP_ECE: u8 = 0x01;
/// The `cwr` bit of the `proto.tcp` bitfield (bit 1): the value CWR is set to.
pub const TCP_CWR: u8 = 0x02;

xt_struct!(
    /// `tcp` is the `proto.tcp` bitfield byte.
    EcnTarget, "ipt_ECN_info", 3, {
    operation: u8 = 0,
    ip_ect: u8 = 1,
    tcp: u8 = 2,
});
