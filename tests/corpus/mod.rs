//! The corpus of iptables rule specs the differential tests run through both the nf_tables
//! front (tests/iptables_diff.rs, against iptables-nft) and the x_tables backend
//! (tests/legacy_diff.rs, against iptables-legacy).
#![allow(dead_code)]

pub struct Spec {
    pub table: &'static str,
    pub chain: &'static str,
    pub rule: String,
}

pub fn spec(table: &'static str, chain: &'static str, rule: impl Into<String>) -> Spec {
    Spec {
        table,
        chain,
        rule: rule.into(),
    }
}

/// IPv4 corpus: matches crossed with targets per table, plus hand-picked specs.
pub fn corpus_v4() -> Vec<Spec> {
    let matches = [
        "",
        "-p tcp",
        "-p udp",
        "-p icmp",
        "-p 47",
        "! -p tcp",
        "-s 192.0.2.1",
        "-s 192.0.2.0/24",
        "! -s 198.51.100.0/255.255.255.0",
        "-d 203.0.113.0/27",
        "! -d 10.0.0.0/20",
        "-d 152.1.1.1",
        "-i eth0",
        "-i eth+",
        "! -i veth1",
        "-p tcp --dport 22",
        "-p tcp --sport 1024:65535",
        "-p tcp ! --dport 80",
        "-p tcp -m tcp --dport 443",
        "-p udp --dport 53",
        "-p udp ! --sport 100:200",
        "-p tcp -m multiport --dports 80,443,8000:8080",
        "-p udp -m multiport ! --sports 53,5353",
        "-p tcp -m multiport --ports 22,2222",
        "-m comment --comment simple",
        "-m comment --comment \"with spaces: and --> arrows\"",
        "-m state --state NEW,ESTABLISHED",
        "-m state ! --state INVALID",
        "-m conntrack --ctstate RELATED,ESTABLISHED",
        "-m conntrack ! --ctstate NEW,UNTRACKED,DNAT",
        "-s 192.0.2.0/24 -d 198.51.100.7 -i eth1 -p tcp --dport 8080 -m comment --comment all",
        "-p tcp -m comment --comment first -m tcp --dport 25",
        // Bare modules: iptables-nft keeps them as x_tables matches (found by fuzzing).
        "-p tcp -m tcp",
        "-p udp -m udp -m comment --comment bare",
    ];
    let filter_targets = [
        "-j ACCEPT",
        "-j DROP",
        "-j RETURN",
        "-j target-chain",
        "-g target-chain",
        "-j LOG --log-prefix \"x: \"",
        "-j LOG --log-level 6",
        "-j REJECT",
        "-j REJECT --reject-with icmp-host-prohibited",
    ];
    let mut out = Vec::new();
    for (i, m) in matches.iter().enumerate() {
        for (j, t) in filter_targets.iter().enumerate() {
            // A diagonal walk keeps the corpus varied without the full cross product.
            if (i + j) % 2 == 0 {
                out.push(spec("filter", "INPUT", format!("{m} {t}")));
            }
        }
    }
    for m in [
        "-p tcp",
        "-p tcp -m tcp --dport 80",
        "-p tcp -m multiport --dports 1:2,3",
    ] {
        out.push(spec(
            "filter",
            "INPUT",
            format!("{m} -j REJECT --reject-with tcp-reset"),
        ));
    }
    for m in ["", "-o eth1", "! -o eth0", "-s 192.0.2.0/24 -o eth+"] {
        out.push(spec("filter", "FORWARD", format!("{m} -j ACCEPT")));
        out.push(spec("filter", "OUTPUT", format!("{m} -j DROP")));
    }
    let nat_pre = [
        "-p tcp --dport 80 -j DNAT --to-destination 192.0.2.10",
        "-p tcp --dport 80 -j DNAT --to-destination 192.0.2.10:8080",
        "-p tcp --dport 80 -j DNAT --to-destination 192.0.2.10:8000-8010",
        "-p udp --dport 53 -j DNAT --to-destination 192.0.2.10-192.0.2.20",
        "-i eth1 -p tcp -m comment --comment \"VCL: forward eth1:tcp/50443 --> 10.1.2.3:3389\" -m tcp --dport 50443 -j DNAT --to-destination 10.1.2.3:3389",
        "-p tcp --dport 8080 -j REDIRECT --to-ports 80",
        "-p tcp -j REDIRECT --to-ports 3000-3010",
        "-j REDIRECT",
        "-m comment --comment \"VCL: jump from nat table PREROUTING chain to reservation NAT chain vcld-5205\" -j target-chain",
        "-d 203.0.113.5 -j DNAT --to-destination 192.0.2.1",
    ];
    for r in nat_pre {
        out.push(spec("nat", "PREROUTING", r));
    }
    let nat_post = [
        "-o eth1 -j MASQUERADE",
        "! -d 10.0.0.0/20 -o eth1 -m comment --comment \"VCL: change IP of outbound eth1 packets to NAT host IP address 152.1.1.1\" -j MASQUERADE",
        "-p tcp -j MASQUERADE --to-ports 1024-2048",
        "-p udp -j MASQUERADE --to-ports 5000",
        "-s 192.0.2.0/24 -j SNAT --to-source 198.51.100.1",
        "-p tcp -j SNAT --to-source 198.51.100.1:1000-2000",
        "-j SNAT --to-source 198.51.100.1-198.51.100.9",
        "-o eth0 -j RETURN",
    ];
    for r in nat_post {
        out.push(spec("nat", "POSTROUTING", r));
    }
    for r in [
        "-p tcp --dport 22 -j ACCEPT",
        "-s 192.0.2.0/24 -j DROP",
        "-j LOG --log-prefix mangle",
        "-m state --state NEW -j RETURN",
    ] {
        out.push(spec("mangle", "PREROUTING", r));
        out.push(spec("mangle", "POSTROUTING", r));
    }
    for r in [
        "-p udp --dport 53 -j ACCEPT",
        "-m comment --comment raw -j DROP",
    ] {
        out.push(spec("raw", "PREROUTING", r));
        out.push(spec("raw", "OUTPUT", r));
    }
    // Rules in user chains of every table.
    for (table, r) in [
        (
            "filter",
            "-d 152.1.1.1 -i eth1 -p tcp -m comment --comment \"VCL: allow inbound TCP traffic on the NAT port ranges to public eth1\" -m multiport --dports 5700:6500,9696:9701,49152:65535 -m state --state NEW,RELATED,ESTABLISHED -j ACCEPT",
        ),
        (
            "filter",
            "-i eth1 -o eth0 -m state --state NEW,RELATED,ESTABLISHED -j ACCEPT",
        ),
        (
            "nat",
            "-i eth1 -p tcp -m tcp --dport 50022 -j DNAT --to-destination 192.0.2.3:22",
        ),
        ("mangle", "-p tcp -j ACCEPT"),
    ] {
        out.push(spec(table, "user-chain", r));
    }
    out
}

