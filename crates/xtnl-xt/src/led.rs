//! `-j LED` revision 0: `struct xt_led_info` (both families). The kernel's pointer at 32
//! is never handed back.

use super::layout::{Raw, xt_struct};

/// The prefix iptables puts before `--led-trigger-id` in `id`.
pub const LED_ID_PREFIX: &str = "netfilter-";

xt_struct!(
    /// `--led-trigger-id ID [--led-delay MS|inf] [--led-always-blink]`.
    LedTarget, "xt_led_info", 40, {
    id: Raw<27> = 0,
    always_blink: u8 = 27,
    delay: u32 = 28,
});
