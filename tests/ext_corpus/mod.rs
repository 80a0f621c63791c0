//! The extensions' differential corpus (written for xtnl, not taken from iptables' tests):
//! every match of the registry crossed with the tables it is valid in, and every target in
//! the tables and chains it is valid in, IPv4 and IPv6. tests/ext_diff.rs runs it against
//! iptables-nft and iptables-legacy in both directions.
#![allow(dead_code)]

mod ext6;
mod more;
mod round3;
mod round4;

pub struct ExtSpec {
    pub six: bool,
    pub table: &'static str,
    pub chain: &'static str,
    pub rule: String,
}

/// Where a match may go: packets coming in, going out, or any hook.
#[derive(Clone, Copy, PartialEq)]
enum Hook {
    In,
    Out,
    Any,
}

const TABLES: [&str; 4] = ["filter", "nat", "mangle", "raw"];

fn chain(table: &str, hook: Hook) -> &'static str {
    match (table, hook) {
        ("filter", Hook::Out) => "OUTPUT",
        ("filter", _) => "INPUT",
        ("nat", Hook::Out) => "POSTROUTING",
        ("nat", _) => "PREROUTING",
        (_, Hook::Out) => "OUTPUT",
        _ => "PREROUTING",
    }
}

/// (match, hook, IPv4, IPv6)
const MATCHES: &[(&str, Hook, bool, bool)] = &[
    ("-m mark --mark 0x1", Hook::Any, true, true),
    ("-m mark --mark 0x10/0xf0", Hook::Any, true, true),
    ("-m mark ! --mark 0x4000/0x4000", Hook::Any, true, true),
    ("-m addrtype --dst-type LOCAL", Hook::Any, true, true),
    ("-m addrtype ! --dst-type LOCAL", Hook::Any, true, true),
    (
        "-m addrtype --src-type LOCAL --dst-type UNICAST,BROADCAST",
        Hook::Any,
        true,
        false,
    ),
    (
        "-m addrtype --src-type UNICAST --dst-type LOCAL,MULTICAST",
        Hook::Any,
        false,
        true,
    ),
    (
        "-m addrtype --dst-type LOCAL --limit-iface-in",
        Hook::In,
        true,
        true,
    ),
    (
        "-m addrtype ! --src-type MULTICAST --limit-iface-out",
        Hook::Out,
        true,
        false,
    ),
    ("-m conntrack --ctstate INVALID", Hook::Any, true, true),
    (
        "-m conntrack --ctstate RELATED,ESTABLISHED --ctproto tcp",
        Hook::Any,
        true,
        true,
    ),
    (
        "-m conntrack ! --ctstatus ASSURED,SEEN_REPLY",
        Hook::Any,
        true,
        true,
    ),
    ("-m conntrack --ctstatus NONE", Hook::Any, true, false),
    (
        "-m conntrack --ctorigdst 192.0.2.0/24 --ctorigdstport 80",
        Hook::Any,
        true,
        false,
    ),
    (
        "-m conntrack ! --ctorigsrc 198.51.100.7 --ctreplsrcport 1000:2000",
        Hook::Any,
        true,
        false,
    ),
    (
        "-m conntrack --ctreplsrc 203.0.113.0/27 ! --ctrepldst 192.0.2.1",
        Hook::Any,
        true,
        false,
    ),
    (
        "-m conntrack --ctrepldstport 53 --ctorigsrcport 1024:65535",
        Hook::Any,
        true,
        true,
    ),
    (
        "-m conntrack --ctexpire 100:200 --ctdir ORIGINAL",
        Hook::Any,
        true,
        true,
    ),
    (
        "-m conntrack ! --ctexpire 5 --ctdir REPLY",
        Hook::Any,
        true,
        true,
    ),
    (
        "-m conntrack --ctstate DNAT --ctorigdst 2001:db8::/64",
        Hook::Any,
        false,
        true,
    ),
    (
        "-m conntrack --ctstate SNAT,DNAT ! --ctproto udp",
        Hook::Any,
        true,
        true,
    ),
    ("-p icmp --icmp-type echo-request", Hook::Any, true, false),
    ("-p icmp -m icmp --icmp-type 3/4", Hook::Any, true, false),
    ("-p icmp ! --icmp-type any", Hook::Any, true, false),
    ("-p icmp --icmp-type time-exceeded", Hook::Any, true, false),
    (
        "-p ipv6-icmp --icmpv6-type echo-request",
        Hook::Any,
        false,
        true,
    ),
    (
        "-p ipv6-icmp -m icmp6 --icmpv6-type neighbour-advertisement",
        Hook::Any,
        false,
        true,
    ),
    ("-p icmpv6 ! --icmpv6-type 1/4", Hook::Any, false, true),
    ("-m limit --limit 3/min", Hook::Any, true, true),
    (
        "-m limit --limit 10/sec --limit-burst 20",
        Hook::Any,
        true,
        true,
    ),
    (
        "-m limit --limit 1/hour --limit-burst 1",
        Hook::Any,
        true,
        true,
    ),
    ("-m limit --limit 100/day", Hook::Any, true, true),
    (
        "-m statistic --mode random --probability 0.5",
        Hook::Any,
        true,
        true,
    ),
    (
        "-m statistic --mode random ! --probability 0.33333333349",
        Hook::Any,
        true,
        true,
    ),
    (
        "-m statistic --mode nth --every 4 --packet 2",
        Hook::Any,
        true,
        true,
    ),
    ("-m connmark --mark 0x1", Hook::Any, true, true),
    ("-m connmark ! --mark 0x100/0xff00", Hook::Any, true, true),
    ("-m physdev --physdev-is-bridged", Hook::Any, true, true),
    ("-m physdev --physdev-in veth+", Hook::In, true, true),
    (
        "-m physdev ! --physdev-is-in --physdev-is-out",
        Hook::Any,
        true,
        false,
    ),
    ("-m pkttype --pkt-type multicast", Hook::In, true, true),
    ("-m pkttype ! --pkt-type broadcast", Hook::In, true, false),
    (
        "-m iprange --src-range 192.0.2.10-192.0.2.20",
        Hook::Any,
        true,
        false,
    ),
    (
        "-m iprange ! --dst-range 198.51.100.1-198.51.100.200",
        Hook::Any,
        true,
        false,
    ),
    (
        "-m iprange --src-range 2001:db8::1-2001:db8::ff",
        Hook::Any,
        false,
        true,
    ),
    (
        "-m mac --mac-source 02:00:00:00:00:01",
        Hook::In,
        true,
        true,
    ),
    (
        "-m mac ! --mac-source 0a:1b:2c:3d:4e:5f",
        Hook::In,
        true,
        false,
    ),
    ("-m owner --uid-owner 0", Hook::Out, true, true),
    ("-m owner ! --uid-owner 1000-2000", Hook::Out, true, false),
    (
        "-m owner --gid-owner 100 --suppl-groups",
        Hook::Out,
        true,
        true,
    ),
    ("-m owner ! --socket-exists", Hook::Out, true, false),
    ("-m length --length 0:100", Hook::Any, true, true),
    ("-m length ! --length 1500", Hook::Any, true, true),
    (
        "-m recent --set --name web --rsource",
        Hook::Any,
        true,
        true,
    ),
    (
        "-m recent --rcheck --seconds 60 --hitcount 5 --name web",
        Hook::Any,
        true,
        false,
    ),
    (
        "-m recent ! --update --seconds 10 --reap --rdest",
        Hook::Any,
        true,
        false,
    ),
    (
        "-m recent --remove --name x --mask 255.255.255.0",
        Hook::Any,
        true,
        false,
    ),
    ("-p tcp -m tcpmss --mss 1400:1500", Hook::Any, true, true),
    ("-p tcp --syn", Hook::Any, true, true),
    ("-p tcp --dport 22 --syn", Hook::Any, true, true),
    ("-p tcp ! --syn --sport 1024:65535", Hook::Any, true, false),
    ("-p tcp --tcp-flags ALL FIN,URG,PSH", Hook::Any, true, false),
    (
        "-p tcp --tcp-flags SYN,RST SYN --sport 80 --dport 8080",
        Hook::Any,
        true,
        true,
    ),
    ("-p tcp --tcp-option 2", Hook::Any, true, true),
    ("-p tcp --sport 1 --dport 2", Hook::Any, true, true),
    ("-p tcp ! --sport 10 ! --dport 20", Hook::Any, true, false),
    ("-p udp --dport 0:1023", Hook::Any, true, true),
    ("-p udp --sport 67 --dport 68", Hook::Any, true, true),
    (
        "-m mark --mark 0x1 -m conntrack --ctstate NEW -m limit --limit 5/sec",
        Hook::Any,
        true,
        true,
    ),
];

