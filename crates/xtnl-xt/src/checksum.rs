//! `-j CHECKSUM` rev 0: `struct xt_CHECKSUM_info`.

use super::layout::xt_struct;

/// `XT_CHECKSUM_OP_FILL`: `--checksum-fill`, the only operation.
pub const CHECKSUM_OP_FILL: u8 = 1;

xt_struct!(
    /// `--checksum-fill`.
    ChecksumTarget, "xt_CHECKSUM_info", 1, {
    operation: u8 = 0,
});
