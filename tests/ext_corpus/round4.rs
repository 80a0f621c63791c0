//! The corpus' fourth part (issue 13's last modules): `time`, `u32`, `ipcomp`, `cluster`,
//! `bpf`, `osf`, `eui64` crossed with every table, the `TRACE` target in the raw table's chains,
//! `DNPT`/`SNPT` in the mangle chains the kernel allows them in.
//! Written for xtnl from the iptables man pages' option lists.

use super::{ExtSpec, Hook, cross_tables, placed};

/// (match, hook, IPv4, IPv6), crossed with every table like `MATCHES`.
const MATCHES: &[(&str, Hook, bool, bool)] = &[
    (
        "-m time --timestart 08:00 --timestop 18:30",
        Hook::Any,
        true,
        true,
    ),
    (
        "-m time --weekdays Mon,Tue,Wed,Thu,Fri --kerneltz",
        Hook::Any,
        true,
        true,
    ),
    ("-m time ! --weekdays Sat,Sun --utc", Hook::In, true, true),
    (
        "-m time --monthdays 1,15,31 --datestart 2024-02-29T12:00",
        Hook::Out,
        true,
        true,
    ),
    ("-m time ! --monthdays 11,12,13", Hook::Any, true, false),
    (
        "-m time --timestart 22:00 --timestop 06:00:30 --contiguous",
        Hook::Any,
        true,
        true,
    ),
    (
        "-m time --datestart 2001-02-03T04:05:06 --datestop 2037-12-31",
        Hook::In,
        true,
        true,
    ),
    ("-m time --datestop 2038-06", Hook::Out, false, true),
    ("-m time", Hook::Any, true, false),
    ("-m u32 --u32 \"0x0=0x0&&0x0=0x1\"", Hook::Any, true, true),
    (
        "-p tcp -m u32 ! --u32 \"0>>22&0x3C@12>>26&0x3C@0=0x47455420\"",
        Hook::In,
        true,
        false,
    ),
    (
        "-m u32 --u32 \"6 & 0xFF = 1 , 2:010 && 4@8 >> 16 = 0x50:0x60,7\"",
        Hook::Out,
        true,
        true,
    ),
    ("-p ipcomp -m ipcomp --ipcompspi 18", Hook::Any, true, true),
    (
        "-p ipcomp -m ipcomp ! --ipcompspi 0x10:0x20 --compres",
        Hook::In,
        true,
        true,
    ),
    ("-p ipcomp -m ipcomp", Hook::Out, true, false),
    (
        "-m cluster --cluster-total-nodes 2 --cluster-local-node 2 --cluster-hash-seed 0xfeedcafe",
        Hook::Any,
        true,
        true,
    ),
    (
        "-m cluster --cluster-total-nodes 8 ! --cluster-local-nodemask 0x13 --cluster-hash-seed 7",
        Hook::In,
        true,
        true,
    ),
    (
        "-m bpf --bytecode \"4,48 0 0 9,21 0 1 6,6 0 0 1,6 0 0 0\"",
        Hook::Any,
        true,
        true,
    ),
    (
        "-p udp -m bpf --bytecode \"2,32 0 0 0,6 0 0 4294967295\"",
        Hook::Out,
        true,
        false,
    ),
    (
        "-p tcp -m osf --genre Linux --ttl 0 --log 0",
        Hook::In,
        true,
        false,
    ),
    (
        "-p tcp -m osf ! --genre Windows --ttl 2",
        Hook::In,
        true,
        false,
    ),
    ("-s fe80::/64 -m eui64", Hook::In, false, true),
    ("-m eui64 -m mark --mark 0x2", Hook::In, false, true),
];

/// (target, table, chain, IPv4, IPv6), like `TARGETS`.
const TARGETS: &[(&str, &str, &str, bool, bool)] = &[
    ("-j TRACE", "raw", "PREROUTING", true, true),
    (
        "-j DNPT --src-pfx 2001:db8:1::/48 --dst-pfx 2001:db8:2::/48",
        "mangle",
        "PREROUTING",
        false,
        true,
    ),
    (
        "-d 2001:db8:3::/64 -j DNPT --src-pfx 2001:db8:3::/ffff:ffff:ffff:ffff:: --dst-pfx fd00::/64",
        "mangle",
        "OUTPUT",
        false,
        true,
    ),
    (
        "-j SNPT --src-pfx fd00:1::/64 --dst-pfx 2001:db8:4::/64",
        "mangle",
        "POSTROUTING",
        false,
        true,
    ),
    (
        "-s fd00:2::/56 -j SNPT --src-pfx fd00:2::/56 --dst-pfx 2001:db8:5::/56",
        "mangle",
        "INPUT",
        false,
        true,
    ),
    ("-p tcp --dport 22 -j TRACE", "raw", "OUTPUT", true, true),
    (
        "-m comment --comment \"trace me\" -j TRACE",
        "raw",
        "PREROUTING",
        true,
        false,
    ),
];

/// The specs of this part.
pub(super) fn specs() -> Vec<ExtSpec> {
    let mut out = Vec::new();
    cross_tables(&mut out, MATCHES, |_, table| match table {
        "filter" => "-j ACCEPT",
        "nat" => "-j RETURN",
        "mangle" => "-j MARK --set-mark 0x4",
        _ => "-j DROP",
    });
    placed(&mut out, TARGETS);
    out
}
