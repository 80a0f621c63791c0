//! Payload bytes of the registry's modules, as iptables 1.8.9 writes them (the layouts and
//! values were checked against iptables-nft and iptables-legacy: their `-C` compares these
//! bytes, and tests/ext_diff.rs runs it on every module), and the `-S` words back.

use super::*;
use crate::ipt::parse::{Command, parse, split_words};

fn rule(line: &str, family: Family) -> IptRule {
    let words = split_words(line).unwrap();
    match parse(&words, family).unwrap().command {
        Command::Append { rule, .. } => rule,
        other => panic!("{other:?}"),
    }
}

fn match_bytes(line: &str) -> Vec<u8> {
    match rule(line, Family::Ipv4).matches.pop() {
        Some(crate::ipt::IptMatch::Ext(x)) => x.info,
        other => panic!("{line}: {other:?}"),
    }
}

fn target_bytes(line: &str) -> (String, u32, Vec<u8>) {
    match rule(line, Family::Ipv4).target {
        Some(crate::ipt::IptTarget::Ext(x)) => (x.name, x.rev, x.info),
        other => panic!("{line}: {other:?}"),
    }
}

fn spec(line: &str, family: Family) -> String {
    crate::ipt::print::rule_spec(&rule(line, family))
}

#[test]
fn mark_and_mark_target_bytes() {
    let b = match_bytes("-A INPUT -m mark ! --mark 0x10/0xf0");
    let mut want = vec![0u8; 16];
    want[0..4].copy_from_slice(&0x10u32.to_ne_bytes());
    want[4..8].copy_from_slice(&0xf0u32.to_ne_bytes());
    want[8] = 1;
    assert_eq!(b, want);
    // --set-mark v is --set-xmark v/0xffffffff; --or-mark v is v/v; --and-mark v is 0/~v.
    for (opt, mark, mask) in [
        ("--set-mark 5", 5u32, u32::MAX),
        ("--or-mark 0x4000", 0x4000, 0x4000),
        ("--and-mark 0xff", 0, !0xff),
        ("--xor-mark 2", 2, 0),
    ] {
        let (name, rev, b) = target_bytes(&format!("-A INPUT -j MARK {opt}"));
        assert_eq!((name.as_str(), rev), ("MARK", 2));
        let mut want = mark.to_ne_bytes().to_vec();
        want.extend(mask.to_ne_bytes());
        assert_eq!(b, want, "{opt}");
    }
}

#[test]
fn statistic_probability_and_nth() {
    let b = match_bytes("-A INPUT -m statistic --mode random --probability 0.5");
    assert_eq!(b.len(), 24);
    assert_eq!(&b[0..4], &[0, 0, 0, 0]);
    assert_eq!(&b[4..8], &0x4000_0000u32.to_ne_bytes());
    let b = match_bytes("-A INPUT -m statistic --mode nth --every 3 --packet 1");
    assert_eq!(&b[0..2], &1u16.to_ne_bytes());
    // every is stored minus one; count is every - packet.
    assert_eq!(&b[4..16], &[2u32, 1, 1].map(u32::to_ne_bytes).concat()[..]);
    assert_eq!(
        spec(
            "-A X -m statistic --mode random --probability 0.25",
            Family::Ipv4
        ),
        " -m statistic --mode random --probability 0.25000000000"
    );
}

#[test]
fn recent_keeps_the_tail_of_the_default_name() {
    let b = match_bytes("-A INPUT -m recent --set --name SSH");
    assert_eq!(&b[10..18], b"SSH\0ULT\0");
    assert_eq!(b[8], 2, "XT_RECENT_SET");
    assert_eq!(&b[212..228], &[0xff; 16]);
}

