//! `-m nfacct` revisions 0 and 1: `struct xt_nfacct_match_info(_v1)` (both families; the
//! two have the same layout on 64-bit machines, the object pointer at 32, which the kernel
//! never hands back).

use super::layout::{Raw, xt_struct};

/// `NFACCT_NAME_MAX`: the accounting object's name buffer, its NUL included.
pub const NFACCT_NAME_MAX: usize = 32;

xt_struct!(
    /// `--nfacct-name NAME`.
    NfacctMatch, "xt_nfacct_match_info_v1", 40, {
    name: Raw<32> = 0,
});
