//! `-m rt` revision 0 (IPv6 only): `struct ip6t_rt`.

use super::layout::{Raw, xt_struct};

xt_struct!(
    /// Routing type, segments-left range, header length, `IP6T_RT_*` flags and
    /// inversions, then up to 16 type-0 addresses (`struct in6_addr`, 4-aligned: at 20, not
    /// 18) and their count; 280 bytes with the tail padding.
    RtMatch, "ip6t_rt", 280, {
    rt_type: u32 = 0,
    segs_min: u32 = 4,
    segs_max: u32 = 8,
    hdrlen: u32 = 12,
    flags: u8 = 16,
    invflags: u8 = 17,
    addrs: Raw<256> = 20,
    addrnr: u8 = 276,
});

impl RtMatch {
    /// `IP6T_RT_TYP`: `--rt-type` given.
    pub const TYP: u8 = 0x01;
    /// `IP6T_RT_SGS`: `--rt-segsleft` given.
    pub const SGS: u8 = 0x02;
    /// `IP6T_RT_LEN`: `--rt-len` given.
    pub const LEN: u8 = 0x04;
    /// `IP6T_RT_RES`: `--rt-0-res` (the reserved field must be zero).
    pub const RES: u8 = 0x08;
    /// `IP6T_RT_FST`: `--rt-0-addrs` given (strict: exactly these addresses).
    pub const FST: u8 = 0x10;
    /// `IP6T_RT_FST_NSTRICT`: `--rt-0-not-strict` (the addresses in order, others allowed).
    pub const FST_NSTRICT: u8 = 0x20;
    /// `IP6T_RT_INV_TYP` (in `invflags`): `! --rt-type`.
    pub const INV_TYP: u8 = 0x01;
    /// `IP6T_RT_INV_SGS` (in `invflags`): `! --rt-segsleft`.
    pub const INV_SGS: u8 = 0x02;
    /// `IP6T_RT_INV_LEN` (in `invflags`): `! --rt-len`.
    pub const INV_LEN: u8 = 0x04;
    /// `IP6T_RT_HOPS`.
    pub const HOPS: usize = 16;
}