#[test]
fn conntrack_host_mask_fills_the_union() {
    let b = match_bytes("-A INPUT -m conntrack --ctorigsrc 192.0.2.1 --ctstate NEW");
    assert_eq!(&b[0..4], &[192, 0, 2, 1]);
    assert_eq!(&b[16..32], &[0xff; 16]);
    let b = match_bytes("-A INPUT -m conntrack --ctorigsrc 192.0.2.0/24");
    assert_eq!(
        &b[16..32],
        &[0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    );
}

#[test]
fn nat_flags_and_revisions() {
    let (name, rev, b) = target_bytes("-A X -j MASQUERADE --random-fully");
    assert_eq!((name.as_str(), rev, b.len()), ("MASQUERADE", 0, 24));
    assert_eq!(&b[0..4], &1u32.to_ne_bytes(), "rangesize");
    assert_eq!(
        &b[4..8],
        &0x10u32.to_ne_bytes(),
        "NF_NAT_RANGE_PROTO_RANDOM_FULLY"
    );
    let (_, rev, b) = target_bytes("-A X -j SNAT --to-source 192.0.2.1 --persistent");
    assert_eq!((rev, b.len()), (0, 24));
    assert_eq!(&b[4..8], &(1u32 | 8).to_ne_bytes());
    let (_, rev, b) = target_bytes("-A X -p tcp -j DNAT --to-destination 192.0.2.1:80 --random");
    assert_eq!((rev, b.len()), (2, 48));
    assert_eq!(&b[0..4], &(1u32 | 2 | 4).to_ne_bytes());
}

#[test]
fn notrack_is_ct_with_the_alias_flag() {
    let (name, rev, b) = target_bytes("-A X -j NOTRACK");
    assert_eq!((name.as_str(), rev, b.len()), ("CT", 2, 72));
    assert_eq!(&b[0..2], &3u16.to_ne_bytes());
    assert_eq!(spec("-A X -j NOTRACK", Family::Ipv4), " -j NOTRACK");
    assert_eq!(
        spec("-A X -j CT --notrack", Family::Ipv4),
        " -j CT --notrack"
    );
}

#[test]
fn save_words_follow_iptables() {
    for (line, fam, want) in [
        (
            "-A X -p tcp --syn --dport 22",
            Family::Ipv4,
            " -p tcp -m tcp --dport 22 --tcp-flags FIN,SYN,RST,ACK SYN",
        ),
        (
            "-A X -m addrtype --dst-type loc",
            Family::Ipv4,
            " -m addrtype --dst-type LOCAL",
        ),
        (
            "-A X -m limit --limit 5/minute",
            Family::Ipv4,
            " -m limit --limit 5/min",
        ),
        (
            "-A X -p icmp --icmp-type ping",
            Family::Ipv4,
            " -p icmp -m icmp --icmp-type 8",
        ),
        (
            "-A X -p ipv6-icmp --icmpv6-type neighbor-solicitation",
            Family::Ipv6,
            " -p ipv6-icmp -m icmp6 --icmpv6-type 135",
        ),
        (
            "-A X -m conntrack --ctstate NEW --ctproto tcp",
            Family::Ipv4,
            " -m conntrack --ctstate NEW --ctproto 6",
        ),
        (
            "-A X -m conntrack --ctstate NEW",
            Family::Ipv4,
            " -m conntrack --ctstate NEW",
        ),
        (
            "-A X -j CONNMARK --restore-mark",
            Family::Ipv4,
            " -j CONNMARK --restore-mark --nfmask 0xffffffff --ctmask 0xffffffff",
        ),
        (
            "-A X -m tos --tos Minimize-Delay",
            Family::Ipv4,
            " -m tos --tos 0x10/0x3f",
        ),
        (
            "-A X -m dscp --dscp-class EF",
            Family::Ipv4,
            " -m dscp --dscp 0x2e",
        ),
        (
            "-A X -m ttl ! --ttl-eq 5",
            Family::Ipv4,
            " -m ttl ! --ttl-eq 5",
        ),
    ] {
        assert_eq!(spec(line, fam), want, "{line}");
    }
    // A pure --ctstate stays the typed variant, as decoding gives it.
    assert!(matches!(
        rule("-A X -m conntrack --ctstate NEW", Family::Ipv4).matches[0],
        crate::ipt::IptMatch::Conntrack(_)
    ));
}

#[test]
fn every_registry_decoder_survives_any_bytes() {
    for e in REGISTRY {
        for len in [0usize, 1, 2, 4, 8, 16, 24, 40, 48, 72, 80, 168, 232, 300] {
            for fill in [0u8, 0xff, 0x41] {
                let info = vec![fill; len];
                for fam in [Family::Ipv4, Family::Ipv6] {
                    if let Some(c) = e.canonical(&info) {
                        assert_eq!(c.len(), len, "{}", e.name());
                        let _ = e.save(&c, fam, &mut String::new());
                    }
                    let _ = decode(e.wire_name(), e.revision(), &info, e.is_target(), fam);
                }
            }
        }
    }
}

#[test]
fn tee_and_tproxy_refuse_what_iptables_would_cut_or_misread() {
    let refused = |line: &str, family: Family| {
        let words = split_words(line).unwrap();
        parse(&words, family).is_err()
    };
    // iptables cuts an --oif of 16 characters or more; xtnl says so instead.
    assert!(refused(
        "-A PREROUTING -j TEE --gateway 192.0.2.1 --oif a-name-far-too-long",
        Family::Ipv4
    ));
    assert!(!refused(
        "-A PREROUTING -j TEE --gateway 192.0.2.1 --oif fifteen-chars-x",
        Family::Ipv4
    ));
    // An address of the other family is no address of this one.
    assert!(refused(
        "-A PREROUTING -j TEE --gateway 2001:db8::1",
        Family::Ipv4
    ));
    assert!(refused(
        "-A PREROUTING -p tcp -j TPROXY --on-port 1 --on-ip 192.0.2.1",
        Family::Ipv6
    ));
    let (name, rev, b) = target_bytes(
        "-A PREROUTING -p tcp -j TPROXY --on-port 80 --on-ip 192.0.2.7 --tproxy-mark 0x1/0x3",
    );
    assert_eq!((name.as_str(), rev, b.len()), ("TPROXY", 1, 32));
    assert_eq!(&b[0..8], &[3, 0, 0, 0, 1, 0, 0, 0]);
    assert_eq!(&b[8..12], &[192, 0, 2, 7]);
    assert_eq!(&b[24..26], &80u16.to_be_bytes());
}

#[test]
fn registry_target_names() {
    let mut have = known_names(true);
    have.sort_unstable();
    have.dedup();
    assert_eq!(have, TARGET_NAMES);
}
