//! `-m osf` rev 0 (`struct xt_osf_info`, include/uapi/linux/netfilter/xt_osf.h): the genre
//! (`char[32]`) and its length, the flags, the log level and the TTL mode. 48 bytes.

use super::layout::{Raw, xt_struct};

xt_struct!(
    /// The genre's bytes after its NUL are zeros in what iptables writes.
    Osf, "xt_osf_info", 48, {
    genre: Raw<32> = 0,
    len: u32 = 32,
    flags: u32 = 36,
    loglevel: u32 = 40,
    ttl: u32 = 44,
});

/// `XT_OSF_TTL`: `--ttl` given.
pub const XT_OSF_TTL: u32 = 1 << 1;
/// `XT_OSF_LOG`: `--log` given.
pub const XT_OSF_LOG: u32 = 1 << 2;
/// `XT_OSF_INVERT`: `! --genre`.
pub const XT_OSF_INVERT: u32 = 1 << 3;
