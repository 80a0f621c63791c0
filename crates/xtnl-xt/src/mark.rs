//! `-m mark` (`struct xt_mark_mtinfo1`, rev 1) and `-j MARK` (`struct xt_mark_tginfo2`,
//! rev 2). iptables-nft 1.8.9 writes the match as native `meta mark [& mask] ==/!= value`
//! and the target through nft_compat; iptables-legacy writes both as these structs.

use super::layout::xt_struct;

xt_struct!(
    /// `-m mark [!] --mark value[/mask]`.
    MarkMatch, "xt_mark_mtinfo1", 12, {
    mark: u32 = 0,
    mask: u32 = 4,
    invert: u8 = 8,
});

xt_struct!(
    /// `-j MARK`: the new mark is `(mark & ~mask) ^ value`.
    MarkTarget, "xt_mark_tginfo2", 8, {
    mark: u32 = 0,
    mask: u32 = 4,
});
