//! `-m ipv6header` revision 0 (IPv6 only): `struct ip6t_ipv6header_info`.

use super::layout::xt_struct;

xt_struct!(
    /// `MASK_*` header bits; iptables writes 0xff into `invflags` for `!` and into
    /// `modeflag` for `--soft`.
    Ipv6Header, "ip6t_ipv6header_info", 3, {
    matchflags: u8 = 0,
    invflags: u8 = 1,
    modeflag: u8 = 2,
});
