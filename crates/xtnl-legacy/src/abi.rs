//! The x_tables UAPI structs as the C compiler of the target lays them out, so that the
//! byte offsets in `legacy::blob` and [`crate::xt`] are right on every Linux architecture,
//! 64-bit and 32-bit, and checked at compile time for whatever target is built or checked.
//!
//! Each `#[repr(C)]` struct below mirrors one struct of the kernel's UAPI headers
//! (`linux/netfilter/x_tables.h`, `linux/netfilter_ipv4/ip_tables.h`,
//! `linux/netfilter_ipv6/ip6_tables.h`, and the match/target headers), field for field, with
//! the header's types: `__u64` is `u64`, `unsigned int` is `u32`, a `__user` pointer is a raw
//! pointer, a trailing `[0]` array is a `[T; 0]`. `repr(C)` follows the target's C ABI, which
//! is what the kernel (or its 32-bit compat layer) expects from a program of that target.
//! The structs are never built: only their sizes and field offsets are read.
//!
//! What varies between targets, by the C rules (worked out by hand in [`expect`] and asserted
//! against rustc's layout):
//! - the alignment of `__u64`: 8 on x86_64, aarch64 and 32-bit Arm (EABI), but 4 on i386;
//!   it moves `ip6t_entry.counters` (152 or 148), `sizeof(ip6t_entry)` (168 or 164), and the
//!   start of the entries after a 36-byte header (`ipt_get_entries`, `xt_counters_info`: 40
//!   or 36);
//! - the size of a pointer: `ipt_replace.counters` is 8 bytes on 64-bit targets and 4 on
//!   32-bit ones, so the entries follow at 96 (64-bit, and 32-bit Arm, where the following
//!   `ipt_entry` is 8-aligned) or 92 (i386);
//! - `XT_ALIGN`, the alignment of `struct _xt_align { u8; u16; u32; u64; }`: 8, or 4 on i386.

use std::mem::{align_of, offset_of, size_of};

use super::blob;
use crate::xt;

/// `struct in_addr`.
#[repr(C)]
pub struct InAddr {
    pub s_addr: u32,
}

/// `struct in6_addr` (a union of byte, u16 and u32 arrays: 16 bytes, 4-aligned).
#[repr(C)]
pub struct In6Addr {
    pub u6_addr32: [u32; 4],
}

/// `struct xt_counters`.
#[repr(C)]
pub struct XtCounters {
    pub pcnt: u64,
    pub bcnt: u64,
}

/// `struct ipt_ip`.
#[repr(C)]
pub struct IptIp {
    pub src: InAddr,
    pub dst: InAddr,
    pub smsk: InAddr,
    pub dmsk: InAddr,
    pub iniface: [u8; 16],
    pub outiface: [u8; 16],
    pub iniface_mask: [u8; 16],
    pub outiface_mask: [u8; 16],
    pub proto: u16,
    pub flags: u8,
    pub invflags: u8,
}

/// `struct ipt_entry`.
#[repr(C)]
pub struct IptEntry {
    pub ip: IptIp,
    pub nfcache: u32,
    pub target_offset: u16,
    pub next_offset: u16,
    pub comefrom: u32,
    pub counters: XtCounters,
    pub elems: [u8; 0],
}

/// `struct ip6t_ip6`.
#[repr(C)]
pub struct Ip6tIp6 {
    pub src: In6Addr,
    pub dst: In6Addr,
    pub smsk: In6Addr,
    pub dmsk: In6Addr,
    pub iniface: [u8; 16],
    pub outiface: [u8; 16],
    pub iniface_mask: [u8; 16],
    pub outiface_mask: [u8; 16],
    pub proto: u16,
    pub tos: u8,
    pub flags: u8,
    pub invflags: u8,
}

/// `struct ip6t_entry`.
#[repr(C)]
pub struct Ip6tEntry {
    pub ipv6: Ip6tIp6,
    pub nfcache: u32,
    pub target_offset: u16,
    pub next_offset: u16,
    pub comefrom: u32,
    pub counters: XtCounters,
    pub elems: [u8; 0],
}

/// `struct ipt_getinfo` (`ip6t_getinfo` is the same).
#[repr(C)]
pub struct IptGetinfo {
    pub name: [u8; 32],
    pub valid_hooks: u32,
    pub hook_entry: [u32; 5],
    pub underflow: [u32; 5],
    pub num_entries: u32,
    pub size: u32,
}