/// (target, table, chain, IPv4, IPv6)
const TARGETS: &[(&str, &str, &str, bool, bool)] = &[
    ("-j MARK --set-mark 0x1", "mangle", "PREROUTING", true, true),
    (
        "-j MARK --set-xmark 0x10/0xf0",
        "mangle",
        "OUTPUT",
        true,
        true,
    ),
    ("-j MARK --and-mark 0xff", "mangle", "FORWARD", true, true),
    ("-j MARK --or-mark 0x4000", "nat", "PREROUTING", true, true),
    ("-j MARK --xor-mark 0x2", "filter", "INPUT", true, true),
    (
        "-j MARK --set-mark 0x8000/0x8000",
        "raw",
        "PREROUTING",
        true,
        true,
    ),
    (
        "-p udp --dport 68 -j CHECKSUM --checksum-fill",
        "mangle",
        "POSTROUTING",
        true,
        true,
    ),
    (
        "-j CONNMARK --restore-mark",
        "mangle",
        "PREROUTING",
        true,
        true,
    ),
    (
        "-j CONNMARK --save-mark",
        "mangle",
        "POSTROUTING",
        true,
        true,
    ),
    (
        "-j CONNMARK --set-mark 0x1",
        "mangle",
        "FORWARD",
        true,
        true,
    ),
    (
        "-j CONNMARK --save-mark --nfmask 0xff --ctmask 0xffff",
        "mangle",
        "OUTPUT",
        true,
        false,
    ),
    (
        "-j CONNMARK --restore-mark --mask 0xff00",
        "filter",
        "INPUT",
        true,
        true,
    ),
    (
        "-j CONNMARK --set-xmark 0x4/0xc --left-shift-mark 2",
        "mangle",
        "INPUT",
        true,
        false,
    ),
    ("-j NFLOG --nflog-group 2", "filter", "INPUT", true, true),
    (
        "-j NFLOG --nflog-prefix dropped: --nflog-group 30 --nflog-size 256",
        "filter",
        "FORWARD",
        true,
        true,
    ),
    (
        "-j NFLOG --nflog-threshold 10",
        "mangle",
        "PREROUTING",
        true,
        false,
    ),
    ("-j NFQUEUE --queue-num 1", "filter", "INPUT", true, true),
    (
        "-j NFQUEUE --queue-balance 0:3 --queue-bypass",
        "mangle",
        "FORWARD",
        true,
        true,
    ),
    (
        "-j NFQUEUE --queue-balance 4:7 --queue-cpu-fanout",
        "filter",
        "OUTPUT",
        true,
        false,
    ),
    ("-j CT --notrack", "raw", "PREROUTING", true, true),
    ("-j CT --notrack", "raw", "OUTPUT", true, true),
    ("-j NOTRACK", "raw", "PREROUTING", true, true),
    (
        "-p tcp --dport 21 -j CT --helper ftp",
        "raw",
        "PREROUTING",
        true,
        true,
    ),
    ("-j CT --zone 7", "raw", "PREROUTING", true, true),
    ("-j CT --zone-reply mark", "raw", "OUTPUT", true, false),
    (
        "-j CT --ctevents new,related,destroy --expevents new",
        "raw",
        "OUTPUT",
        true,
        true,
    ),
    (
        "-p tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu",
        "mangle",
        "FORWARD",
        true,
        true,
    ),
    (
        "-p tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss 1360",
        "mangle",
        "POSTROUTING",
        true,
        true,
    ),
    (
        "-p tcp --syn -j TCPMSS --clamp-mss-to-pmtu",
        "filter",
        "FORWARD",
        true,
        true,
    ),
    (
        "-j MASQUERADE --random-fully",
        "nat",
        "POSTROUTING",
        true,
        true,
    ),
    ("-j MASQUERADE --random", "nat", "POSTROUTING", true, true),
    (
        "-p udp -j MASQUERADE --to-ports 1024-65535 --random-fully",
        "nat",
        "POSTROUTING",
        true,
        false,
    ),
    (
        "-j SNAT --to-source 192.0.2.1 --random-fully",
        "nat",
        "POSTROUTING",
        true,
        false,
    ),
    (
        "-j SNAT --to-source 192.0.2.1-192.0.2.4 --persistent",
        "nat",
        "POSTROUTING",
        true,
        false,
    ),
    (
        "-j SNAT --to-source 2001:db8::1 --random",
        "nat",
        "POSTROUTING",
        false,
        true,
    ),
    (
        "-p tcp -j DNAT --to-destination 192.0.2.5:8080 --random",
        "nat",
        "PREROUTING",
        true,
        false,
    ),
    (
        "-j DNAT --to-destination 192.0.2.5-192.0.2.9 --persistent",
        "nat",
        "OUTPUT",
        true,
        false,
    ),
    (
        "-p tcp -j DNAT --to-destination [2001:db8::5]:443 --persistent",
        "nat",
        "PREROUTING",
        false,
        true,
    ),
    (
        "-p tcp -j REDIRECT --to-ports 3128 --random",
        "nat",
        "PREROUTING",
        true,
        true,
    ),
    (
        "-j LOG --log-prefix fw: --log-tcp-sequence --log-tcp-options",
        "filter",
        "INPUT",
        true,
        true,
    ),
    (
        "-j LOG --log-level debug --log-ip-options --log-uid",
        "mangle",
        "FORWARD",
        true,
        true,
    ),
    ("-j LOG --log-macdecode", "raw", "PREROUTING", true, true),
];

