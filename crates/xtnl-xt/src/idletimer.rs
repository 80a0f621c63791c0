//! `-j IDLETIMER` revisions 0 and 1: `struct idletimer_tg_info` and
//! `struct idletimer_tg_info_v1` (both families). The kernel's timer pointer at the end is
//! never handed back (zeros).

use super::layout::{Raw, xt_struct};

/// `MAX_IDLETIMER_LABEL_SIZE`: the label's buffer, its NUL included.
pub const MAX_IDLETIMER_LABEL_SIZE: usize = 28;
/// `XT_IDLETIMER_ALARM`: `--alarm`, the timer type of an alarm timer (revision 1).
pub const XT_IDLETIMER_ALARM: u8 = 1;

xt_struct!(
    /// Revision 0: `--timeout SECONDS --label NAME`.
    IdletimerTargetV0, "idletimer_tg_info", 40, {
    timeout: u32 = 0,
    label: Raw<28> = 4,
});

xt_struct!(
    /// Revision 1 (what iptables 1.8.9 writes): revision 0 and `--alarm`.
    IdletimerTarget, "idletimer_tg_info_v1", 48, {
    timeout: u32 = 0,
    label: Raw<28> = 4,
    /// Never set by iptables (kept for Android).
    send_nl_msg: u8 = 32,
    timer_type: u8 = 33,
});
