//! `nft` as the oracle for the native codec.
//!
//! Every case pairs a model [`Rule`] with the same rule in nft syntax. xtnl writes the model
//! rule into chain `a`, `nft add rule` writes the text into chain `b` (same table, same chain
//! setup), and then:
//! 1. `nft list chain` prints both chains alike (only the chain name in the header differs):
//!    nft reads xtnl's bytes as exactly the rule its own syntax means;
//! 2. `nft --debug=netlink list chain` shows the same expressions (and userdata) for both;
//! 3. xtnl decodes the rule nft wrote into a rule equal to the model rule, and expressible;
//! 4. xtnl decodes its own rule back into the model rule.
//!
//! Nothing is compared with expected output written down here: nft decides.
//!
//! A second test checks rules that nft writes and the model does not express: they list,
//! are flagged, keep their neighbours intact, and are never re-encoded.

mod common;

use common::{in_netns, nft_ruleset, run, run_ok};
use xtnl::ErrorKind;
use xtnl::model::{
    Action, CtStateSet, Dir, Family, Interface, IpNet, L4Proto, Match, NatTarget, PortRange,
    RejectKind, Rule,
};
use xtnl::model::{BaseChain, ChainPolicy, ChainType, Hook};
use xtnl::nft::{ChainRef, ChainSpec, ListedRule, Session, TableRef, Transaction};

/// The table of each family the corpus works in.
const TABLE: &str = "oracle";
/// Regular chains jump and goto rules target (they must exist).
const TARGETS: [&str; 2] = ["target", "vcld-5205"];

fn session() -> Session {
    Session::builder()
        .lock_mode(xtnl::lock::LockMode::Never)
        .open()
        .expect("open netlink session")
}

// ---- model shorthands ----

