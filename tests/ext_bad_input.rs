//! Bad extension options: each is refused with status 2 and a message naming the problem,
//! iptables-nft refuses it too, and nothing changes (the ruleset is compared before and
//! after). A table of its own beside tests/bad_input.rs, for the registry's modules.

mod common;

use common::{in_netns, nft_ruleset, private_lock_path, run};

/// (command line, words the message must contain)
const ROWS: &[(&str, &str)] = &[
    // time (issue 13's fourth round): iptables' own refusals.
    ("-A INPUT -m time --weekdays 0 -j ACCEPT", "Sunday"),
    ("-A INPUT -m time --timestart 24:00 -j ACCEPT", "\"24:00\""),
    (
        "-A INPUT -m time --timestart 10:00 --timestop 11:00 --contiguous -j ACCEPT",
        "--contiguous",
    ),
    ("-A INPUT -m time --datestart 1969 -j ACCEPT", "\"1969\""),
    ("-A INPUT -m time --monthdays 32 -j ACCEPT", "32"),
    ("-A INPUT -m time --utc --kerneltz -j ACCEPT", "--utc"),
    ("-A INPUT -m time --weekdays Xy -j ACCEPT", "Xy"),
    ("-A INPUT -m u32 -j ACCEPT", "--u32"),
    ("-A INPUT -m u32 --u32 0= -j ACCEPT", "no value"),
    ("-A INPUT -m u32 --u32 0<1=1 -j ACCEPT", "second '<'"),
    (
        "-A INPUT -m u32 --u32 0=4294967296 -j ACCEPT",
        "out of range",
    ),
    (
        "-A INPUT -p ipcomp -m ipcomp --ipcompspi x -j ACCEPT",
        "\"x\"",
    ),
    (
        "-A INPUT -m cluster --cluster-total-nodes 2 --cluster-local-node 3 --cluster-hash-seed 1 -j ACCEPT",
        "--cluster-total-nodes",
    ),
    (
        "-A INPUT -m cluster --cluster-total-nodes 3 --cluster-local-node 1 -j ACCEPT",
        "--cluster-hash-seed",
    ),
    (
        "-A INPUT -m cluster --cluster-total-nodes 33 --cluster-local-node 1 --cluster-hash-seed 1 -j ACCEPT",
        "33",
    ),
    ("-A INPUT -m bpf -j ACCEPT", "--bytecode"),
    (
        "-A INPUT -m bpf --bytecode \"2,6 0 0 0\" -j ACCEPT",
        "less than",
    ),
    ("-A INPUT -m bpf --bytecode \"0,\" -j ACCEPT", "zero length"),
    (
        "-A INPUT -m bpf --object-pinned /sys/fs/bpf/none -j ACCEPT",
        "--object-pinned",
    ),
    ("-A INPUT -j TRACE --foo", "--foo"),
    ("-A INPUT -p tcp -m osf --ttl 1 -j ACCEPT", "--genre"),
    (
        "-A INPUT -p tcp -m osf --genre linux --ttl 3 -j ACCEPT",
        "3",
    ),
    ("-A INPUT -m ipvs -j ACCEPT", "At least one option"),
    ("-A INPUT -m ipvs ! --ipvs --vport 80 -j ACCEPT", "! --ipvs"),
    ("-A INPUT -m ipvs --vdir SIDEWAYS -j ACCEPT", "SIDEWAYS"),
    ("-t mangle -A INPUT -j CONNSECMARK", "parameter required"),
    (
        "-t mangle -A INPUT -j CONNSECMARK --save --restore",
        "cannot be used together",
    ),
    ("-t mangle -A INPUT -j CONNSECMARK --save --save", "--save"),
    ("-t security -A INPUT -j SECMARK", "--selctx"),
    ("-A INPUT -j IDLETIMER --timeout 42", "--label"),
    ("-A INPUT -j IDLETIMER --label x", "--timeout"),
    ("-A INPUT -j IDLETIMER --timeout x --label x", "--timeout"),
    (
        "-A INPUT -j IDLETIMER --timeout 1 --label x --alarm --alarm",
        "--alarm",
    ),
    ("-A INPUT -j RATEEST --rateest-name x", "--rateest-interval"),
    (
        "-A INPUT -j RATEEST --rateest-name x --rateest-interval 1h --rateest-ewmalog 1s",
        "bad interval value",
    ),
    (
        "-A INPUT -j RATEEST --rateest-name x --rateest-interval 9s --rateest-ewmalog 1s",
        "too large",
    ),
    (
        "-A INPUT -j RATEEST --rateest-name x --rateest-interval 1s --rateest-ewmalog 1s",
        "out of range",
    ),
    (
        "-A INPUT -m rateest --rateest a --rateest1 b --rateest-lt --rateest-pps 1",
        "--rateest1 twice",
    ),
    (
        "-A INPUT -m rateest --rateest a --rateest-lt --rateest-bps 1furlong",
        "could not parse rate",
    ),
    ("-A INPUT -m nfacct", "--nfacct-name"),
    ("-A INPUT -m nfacct --nfacct-name \"\"", "minimum length"),
    ("-A INPUT -j LED", "--led-trigger-id"),
    (
        "-A INPUT -j LED --led-trigger-id x --led-delay soon",
        "Delay value",
    ),
    ("-A INPUT -j SET", "--add-set"),
    (
        "-A INPUT -j SET --add-set no-such-set src",
        "Set no-such-set doesn't exist",
    ),
    ("-A INPUT -j SET --del-set s src --exist", "--exist"),
    ("-t mangle -A PREROUTING -p tcp -j ECN", "operation"),
    (
        "-t mangle -A PREROUTING -p tcp -j ECN --ecn-tcp-cwr 2",
        "--ecn-tcp-cwr",
    ),
    (
        "-t mangle -A PREROUTING -p tcp -j ECN --ecn-tcp-remove --ecn-tcp-ece 1",
        "--ecn-tcp-remove",
    ),
    ("-t mangle -A PREROUTING -j TEE", "--gateway"),
    (
        "-t mangle -A PREROUTING -p tcp -j TPROXY --on-ip 192.0.2.1",
        "--on-port",
    ),
    (
        "-t mangle -A PREROUTING -p tcp -j TPROXY --on-port 1 --on-ip 2001:db8::1",
        "2001:db8::1",
    ),
    (
        "-t mangle -A PREROUTING -p tcp -j TPROXY --on-port 1 --tproxy-mark 0x100000000",
        "TPROXY",
    ),
    ("-A INPUT -m devgroup -j ACCEPT", "--src-group"),
    (
        "-A INPUT -m devgroup --src-group nosuchgroup -j ACCEPT",
        "could not map name nosuchgroup",
    ),
    (
        "-A INPUT -m devgroup --src-group 1/x -j ACCEPT",
        "bad integer",
    ),
    ("-A INPUT -m realm -j ACCEPT", "--realm"),
    // `-m set`: no set of that name here, bad directions, too many, twice, no option.
    (
        "-A INPUT -m set --match-set no-such-set src -j DROP",
        "Set no-such-set doesn't exist",
    ),
    (
        "-A INPUT -m set --match-set s src,up -j DROP",
        "'src' or 'dst'",
    ),
    (
        "-A INPUT -m set --match-set s src,src,src,src,src,src,src -j DROP",
        "more src/dst options than 6",
    ),
    ("-A INPUT -m set --match-set s -j DROP", "two args"),
    ("-A INPUT -m set -j DROP", "--match-set"),
    (
        "-A INPUT -m set --match-set s src --packets-eq 1 --packets-gt 2 -j DROP",
        "only one of the --packets",
    ),
    ("-A INPUT -m mark --mark 0x100000000 -j ACCEPT", "mark"),
    ("-A INPUT -m mark -j ACCEPT", "--mark"),
    ("-A INPUT -m mark --mark 1 --mark 2 -j ACCEPT", "--mark"),
    ("-t mangle -A INPUT -j MARK", "MARK"),
    (
        "-t mangle -A INPUT -j MARK --set-mark 1 --or-mark 2",
        "together",
    ),
    ("-t mangle -A INPUT -j MARK ! --set-mark 1", "--set-mark"),
    (
        "-A INPUT -m addrtype --dst-type BOGUS -j ACCEPT",
        "bad type",
    ),
    ("-A INPUT -m addrtype -j ACCEPT", "--src-type or --dst-type"),
    (
        "-A INPUT -m addrtype --dst-type LOCAL --limit-iface-in --limit-iface-out -j ACCEPT",
        "both",
    ),
    ("-A INPUT -m conntrack -j ACCEPT", "at least one option"),
    ("-A INPUT -m conntrack --ctstate BOGUS -j ACCEPT", "BOGUS"),
    ("-A INPUT -m conntrack --ctstatus BOGUS -j ACCEPT", "BOGUS"),
    (
        "-A INPUT -m conntrack --ctdir SIDEWAYS -j ACCEPT",
        "SIDEWAYS",
    ),
    (
        "-A INPUT -m conntrack --ctorigsrc 300.1.1.1 -j ACCEPT",
        "300.1.1.1",
    ),
    ("-A INPUT -p icmp --icmp-type bogus -j ACCEPT", "bogus"),
    ("-A INPUT -p icmp --icmp-type echo -j ACCEPT", "Ambiguous"),
    ("-A INPUT -m limit --limit 0/sec -j ACCEPT", "rate"),
    ("-A INPUT -m limit --limit 5/fortnight -j ACCEPT", "rate"),
    (
        "-A INPUT -m limit --limit-burst 10001 -j ACCEPT",
        "limit-burst",
    ),
    ("-A INPUT -m limit ! --limit 5/sec -j ACCEPT", "--limit"),
    (
        "-A INPUT -m statistic --mode random -j ACCEPT",
        "--probability",
    ),
    (
        "-A INPUT -m statistic --mode sometimes --probability 0.5 -j ACCEPT",
        "sometimes",
    ),
    (
        "-A INPUT -m statistic --mode random --probability 1.5 -j ACCEPT",
        "1.5",
    ),
    (
        "-A INPUT -m statistic --mode nth --every 2 --packet 5 -j ACCEPT",
        "--packet",
    ),
    (
        "-A INPUT -m pkttype --pkt-type sometimes -j ACCEPT",
        "sometimes",
    ),
    (
        "-A INPUT -m mac --mac-source 00:11:22:33:44 -j ACCEPT",
        "00:11:22:33:44",
    ),
    (
        "-A INPUT -m iprange --src-range 192.0.2.1-banana -j ACCEPT",
        "banana",
    ),
    ("-A OUTPUT -m owner --suppl-groups -j ACCEPT", "--gid-owner"),
    ("-A INPUT -m recent --name x -j ACCEPT", "--set"),
    ("-A INPUT -m recent --set --rcheck -j ACCEPT", "only one"),
    (
        "-A INPUT -p tcp --tcp-flags SYN -j ACCEPT",
        "--tcp-flags requires two args",
    ),
    (
        "-A INPUT -p tcp --tcp-flags SYN,BOGUS SYN -j ACCEPT",
        "BOGUS",
    ),
    (
        "-A INPUT -p tcp --syn --tcp-flags SYN SYN -j ACCEPT",
        "--syn",
    ),
    ("-A INPUT -p udp --syn -j ACCEPT", "--syn"),
    (
        "-A INPUT -j NFQUEUE --queue-num 1 --queue-balance 2:3",
        "--queue-balance",
    ),
    ("-A INPUT -j NFQUEUE --queue-balance 5:2", "less than"),
    ("-t raw -A PREROUTING -j CT --ctevents bogus", "bogus"),
    ("-t raw -A PREROUTING -j CT --zone many", "many"),
    ("-t mangle -A FORWARD -j TCPMSS --clamp-mss-to-pmtu", "tcp"),
    ("-t mangle -A FORWARD -p tcp -j TCPMSS", "TCPMSS"),
    // under the name `xtnl` a pair iptables leaves to the kernel is refused in clear words
    (
        "-A INPUT -p tcp -j TCPMSS --set-mss 1000 --clamp-mss-to-pmtu",
        "cannot be used together",
    ),
    (
        "-A INPUT -m cgroup --path / --cgroup 1",
        "--path and --cgroup cannot be used together",
    ),
    ("-t mangle -A PREROUTING -j CONNMARK", "No operation"),
    (
        "-t mangle -A PREROUTING -j CONNMARK --save-mark --mask 1 --ctmask 2",
        "--mask",
    ),
    (
        "-t nat -A POSTROUTING -j MASQUERADE --persistent",
        "--persistent",
    ),
    ("-t nat -A PREROUTING -j DNAT --random", "--to-destination"),
    ("-A INPUT -j LOG --log-level loud", "loud"),
    (
        "-A INPUT -m hashlimit --hashlimit 5/sec -j ACCEPT",
        "hashlimit",
    ),
    ("-A INPUT -m time --timestart 25:00 -j ACCEPT", "time"),
    (
        "-A INPUT -p sctp -m sctp --chunk-types some INIT -j ACCEPT",
        "ONLY",
    ),
    (
        "-A INPUT -p sctp --chunk-types all BOGUS -j ACCEPT",
        "BOGUS",
    ),
    ("-A INPUT -m sctp --dport 1 -j ACCEPT", "-p sctp"),
    ("-A INPUT -p dccp --dccp-types FOO -j ACCEPT", "FOO"),
    ("-A INPUT -p dccp --dccp-option 0 -j ACCEPT", "0"),
    (
        "-A INPUT -m hashlimit --hashlimit-upto 1/fortnight --hashlimit-name a -j ACCEPT",
        "1/fortnight",
    ),
    (
        "-A INPUT -m hashlimit --hashlimit-upto 1/sec --hashlimit-mode srcmac --hashlimit-name a -j ACCEPT",
        "srcmac",
    ),
    (
        "-A INPUT -m connlimit --connlimit-mask 24 -j DROP",
        "connlimit-above",
    ),
    (
        "-A INPUT -m connlimit --connlimit-above 1 --connlimit-mask x1 -j DROP",
        "x1",
    ),
    ("-A INPUT -m string --string abc -j DROP", "--algo"),
    (
        "-A INPUT -m string --hex-string |0g| --algo bm -j DROP",
        "hex",
    ),
    (
        "-A INPUT -m string --string abc --algo rabin -j DROP",
        "rabin",
    ),
    (
        "-t mangle -A OUTPUT -p tcp -j TCPOPTSTRIP --strip-options 1",
        "0 or 1",
    ),
    ("-t mangle -A OUTPUT -j TCPOPTSTRIP", "tcp"),
    ("-t mangle -A OUTPUT -j CLASSIFY --set-class 12", "12"),
    ("-A INPUT -j AUDIT --type maybe", "maybe"),
    ("-t nat -A PREROUTING -j NETMAP --to 192.0.2.0/abc", "abc"),
    ("-A INPUT -p tcp -j SYNPROXY --mss 1460x", "1460x"),
    ("-A INPUT -p tcp -j SYNPROXY --wscale 9 --wscale 9", "once"),
    (
        "-A INPUT -j HMARK --hmark-rnd 1 --hmark-tuple src",
        "--hmark-mod",
    ),
    (
        "-A INPUT -j HMARK --hmark-mod 4 --hmark-tuple src",
        "--hmark-rnd",
    ),
    (
        "-A INPUT -j HMARK --hmark-tuple src,bogus --hmark-rnd 1 --hmark-mod 2",
        "bogus",
    ),
    (
        "-A INPUT -j HMARK --hmark-tuple spi --hmark-sport-mask 1 --hmark-rnd 1 --hmark-mod 2",
        "--hmark-spi-mask",
    ),
    (
        "-A INPUT -j HMARK --hmark-rnd 1 --hmark-mod 2",
        "--hmark-tuple",
    ),
    (
        "-A INPUT -j HMARK --hmark-tuple src --hmark-src-prefix 24 --hmark-rnd 1 --hmark-mod 2",
        "--hmark-src-prefix",
    ),
    (
        "-A INPUT -j HMARK --hmark-src-prefix abc --hmark-rnd 1 --hmark-mod 2",
        "abc",
    ),
    ("-A INPUT -m ipv6header --header hop -j DROP", "ipv6header"),
    ("-A INPUT -m rt -j DROP", "rt"),
    (
        "-A INPUT -m connlabel --label foobar_not_there -j DROP",
        "foobar_not_there",
    ),
    ("-A INPUT -m connlabel --label 128 -j DROP", "128"),
    ("-A INPUT -m connlabel --set -j DROP", "--label"),
    ("-A INPUT -m policy --pol ipsec -j DROP", "--dir"),
    ("-A INPUT -m policy --dir sideways -j DROP", "sideways"),
    (
        "-A INPUT -m policy --dir in --pol ipsec --strict -j DROP",
        "empty policy element",
    ),
    (
        "-A INPUT -m policy --dir in --pol ipsec --proto tcp -j DROP",
        "ah/esp/ipcomp",
    ),
    (
        "-A INPUT -m policy --dir in --pol ipsec --reqid 1 --reqid 2 -j DROP",
        "double --reqid",
    ),
    (
        "-A INPUT -m policy --dir in --pol ipsec --strict --reqid 1 --tunnel-src 192.0.2.1 -j DROP",
        "tunnel mode",
    ),
    (
        "-A INPUT -m policy --dir in --pol ipsec --reqid 1 --next --reqid 2 -j DROP",
        "--strict",
    ),
    (
        "-A INPUT -m policy --dir in --pol none --strict -j DROP",
        "policy none",
    ),
    ("-A INPUT -m ttl --ttl-eq 300 -j ACCEPT", "300"),
    ("-A INPUT -m dscp --dscp-class XX1 -j ACCEPT", "XX1"),
    (
        "-A INPUT -m tos --tos Maximize-Everything -j ACCEPT",
        "Maximize-Everything",
    ),
];

