//! `-m tcpmss` rev 0 (`struct xt_tcpmss_match_info`) and `-j TCPMSS` rev 0
//! (`struct xt_tcpmss_info`).

use super::layout::xt_struct;

/// `--clamp-mss-to-pmtu`.
pub const TCPMSS_CLAMP_PMTU: u16 = 0xffff;

xt_struct!(
    /// `--mss min[:max]`.
    TcpmssMatch, "xt_tcpmss_match_info", 6, {
    mss_min: u16 = 0,
    mss_max: u16 = 2,
    invert: u8 = 4,
});

xt_struct!(
    /// `--set-mss` or the clamp value.
    TcpmssTarget, "xt_tcpmss_info", 2, {
    mss: u16 = 0,
});