/// `struct ipt_get_entries`.
#[repr(C)]
pub struct IptGetEntries {
    pub name: [u8; 32],
    pub size: u32,
    pub entrytable: [IptEntry; 0],
}

/// `struct ip6t_get_entries`.
#[repr(C)]
pub struct Ip6tGetEntries {
    pub name: [u8; 32],
    pub size: u32,
    pub entrytable: [Ip6tEntry; 0],
}

/// `struct ipt_replace`.
#[repr(C)]
pub struct IptReplace {
    pub name: [u8; 32],
    pub valid_hooks: u32,
    pub num_entries: u32,
    pub size: u32,
    pub hook_entry: [u32; 5],
    pub underflow: [u32; 5],
    pub num_counters: u32,
    pub counters: *mut XtCounters,
    pub entries: [IptEntry; 0],
}

/// `struct ip6t_replace`.
#[repr(C)]
pub struct Ip6tReplace {
    pub name: [u8; 32],
    pub valid_hooks: u32,
    pub num_entries: u32,
    pub size: u32,
    pub hook_entry: [u32; 5],
    pub underflow: [u32; 5],
    pub num_counters: u32,
    pub counters: *mut XtCounters,
    pub entries: [Ip6tEntry; 0],
}

/// `struct xt_counters_info`.
#[repr(C)]
pub struct XtCountersInfo {
    pub name: [u8; 32],
    pub num_counters: u32,
    pub counters: [XtCounters; 0],
}

/// The `user` view of `xt_entry_match.u` / `xt_entry_target.u`.
#[repr(C)]
pub struct XtEntryUser {
    pub size: u16,
    pub name: [u8; 29],
    pub revision: u8,
}

/// The `kernel` view: a kernel pointer after the size.
#[repr(C)]
pub struct XtEntryKernel {
    pub size: u16,
    pub ext: *mut u8,
}

/// `xt_entry_match.u` (the same union heads `xt_entry_target`).
#[repr(C)]
pub union XtEntryUnion {
    pub user: std::mem::ManuallyDrop<XtEntryUser>,
    pub kernel: std::mem::ManuallyDrop<XtEntryKernel>,
    pub size: u16,
}

/// `struct xt_entry_match` / `struct xt_entry_target`.
#[repr(C)]
pub struct XtEntryMatch {
    pub u: XtEntryUnion,
    pub data: [u8; 0],
}

/// `struct xt_standard_target`.
#[repr(C)]
pub struct XtStandardTarget {
    pub target: XtEntryMatch,
    pub verdict: i32,
}

/// `struct _xt_align`, whose alignment is `XT_ALIGN`'s.
#[repr(C)]
pub struct XtAlign {
    pub u8_: u8,
    pub u16_: u16,
    pub u32_: u32,
    pub u64_: u64,
}

/// The sizes and offsets that differ between targets, derived by hand from the C rules (see
/// the module documentation) for the ABIs xtnl is checked on. Asserted below against
/// rustc's `repr(C)` layout of the mirrors, so the hand derivation and the compiler's must
/// agree before anything builds for such a target.
pub mod expect {
    /// One ABI's values.
    pub struct Abi {
        pub xt_align: usize,
        pub get_entries_header_v4: usize,
        pub get_entries_header_v6: usize,
        pub replace_counters_ptr: (usize, usize),
        pub replace_header_v4: usize,
        pub replace_header_v6: usize,
        pub counters_info_header: usize,
        pub ip6t_entry_counters: usize,
        pub ip6t_entry_size: usize,
        pub standard_target_size: usize,
    }

    /// LP64 (x86_64, aarch64, and every 64-bit Linux target): 8-byte u64 and pointers.
    pub const LP64: Abi = Abi {
        xt_align: 8,
        get_entries_header_v4: 40,
        get_entries_header_v6: 40,
        replace_counters_ptr: (88, 8),
        replace_header_v4: 96,
        replace_header_v6: 96,
        counters_info_header: 40,
        ip6t_entry_counters: 152,
        ip6t_entry_size: 168,
        standard_target_size: 40,
    };

