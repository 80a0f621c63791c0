//! `-j TEE` revision 1: `struct xt_tee_tginfo` (both families).

use super::layout::{Raw, xt_struct};

xt_struct!(
    /// `--gateway` (`union nf_inet_addr`; an IPv4 address in its first four bytes) and
    /// `--oif` (`char[16]`); the kernel's `priv` pointer at 32 is never handed back.
    TeeTarget, "xt_tee_tginfo", 40, {
    gw: Raw<16> = 0,
    oif: Raw<16> = 16,
});
