//! `-j ECN` rev 0, IPv4 (`struct ipt_ECN_info`, include/uapi/linux/netfilter_ipv4/
//! ipt_ECN.h): the operations, the IP ECT codepoint, and the TCP bits `ece` (bit 0) and
//! `cwr` (bit 1) of a one-byte bitfield.

use super::layout::xt_struct;

pub const OP_SET_IP: u8 = 0x01;
pub const OP_SET_ECE: u8 = 0x10;
pub const OP_SET_CWR: u8 = 0x20;
pub const TCP_ECE: u8 = 0x01;
pub const TCP_CWR: u8 = 0x02;

xt_struct!(
    /// `tcp` is the `proto.tcp` bitfield byte.
    EcnTarget, "ipt_ECN_info", 3, {
    operation: u8 = 0,
    ip_ect: u8 = 1,
    tcp: u8 = 2,
});
