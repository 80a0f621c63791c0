//! The `-S` words of `-m ipvs`, which this kernel cannot load (no `xt_ipvs`): iptables-nft
//! writes exactly these payloads (compared byte for byte with what it sends, captured with
//! strace, for each of iptables' own test lines: see docs/extensions.md), and these are the
//! words libxt_ipvs's `save` prints for them.

use super::*;
use crate::ipt::parse::{Command, parse, split_words};

fn spec(line: &str, family: Family) -> String {
    let words = split_words(line).unwrap();
    match parse(&words, family).unwrap().command {
        Command::Append { rule, .. } => crate::ipt::print::rule_spec(&rule),
        other => panic!("{other:?}"),
    }
}

fn refused(line: &str, family: Family) -> bool {
    parse(&split_words(line).unwrap(), family).is_err()
}

#[test]
fn ipvs_words() {
    for (given, want) in [
        ("--ipvs", "--ipvs"),
        ("! --ipvs", "! --ipvs"),
        ("--ipvs --vproto udp", "--vproto 17"),
        ("! --vproto TCP", "! --vproto 6"),
        ("--vaddr 192.0.2.1", "--vaddr 192.0.2.1"),
        ("! --vaddr 192.0.2.1/255.255.0.0", "! --vaddr 192.0.2.1/16"),
        ("--vport http", "--vport 80"),
        ("! --vportctl 21", "! --vportctl 21"),
        ("--vdir reply", "--vdir REPLY"),
        ("! --vmethod gate", "! --vmethod GATE"),
        (
            "--vmethod MASQ --vdir ORIGINAL --vport 22 --vaddr 192.0.2.0/24 --vproto 6",
            "--vproto 6 --vaddr 192.0.2.0/24 --vport 22 --vdir ORIGINAL --vmethod MASQ",
        ),
    ] {
        assert_eq!(
            spec(&format!("-A X -m ipvs {given}"), Family::Ipv4),
            format!(" -m ipvs {want}"),
            "{given}"
        );
    }
    assert_eq!(
        spec(
            "-A X -m ipvs ! --vaddr 2001:db8::/ffff:ffff::",
            Family::Ipv6
        ),
        " -m ipvs ! --vaddr 2001:db8::/32"
    );
    for bad in [
        "-A X -m ipvs",
        "-A X -m ipvs ! --ipvs --vport 1",
        "-A X -m ipvs --vdir SIDEWAYS",
        "-A X -m ipvs --vmethod TUN",
        "-A X -m ipvs --vport 1:2",
        "-A X -m ipvs --vaddr 192.0.2.1/255.0.255.0",
        "-A X -m ipvs ! --vdir REPLY",
    ] {
        assert!(refused(bad, Family::Ipv4), "{bad}");
    }
}
