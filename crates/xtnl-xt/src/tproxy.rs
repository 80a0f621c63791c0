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

xt_struct!(
    /// `-j TEE` rev 1 (`struct xt_tee_tginfo`, include/uapi/linux/netfilter/xt_TEE.h): the
    /// gateway and the output interface; the kernel's private pointer at 32 reads back as
    /// zeros.
    TeeV1, "xt_tee_tginfo", 40, {
    gw: Raw<16> = 0,
    oif: Raw<16> = 16,
});
