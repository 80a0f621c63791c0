//! `-j CONNSECMARK` revision 0: `struct xt_connsecmark_target_info` (both families).

use super::layout::xt_struct;

/// `CONNSECMARK_SAVE`: `--save`, the packet's security mark to the connection.
pub const CONNSECMARK_SAVE: u8 = 1;
/// `CONNSECMARK_RESTORE`: `--restore`, the connection's security mark to the packet.
pub const CONNSECMARK_RESTORE: u8 = 2;

xt_struct!(
    /// `--save` or `--restore`.
    ConnsecmarkTarget, "xt_connsecmark_target_info", 1, {
    mode: u8 = 0,
});
