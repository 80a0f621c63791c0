//! The netlink structs of the kernel's UAPI headers (`linux/netlink.h`,
//! `linux/netfilter/nfnetlink.h`) as the target's C compiler lays them out, and compile-time
//! checks that the `mod field` offsets of [`super::netlink`] and [`super::attr`] are that
//! layout on whatever target is built or checked (64-bit and 32-bit alike: netlink headers
//! hold only u8/u16/u32/i32 fields, so they never vary, and these checks would catch a
//! mistake that made them).
//!
//! The structs are never built: only their sizes and field offsets are read.

use std::mem::{align_of, offset_of, size_of};

/// `struct nlmsghdr`.
#[repr(C)]
pub struct NlMsgHdr {
    pub nlmsg_len: u32,
    pub nlmsg_type: u16,
    pub nlmsg_flags: u16,
    pub nlmsg_seq: u32,
    pub nlmsg_pid: u32,
}

/// `struct nlmsgerr`.
#[repr(C)]
pub struct NlMsgErr {
    pub error: i32,
    pub msg: NlMsgHdr,
}

/// `struct nlattr`.
#[repr(C)]
pub struct NlAttr {
    pub nla_len: u16,
    pub nla_type: u16,
}

/// `struct nfgenmsg`.
#[repr(C)]
pub struct NfGenMsg {
    pub nfgen_family: u8,
    pub version: u8,
    pub res_id: u16,
}

/// `struct sockaddr_nl`.
#[repr(C)]
pub struct SockaddrNl {
    pub nl_family: u16,
    pub nl_pad: u16,
    pub nl_pid: u32,
    pub nl_groups: u32,
}

const _: () = {
    use super::{attr, netlink};
    assert!(netlink::field::HEADER_LEN == size_of::<NlMsgHdr>());
    assert!(netlink::field::LEN.start == offset_of!(NlMsgHdr, nlmsg_len));
    assert!(netlink::field::TYPE.start == offset_of!(NlMsgHdr, nlmsg_type));
    assert!(netlink::field::FLAGS.start == offset_of!(NlMsgHdr, nlmsg_flags));
    assert!(netlink::field::SEQ.start == offset_of!(NlMsgHdr, nlmsg_seq));
    assert!(netlink::field::PID.start == offset_of!(NlMsgHdr, nlmsg_pid));
    assert!(netlink::field::PID.end == size_of::<NlMsgHdr>());
    assert!(netlink::field::ERR_CODE.start == offset_of!(NlMsgErr, error));
    assert!(netlink::field::ERR_REQ == offset_of!(NlMsgErr, msg));
    // NLMSG_ALIGNTO and NLA_ALIGNTO are 4: every header is a multiple of it.
    assert!(align_of::<NlMsgHdr>() == 4 && size_of::<NlMsgHdr>() % 4 == 0);
    assert!(attr::field::HEADER_LEN == size_of::<NlAttr>());
    assert!(attr::field::LEN.start == offset_of!(NlAttr, nla_len));
    assert!(attr::field::TYPE.start == offset_of!(NlAttr, nla_type));
    assert!(attr::align4(size_of::<NlAttr>()) == size_of::<NlAttr>());
    assert!(size_of::<NfGenMsg>() == 4 && offset_of!(NfGenMsg, res_id) == 2);
    assert!(size_of::<SockaddrNl>() == 12);
};
