//! `-j DNPT` / `-j SNPT` rev 0 (`struct ip6t_npt_tginfo`,
//! include/uapi/linux/netfilter_ipv6/ip6t_NPT.h): the two prefixes and their lengths;
//! the checksum adjustment at 34 is the kernel's own (computed when the rule is loaded),
//! left out here as iptables leaves it out (`userspacesize` ends before it). And
//! `-m eui64` (an `int` nothing reads).

use super::layout::{Raw, xt_struct};

xt_struct!(
    /// 36 bytes, 40 once aligned.
    Npt, "ip6t_npt_tginfo", 36, {
    src_pfx: Raw<16> = 0,
    dst_pfx: Raw<16> = 16,
    src_pfx_len: u8 = 32,
    dst_pfx_len: u8 = 33,
});

/// `-m eui64`: `sizeof(int)` (8 bytes once aligned) of zeros; the kernel never reads it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Eui64;

impl Eui64 {
    /// Eight zeros.
    pub fn encode(&self) -> Vec<u8> {
        super::Out::new(4).done()
    }
    /// Checks the size only.
    pub fn decode(info: &[u8]) -> Result<Self, xtnl_wire::WireError> {
        super::sized(info, 4, "eui64").map(|_| Eui64)
    }
}
