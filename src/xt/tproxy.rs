//! `-j TPROXY` rev 1 (`struct xt_tproxy_target_info_v1`, include/uapi/linux/netfilter/
//! xt_TPROXY.h): the mark and its mask, the local address (`union nf_inet_addr`) and the
//! local port in network order.

use super::layout::{Raw, xt_struct};

xt_struct!(
    /// `lport` holds the port's two bytes as the kernel keeps them (big-endian).
    TproxyV1, "xt_tproxy_target_info_v1", 28, {
    mark_mask: u32 = 0,
    mark_value: u32 = 4,
    laddr: Raw<16> = 8,
    lport: Raw<2> = 24,
});
