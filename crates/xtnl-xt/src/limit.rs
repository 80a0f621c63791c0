//! `-m limit` rev 0: `struct xt_rateinfo`. iptables-nft 1.8.9 writes it as a native
//! `limit` expression; iptables-legacy as this struct (the kernel-private fields after
//! `burst` read back as zeros).

use super::layout::xt_struct;

/// `XT_LIMIT_SCALE`: `avg` is seconds per packet times this.
pub const LIMIT_SCALE: u32 = 10000;

xt_struct!(
    /// Average interval and burst.
    Rateinfo, "xt_rateinfo", 40, {
    avg: u32 = 0,
    burst: u32 = 4,
});