    /// i386 (SysV i386 psABI): 4-byte pointers, and a u64 inside a struct is 4-aligned.
    pub const I386: Abi = Abi {
        xt_align: 4,
        get_entries_header_v4: 36,
        get_entries_header_v6: 36,
        replace_counters_ptr: (88, 4),
        replace_header_v4: 92,
        replace_header_v6: 92,
        counters_info_header: 36,
        ip6t_entry_counters: 148,
        ip6t_entry_size: 164,
        standard_target_size: 36,
    };

    /// 32-bit Arm EABI (armv7 hard/soft float): 4-byte pointers, 8-aligned u64.
    pub const ARM_EABI: Abi = Abi {
        xt_align: 8,
        get_entries_header_v4: 40,
        get_entries_header_v6: 40,
        replace_counters_ptr: (88, 4),
        replace_header_v4: 96,
        replace_header_v6: 96,
        counters_info_header: 40,
        ip6t_entry_counters: 152,
        ip6t_entry_size: 168,
        standard_target_size: 36,
    };

    /// This target's expected values, where the ABI class is known.
    pub const THIS: Option<Abi> = if cfg!(target_pointer_width = "64") {
        Some(LP64)
    } else if cfg!(target_arch = "x86") {
        Some(I386)
    } else if cfg!(target_arch = "arm") {
        Some(ARM_EABI)
    } else {
        None
    };
}

/// `offsetof(struct ipt_get_entries, entrytable)` (the same for `ip6t_get_entries`).
pub const GET_ENTRIES_HEADER_V4: usize = offset_of!(IptGetEntries, entrytable);
pub const GET_ENTRIES_HEADER_V6: usize = offset_of!(Ip6tGetEntries, entrytable);
/// `offsetof(struct ipt_replace, entries)`.
pub const REPLACE_HEADER_V4: usize = offset_of!(IptReplace, entries);
pub const REPLACE_HEADER_V6: usize = offset_of!(Ip6tReplace, entries);
/// `offsetof(struct ipt_replace, num_counters)` (the same in `ip6t_replace`).
pub const REPLACE_NUM_COUNTERS_AT: usize = offset_of!(IptReplace, num_counters);
/// `offsetof(struct ipt_replace, counters)`: a user pointer of `size_of::<usize>()` bytes.
pub const REPLACE_COUNTERS_AT: usize = offset_of!(IptReplace, counters);
/// `offsetof(struct xt_counters_info, counters)`.
pub const COUNTERS_INFO_HEADER: usize = offset_of!(XtCountersInfo, counters);

