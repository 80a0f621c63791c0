//! `-m icmp` (`struct ipt_icmp`) and `-m icmp6` (`struct ip6t_icmp`), rev 0: the same
//! layout, type, code range, invert flag.

use super::layout::{Raw, xt_struct};

/// `IPT_ICMP_INV` (and `IP6T_ICMP_INV`): `! --icmp-type`.
pub const ICMP_INV: u8 = 0x01;

xt_struct!(
    /// `--icmp-type` / `--icmpv6-type`.
    Icmp, "ipt_icmp", 4, {
    kind: u8 = 0,
    code: Raw<2> = 1,
    invflags: u8 = 3,
});
