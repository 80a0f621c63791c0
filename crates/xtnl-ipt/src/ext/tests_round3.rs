//! Payload bytes of SYNPROXY, HMARK, ipv6header, rt, connlabel and policy as iptables
//! 1.8.9 writes them (checked against iptables-nft and iptables-legacy, whose `-C` compares
//! these bytes: see tests/ext_diff.rs and tests/ext_connlabel.rs), and the `-S` words back.

use super::*;
use crate::ipt::parse::{Command, parse, split_words};

fn rule(line: &str, family: Family) -> IptRule {
    let words = split_words(line).unwrap();
    match parse(&words, family).unwrap().command {
        Command::Append { rule, .. } => rule,
        other => panic!("{other:?}"),
    }
}

fn target(line: &str, family: Family) -> (String, u32, Vec<u8>) {
    match rule(line, family).target {
        Some(crate::ipt::IptTarget::Ext(x)) => (x.name, x.rev, x.info),
        other => panic!("{line}: {other:?}"),
    }
}

fn spec(line: &str, family: Family) -> String {
    crate::ipt::print::rule_spec(&rule(line, family))
}

fn refused(line: &str, family: Family) -> String {
    let words = split_words(line).unwrap();
    match parse(&words, family) {
        Ok(p) => panic!("{line}: accepted as {:?}", p.command),
        Err(e) => e.to_string(),
    }
}

#[test]
fn synproxy_bytes_and_words() {
    let line = "-A X -p tcp -j SYNPROXY --mss 1460 --wscale 9 --timestamp --sack-perm";
    let (name, rev, b) = target(line, Family::Ipv4);
    assert_eq!((name.as_str(), rev), ("SYNPROXY", 0));
    let mut want = vec![0x0f, 9];
    want.extend(1460u16.to_ne_bytes());
    want.extend([0; 4]);
    assert_eq!(b, want);
    // iptables' order, whatever the order given.
    assert_eq!(
        spec(line, Family::Ipv4),
        " -p tcp -j SYNPROXY --sack-perm --timestamp --wscale 9 --mss 1460"
    );
    // iptables keeps the low bits of a value that does not fit; xtnl refuses it.
    assert!(refused("-A X -p tcp -j SYNPROXY --wscale 256", Family::Ipv4).contains("256"));
    assert!(refused("-A X -p tcp -j SYNPROXY --mss 65536", Family::Ipv4).contains("65536"));
}

#[test]
fn hmark_bytes_and_words() {
    let (name, rev, b) = target(
        "-A X -j HMARK --hmark-tuple src,sport --hmark-rnd 0xcafe --hmark-mod 10 --hmark-offset 3",
        Family::Ipv4,
    );
    assert_eq!((name.as_str(), rev, b.len()), ("HMARK", 0, 64));
    // `--hmark-tuple src` fills the whole address union, IPv4 included.
    assert_eq!(&b[0..16], &[0xff; 16]);
    assert_eq!(&b[16..32], &[0; 16]);
    assert_eq!(&b[32..36], &[0xff, 0xff, 0, 0]);
    let flags: u32 = 1 | 1 << 6 | 1 << 9 | 1 << 10 | 1 << 11;
    assert_eq!(&b[40..44], &flags.to_ne_bytes());
    assert_eq!(&b[48..52], &0xcafeu32.to_ne_bytes());
    assert_eq!(&b[52..56], &10u32.to_ne_bytes());
    assert_eq!(&b[56..60], &3u32.to_ne_bytes());
    assert_eq!(
        spec(
            "-A X -j HMARK --hmark-tuple ct,src --hmark-sport 80 --hmark-rnd 4 --hmark-mod 42",
            Family::Ipv4
        ),
        " -j HMARK --hmark-src-prefix 32 --hmark-sport 0x0050 --hmark-rnd 0x00000004 --hmark-mod 42 --hmark-tuple ct"
    );
    // A prefix length, or a contiguous mask in address form.
    let by_len = target(
        "-A X -j HMARK --hmark-dst-prefix 48 --hmark-rnd 1 --hmark-mod 2",
        Family::Ipv6,
    );
    let by_mask = target(
        "-A X -j HMARK --hmark-dst-prefix ffff:ffff:ffff:: --hmark-rnd 1 --hmark-mod 2",
        Family::Ipv6,
    );
    assert_eq!(by_len, by_mask);
    assert_eq!(
        &by_len.2[16..24],
        &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0]
    );
    assert!(
        refused(
            "-A X -j HMARK --hmark-src-prefix 255.0.255.0 --hmark-rnd 1 --hmark-mod 2",
            Family::Ipv4
        )
        .contains("holes")
    );
}

fn match6(line: &str) -> (String, u32, Vec<u8>) {
    match rule(line, Family::Ipv6).matches.pop() {
        Some(crate::ipt::IptMatch::Ext(x)) => (x.name, x.rev, x.info),
        other => panic!("{line}: {other:?}"),
    }
}