/// The whole corpus.
/// The ipset sets the corpus' `-m set` specs name, made in the test's namespace.
pub fn make_sets() {
    for (name, kind, family) in [
        ("xtnl-ip", "hash:ip", "inet"),
        ("xtnl-ipport", "hash:ip,port", "inet"),
        ("xtnl-ip6", "hash:ip", "inet6"),
    ] {
        let o = std::process::Command::new("ipset")
            .args(["create", name, kind, "family", family])
            .output()
            .expect("ipset (.ci/run installs it)");
        assert!(o.status.success(), "ipset create {name}: {o:?}");
    }
    ext6::make_objects();
}

pub fn ext_corpus() -> Vec<ExtSpec> {
    let mut out = Vec::new();
    let matches: Vec<_> = MATCHES.iter().chain(more::MATCHES).copied().collect();
    cross_tables(&mut out, &matches, |i, table| match table {
        "filter" => ["-j ACCEPT", "-j DROP", "-j RETURN", "-j user-chain"][i % 4],
        "nat" => "-j RETURN",
        "mangle" => "-j MARK --set-mark 0x7",
        _ => "-j ACCEPT",
    });
    let targets: Vec<_> = TARGETS.iter().chain(more::TARGETS).copied().collect();
    placed(&mut out, &targets);
    out.extend(round3::specs());
    out.extend(round4::specs());
    out.extend(ext6::specs());
    out
}

