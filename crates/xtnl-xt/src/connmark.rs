//! `-m connmark` rev 1 (`struct xt_connmark_mtinfo1`) and `-j CONNMARK` rev 2
//! (`struct xt_connmark_tginfo2`).

use super::layout::xt_struct;

/// `XT_CONNMARK_SET`: `--set-xmark` and its spellings.
pub const CONNMARK_SET: u8 = 0;
/// `XT_CONNMARK_SAVE`: `--save-mark`, packet mark to connection mark.
pub const CONNMARK_SAVE: u8 = 1;
/// `XT_CONNMARK_RESTORE`: `--restore-mark`, connection mark to packet mark.
pub const CONNMARK_RESTORE: u8 = 2;

xt_struct!(
    /// `--mark value[/mask]`.
    ConnmarkMatch, "xt_connmark_mtinfo1", 12, {
    mark: u32 = 0,
    mask: u32 = 4,
    invert: u8 = 8,
});

xt_struct!(
    /// Set, save or restore, with masks and a shift.
    ConnmarkTarget, "xt_connmark_tginfo2", 15, {
    ctmark: u32 = 0,
    ctmask: u32 = 4,
    nfmask: u32 = 8,
    shift_dir: u8 = 12,
    shift_bits: u8 = 13,
    mode: u8 = 14,
});
