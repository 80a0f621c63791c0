//! `-j SYNPROXY` revision 0: `struct xt_synproxy_info` (both families).

use super::layout::xt_struct;

/// `XT_SYNPROXY_OPT_*`: which of the fields below are set, and the flag-only options.
pub mod synproxy_opts {
    /// `XT_SYNPROXY_OPT_MSS`: `--mss` given.
    pub const MSS: u8 = 0x01;
    /// `XT_SYNPROXY_OPT_WSCALE`: `--wscale` given.
    pub const WSCALE: u8 = 0x02;
    /// `XT_SYNPROXY_OPT_SACK_PERM`: `--sack-perm`.
    pub const SACK_PERM: u8 = 0x04;
    /// `XT_SYNPROXY_OPT_TIMESTAMP`: `--timestamp`.
    pub const TIMESTAMP: u8 = 0x08;
    /// `XT_SYNPROXY_OPT_ECN`: `--ecn`.
    pub const ECN: u8 = 0x10;
}

xt_struct!(
    /// `--sack-perm`, `--timestamp`, `--wscale`, `--mss`, `--ecn`.
    SynproxyTarget, "xt_synproxy_info", 4, {
    options: u8 = 0,
    wscale: u8 = 1,
    mss: u16 = 2,
});