/// `rule` in `table`/`chain` for each family it is written for (IPv4, IPv6).
fn per_family(
    out: &mut Vec<ExtSpec>,
    table: &'static str,
    chain: &'static str,
    rule: String,
    v4: bool,
    v6: bool,
) {
    for (six, on) in [(false, v4), (true, v6)] {
        if on {
            out.push(ExtSpec {
                six,
                table,
                chain,
                rule: rule.clone(),
            });
        }
    }
}

/// Each (match, hook, IPv4, IPv6) in every table, in the chain of its hook, followed by the
/// target `target(i, table)` gives the table (`i`: the table's place in `TABLES`).
fn cross_tables(
    out: &mut Vec<ExtSpec>,
    matches: &[(&'static str, Hook, bool, bool)],
    target: impl Fn(usize, &str) -> &'static str,
) {
    for &(m, hook, v4, v6) in matches {
        for (i, table) in TABLES.iter().enumerate() {
            let rule = format!("{m} {}", target(i, table));
            per_family(out, table, chain(table, hook), rule, v4, v6);
        }
    }
}

/// Each (rule, table, chain, IPv4, IPv6) where it is given.
fn placed(
    out: &mut Vec<ExtSpec>,
    specs: &[(&'static str, &'static str, &'static str, bool, bool)],
) {
    for &(rule, table, chain, v4, v6) in specs {
        per_family(out, table, chain, rule.to_string(), v4, v6);
    }
}
