//! `-m ipvs` rev 0 (`struct xt_ipvs_mtinfo`, include/uapi/linux/netfilter/xt_ipvs.h): the
//! virtual address and its mask (`union nf_inet_addr` each), port (network order),
//! protocol, forwarding method, port of the controlling connection (network order), and
//! the inversion and presence bits (`XT_IPVS_*`). 40 bytes.

use super::layout::{Be16, Raw, xt_struct};

xt_struct!(
    /// `invert` and `bitmask` hold one bit per option, in `XT_IPVS_*`'s order.
    Ipvs, "xt_ipvs_mtinfo", 40, {
    vaddr: Raw<16> = 0,
    vmask: Raw<16> = 16,
    vport: Be16 = 32,
    l4proto: u8 = 34,
    fwd_method: u8 = 35,
    vportctl: Be16 = 36,
    invert: u8 = 38,
    bitmask: u8 = 39,
});

/// `XT_IPVS_IPVS_PROPERTY`: the packet belongs to an IPVS connection (`--ipvs`).
pub const XT_IPVS_IPVS_PROPERTY: u8 = 1;
/// `XT_IPVS_PROTO` (`--vproto`).
pub const XT_IPVS_PROTO: u8 = 1 << 1;
/// `XT_IPVS_VADDR` (`--vaddr`).
pub const XT_IPVS_VADDR: u8 = 1 << 2;
/// `XT_IPVS_VPORT` (`--vport`).
pub const XT_IPVS_VPORT: u8 = 1 << 3;
/// `XT_IPVS_DIR` (`--vdir`; inverted means REPLY).
pub const XT_IPVS_DIR: u8 = 1 << 4;
/// `XT_IPVS_METHOD` (`--vmethod`).
pub const XT_IPVS_METHOD: u8 = 1 << 5;
/// `XT_IPVS_VPORTCTL` (`--vportctl`).
pub const XT_IPVS_VPORTCTL: u8 = 1 << 6;
/// `IP_VS_CONN_F_MASQ`, `IP_VS_CONN_F_TUNNEL`, `IP_VS_CONN_F_DROUTE` (include/uapi/linux/
/// ip_vs.h) with iptables' names for them.
pub const IPVS_METHODS: [(u8, &str); 3] = [(3, "GATE"), (2, "IPIP"), (0, "MASQ")];
