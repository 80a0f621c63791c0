//! `-j SECMARK` revisions 0 and 1: `struct xt_secmark_target_info` and
//! `struct xt_secmark_target_info_v1` (both families). The kernel fills `secid` in from the
//! context and hands it back as zeros (it is past the user-visible part); iptables writes
//! zeros there.

use super::layout::{Raw, xt_struct};

/// `SECMARK_MODE_SEL`: the context is an SELinux one, the only mode.
pub const SECMARK_MODE_SEL: u8 = 1;
/// `SECMARK_SECCTX_MAX`: the context's buffer, its NUL included.
pub const SECMARK_SECCTX_MAX: usize = 256;

xt_struct!(
    /// Revision 0: `--selctx CONTEXT`, the context after the secid.
    SecmarkTargetV0, "xt_secmark_target_info", 264, {
    mode: u8 = 0,
    secctx: Raw<256> = 8,
});

xt_struct!(
    /// Revision 1 (what iptables 1.8.9 writes): `--selctx CONTEXT`, the secid last.
    SecmarkTarget, "xt_secmark_target_info_v1", 264, {
    mode: u8 = 0,
    secctx: Raw<256> = 1,
});