// Nothing here depends on a run: every check is a constant, evaluated by `cargo build` and
// `cargo check --target T` alike.
const _: () = {
    // The two families' headers agree where the code uses one constant for both.
    assert!(REPLACE_NUM_COUNTERS_AT == offset_of!(Ip6tReplace, num_counters));
    assert!(REPLACE_COUNTERS_AT == offset_of!(Ip6tReplace, counters));
    assert!(size_of::<*mut XtCounters>() == size_of::<usize>());
    assert!(GET_ENTRIES_HEADER_V4 == GET_ENTRIES_HEADER_V6);
    assert!(REPLACE_HEADER_V4 == REPLACE_HEADER_V6);

    // blob.rs's constants.
    assert!(blob::EXT_HEADER == size_of::<XtEntryMatch>());
    assert!(blob::COUNTERS_SIZE == size_of::<XtCounters>());
    assert!(super::sockopt::GetInfo::SIZE == size_of::<IptGetinfo>());
    assert!(offset_of!(IptGetinfo, valid_hooks) == 32);
    assert!(offset_of!(IptGetinfo, hook_entry) == 36);
    assert!(offset_of!(IptGetinfo, underflow) == 56);
    assert!(offset_of!(IptGetinfo, num_entries) == 76);
    assert!(offset_of!(IptGetinfo, size) == 80);
    assert!(offset_of!(IptReplace, valid_hooks) == 32);
    assert!(offset_of!(IptReplace, num_entries) == 36);
    assert!(offset_of!(IptReplace, size) == 40);
    assert!(offset_of!(IptReplace, hook_entry) == 44);
    assert!(offset_of!(IptReplace, underflow) == 64);
    assert!(offset_of!(IptGetEntries, size) == 32);
    assert!(offset_of!(XtCountersInfo, num_counters) == 32);
    assert!(blob::TABLE_MAXNAMELEN == 32);
    assert!(blob::EXTENSION_MAXNAMELEN == 29);

    // The entry layouts blob.rs reads and writes.
    let v4 = blob::V4;
    assert!(v4.addr == size_of::<InAddr>());
    assert!(offset_of!(IptIp, iniface) == 4 * v4.addr);
    assert!(offset_of!(IptIp, proto) == v4.proto);
    assert!(offset_of!(IptIp, flags) == v4.flags);
    assert!(offset_of!(IptIp, invflags) == v4.invflags);
    assert!(offset_of!(IptEntry, nfcache) == v4.nfcache);
    assert!(offset_of!(IptEntry, target_offset) == v4.target_offset);
    assert!(offset_of!(IptEntry, next_offset) == v4.next_offset);
    assert!(offset_of!(IptEntry, comefrom) == v4.comefrom);
    assert!(offset_of!(IptEntry, counters) == v4.counters);
    assert!(size_of::<IptEntry>() == v4.size);
    assert!(offset_of!(IptEntry, elems) == v4.size);
    let v6 = blob::V6;
    assert!(v6.addr == size_of::<In6Addr>());
    assert!(offset_of!(Ip6tIp6, iniface) == 4 * v6.addr);
    assert!(offset_of!(Ip6tIp6, proto) == v6.proto);
    assert!(matches!(v6.tos, Some(t) if t == offset_of!(Ip6tIp6, tos)));
    assert!(offset_of!(Ip6tIp6, flags) == v6.flags);
    assert!(offset_of!(Ip6tIp6, invflags) == v6.invflags);
    assert!(offset_of!(Ip6tEntry, nfcache) == v6.nfcache);
    assert!(offset_of!(Ip6tEntry, target_offset) == v6.target_offset);
    assert!(offset_of!(Ip6tEntry, next_offset) == v6.next_offset);
    assert!(offset_of!(Ip6tEntry, comefrom) == v6.comefrom);
    assert!(offset_of!(Ip6tEntry, counters) == v6.counters);
    assert!(size_of::<Ip6tEntry>() == v6.size);
    // The blob is a sequence of XT_ALIGNed entries: each header keeps that alignment.
    assert!(v4.size % xt::XT_ALIGN == 0 && v6.size % xt::XT_ALIGN == 0);

    // XT_ALIGN (the extension payloads are checked in crates/xtnl-xt/src/abi.rs).
    assert!(xt::XT_ALIGN == align_of::<XtAlign>());
    assert!(xt::xt_align(size_of::<XtStandardTarget>()) == blob::EXT_HEADER + xt::xt_align(4));

    // The hand derivation of the per-target values agrees with the compiler's layout.
    if let Some(e) = expect::THIS {
        assert!(e.xt_align == align_of::<XtAlign>());
        assert!(e.get_entries_header_v4 == GET_ENTRIES_HEADER_V4);
        assert!(e.get_entries_header_v6 == GET_ENTRIES_HEADER_V6);
        assert!(e.replace_counters_ptr.0 == REPLACE_COUNTERS_AT);
        assert!(e.replace_counters_ptr.1 == size_of::<*mut XtCounters>());
        assert!(e.replace_header_v4 == REPLACE_HEADER_V4);
        assert!(e.replace_header_v6 == REPLACE_HEADER_V6);
        assert!(e.counters_info_header == COUNTERS_INFO_HEADER);
        assert!(e.ip6t_entry_counters == offset_of!(Ip6tEntry, counters));
        assert!(e.ip6t_entry_size == size_of::<Ip6tEntry>());
        assert!(e.standard_target_size == size_of::<XtStandardTarget>());
    }
};

#[cfg(test)]
mod tests {
    use super::*;

    /// The values every x86_64/aarch64 build relies on, spelled out (the const block above
    /// already refuses to build otherwise; this names them in the test report).
    #[test]
    fn this_target_matches_its_hand_derived_abi() {
        let e = expect::THIS.expect("an ABI class is known for the test machine");
        assert_eq!(e.replace_header_v4, REPLACE_HEADER_V4);
        assert_eq!(e.ip6t_entry_size, blob::V6.size);
        assert_eq!(
            e.get_entries_header_v4,
            crate::legacy::sockopt::GET_ENTRIES_HEADER
        );
        assert_eq!(e.counters_info_header, COUNTERS_INFO_HEADER);
    }
}