pub fn corpus_v6() -> Vec<Spec> {
    [
        "-s 2001:db8::1 -j ACCEPT",
        "-d 2001:db8::/32 -p tcp --dport 443 -j ACCEPT",
        "! -s 2001:db8:1::/48 -j DROP",
        "-p ipv6-icmp -j ACCEPT",
        "-p icmpv6 -j ACCEPT",
        "-i eth0 -p udp -m multiport --dports 53,123 -j ACCEPT",
        "-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
        "-m comment --comment v6 -j REJECT",
        "-p tcp -j REJECT --reject-with tcp-reset",
        "-j REJECT --reject-with icmp6-adm-prohibited",
        "-j LOG --log-prefix v6",
    ]
    .into_iter()
    .map(|r| spec("filter", "INPUT", r))
    .chain([
        spec(
            "nat",
            "PREROUTING",
            "-p tcp --dport 80 -j DNAT --to-destination [2001:db8::2]:8080",
        ),
        spec(
            "nat",
            "PREROUTING",
            "-d 2001:db8::1 -j DNAT --to-destination 2001:db8::3",
        ),
        spec("nat", "POSTROUTING", "-o eth1 -j MASQUERADE"),
        spec(
            "nat",
            "POSTROUTING",
            "-s 2001:db8::/64 -j SNAT --to-source 2001:db8::99",
        ),
    ])
    .collect()
}
