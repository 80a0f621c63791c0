//! `-m connlabel` revision 0: `struct xt_connlabel_mtinfo` (both families).

use super::layout::xt_struct;

/// `XT_CONNLABEL_OP_*`.
pub mod connlabel_ops {
    /// `XT_CONNLABEL_OP_INVERT`: `! --label` (the match is inverted).
    pub const INVERT: u16 = 1 << 0;
    /// `XT_CONNLABEL_OP_SET`: `--set` (the label is set on the connection if not there).
    pub const SET: u16 = 1 << 1;
}

/// `XT_CONNLABEL_MAXBIT`.
pub const CONNLABEL_MAXBIT: u16 = 127;

xt_struct!(
    /// The label's bit (0-127) and `XT_CONNLABEL_OP_*`.
    ConnlabelMatch, "xt_connlabel_mtinfo", 4, {
    bit: u16 = 0,
    options: u16 = 2,
});