#[test]
fn bad_extension_options_are_refused_and_change_nothing() {
    in_netns(|| {
        let lock = private_lock_path();
        let lock = lock.to_str().expect("utf-8 path").to_owned();
        // Something to keep: a rule in each table.
        for t in ["filter", "mangle", "raw", "nat"] {
            let o = run("iptables-nft", &["-t", t, "-N", "keep"]);
            assert!(o.status.success());
        }
        // The set the `-m set` rows name (so that only their other fault is refused).
        let o = run("ipset", &["create", "s", "hash:ip"]);
        assert!(o.status.success(), "ipset (.ci/run installs it)");
        let before = nft_ruleset();
        let mut failures = Vec::new();
        for (line, needle) in ROWS {
            let words = xtnl::ipt::parse::split_words(line).expect("splits");
            let a: Vec<&str> = words.iter().map(String::as_str).collect();
            let ours = common::run_env(
                common::xtnl_bin(),
                &a,
                &[("XTABLES_LOCKFILE", lock.as_str())],
            );
            let msg = String::from_utf8_lossy(&ours.stderr).to_string();
            if ours.status.code() != Some(2) || !msg.contains(needle) {
                failures.push(format!("{line}: status {:?}, {msg}", ours.status.code()));
            }
        }
        assert_eq!(nft_ruleset(), before, "xtnl changed the ruleset");
        // The oracle refuses them too (iptables-nft may leave a built-in chain behind).
        for (line, _) in ROWS {
            let words = xtnl::ipt::parse::split_words(line).expect("splits");
            let a: Vec<&str> = words.iter().map(String::as_str).collect();
            if run("iptables-nft", &a).status.success() {
                failures.push(format!("{line}: iptables-nft accepted it"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    });
}

/// IPv6-only modules, as `xtnl -6` against ip6tables-nft: (command line, words the message
/// must contain).
const ROWS6: &[(&str, &str)] = &[
    (
        "-t mangle -A PREROUTING -j DNPT --src-pfx 2001:db8::1 --dst-pfx fd00::/64",
        "64",
    ),
    (
        "-t mangle -A PREROUTING -j DNPT --src-pfx 2001:db8::/64",
        "--dst-pfx",
    ),
    ("-t mangle -A INPUT -j SNPT", "--src-pfx"),
    ("-A INPUT -m eui64 --foo -j DROP", "--foo"),
    ("-A INPUT -m ipv6header -j DROP", "--header"),
    ("-A INPUT -m ipv6header --header tcp -j DROP", "6"),
    ("-A INPUT -m ipv6header --header bogus -j DROP", "bogus"),
    ("-A INPUT -m ipv6header --header , -j DROP", "header names"),
    ("-A INPUT -m rt --rt-0-res -j DROP", "--rt-type 0"),
    (
        "-A INPUT -m rt --rt-type 1 --rt-0-res -j DROP",
        "--rt-type 0",
    ),
    (
        "-A INPUT -m rt --rt-type 0 --rt-0-not-strict -j DROP",
        "--rt-0-addr",
    ),
    (
        "-A INPUT -m rt --rt-type 0 --rt-0-addrs 2001:db8::x -j DROP",
        "2001:db8::x",
    ),
    (
        "-A INPUT -m rt --rt-type 0 --rt-0-addrs ::1,::2,::3,::4,::5,::6,::7,::8,::9,::a,::b,::c,::d,::e,::f,::10,::11 -j DROP",
        "too many",
    ),
    ("-A INPUT -m rt --rt-segsleft 1:x -j DROP", "\"x\""),
];

#[test]
fn bad_ipv6_extension_options_are_refused_and_change_nothing() {
    in_netns(|| {
        let lock = private_lock_path();
        let lock = lock.to_str().expect("utf-8 path").to_owned();
        for t in ["filter", "mangle", "raw", "nat"] {
            let o = run("ip6tables-nft", &["-t", t, "-N", "keep"]);
            assert!(o.status.success());
        }
        let before = nft_ruleset();
        let mut failures = Vec::new();
        for (line, needle) in ROWS6 {
            let mut words = vec!["-6".to_string()];
            words.extend(xtnl::ipt::parse::split_words(line).expect("splits"));
            let a: Vec<&str> = words.iter().map(String::as_str).collect();
            let ours = common::run_env(
                common::xtnl_bin(),
                &a,
                &[("XTABLES_LOCKFILE", lock.as_str())],
            );
            let msg = String::from_utf8_lossy(&ours.stderr).to_string();
            if ours.status.code() != Some(2) || !msg.contains(needle) {
                failures.push(format!("{line}: status {:?}, {msg}", ours.status.code()));
            }
        }
        assert_eq!(nft_ruleset(), before, "xtnl changed the ruleset");
        for (line, _) in ROWS6 {
            let words = xtnl::ipt::parse::split_words(line).expect("splits");
            let a: Vec<&str> = words.iter().map(String::as_str).collect();
            if run("ip6tables-nft", &a).status.success() {
                failures.push(format!("{line}: ip6tables-nft accepted it"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    });
}
