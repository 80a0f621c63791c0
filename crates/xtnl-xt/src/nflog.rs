//! `-j NFLOG` rev 0: `struct xt_nflog_info`.

use super::layout::{Raw, xt_struct};

/// `XT_NFLOG_F_COPY_LEN`: `--nflog-size` was given (`len` is meaningful).
pub const NFLOG_F_COPY_LEN: u16 = 0x1;

xt_struct!(
    /// Group, size, threshold, prefix.
    Nflog, "xt_nflog_info", 76, {
    len: u32 = 0,
    group: u16 = 4,
    threshold: u16 = 6,
    flags: u16 = 8,
    pad: u16 = 10,
    prefix: Raw<64> = 12,
});
