//! One-field and two-field payloads: `ttl`/`hl` (match and target), `dscp`, `tos`,
//! `helper`, `CLASSIFY`, `DSCP`, `TOS`, `AUDIT`, `cpu`, `realm`, `devgroup`, `connbytes`,
//! `quota`, `esp`/`ah`, `rpfilter`.

use super::layout::{Raw, xt_struct};

xt_struct!(
    /// `-m ttl` (`ipt_ttl_info`) and `-m hl` (`ip6t_hl_info`): mode eq/ne/lt/gt.
    TtlMatch, "ipt_ttl_info", 2, {
    mode: u8 = 0,
    value: u8 = 1,
});

xt_struct!(
    /// `-j TTL` / `-j HL`: mode set/inc/dec.
    TtlTarget, "ipt_TTL_info", 2, {
    mode: u8 = 0,
    value: u8 = 1,
});

xt_struct!(
    /// `-m dscp` (`xt_dscp_info`).
    DscpMatch, "xt_dscp_info", 2, {
    dscp: u8 = 0,
    invert: u8 = 1,
});

xt_struct!(
    /// `-j DSCP` (`xt_DSCP_info`).
    DscpTarget, "xt_DSCP_info", 1, {
    dscp: u8 = 0,
});

xt_struct!(
    /// `-m tos` rev 1 (`xt_tos_match_info`).
    TosMatch, "xt_tos_match_info", 3, {
    tos_mask: u8 = 0,
    tos_value: u8 = 1,
    invert: u8 = 2,
});

xt_struct!(
    /// `-j TOS` rev 1 (`xt_tos_target_info`).
    TosTarget, "xt_tos_target_info", 2, {
    tos_value: u8 = 0,
    tos_mask: u8 = 1,
});

xt_struct!(
    /// `-m helper` (`xt_helper_info`).
    Helper, "xt_helper_info", 36, {
    invert: i32 = 0,
    name: Raw<30> = 4,
});

xt_struct!(
    /// `-j CLASSIFY` (`xt_classify_target_info`).
    Classify, "xt_classify_target_info", 4, {
    priority: u32 = 0,
});

xt_struct!(
    /// `-j AUDIT` (`xt_audit_info`).
    Audit, "xt_audit_info", 1, {
    kind: u8 = 0,
});

xt_struct!(
    /// `-m cpu` (`xt_cpu_info`).
    Cpu, "xt_cpu_info", 8, {
    cpu: u32 = 0,
    invert: u32 = 4,
});

xt_struct!(
    /// `-m realm` (`xt_realm_info`).
    Realm, "xt_realm_info", 12, {
    id: u32 = 0,
    mask: u32 = 4,
    invert: u8 = 8,
});

xt_struct!(
    /// `-m devgroup` (`xt_devgroup_info`).
    Devgroup, "xt_devgroup_info", 20, {
    flags: u32 = 0,
    src_group: u32 = 4,
    src_mask: u32 = 8,
    dst_group: u32 = 12,
    dst_mask: u32 = 16,
});

xt_struct!(
    /// `-m esp` (`xt_esp`) and `-m ah` (`ipt_ah`): an SPI range.
    Spi, "xt_esp", 12, {
    spi_min: u32 = 0,
    spi_max: u32 = 4,
    invflags: u8 = 8,
});

xt_struct!(
    /// `-m rpfilter` (`xt_rpfilter_info`).
    Rpfilter, "xt_rpfilter_info", 1, {
    flags: u8 = 0,
});

xt_struct!(
    /// `-m quota` (`xt_quota_info`; the `master` pointer is private).
    Quota, "xt_quota_info", 24, {
    flags: u32 = 0,
    quota: u64 = 8,
});

xt_struct!(
    /// `-m connbytes` (`xt_connbytes_info`).
    Connbytes, "xt_connbytes_info", 18, {
    from: u64 = 0,
    to: u64 = 8,
    what: u8 = 16,
    direction: u8 = 17,
});

xt_struct!(
    /// `-m ecn` (`xt_ecn_info`): `XT_ECN_OP_MATCH_*` operations and inversions, the IP
    /// ECT value; `proto.tcp.ect` is unused by iptables.
    Ecn, "xt_ecn_info", 4, {
    operation: u8 = 0,
    invert: u8 = 1,
    ip_ect: u8 = 2,
    tcp_ect: u8 = 3,
});

xt_struct!(
    /// `-m socket` revision 3 (`xt_socket_mtinfo3`): `XT_SOCKET_*` flags.
    Socket, "xt_socket_mtinfo3", 1, {
    flags: u8 = 0,
});

xt_struct!(
    /// `-m cgroup` revision 2 (`xt_cgroup_info_v2`): a cgroup v2 path or a net_cls class
    /// id in one union, then the kernel's private pointer at 520 (never handed back).
    CgroupV2, "xt_cgroup_info_v2", 528, {
    has_path: u8 = 0,
    has_classid: u8 = 1,
    invert_path: u8 = 2,
    invert_classid: u8 = 3,
    /// `path[512]`, or `classid` in its first four bytes.
    path: Raw<512> = 4,
});