#[test]
fn ipv6header_bytes_and_words() {
    let (name, rev, b) = match6("-A X -m ipv6header ! --header hop,dst,prot --soft");
    assert_eq!((name.as_str(), rev), ("ipv6header", 0));
    assert_eq!(b, [0xc1, 0xff, 0xff, 0, 0, 0, 0, 0]);
    // Numbers and iptables' short names read as the headers they name.
    assert_eq!(
        match6("-A X -m ipv6header --header 43,44,51,50,59").2,
        match6("-A X -m ipv6header --header route,frag,auth,esp,none").2
    );
    // Printed in iptables' bit order, hop-by-hop by iptables' own name.
    let s = spec("-A X -m ipv6header --header frag,hop", Family::Ipv6);
    assert!(s.starts_with(" -m ipv6header --header hop-by-hop,"), "{s}");
    assert!(refused("-A X -m ipv6header --header tcp", Family::Ipv6).contains("`6'"));
    assert!(refused("-A X -m ipv6header --header hop", Family::Ipv4).contains("ipv6header"));
}

#[test]
fn rt_bytes_and_words() {
    let (name, rev, b) = match6(
        "-A X -m rt --rt-type 0 ! --rt-segsleft 1:23 --rt-0-addrs 2001:db8::1,::2 --rt-0-not-strict",
    );
    assert_eq!((name.as_str(), rev, b.len()), ("rt", 0, 280));
    assert_eq!(&b[0..12], &[0u32, 1, 23].map(u32::to_ne_bytes).concat()[..]);
    assert_eq!((b[16], b[17]), (0x01 | 0x02 | 0x10 | 0x20, 0x02));
    // The addresses start at 20 (`struct in6_addr` is 4-aligned), the count at 276.
    assert_eq!(&b[20..22], &[0x20, 0x01]);
    assert_eq!(b[35], 1);
    assert_eq!(b[51], 2);
    assert_eq!(b[276], 2);
    // No options: segments left 0:4294967295, nothing printed.
    let (_, _, b) = match6("-A X -m rt");
    assert_eq!(&b[4..12], &[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
    assert_eq!(spec("-A X -m rt", Family::Ipv6), " -m rt");
    assert_eq!(
        spec(
            "-A X -m rt --rt-len 8 --rt-segsleft 4 ! --rt-type 1",
            Family::Ipv6
        ),
        " -m rt ! --rt-type 1 --rt-segsleft 4 --rt-len 8"
    );
}

#[test]
fn connlabel_bytes_words_and_label_map() {
    let b = match rule("-A X -m connlabel ! --label 0x29 --set", Family::Ipv4)
        .matches
        .pop()
    {
        Some(crate::ipt::IptMatch::Ext(x)) => x.info,
        other => panic!("{other:?}"),
    };
    let mut want = 41u16.to_ne_bytes().to_vec();
    want.extend(3u16.to_ne_bytes());
    want.extend([0; 4]);
    assert_eq!(b, want);
    // iptables prints the bit in double quotes (no label map on the build host).
    assert_eq!(
        spec("-A X -m connlabel ! --label 41 --set", Family::Ipv4),
        " -m connlabel ! --label \"41\" --set"
    );
    let map = super::connlabel::parse_map(
        "# labels\n0 eth0-in\n 1\tbulk traffic \n200 too-high\nx bad\n",
    );
    assert_eq!(
        map,
        vec![(0, "eth0-in".to_string()), (1, "bulk traffic".to_string())]
    );
    assert_eq!(
        super::connlabel::label_bit("bulk traffic", &map).unwrap(),
        1
    );
    assert_eq!(super::connlabel::label_bit("0x7f", &map).unwrap(), 127);
    assert!(super::connlabel::label_bit("128", &map).is_err());
    assert!(super::connlabel::label_bit("nope", &map).is_err());
}

#[test]
fn policy_bytes_and_words() {
    let line = "-A X -m policy --dir in --pol ipsec --strict --reqid 1 --spi 0x1 --proto esp --mode tunnel --tunnel-dst 10.0.0.0/8 --tunnel-src 10.0.0.1 --next ! --reqid 2";
    let b = match rule(line, Family::Ipv4).matches.pop() {
        Some(crate::ipt::IptMatch::Ext(x)) => x.info,
        other => panic!("{other:?}"),
    };
    assert_eq!(b.len(), 312);
    // Element 0: a host without a prefix has an all-ones mask over the whole union.
    assert_eq!(&b[0..4], &[10, 0, 0, 1]);
    assert_eq!(&b[16..32], &[0xff; 16]);
    assert_eq!(&b[32..36], &[10, 0, 0, 0]);
    assert_eq!(&b[48..52], &[0xff, 0, 0, 0]);
    assert_eq!(&b[64..72], &[1u32, 1].map(u32::to_ne_bytes).concat()[..]);
    assert_eq!(&b[72..76], &[50, 1, 0x3f, 0]);
    // Element 1 at 76: reqid 2, inverted.
    assert_eq!(&b[144..148], &2u32.to_ne_bytes());
    assert_eq!(&b[150..152], &[0x20, 0x20]);
    // Flags IN | STRICT, two elements.
    assert_eq!(&b[304..308], &[9u16, 2].map(u16::to_ne_bytes).concat()[..]);
    assert_eq!(
        spec(line, Family::Ipv4),
        " -m policy --dir in --pol ipsec --strict --reqid 1 --spi 0x1 --proto esp --mode tunnel --tunnel-dst 10.0.0.0/8 --tunnel-src 10.0.0.1 --next ! --reqid 2"
    );
    assert_eq!(
        spec("-A X -m policy --dir out --pol none", Family::Ipv6),
        " -m policy --dir out --pol none"
    );
}
