//! The corpus' third part: the targets SYNPROXY and HMARK, in every table (and a
//! chain of each hook) they are valid in, and the matches ipv6header, rt (IPv6) and policy,
//! crossed with every table. Written for xtnl from the iptables man pages' option lists.

use super::{ExtSpec, Hook, cross_tables, placed};

/// (match, hook, IPv4, IPv6), crossed with every table like `MATCHES`.
const MATCHES: &[(&str, Hook, bool, bool)] = &[
    ("-m ipv6header --header hop-by-hop", Hook::Any, false, true),
    (
        "-m ipv6header ! --header dst,route,frag,auth,esp,none,prot --soft",
        Hook::Any,
        false,
        true,
    ),
    (
        "-m ipv6header --header ipv6-frag,ah --soft",
        Hook::In,
        false,
        true,
    ),
    ("-m ipv6header ! --header 59", Hook::Out, false, true),
    (
        "-m rt --rt-type 0 --rt-segsleft 1:23 --rt-len 42 --rt-0-res",
        Hook::Any,
        false,
        true,
    ),
    (
        "-m rt ! --rt-type 2 ! --rt-segsleft 0:4 ! --rt-len 2",
        Hook::Any,
        false,
        true,
    ),
    (
        "-m rt --rt-type 0 --rt-0-addrs 2001:db8::1,2001:db8::2 --rt-0-not-strict",
        Hook::In,
        false,
        true,
    ),
    ("-m rt --rt-segsleft 3:", Hook::Out, false, true),
    ("-m policy --dir in --pol ipsec", Hook::In, true, true),
    ("-m policy --dir out --pol none", Hook::Out, true, true),
    (
        "-m policy --dir in --pol ipsec --strict --reqid 1 --spi 0x1 --proto esp --mode tunnel --tunnel-dst 10.0.0.0/8 --tunnel-src 10.0.0.1 --next --reqid 2",
        Hook::In,
        true,
        false,
    ),
    (
        "-m policy --dir out --pol ipsec --strict ! --spi 0x12c --proto ah --mode tunnel ! --tunnel-src 2001:db8::/32 --next --proto ipcomp",
        Hook::Out,
        false,
        true,
    ),
    (
        "-m policy --dir out --pol ipsec ! --proto esp ! --reqid 7",
        Hook::Out,
        true,
        true,
    ),
];

/// (target, table, chain, IPv4, IPv6), like `TARGETS`.
const TARGETS: &[(&str, &str, &str, bool, bool)] = &[
    (
        "-p tcp -m tcp --dport 80 -m conntrack --ctstate INVALID,UNTRACKED -j SYNPROXY --sack-perm --timestamp --wscale 7 --mss 1460",
        "filter",
        "INPUT",
        true,
        true,
    ),
    (
        "-p tcp -j SYNPROXY --mss 1440 --ecn",
        "filter",
        "FORWARD",
        true,
        true,
    ),
    ("-p tcp -j SYNPROXY", "filter", "INPUT", true, false),
    (
        "-p tcp -j SYNPROXY --timestamp --wscale 0",
        "mangle",
        "INPUT",
        true,
        true,
    ),
    (
        "-p tcp -j SYNPROXY --sack-perm --mss 536",
        "mangle",
        "FORWARD",
        true,
        false,
    ),
    (
        "-j HMARK --hmark-src-prefix 32 --hmark-rnd 0x00000004 --hmark-mod 42",
        "filter",
        "INPUT",
        true,
        false,
    ),
    (
        "-j HMARK --hmark-src-prefix 64 --hmark-dst-prefix 48 --hmark-rnd 0xdeadbeef --hmark-mod 8 --hmark-offset 100",
        "filter",
        "FORWARD",
        false,
        true,
    ),
    (
        "-j HMARK --hmark-tuple src,dst,sport,dport,proto --hmark-rnd 0xcafe --hmark-mod 10 --hmark-offset 100",
        "mangle",
        "PREROUTING",
        true,
        true,
    ),
    (
        "-j HMARK --hmark-tuple ct,src,dst --hmark-rnd 1 --hmark-mod 4",
        "mangle",
        "FORWARD",
        true,
        true,
    ),
    (
        "-j HMARK --hmark-dst-prefix 24 --hmark-spi-mask 0xffff0000 --hmark-spi 0x10 --hmark-rnd 3 --hmark-mod 2",
        "mangle",
        "OUTPUT",
        true,
        false,
    ),
    (
        "-j HMARK --hmark-sport-mask 0x00ff --hmark-dport-mask 0xff00 --hmark-sport 1 --hmark-dport 2 --hmark-proto-mask 0x06 --hmark-rnd 9 --hmark-mod 1000",
        "nat",
        "PREROUTING",
        true,
        true,
    ),
    (
        "-j HMARK --hmark-tuple spi --hmark-rnd 0x5 --hmark-mod 16 --hmark-offset 0x10",
        "nat",
        "POSTROUTING",
        true,
        true,
    ),
    (
        "-j HMARK --hmark-src-prefix 0 --hmark-dst-prefix 128 --hmark-rnd 2 --hmark-mod 5 --hmark-tuple ct",
        "raw",
        "PREROUTING",
        false,
        true,
    ),
    (
        "-j HMARK --hmark-tuple dport --hmark-rnd 2 --hmark-mod 5",
        "raw",
        "OUTPUT",
        true,
        false,
    ),
];

/// The specs of this part.
pub(super) fn specs() -> Vec<ExtSpec> {
    let mut out = Vec::new();
    cross_tables(&mut out, MATCHES, |_, table| match table {
        "filter" => "-j DROP",
        "nat" => "-j RETURN",
        "mangle" => "-j MARK --set-mark 0x3",
        _ => "-j ACCEPT",
    });
    placed(&mut out, TARGETS);
    out
}