fn net(s: &str) -> IpNet {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}
fn ports(s: &str) -> PortRange {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}
fn ifc(s: &str) -> Interface {
    Interface::new(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}
fn proto(p: L4Proto) -> Match {
    Match::Protocol {
        proto: p,
        negated: false,
    }
}
fn port_set(dir: Dir, list: &[&str], negated: bool) -> Match {
    Match::PortSet {
        dir,
        ports: list.iter().map(|p| ports(p)).collect(),
        negated,
    }
}
fn ct(states: u32, negated: bool) -> Match {
    Match::CtState {
        states: CtStateSet(states),
        negated,
    }
}
fn src(s: &str) -> Match {
    Match::Address {
        dir: Dir::Source,
        net: net(s),
        negated: false,
    }
}
fn dst(s: &str) -> Match {
    Match::Address {
        dir: Dir::Destination,
        net: net(s),
        negated: false,
    }
}
fn sport(s: &str) -> Match {
    Match::Port {
        dir: Dir::Source,
        ports: ports(s),
        negated: false,
    }
}
fn dport(s: &str) -> Match {
    Match::Port {
        dir: Dir::Destination,
        ports: ports(s),
        negated: false,
    }
}
fn iif(s: &str) -> Match {
    Match::InInterface {
        name: ifc(s),
        negated: false,
    }
}
fn oif(s: &str) -> Match {
    Match::OutInterface {
        name: ifc(s),
        negated: false,
    }
}
/// The same match, negated.
fn not(m: Match) -> Match {
    match m {
        Match::Protocol { proto, .. } => Match::Protocol {
            proto,
            negated: true,
        },
        Match::Address { dir, net, .. } => Match::Address {
            dir,
            net,
            negated: true,
        },
        Match::Port { dir, ports, .. } => Match::Port {
            dir,
            ports,
            negated: true,
        },
        Match::InInterface { name, .. } => Match::InInterface {
            name,
            negated: true,
        },
        Match::OutInterface { name, .. } => Match::OutInterface {
            name,
            negated: true,
        },
        Match::CtState { states, .. } => Match::CtState {
            states,
            negated: true,
        },
        Match::PortSet { dir, ports, .. } => Match::PortSet {
            dir,
            ports,
            negated: true,
        },
        Match::Opaque(o) => Match::Opaque(o),
    }
}
fn to(addr: &str, p: Option<&str>) -> NatTarget {
    NatTarget {
        addr: addr.parse().unwrap_or_else(|e| panic!("{addr}: {e}")),
        ports: p.map(ports),
    }
}
fn rule(matches: Vec<Match>) -> Rule {
    matches.into_iter().fold(Rule::new(), Rule::with)
}
fn jump(c: &str) -> Action {
    Action::Jump(c.into())
}

// ---- chain setups ----

fn nat_prerouting() -> Option<BaseChain> {
    Some(BaseChain {
        chain_type: ChainType::Nat,
        hook: Hook::Prerouting,
        priority: -100,
        policy: ChainPolicy::Accept,
    })
}
fn nat_postrouting() -> Option<BaseChain> {
    Some(BaseChain {
        chain_type: ChainType::Nat,
        hook: Hook::Postrouting,
        priority: 100,
        policy: ChainPolicy::Accept,
    })
}
fn filter_input() -> Option<BaseChain> {
    Some(BaseChain {
        chain_type: ChainType::Filter,
        hook: Hook::Input,
        priority: 0,
        policy: ChainPolicy::Accept,
    })
}

struct Case {
    name: &'static str,
    family: Family,
    /// Both chains `a` and `b` are created like this: regular (`None`) or a base chain.
    base: Option<BaseChain>,
    /// The rule as `nft add rule` input.
    nft: String,
    rule: Rule,
}

fn case(
    name: &'static str,
    family: Family,
    base: Option<BaseChain>,
    nft: impl Into<String>,
    rule: Rule,
) -> Case {
    Case {
        name,
        family,
        base,
        nft: nft.into(),
        rule,
    }
}

/// 128 characters: the longest comment `nft` accepts.
fn longest_nft_comment() -> String {
    (0..128u8).map(|i| char::from(b'a' + i % 26)).collect()
}

fn corpus() -> Vec<Case> {
    use Family::{Inet, Ipv4 as Ip, Ipv6 as Ip6};
    use L4Proto::{Icmp, Icmpv6, Other, Tcp, Udp};
    let long = longest_nft_comment();
    vec![
        // -- connection state, reject, log, redirect (native forms for tables of our own) --
        case(
            "ct state established,related",
            Ip,
            None,
            "ct state established,related accept",
            rule(vec![ct(
                CtStateSet::ESTABLISHED | CtStateSet::RELATED,
                false,
            )])
            .action(Action::Accept),
        ),
        case(
            "ct state != invalid (one state: a value compare)",
            Ip,
            None,
            "ct state != invalid drop",
            rule(vec![ct(CtStateSet::INVALID, true)]).action(Action::Drop),
        ),
        case(
            "ct state ! established,related (none of them: a mask compared with zero)",
            Inet,
            None,
            "ct state ! established,related drop",
            rule(vec![ct(
                CtStateSet::ESTABLISHED | CtStateSet::RELATED,
                true,
            )])
            .action(Action::Drop),
        ),
        case(
            "ct state new,untracked counter",
            Ip6,
            None,
            "ct state new,untracked counter",
            rule(vec![ct(CtStateSet::NEW | CtStateSet::UNTRACKED, false)]).counted(),
        ),
        case(
            "reject (ip)",
            Ip,
            None,
            "reject",
            rule(vec![]).action(Action::Reject(RejectKind::Icmp(3))),
        ),
        case(
            "reject with icmp host-prohibited",
            Ip,
            None,
            "reject with icmp type host-prohibited",
            rule(vec![]).action(Action::Reject(RejectKind::Icmp(10))),
        ),
        case(
            "reject with tcp reset",
            Ip,
            None,
            "meta l4proto tcp reject with tcp reset",
            rule(vec![proto(Tcp)]).action(Action::Reject(RejectKind::TcpReset)),
        ),
        case(
            "reject (ip6)",
            Ip6,
            None,
            "reject",
            rule(vec![]).action(Action::Reject(RejectKind::Icmpv6(4))),
        ),
        case(
            "reject with icmpv6 admin-prohibited",
            Ip6,
            None,
            "reject with icmpv6 type admin-prohibited",
            rule(vec![]).action(Action::Reject(RejectKind::Icmpv6(1))),
        ),
        case(
            "reject (inet: icmpx)",
            Inet,
            None,
            "reject",
            rule(vec![]).action(Action::Reject(RejectKind::Icmpx(1))),
        ),
        case(
            "reject with icmpx host-unreachable",
            Inet,
            None,
            "reject with icmpx type host-unreachable",
            rule(vec![]).action(Action::Reject(RejectKind::Icmpx(2))),
        ),
        case(
            "log with a prefix",
            Ip,
            None,
            "log prefix \"x: \"",
            rule(vec![]).action(Action::Log {
                prefix: Some("x: ".into()),
                level: 4,
            }),
        ),
        case(
            "log with a prefix and a level",
            Ip,
            None,
            "tcp dport 22 counter log prefix \"ssh \" level info",
            rule(vec![proto(Tcp), dport("22")])
                .counted()
                .action(Action::Log {
                    prefix: Some("ssh ".into()),
                    level: 6,
                }),
        ),
        case(
            "log alone",
            Ip6,
            None,
            "log",
            rule(vec![]).action(Action::Log {
                prefix: None,
                level: 4,
            }),
        ),
        case(
            "redirect",
            Ip,
            None,
            "redirect",
            rule(vec![]).action(Action::Redirect { ports: None }),
        ),
        case(
            "redirect to a port",
            Ip,
            None,
            "tcp dport 80 redirect to :8080",
            rule(vec![proto(Tcp), dport("80")]).action(Action::Redirect {
                ports: Some(ports("8080")),
            }),
        ),
        case(
            "redirect to a port range",
            Ip6,
            None,
            "meta l4proto udp redirect to :1000-2000",
            rule(vec![proto(Udp)]).action(Action::Redirect {
                ports: Some(ports("1000-2000")),
            }),
        ),
        case(
            "tcp dport in a set of ports and a range (an interval set)",
            Ip,
            None,
            "tcp dport { 80, 443, 1000-2000 } accept",
            rule(vec![
                proto(Tcp),
                port_set(Dir::Destination, &["80", "443", "1000-2000"], false),
            ])
            .action(Action::Accept),
        ),
        case(
            "udp sport not in a set",
            Ip6,
            None,
            "udp sport != { 53, 5353 } drop",
            rule(vec![
                proto(Udp),
                port_set(Dir::Source, &["53", "5353"], true),
            ])
            .action(Action::Drop),
        ),
        case(
            "tcp dport in a set of single ports",
            Inet,
            None,
            "tcp dport { 22, 80 } counter accept",
            rule(vec![
                proto(Tcp),
                port_set(Dir::Destination, &["22", "80"], false),
            ])
            .counted()
            .action(Action::Accept),
        ),
        case(
            "ranges up to the top port",
            Ip,
            None,
            "tcp dport { 1-5, 7-9, 65000-65535 } accept",
            rule(vec![
                proto(Tcp),
                port_set(Dir::Destination, &["1-5", "7-9", "65000-65535"], false),
            ])
            .action(Action::Accept),
        ),
        // -- protocols --
        case(
            "tcp",
            Ip,
            None,
            "meta l4proto tcp accept",
            rule(vec![proto(Tcp)]).action(Action::Accept),
        ),
        case(
            "udp",
            Ip,
            None,
            "meta l4proto udp drop",
            rule(vec![proto(Udp)]).action(Action::Drop),
        ),
        case(
            "icmp",
            Ip,
            None,
            "meta l4proto icmp accept",
            rule(vec![proto(Icmp)]).action(Action::Accept),
        ),
        case(
            "icmpv6",
            Ip6,
            None,
            "meta l4proto icmpv6 accept",
            rule(vec![proto(Icmpv6)]).action(Action::Accept),
        ),
        case(
            "protocol by number (gre)",
            Ip,
            None,
            "meta l4proto 47 accept",
            rule(vec![proto(Other(47))]).action(Action::Accept),
        ),
        case(
            "negated protocol",
            Ip,
            None,
            "meta l4proto != tcp drop",
            rule(vec![not(proto(Tcp))]).action(Action::Drop),
        ),
        case(
            "negated protocol, inet",
            Inet,
            None,
            "meta l4proto != udp accept",
            rule(vec![not(proto(Udp))]).action(Action::Accept),
        ),
        // -- IPv4 addresses --
        case(
            "ipv4 source host",
            Ip,
            None,
            "ip saddr 192.0.2.1 accept",
            rule(vec![src("192.0.2.1")]).action(Action::Accept),
        ),
        case(
            "ipv4 destination host",
            Ip,
            None,
            "ip daddr 198.51.100.7 drop",
            rule(vec![dst("198.51.100.7")]).action(Action::Drop),
        ),
        case(
            "ipv4 source /8",
            Ip,
            None,
            "ip saddr 127.0.0.0/8 accept",
            rule(vec![src("127.0.0.0/8")]).action(Action::Accept),
        ),
        case(
            "ipv4 destination /16",
            Ip,
            None,
            "ip daddr 127.1.0.0/16 accept",
            rule(vec![dst("127.1.0.0/16")]).action(Action::Accept),
        ),
        case(
            "ipv4 source /24",
            Ip,
            None,
            "ip saddr 192.0.2.0/24 accept",
            rule(vec![src("192.0.2.0/24")]).action(Action::Accept),
        ),
        case(
            "ipv4 source /0",
            Ip,
            None,
            "ip saddr 0.0.0.0/0 accept",
            rule(vec![src("0.0.0.0/0")]).action(Action::Accept),
        ),
        case(
            "ipv4 source != /0 (matches nothing)",
            Ip,
            None,
            "ip saddr != 0.0.0.0/0 drop",
            rule(vec![not(src("0.0.0.0/0"))]).action(Action::Drop),
        ),
        case(
            "inet ipv4 destination /0",
            Inet,
            None,
            "ip daddr 0.0.0.0/0 accept",
            rule(vec![dst("0.0.0.0/0")]).action(Action::Accept),
        ),
        case(
            "inet ipv6 destination != ::/0",
            Inet,
            None,
            "ip6 daddr != ::/0 drop",
            rule(vec![not(dst("::/0"))]).action(Action::Drop),
        ),
        case(
            "ipv4 source /20 (not byte aligned)",
            Ip,
            None,
            "ip saddr 127.16.0.0/20 accept",
            rule(vec![src("127.16.0.0/20")]).action(Action::Accept),
        ),
        case(
            "ipv4 destination /27 (not byte aligned)",
            Ip,
            None,
            "ip daddr 198.51.100.32/27 drop",
            rule(vec![dst("198.51.100.32/27")]).action(Action::Drop),
        ),
        case(
            "negated ipv4 source host",
            Ip,
            None,
            "ip saddr != 192.0.2.1 drop",
            rule(vec![not(src("192.0.2.1"))]).action(Action::Drop),
        ),
        case(
            "negated ipv4 destination /24",
            Ip,
            None,
            "ip daddr != 203.0.113.0/24 drop",
            rule(vec![not(dst("203.0.113.0/24"))]).action(Action::Drop),
        ),
        case(
            "negated ipv4 source /27",
            Ip,
            None,
            "ip saddr != 198.51.100.64/27 drop",
            rule(vec![not(src("198.51.100.64/27"))]).action(Action::Drop),
        ),
        case(
            "ipv4 source and destination",
            Ip,
            None,
            "ip saddr 192.0.2.0/24 ip daddr 198.51.100.9 accept",
            rule(vec![src("192.0.2.0/24"), dst("198.51.100.9")]).action(Action::Accept),
        ),
        // -- IPv6 addresses --
        case(
            "ipv6 source host",
            Ip6,
            None,
            "ip6 saddr 2001:db8::1 accept",
            rule(vec![src("2001:db8::1")]).action(Action::Accept),
        ),
        case(
            "ipv6 destination loopback host",
            Ip6,
            None,
            "ip6 daddr ::1 accept",
            rule(vec![dst("::1")]).action(Action::Accept),
        ),
        case(
            "ipv6 source /32",
            Ip6,
            None,
            "ip6 saddr 2001:db8::/32 accept",
            rule(vec![src("2001:db8::/32")]).action(Action::Accept),
        ),
        case(
            "ipv6 destination /64",
            Ip6,
            None,
            "ip6 daddr 2001:db8:1:2::/64 drop",
            rule(vec![dst("2001:db8:1:2::/64")]).action(Action::Drop),
        ),
        case(
            "ipv6 source /127 (not byte aligned)",
            Ip6,
            None,
            "ip6 saddr 2001:db8::/127 accept",
            rule(vec![src("2001:db8::/127")]).action(Action::Accept),
        ),
        case(
            "negated ipv6 destination /64",
            Ip6,
            None,
            "ip6 daddr != 2001:db8:1:2::/64 drop",
            rule(vec![not(dst("2001:db8:1:2::/64"))]).action(Action::Drop),
        ),
        case(
            "negated ipv6 source /127",
            Ip6,
            None,
            "ip6 saddr != 2001:db8::2/127 drop",
            rule(vec![not(src("2001:db8::2/127"))]).action(Action::Drop),
        ),
        // -- inet: addresses carry the nfproto dependency --
        case(
            "inet ipv4 source host",
            Inet,
            None,
            "ip saddr 192.0.2.1 accept",
            rule(vec![src("192.0.2.1")]).action(Action::Accept),
        ),
        case(
            "inet ipv4 source and destination (one dependency)",
            Inet,
            None,
            "ip saddr 192.0.2.0/24 ip daddr != 198.51.100.32/27 drop",
            rule(vec![src("192.0.2.0/24"), not(dst("198.51.100.32/27"))]).action(Action::Drop),
        ),
        case(
            "inet ipv6 destination /64",
            Inet,
            None,
            "ip6 daddr 2001:db8:1:2::/64 accept",
            rule(vec![dst("2001:db8:1:2::/64")]).action(Action::Accept),
        ),
        case(
            "inet negated ipv6 source /127",
            Inet,
            None,
            "ip6 saddr != 2001:db8::/127 drop",
            rule(vec![not(src("2001:db8::/127"))]).action(Action::Drop),
        ),
        // -- ports --
        case(
            "tcp destination port",
            Ip,
            None,
            "tcp dport 22 accept",
            rule(vec![proto(Tcp), dport("22")]).action(Action::Accept),
        ),
        case(
            "tcp source port",
            Ip6,
            None,
            "tcp sport 80 accept",
            rule(vec![proto(Tcp), sport("80")]).action(Action::Accept),
        ),
        case(
            "udp destination port range",
            Ip,
            None,
            "udp dport 1000-2000 accept",
            rule(vec![proto(Udp), dport("1000-2000")]).action(Action::Accept),
        ),
        case(
            "udp source port range",
            Inet,
            None,
            "udp sport 1024-65535 accept",
            rule(vec![proto(Udp), sport("1024-65535")]).action(Action::Accept),
        ),
        case(
            "negated tcp destination port",
            Ip,
            None,
            "tcp dport != 22 drop",
            rule(vec![proto(Tcp), not(dport("22"))]).action(Action::Drop),
        ),
        case(
            "negated tcp destination port range",
            Ip,
            None,
            "tcp dport != 1000-2000 drop",
            rule(vec![proto(Tcp), not(dport("1000-2000"))]).action(Action::Drop),
        ),
        case(
            "negated udp source port range",
            Ip6,
            None,
            "udp sport != 1-1023 drop",
            rule(vec![proto(Udp), not(sport("1-1023"))]).action(Action::Drop),
        ),
        case(
            "tcp source range and destination port",
            Ip,
            None,
            "tcp sport 1024-65535 tcp dport 443 accept",
            rule(vec![proto(Tcp), sport("1024-65535"), dport("443")]).action(Action::Accept),
        ),
        // -- interfaces --
        case(
            "input interface",
            Ip,
            None,
            "iifname \"eth0\" accept",
            rule(vec![iif("eth0")]).action(Action::Accept),
        ),
        case(
            "input interface wildcard",
            Ip,
            None,
            "iifname \"eth*\" accept",
            rule(vec![iif("eth+")]).action(Action::Accept),
        ),
        case(
            "negated input interface",
            Ip6,
            None,
            "iifname != \"lo\" drop",
            rule(vec![not(iif("lo"))]).action(Action::Drop),
        ),
        case(
            "negated input interface wildcard",
            Inet,
            None,
            "iifname != \"veth*\" drop",
            rule(vec![not(iif("veth+"))]).action(Action::Drop),
        ),
        case(
            "output interface",
            Ip,
            None,
            "oifname \"wg0\" accept",
            rule(vec![oif("wg0")]).action(Action::Accept),
        ),
        case(
            "output interface wildcard",
            Ip6,
            None,
            "oifname \"br-*\" accept",
            rule(vec![oif("br-+")]).action(Action::Accept),
        ),
        case(
            "negated output interface",
            Ip,
            None,
            "oifname != \"eth1\" drop",
            rule(vec![not(oif("eth1"))]).action(Action::Drop),
        ),
        case(
            "negated output interface wildcard",
            Ip,
            None,
            "oifname != \"veth*\" drop",
            rule(vec![not(oif("veth+"))]).action(Action::Drop),
        ),
        case(
            "15-byte interface name",
            Ip,
            None,
            "iifname \"abcdefghijklmno\" accept",
            rule(vec![iif("abcdefghijklmno")]).action(Action::Accept),
        ),
        // -- counter, comment, no action --
        case("counter only", Ip, None, "counter", Rule::new().counted()),
        case(
            "match only",
            Ip,
            None,
            "ip saddr 192.0.2.1",
            rule(vec![src("192.0.2.1")]),
        ),
        case(
            "counter and accept",
            Ip,
            None,
            "counter accept",
            Rule::new().counted().action(Action::Accept),
        ),
        case(
            "counter and comment",
            Ip,
            None,
            "counter comment \"just a note\"",
            Rule::new().counted().comment("just a note"),
        ),
        case(
            "comment with punctuation",
            Inet,
            None,
            "accept comment \"a:b/c --> d; #e {f} 'g' =h\"",
            Rule::new()
                .action(Action::Accept)
                .comment("a:b/c --> d; #e {f} 'g' =h"),
        ),
        case(
            "utf-8 comment",
            Ip6,
            None,
            "drop comment \"café → ü\"",
            Rule::new().action(Action::Drop).comment("café → ü"),
        ),
        case(
            "longest comment nft accepts",
            Ip,
            None,
            format!("counter accept comment \"{long}\""),
            Rule::new()
                .counted()
                .action(Action::Accept)
                .comment(long.clone()),
        ),
        // -- verdicts --
        case(
            "return",
            Ip,
            None,
            "tcp dport 22 return",
            rule(vec![proto(Tcp), dport("22")]).action(Action::Return),
        ),
        case(
            "jump",
            Ip,
            None,
            "jump target",
            Rule::new().action(jump("target")),
        ),
        case(
            "goto",
            Ip6,
            None,
            "ip6 saddr 2001:db8::/32 goto target",
            rule(vec![src("2001:db8::/32")]).action(Action::Goto("target".into())),
        ),
        case(
            "goto, inet",
            Inet,
            None,
            "ip saddr 192.0.2.1 udp sport 53 counter goto target",
            rule(vec![src("192.0.2.1"), proto(Udp), sport("53")])
                .counted()
                .action(Action::Goto("target".into())),
        ),
        case(
            "accept in a filter base chain",
            Ip,
            filter_input(),
            "iifname \"lo\" counter accept comment \"loopback\"",
            rule(vec![iif("lo")])
                .counted()
                .action(Action::Accept)
                .comment("loopback"),
        ),
        // -- NAT-host workload --
        case(
            "workload dnat (regular chain)",
            Ip,
            None,
            "iifname \"eth1\" tcp dport 50443 counter dnat to 192.0.2.3:3389 \
             comment \"VCL: forward eth1:tcp/50443 --> 192.0.2.3:3389\"",
            rule(vec![iif("eth1"), proto(Tcp), dport("50443")])
                .counted()
                .action(Action::Dnat(to("192.0.2.3", Some("3389"))))
                .comment("VCL: forward eth1:tcp/50443 --> 192.0.2.3:3389"),
        ),
        case(
            "workload dnat (nat prerouting chain)",
            Ip,
            nat_prerouting(),
            "iifname \"eth1\" tcp dport 50022 counter dnat to 192.0.2.3:22 \
             comment \"VCL: forward eth1:tcp/50022 --> 192.0.2.3:22\"",
            rule(vec![iif("eth1"), proto(Tcp), dport("50022")])
                .counted()
                .action(Action::Dnat(to("192.0.2.3", Some("22"))))
                .comment("VCL: forward eth1:tcp/50022 --> 192.0.2.3:22"),
        ),
        case(
            "workload jump with comment (nat prerouting chain)",
            Ip,
            nat_prerouting(),
            "counter jump vcld-5205 comment \
             \"VCL: jump from nat table PREROUTING chain to reservation NAT chain vcld-5205\"",
            Rule::new().counted().action(jump("vcld-5205")).comment(
                "VCL: jump from nat table PREROUTING chain to reservation NAT chain vcld-5205",
            ),
        ),
        // -- NAT, ip --
        case(
            "dnat to address",
            Ip,
            nat_prerouting(),
            "ip daddr 203.0.113.10 dnat to 192.0.2.3",
            rule(vec![dst("203.0.113.10")]).action(Action::Dnat(to("192.0.2.3", None))),
        ),
        case(
            "dnat to address:port",
            Ip,
            nat_prerouting(),
            "meta l4proto tcp dnat to 192.0.2.3:80",
            rule(vec![proto(Tcp)]).action(Action::Dnat(to("192.0.2.3", Some("80")))),
        ),
        case(
            "dnat to address:port-port",
            Ip,
            None,
            "udp dport 5000-5010 dnat to 192.0.2.3:6000-6010",
            rule(vec![proto(Udp), dport("5000-5010")])
                .action(Action::Dnat(to("192.0.2.3", Some("6000-6010")))),
        ),
        case(
            "snat to address",
            Ip,
            nat_postrouting(),
            "oifname \"eth0\" ip saddr 192.0.2.0/24 snat to 203.0.113.1",
            rule(vec![oif("eth0"), src("192.0.2.0/24")])
                .action(Action::Snat(to("203.0.113.1", None))),
        ),
        case(
            "snat to address:port",
            Ip,
            nat_postrouting(),
            "meta l4proto udp snat to 203.0.113.1:4500",
            rule(vec![proto(Udp)]).action(Action::Snat(to("203.0.113.1", Some("4500")))),
        ),
        case(
            "snat to address:port-port",
            Ip,
            None,
            "meta l4proto tcp counter snat to 203.0.113.1:1024-2048",
            rule(vec![proto(Tcp)])
                .counted()
                .action(Action::Snat(to("203.0.113.1", Some("1024-2048")))),
        ),
        case(
            "masquerade",
            Ip,
            nat_postrouting(),
            "oifname \"eth0\" masquerade",
            rule(vec![oif("eth0")]).action(Action::Masquerade { ports: None }),
        ),
        case(
            "masquerade to ports",
            Ip,
            nat_postrouting(),
            "meta l4proto tcp masquerade to :1024-2048",
            rule(vec![proto(Tcp)]).action(Action::Masquerade {
                ports: Some(ports("1024-2048")),
            }),
        ),
        // -- NAT, ip6 --
        case(
            "ip6 dnat to address",
            Ip6,
            nat_prerouting(),
            "ip6 daddr 2001:db8:ffff::1 dnat to 2001:db8::2",
            rule(vec![dst("2001:db8:ffff::1")]).action(Action::Dnat(to("2001:db8::2", None))),
        ),
        case(
            "ip6 dnat to address:port",
            Ip6,
            nat_prerouting(),
            "tcp dport 8080 dnat to [2001:db8::2]:80",
            rule(vec![proto(Tcp), dport("8080")])
                .action(Action::Dnat(to("2001:db8::2", Some("80")))),
        ),
        case(
            "ip6 dnat to address:port-port",
            Ip6,
            None,
            "meta l4proto udp dnat to [2001:db8::2]:8000-8010",
            rule(vec![proto(Udp)]).action(Action::Dnat(to("2001:db8::2", Some("8000-8010")))),
        ),
        case(
            "ip6 snat to address",
            Ip6,
            nat_postrouting(),
            "snat to 2001:db8::1",
            Rule::new().action(Action::Snat(to("2001:db8::1", None))),
        ),
        case(
            "ip6 snat to address:port-port",
            Ip6,
            nat_postrouting(),
            "meta l4proto tcp snat to [2001:db8::1]:1024-2048",
            rule(vec![proto(Tcp)]).action(Action::Snat(to("2001:db8::1", Some("1024-2048")))),
        ),
        case(
            "ip6 masquerade",
            Ip6,
            nat_postrouting(),
            "masquerade",
            Rule::new().action(Action::Masquerade { ports: None }),
        ),
        case(
            "ip6 masquerade to ports",
            Ip6,
            None,
            "meta l4proto udp counter masquerade to :3000-4000",
            rule(vec![proto(Udp)]).counted().action(Action::Masquerade {
                ports: Some(ports("3000-4000")),
            }),
        ),
        // -- NAT, inet --
        case(
            "inet dnat ip to address",
            Inet,
            nat_prerouting(),
            "dnat ip to 192.0.2.3",
            Rule::new().action(Action::Dnat(to("192.0.2.3", None))),
        ),
        case(
            "inet dnat ip to address:port",
            Inet,
            nat_prerouting(),
            "iifname \"eth1\" ip daddr 203.0.113.5 tcp dport 50443 counter \
             dnat ip to 192.0.2.3:3389 comment \"VCL: inet forward\"",
            rule(vec![
                iif("eth1"),
                dst("203.0.113.5"),
                proto(Tcp),
                dport("50443"),
            ])
            .counted()
            .action(Action::Dnat(to("192.0.2.3", Some("3389"))))
            .comment("VCL: inet forward"),
        ),
        case(
            "inet dnat ip6 to address:port-port",
            Inet,
            None,
            "meta l4proto tcp dnat ip6 to [2001:db8::2]:8000-8010",
            rule(vec![proto(Tcp)]).action(Action::Dnat(to("2001:db8::2", Some("8000-8010")))),
        ),
        case(
            "inet snat ip to address:port-port",
            Inet,
            nat_postrouting(),
            "meta l4proto udp snat ip to 203.0.113.1:1024-2048",
            rule(vec![proto(Udp)]).action(Action::Snat(to("203.0.113.1", Some("1024-2048")))),
        ),
        case(
            "inet snat ip6 to address",
            Inet,
            nat_postrouting(),
            "ip6 saddr 2001:db8:1::/48 snat ip6 to 2001:db8::1",
            rule(vec![src("2001:db8:1::/48")]).action(Action::Snat(to("2001:db8::1", None))),
        ),
        case(
            "inet masquerade",
            Inet,
            nat_postrouting(),
            "oifname \"eth*\" masquerade",
            rule(vec![oif("eth+")]).action(Action::Masquerade { ports: None }),
        ),
        case(
            "inet masquerade to ports",
            Inet,
            nat_postrouting(),
            "meta l4proto tcp masquerade to :1024-2048",
            rule(vec![proto(Tcp)]).action(Action::Masquerade {
                ports: Some(ports("1024-2048")),
            }),
        ),
        // -- everything at once --
        case(
            "all matches, ip",
            Ip,
            None,
            "iifname \"eth1\" oifname != \"veth*\" ip saddr 192.0.2.0/24 \
             ip daddr != 198.51.100.32/27 tcp sport 1024-65535 tcp dport != 22 \
             counter drop comment \"combined\"",
            rule(vec![
                iif("eth1"),
                not(oif("veth+")),
                src("192.0.2.0/24"),
                not(dst("198.51.100.32/27")),
                proto(Tcp),
                sport("1024-65535"),
                not(dport("22")),
            ])
            .counted()
            .action(Action::Drop)
            .comment("combined"),
        ),
        case(
            "all matches, ip6",
            Ip6,
            None,
            "iifname != \"eth*\" oifname \"wg0\" ip6 saddr != 2001:db8::/127 \
             ip6 daddr 2001:db8:1:2::/64 udp sport != 1000-2000 udp dport 53 \
             counter jump target comment \"combined v6\"",
            rule(vec![
                not(iif("eth+")),
                oif("wg0"),
                not(src("2001:db8::/127")),
                dst("2001:db8:1:2::/64"),
                proto(Udp),
                not(sport("1000-2000")),
                dport("53"),
            ])
            .counted()
            .action(jump("target"))
            .comment("combined v6"),
        ),
        case(
            "all matches, inet",
            Inet,
            None,
            "iifname \"eth0\" ip saddr 127.16.0.0/20 meta l4proto tcp \
             ip daddr 192.0.2.7 tcp dport 1000-2000 counter return",
            rule(vec![
                iif("eth0"),
                src("127.16.0.0/20"),
                proto(Tcp),
                dst("192.0.2.7"),
                dport("1000-2000"),
            ])
            .counted()
            .action(Action::Return),
        ),
        case(
            "negated protocol with addresses and interface",
            Ip,
            None,
            "ip saddr 192.0.2.1 meta l4proto != icmp oifname \"eth0\" accept",
            rule(vec![src("192.0.2.1"), not(proto(Icmp)), oif("eth0")]).action(Action::Accept),
        ),
    ]
}

// ---- nft helpers ----

fn nft_list(family: Family, chain: &str) -> String {
    run_ok("nft", &["list", "chain", family.as_str(), TABLE, chain])
}

/// The listing with the chain's name taken out of its header line, and nothing else changed.
fn normalise_header(listing: &str, chain: &str) -> String {
    let header = format!("chain {chain} {{");
    listing
        .lines()
        .map(|l| if l.trim() == header { "\tchain _ {" } else { l })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The expression and userdata lines of `nft --debug=netlink list chain` (rule headers, which
/// carry the chain name and handles, and the listing itself are left out).
fn nft_exprs(family: Family, chain: &str) -> Vec<String> {
    run_ok(
        "nft",
        &[
            "--debug=netlink",
            "list",
            "chain",
            family.as_str(),
            TABLE,
            chain,
        ],
    )
    .lines()
    .filter(|l| l.starts_with("  ") || l.starts_with("\telement"))
    .map(anonymous_set_name_normalized)
    .collect()
}

/// The kernel numbers anonymous sets (`__set0`, `__set1`, ...) table-wide; two chains holding
/// the same rule get different numbers.
fn anonymous_set_name_normalized(line: &str) -> String {
    match line.find("__set") {
        Some(i) => {
            let rest = &line[i + 5..];
            let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            format!("{}__set{}", &line[..i], &rest[digits..])
        }
        None => line.to_owned(),
    }
}

fn show_listed(r: &xtnl::Result<Vec<ListedRule>>) -> String {
    match r {
        Ok(rules) => rules
            .iter()
            .map(|r| format!("{:?}", r.rule))
            .collect::<Vec<_>>()
            .join("\n      "),
        Err(e) => format!("error: {e}"),
    }
}

/// Checks that a listing holds exactly the model rule, expressible.
fn check_decoded(
    what: &str,
    listed: &xtnl::Result<Vec<ListedRule>>,
    model: &Rule,
    problems: &mut Vec<String>,
) {
    match listed {
        Err(e) => problems.push(format!("{what}: listing failed: {e}")),
        Ok(rules) if rules.len() != 1 => {
            problems.push(format!("{what}: {} rules listed, expected 1", rules.len()))
        }
        Ok(rules) => {
            let r = &rules[0].rule;
            if r != model {
                problems.push(format!("{what}: decoded rule differs from the model rule"));
            }
            if !r.is_expressible() {
                problems.push(format!("{what}: decoded rule is not expressible"));
            }
        }
    }
}

fn chain_spec(name: &str, base: Option<BaseChain>) -> ChainSpec {
    match base {
        Some(b) => ChainSpec::base(name, b),
        None => ChainSpec::regular(name),
    }
}

/// Runs one case in fresh chains `a` and `b`; returns a report when anything disagrees.
fn run_case(s: &mut Session, c: &Case) -> Option<String> {
    let t = TableRef::new(c.family, TABLE);
    let (a, b) = (t.chain("a"), t.chain("b"));
    let mut problems = Vec::new();

    let mut tx = Transaction::new();
    tx.create_chain(&t, chain_spec("a", c.base))
        .create_chain(&t, chain_spec("b", c.base));
    if let Err(e) = s.commit(&tx) {
        return Some(format!(
            "case {:?} ({}): cannot create chains a and b: {e}",
            c.name, c.family
        ));
    }

    // xtnl writes the model rule into a, nft writes its text into b.
    let mut tx = Transaction::new();
    tx.append_rule(&a, c.rule.clone());
    if let Err(e) = s.commit(&tx) {
        problems.push(format!("xtnl refused the model rule: {e}"));
    }
    let out = run(
        "nft",
        &["add", "rule", c.family.as_str(), TABLE, "b", &c.nft],
    );
    if !out.status.success() {
        problems.push(format!(
            "nft refused the text: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }

    // Oracle 1: nft prints both chains alike.
    let (list_a, list_b) = (nft_list(c.family, "a"), nft_list(c.family, "b"));
    if normalise_header(&list_a, "a") != normalise_header(&list_b, "b") {
        problems.push("nft lists chain a (xtnl) and chain b (nft) differently".into());
    }
    // Oracle 1b: and reads the same expressions from both.
    let (exprs_a, exprs_b) = (nft_exprs(c.family, "a"), nft_exprs(c.family, "b"));
    if exprs_a != exprs_b {
        problems.push("nft --debug=netlink shows different expressions".into());
    }
    let has_exprs =
        !c.rule.matches.is_empty() || c.rule.counter.is_some() || c.rule.action.is_some();
    if has_exprs && exprs_b.is_empty() {
        problems.push("nft shows no expressions for chain b".into());
    }

    // Oracle 2: xtnl reads nft's rule as the model rule.
    let dec_b = s.list_rules(&b);
    check_decoded(
        "xtnl listing of b (nft's rule)",
        &dec_b,
        &c.rule,
        &mut problems,
    );
    // Round trip: xtnl reads its own rule back.
    let dec_a = s.list_rules(&a);
    check_decoded(
        "xtnl listing of a (xtnl's rule)",
        &dec_a,
        &c.rule,
        &mut problems,
    );

    let mut tx = Transaction::new();
    tx.flush_chain(&a)
        .flush_chain(&b)
        .delete_chain(&a)
        .delete_chain(&b);
    if let Err(e) = s.commit(&tx) {
        problems.push(format!("cleanup failed: {e}"));
    }

    if problems.is_empty() {
        return None;
    }
    Some(format!(
        "case {:?} ({} table, chain setup {:?}):\n  problems:\n    - {}\n  nft text:  {}\n  \
         model:     {:?}\n  nft list a (xtnl wrote):\n{}\n  nft list b (nft wrote):\n{}\n  \
         nft exprs a:\n{}\n  nft exprs b:\n{}\n  xtnl decodes a:\n      {}\n  \
         xtnl decodes b:\n      {}",
        c.name,
        c.family,
        c.base,
        problems.join("\n    - "),
        c.nft,
        c.rule,
        indent(&list_a),
        indent(&list_b),
        indent(&exprs_a.join("\n")),
        indent(&exprs_b.join("\n")),
        show_listed(&dec_a),
        show_listed(&dec_b),
    ))
}

fn indent(s: &str) -> String {
    s.lines()
        .map(|l| format!("      {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ensure_tables(s: &mut Session, families: &[Family]) {
    let mut tx = Transaction::new();
    for &f in families {
        let t = TableRef::new(f, TABLE);
        tx.ensure_table(&t);
        for target in TARGETS {
            tx.ensure_chain(&t, ChainSpec::regular(target));
        }
    }
    s.commit(&tx).expect("create the corpus tables");
}

#[test]
fn nft_and_xtnl_agree_on_every_rule_of_the_corpus() {
    common::require_kernel!();
    let cases = corpus();
    assert!(cases.len() >= 45, "corpus has only {} cases", cases.len());
    let total = cases.len();
    let failures = in_netns(move || {
        let mut s = session();
        ensure_tables(&mut s, &[Family::Ipv4, Family::Ipv6, Family::Inet]);
        cases
            .iter()
            .filter_map(|c| run_case(&mut s, c))
            .collect::<Vec<_>>()
    });
    assert!(
        failures.is_empty(),
        "{} of {total} cases disagree with nft:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

// ---- rules beyond the model ----

/// Rules nft writes that the model has no words for.
const OPAQUE: [&str; 12] = [
    "meta pkttype host accept",
    "ct mark 0x1 accept",
    "ip daddr { 192.0.2.1, 192.0.2.2 } accept",
    "log group 2 prefix \"x\"",
    "limit rate 10/second accept",
    "meta mark 0x1 accept",
    "ip saddr . tcp dport { 192.0.2.1 . 22 } accept",
    "ip saddr 192.0.2.1-192.0.2.9 drop",
    "tcp dport < 1024 counter accept",
    "snat to 192.0.2.1 persistent",
    "dnat to 192.0.2.1-192.0.2.9",
    // Known parts around an unknown one: decoded in place.
    "iifname \"eth0\" meta mark 0x1 tcp dport 22 accept",
];

/// The expressible neighbour number `k`, as a model rule and as nft text.
fn neighbour(k: usize) -> (Rule, String) {
    let port = 1000 + k as u16;
    (
        Rule::new()
            .protocol(L4Proto::Tcp)
            .dport(PortRange::single(port))
            .counted()
            .action(Action::Accept)
            .comment(format!("n{k}")),
        format!("tcp dport {port} counter accept comment \"n{k}\""),
    )
}

fn opaque_parts(r: &Rule) -> Vec<String> {
    let mut v: Vec<String> = r
        .matches
        .iter()
        .filter_map(|m| match m {
            Match::Opaque(o) => Some(o.to_string()),
            _ => None,
        })
        .collect();
    if let Some(Action::Opaque(o)) = &r.action {
        v.push(o.to_string());
    }
    v
}

fn add_with_nft(chain: &ChainRef, text: &str) {
    run_ok(
        "nft",
        &[
            "add",
            "rule",
            chain.table.family.as_str(),
            &chain.table.name,
            &chain.name,
            text,
        ],
    );
}

#[test]
fn rules_beyond_the_model_list_as_opaque_and_are_never_rewritten() {
    in_netns(|| {
        let mut s = session();
        let t = TableRef::new(Family::Ipv4, "opaque");
        let mixed = t.chain("mixed");
        let other = t.chain("other");
        let mut tx = Transaction::new();
        tx.ensure_table(&t)
            .ensure_chain(&t, ChainSpec::regular("mixed"))
            .ensure_chain(&t, ChainSpec::regular("other"));
        s.commit(&tx).unwrap();

        // neighbour 0, opaque 0, neighbour 1, opaque 1, ..., neighbour n. Neighbours are
        // written alternately by xtnl and by nft.
        let add_neighbour = |s: &mut Session, k: usize| {
            let (model, text) = neighbour(k);
            if k % 2 == 0 {
                let mut tx = Transaction::new();
                tx.append_rule(&mixed, model);
                s.commit(&tx).unwrap();
            } else {
                add_with_nft(&mixed, &text);
            }
        };
        for (k, text) in OPAQUE.iter().enumerate() {
            add_neighbour(&mut s, k);
            add_with_nft(&mixed, text);
        }
        add_neighbour(&mut s, OPAQUE.len());

        let listed = s
            .list_rules(&mixed)
            .expect("xtnl lists rules it cannot express");
        assert_eq!(listed.len(), 2 * OPAQUE.len() + 1, "{}", nft_ruleset());
        let mut failures = Vec::new();
        for (i, r) in listed.iter().enumerate() {
            if i % 2 == 0 {
                let (model, text) = neighbour(i / 2);
                if r.rule != model || !r.rule.is_expressible() {
                    failures.push(format!(
                        "neighbour {} ({text}) came back as {:?}",
                        i / 2,
                        r.rule
                    ));
                }
                continue;
            }
            let text = OPAQUE[i / 2];
            let parts = opaque_parts(&r.rule);
            if r.rule.is_expressible() || parts.is_empty() {
                failures.push(format!("{text:?} decoded as expressible: {:?}", r.rule));
            }
            if parts.iter().any(String::is_empty) {
                failures.push(format!(
                    "{text:?}: an opaque part prints nothing: {:?}",
                    r.rule
                ));
            }
        }
        // The known parts of a partly known rule keep their place.
        let partial = &listed[2 * (OPAQUE.len() - 1) + 1].rule;
        let known: Vec<&Match> = partial
            .matches
            .iter()
            .filter(|m| !matches!(m, Match::Opaque(_)))
            .collect();
        let expected = [
            iif("eth0"),
            proto(L4Proto::Tcp),
            Match::Port {
                dir: Dir::Destination,
                ports: PortRange::single(22),
                negated: false,
            },
        ];
        if partial.matches.len() != 4
            || !matches!(partial.matches[1], Match::Opaque(_))
            || known != expected.iter().collect::<Vec<_>>()
            || partial.action != Some(Action::Accept)
        {
            failures.push(format!(
                "iifname eth0 / meta mark / tcp dport 22 decoded as {partial:?}"
            ));
        }
        assert!(
            failures.is_empty(),
            "{}\n\nnft lists:\n{}",
            failures.join("\n"),
            nft_list_table(&t)
        );

        // Nothing re-encodes an opaque rule, in any operation, and nothing is sent.
        let before = nft_ruleset();
        for r in listed.iter().skip(1).step_by(2) {
            let attempts: [(&str, Transaction); 4] = [
                ("append to its own chain", {
                    let mut tx = Transaction::new();
                    tx.append_rule(&mixed, r.rule.clone());
                    tx
                }),
                ("insert into another chain", {
                    let mut tx = Transaction::new();
                    tx.insert_rule(&other, r.rule.clone());
                    tx
                }),
                ("replace itself", {
                    let mut tx = Transaction::new();
                    tx.replace_rule(&mixed, r.handle, r.rule.clone());
                    tx
                }),
                ("after a valid operation in the same batch", {
                    let mut tx = Transaction::new();
                    tx.append_rule(&other, neighbour(99).0)
                        .append_rule(&other, r.rule.clone());
                    tx
                }),
            ];
            for (what, tx) in attempts {
                match s.commit(&tx) {
                    Err(e) if e.kind() == ErrorKind::InvalidInput => {}
                    other => failures.push(format!(
                        "{what} with {:?}: expected an InvalidInput refusal, got {other:?}",
                        r.rule
                    )),
                }
            }
        }
        let after = nft_ruleset();
        assert!(
            failures.is_empty(),
            "re-encoding was not refused:\n{}",
            failures.join("\n")
        );
        assert_eq!(after, before, "a refused re-encode changed the ruleset");
        assert_eq!(
            s.list_rules(&mixed).unwrap(),
            listed,
            "xtnl's listing changed"
        );
    });
}

fn nft_list_table(t: &TableRef) -> String {
    run_ok("nft", &["list", "table", t.family.as_str(), &t.name])
}
