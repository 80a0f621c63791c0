//! The extension payload structs of the kernel's UAPI headers (`linux/netfilter/xt_*.h`,
//! `linux/netfilter/nf_nat.h`, `linux/netfilter_ipv4/nf_nat.h`'s compat range) as the target's
//! C compiler lays them out, and compile-time checks that every `mod field` offset and size
//! in this module's extension files is that layout, on whatever target is built or checked
//! (`cargo check --target i686-unknown-linux-gnu` included). None of these payloads holds a
//! u64 or a pointer, so they are the same on 64-bit and 32-bit targets; what does vary is
//! `XT_ALIGN`, checked with the entry structs in `legacy::abi`.
//!
//! The structs are never built: only their sizes and field offsets are read.

use std::mem::{offset_of, size_of};

/// `union nf_inet_addr` (16 bytes, 4-aligned).
#[repr(C)]
pub struct NfInetAddr {
    pub all: [u32; 4],
}

/// `struct nf_nat_range`.
#[repr(C)]
pub struct NfNatRange {
    pub flags: u32,
    pub min_addr: NfInetAddr,
    pub max_addr: NfInetAddr,
    pub min_proto: u16,
    pub max_proto: u16,
}

/// `struct nf_nat_range2`.
#[repr(C)]
pub struct NfNatRange2 {
    pub flags: u32,
    pub min_addr: NfInetAddr,
    pub max_addr: NfInetAddr,
    pub min_proto: u16,
    pub max_proto: u16,
    pub base_proto: u16,
}

/// `struct nf_nat_ipv4_range`.
#[repr(C)]
pub struct NfNatIpv4Range {
    pub flags: u32,
    pub min_ip: u32,
    pub max_ip: u32,
    pub min: u16,
    pub max: u16,
}

/// `struct nf_nat_ipv4_multi_range_compat`.
#[repr(C)]
pub struct NfNatIpv4MultiRangeCompat {
    pub rangesize: u32,
    pub range: [NfNatIpv4Range; 1],
}

/// `struct xt_tcp`.
#[repr(C)]
pub struct XtTcp {
    pub spts: [u16; 2],
    pub dpts: [u16; 2],
    pub option: u8,
    pub flg_mask: u8,
    pub flg_cmp: u8,
    pub invflags: u8,
}

/// `struct xt_udp`.
#[repr(C)]
pub struct XtUdp {
    pub spts: [u16; 2],
    pub dpts: [u16; 2],
    pub invflags: u8,
}

/// `struct xt_multiport_v1`.
#[repr(C)]
pub struct XtMultiportV1 {
    pub flags: u8,
    pub count: u8,
    pub ports: [u16; 15],
    pub pflags: [u8; 15],
    pub invert: u8,
}

/// `struct xt_log_info`.
#[repr(C)]
pub struct XtLogInfo {
    pub level: u8,
    pub logflags: u8,
    pub prefix: [u8; 30],
}

/// `struct xt_conntrack_mtinfo3`.
#[repr(C)]
pub struct XtConntrackMtinfo3 {
    pub origsrc_addr: NfInetAddr,
    pub origsrc_mask: NfInetAddr,
    pub origdst_addr: NfInetAddr,
    pub origdst_mask: NfInetAddr,
    pub replsrc_addr: NfInetAddr,
    pub replsrc_mask: NfInetAddr,
    pub repldst_addr: NfInetAddr,
    pub repldst_mask: NfInetAddr,
    pub expires_min: u32,
    pub expires_max: u32,
    pub l4proto: u16,
    pub origsrc_port: u16,
    pub origdst_port: u16,
    pub replsrc_port: u16,
    pub repldst_port: u16,
    pub match_flags: u16,
    pub invert_flags: u16,
    pub state_mask: u16,
    pub status_mask: u16,
    pub origsrc_port_high: u16,
    pub origdst_port_high: u16,
    pub replsrc_port_high: u16,
    pub repldst_port_high: u16,
}

/// `struct xt_comment_info`.
#[repr(C)]
pub struct XtCommentInfo {
    pub comment: [u8; super::comment::XT_MAX_COMMENT_LEN],
}

// Every check is a constant, evaluated by `cargo build` and `cargo check --target T` alike.
const _: () = {
    assert!(super::nat::field::SIZE == size_of::<NfNatRange>());
    assert!(super::nat::field::MIN_ADDR == offset_of!(NfNatRange, min_addr));
    assert!(super::nat::field::MAX_ADDR == offset_of!(NfNatRange, max_addr));
    assert!(super::nat::field::MIN_PROTO == offset_of!(NfNatRange, min_proto));
    assert!(super::nat::field::MAX_PROTO == offset_of!(NfNatRange, max_proto));
    assert!(super::nat::field::BASE_PROTO == offset_of!(NfNatRange2, base_proto));
    assert!(super::nat::field::SIZE2 == size_of::<NfNatRange2>());
    assert!(super::nat_compat::field::SIZE == size_of::<NfNatIpv4MultiRangeCompat>());
    assert!(super::tcp::field::SIZE == size_of::<XtTcp>());
    assert!(super::udp::field::SIZE == size_of::<XtUdp>());
    assert!(super::multiport::field::SIZE == size_of::<XtMultiportV1>());
    assert!(super::multiport::field::PORTS == offset_of!(XtMultiportV1, ports));
    assert!(super::multiport::field::PFLAGS == offset_of!(XtMultiportV1, pflags));
    assert!(super::multiport::field::INVERT == offset_of!(XtMultiportV1, invert));
    assert!(super::log::field::SIZE == size_of::<XtLogInfo>());
    assert!(super::log::field::PREFIX == offset_of!(XtLogInfo, prefix));
    assert!(super::conntrack::field::SIZE == size_of::<XtConntrackMtinfo3>());
    assert!(super::conntrack::field::EXPIRES_MIN == offset_of!(XtConntrackMtinfo3, expires_min));
    assert!(super::conntrack::field::L4PROTO == offset_of!(XtConntrackMtinfo3, l4proto));
    assert!(super::conntrack::field::STATE_MASK == offset_of!(XtConntrackMtinfo3, state_mask));
    assert!(
        super::conntrack::field::REPLDST_PORT_HIGH
            == offset_of!(XtConntrackMtinfo3, repldst_port_high)
    );
    assert!(size_of::<XtCommentInfo>() == super::comment::XT_MAX_COMMENT_LEN);
};
