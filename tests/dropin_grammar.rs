//! The grammar scripts and programs use, compared with the real iptables 1.8.9 in twin
//! namespaces: each line runs through iptables-nft (or iptables-legacy) in one namespace and
//! through xtnl, installed as `iptables` by a symbolic link, in another; the exit status,
//! standard output, standard error and the saved ruleset afterwards must be the same.
//! Also xtnl's identity under iptables' names (`-V`, program-name dispatch).

mod common;

use common::twin::{Side, Step, links, twin_difference};

/// What every case starts from: a user chain `c` in filter and nat, both families.
const SETUP: [(&str, &str); 3] = [
    ("iptables", "-N c"),
    ("iptables", "-t nat -N c"),
    ("ip6tables", "-N c"),
];

/// `(prepare, tool, line)`: `prepare` are further setup lines (`;`-separated, run by the real
/// iptables on both sides), `line` the command compared.
const CASES: &[(&str, &str, &str)] = &[
    // bundled short options
    ("-A c -s 192.0.2.1", "iptables", "-nL"),
    ("-A c -s 192.0.2.1", "iptables", "-nvL"),
    ("-A c -s 192.0.2.1", "iptables", "-vnxL"),
    ("-A c -s 192.0.2.1", "iptables", "-L -nv"),
    ("", "iptables", "-w2 -S"),
    ("", "iptables", "-nL c --line-numbers"),
    ("", "iptables", "-tnat -nL"),
    ("", "iptables", "-nQ"),
    // addresses and masks
    ("", "iptables", "-A c -s 0/0"),
    // several addresses: one rule per source and destination pair (sources outer)
    (
        "",
        "iptables",
        "-A c -s 192.0.2.0/24,198.51.100.0/24 -j ACCEPT",
    ),
    (
        "",
        "iptables",
        "-A c -s 192.0.2.1,192.0.2.2 -d 203.0.113.1,203.0.113.2 -j DROP",
    ),
    (
        "-A c -j ACCEPT;-A c -j DROP",
        "iptables",
        "-I c 2 -s 192.0.2.7,192.0.2.8 -j ACCEPT",
    ),
    ("", "ip6tables", "-A c -d 2001:db8::1,2001:db8::2 -j ACCEPT"),
    (
        "-A c -s 192.0.2.1 -j ACCEPT;-A c -s 192.0.2.2 -j ACCEPT",
        "iptables",
        "-C c -s 192.0.2.1,192.0.2.2 -j ACCEPT",
    ),
    (
        "-A c -s 192.0.2.1 -j ACCEPT",
        "iptables",
        "-C c -s 192.0.2.1,192.0.2.2 -j ACCEPT",
    ),
    (
        "-A c -s 192.0.2.1 -j ACCEPT;-A c -s 192.0.2.2 -j ACCEPT;-A c -s 192.0.2.3",
        "iptables",
        "-D c -s 192.0.2.1,192.0.2.2 -j ACCEPT",
    ),
    (
        "-A c -s 192.0.2.1 -j ACCEPT",
        "iptables",
        "-D c -s 192.0.2.1,192.0.2.9 -j ACCEPT",
    ),
    (
        "-A c -j ACCEPT",
        "iptables",
        "-R c 1 -s 192.0.2.1,192.0.2.2 -j ACCEPT",
    ),
    ("", "iptables", "-A c ! -s 192.0.2.1,192.0.2.2 -j ACCEPT"),
    ("", "iptables", "-A c -s 192.0.2.1,,192.0.2.2 -j ACCEPT"),
    (
        "",
        "iptables",
        "-A c -s 0/0,192.0.2.3 -d 10.0.0.1/0 -j ACCEPT",
    ),
    // a zero address and mask is no address at all (written, checked and deleted so)
    ("-A c -s 0/0 -j ACCEPT", "iptables", "-C c -j ACCEPT"),
    ("-A c -j ACCEPT", "iptables", "-D c -s 0.0.0.0/0 -j ACCEPT"),
    ("", "ip6tables", "-A c -s ::/0 -j ACCEPT"),
    ("", "iptables", "-A c -s 0.0.0.0/0"),
    ("", "iptables", "-A c -d 0/0 -j ACCEPT"),
    ("", "ip6tables", "-A c -s ::/0"),
    ("", "iptables", "-A c -s 10.1/16"),
    ("", "iptables", "-A c -s 10"),
    ("", "iptables", "-A c -s 10.11.12.13/255.255.0.0"),
    ("", "iptables", "-A c -s 1.2.3.4/0.0.0.0"),
    ("", "ip6tables", "-A c -s 2001:db8::1/ffff:ffff::"),
    ("", "iptables", "-A c -s 1.2.3.4/32/3"),
    // non-contiguous masks: written, decoded, checked and deleted as iptables does
    ("", "iptables", "-A c -s 10.11.12.13/255.0.255.0"),
    (
        "",
        "iptables",
        "-A c ! -d 10.11.12.13/0.255.0.255 -j ACCEPT",
    ),
    ("", "ip6tables", "-A c -s 2001:db8::1/ffff:0:ffff::"),
    ("", "ip6tables", "-A c -s feed:c0ff::babe:f00/ffff::ffff:0"),
    (
        "-A c -s 10.11.12.13/255.0.255.0;-A c ! -d 10.0.0.1/0.255.0.255 -j DROP",
        "iptables",
        "-S c",
    ),
    (
        "-A c -s 10.11.12.13/255.0.255.0;-A c ! -d 10.0.0.1/0.255.0.255 -j DROP",
        "iptables",
        "-nvL c",
    ),
    (
        "-A c -s 10.11.12.13/255.0.255.0",
        "iptables",
        "-C c -s 10.0.12.0/255.0.255.0",
    ),
    (
        "-A c -s 10.11.12.13/255.0.255.0",
        "iptables",
        "-D c -s 10.99.12.99/255.0.255.0",
    ),
    (
        "-A c -s feed:c0ff::babe:f00/ffff::ffff:0;-A c -s feed:babe::/0:ffff::",
        "ip6tables",
        "-S c",
    ),
    // -S / -L CHAIN N
    (
        "-A c -s 192.0.2.1;-A c -d 192.0.2.2 -j ACCEPT",
        "iptables",
        "-S c 1",
    ),
    (
        "-A c -s 192.0.2.1;-A c -d 192.0.2.2 -j ACCEPT",
        "iptables",
        "-S c 2",
    ),
    ("-A c -s 192.0.2.1", "iptables", "-S c 3"),
    ("-A c -s 192.0.2.1", "iptables", "-S c 0"),
    ("-A c -s 192.0.2.1", "iptables", "-S c x"),
    ("-A c -s 192.0.2.1", "iptables", "-S c 1 2"),
    (
        "-A c -s 192.0.2.1;-A c -d 192.0.2.2 -j ACCEPT",
        "iptables",
        "-L c 2",
    ),
    (
        "-A c -s 192.0.2.1;-A c -d 192.0.2.2 -j ACCEPT",
        "iptables",
        "-nvL c 1",
    ),
    ("-A c -s 192.0.2.1", "iptables", "-L c 5"),
    ("", "iptables", "-S nochain 1"),
    ("", "iptables", "-S nochain"),
    ("", "iptables", "-F c 1"),
    // an option given twice
    // a NAT port given before -p: iptables checks the protocol as it parses the option
    (
        "",
        "iptables",
        "-t nat -A c -j DNAT --to-destination 192.0.2.1:80 -p tcp",
    ),
    (
        "",
        "iptables",
        "-t nat -A c -j DNAT -p tcp --to-destination 192.0.2.1:80",
    ),
    (
        "",
        "iptables",
        "-t nat -A c -j DNAT --to-destination 192.0.2.1 -p tcp",
    ),
    (
        "",
        "iptables",
        "-t nat -A c -j MASQUERADE --to-ports=1024 -p udp",
    ),
    // multiport's two refusals (libxt_multiport.c, check_proto)
    ("", "iptables", "-A c -m multiport --dports 1,2"),
    ("", "iptables", "-A c ! -p tcp -m multiport --dports 1,2"),
    ("", "iptables", "-A c -p icmp -m multiport --dports 1,2"),
    ("", "iptables", "-A c -p udplite -m multiport --dports 1,2"),
    // NAT ports: after -p tcp, udp, sctp, dccp or icmp, inverted or not (libxt_NAT.c
    // looks at the protocol number alone); refused otherwise, in iptables' words.
    (
        "",
        "iptables",
        "-t nat -A c -p sctp -j DNAT --to-destination 192.0.2.1:80",
    ),
    (
        "",
        "iptables",
        "-t nat -A c -p dccp -j REDIRECT --to-ports 80-90",
    ),
    (
        "",
        "iptables",
        "-t nat -A c -p icmp -j SNAT --to-source 192.0.2.1:7",
    ),
    (
        "",
        "iptables",
        "-t nat -A c ! -p tcp -j MASQUERADE --to-ports 1024",
    ),
    (
        "",
        "iptables",
        "-t nat -A c -j DNAT --to-destination 192.0.2.1:80",
    ),
    (
        "",
        "iptables",
        "-t nat -A c -p gre -j MASQUERADE --to-ports 1024",
    ),
    (
        "",
        "ip6tables",
        "-t nat -A PREROUTING -p icmpv6 -j DNAT --to-destination [2001:db8::1]:80",
    ),
    (
        "-t nat -A c -p sctp -j DNAT --to-destination 192.0.2.1:80",
        "iptables",
        "-t nat -D c -p sctp -j DNAT --to-destination 192.0.2.1:80",
    ),
    (
        "",
        "iptables",
        "-t nat -A c -p tcp -j DNAT --to-destination 192.0.2.1 --to-destination 192.0.2.2",
    ),
    ("", "iptables", "-A c -s 192.0.2.1 -s 192.0.2.2"),
    // service names with '-' and what is not a range
    ("", "iptables", "-A c -p tcp --sport ftp-data -j ACCEPT"),
    ("", "iptables", "-A c -p tcp --sport ftp-data:ssh -j ACCEPT"),
    ("", "iptables", "-A c -p tcp --dport 1-2 -j ACCEPT"),
    ("", "iptables", "-A c -p tcp --dport ftp-data-x -j ACCEPT"),
    // NAT ports
    (
        "",
        "iptables",
        "-t nat -A c -p tcp -j REDIRECT --to-ports 0",
    ),
    (
        "",
        "iptables",
        "-t nat -A c -p tcp -j REDIRECT --to-ports 0-5",
    ),
    (
        "",
        "iptables",
        "-t nat -A c -p tcp -j MASQUERADE --to-ports 0",
    ),
    (
        "",
        "iptables",
        "-t nat -A c -p tcp -j DNAT --to-destination 192.0.2.1:0",
    ),
    // DNAT/SNAT port shifting `a-b/base` (NF_NAT_RANGE_PROTO_OFFSET)
    (
        "",
        "iptables",
        "-t nat -A c -p tcp -j DNAT --to-destination 192.0.2.1:1000-2000/3000",
    ),
    (
        "",
        "iptables",
        "-t nat -A c -p tcp -j DNAT --to-destination 192.0.2.1:10-20/ftp",
    ),
    (
        "",
        "iptables",
        "-t nat -A c -p tcp -j DNAT --to-destination 192.0.2.1:1000-2000/0",
    ),
    (
        "",
        "iptables",
        "-t nat -A c -p tcp -j DNAT --to-destination 192.0.2.1:1000-2000/65536",
    ),
    (
        "",
        "iptables",
        "-t nat -A c -p tcp -j DNAT --to-destination 192.0.2.1:1000/3000",
    ),
    (
        "",
        "iptables",
        "-t nat -A c -p tcp -j SNAT --to-source 192.0.2.1:1000-2000/3000",
    ),
    (
        "-t nat -N d",
        "ip6tables",
        "-t nat -A d -p tcp -j DNAT --to-destination [2001:db8::1]:1000-2000/3000",
    ),
    (
        "-t nat -A c -p tcp -j DNAT --to-destination 192.0.2.1:1000-2000/3000",
        "iptables",
        "-t nat -S c",
    ),
    (
        "-t nat -A c -p tcp -j DNAT --to-destination 192.0.2.1:1000-2000/3000",
        "iptables",
        "-t nat -C c -p tcp -j DNAT --to-destination 192.0.2.1:1000-2000/3000",
    ),
    (
        "-t nat -A c -p tcp -j DNAT --to-destination 192.0.2.1:1000-2000/3000",
        "iptables",
        "-t nat -C c -p tcp -j DNAT --to-destination 192.0.2.1:1000-2000/3001",
    ),
    (
        "-t nat -A c -p tcp -j DNAT --to-destination 192.0.2.1:1000-2000/3000",
        "iptables",
        "-t nat -D c -p tcp -j DNAT --to-destination 192.0.2.1:1000-2000/3000",
    ),
    // every ip6 REJECT type, names and aliases
    (
        "",
        "ip6tables",
        "-A c -p tcp -j REJECT --reject-with icmp6-policy-fail",
    ),
    (
        "",
        "ip6tables",
        "-A c -p tcp -j REJECT --reject-with icmp6-reject-route",
    ),
    ("", "ip6tables", "-A c -j REJECT --reject-with policy-fail"),
    ("", "ip6tables", "-A c -j REJECT --reject-with reject-route"),
    (
        "",
        "ip6tables",
        "-A c -j REJECT --reject-with icmp6-no-route",
    ),
    ("", "ip6tables", "-A c -j REJECT --reject-with no-route"),
    (
        "",
        "ip6tables",
        "-A c -j REJECT --reject-with icmp6-adm-prohibited",
    ),
    (
        "",
        "ip6tables",
        "-A c -j REJECT --reject-with adm-prohibited",
    ),
    (
        "",
        "ip6tables",
        "-A c -j REJECT --reject-with icmp6-addr-unreachable",
    ),
    ("", "ip6tables", "-A c -j REJECT --reject-with addr-unreach"),
    (
        "",
        "ip6tables",
        "-A c -j REJECT --reject-with icmp6-port-unreachable",
    ),
    ("", "ip6tables", "-A c -j REJECT --reject-with port-unreach"),
    (
        "",
        "ip6tables",
        "-A c -p tcp -j REJECT --reject-with tcp-reset",
    ),
    (
        "",
        "ip6tables",
        "-A c -j REJECT --reject-with icmp6-not-neighbor",
    ),
    (
        "",
        "iptables",
        "-A c -p tcp -j REJECT --reject-with tcp-rst",
    ),
    // -4 / -6
    ("", "iptables", "-4 -A c -s 192.0.2.1"),
    ("", "iptables", "-6 -A c -s 192.0.2.1"),
    ("", "ip6tables", "-4 -A c -s 192.0.2.1"),
    ("", "ip6tables", "-6 -A c -s 2001:db8::1"),
    // -v echoes the rule
    (
        "",
        "iptables",
        "-v -A c -s 192.0.2.1 -p tcp --dport 22 -j ACCEPT",
    ),
    ("", "iptables", "-v -I c -s 192.0.2.1 -j ACCEPT"),
    (
        "-A c -d 192.0.2.1 -j DROP",
        "iptables",
        "-v -I c 1 -d 192.0.2.1 -j DROP",
    ),
    (
        "-A c -d 192.0.2.1 -j DROP",
        "iptables",
        "-v -R c 1 -d 192.0.2.2 -j DROP",
    ),
    (
        "-A c -d 192.0.2.1 -j DROP",
        "iptables",
        "-v -D c -d 192.0.2.1 -j DROP",
    ),
    // -E onto an existing name (checked before the old name)
    ("-N d", "iptables", "-E c d"),
    ("-N d", "iptables", "-E nochain d"),
    ("", "iptables", "-E nochain d"),
    // -v -C echoes the rule it finds
    (
        "-A c -s 192.0.2.1 -j ACCEPT",
        "iptables",
        "-v -C c -s 192.0.2.1 -j ACCEPT",
    ),
    ("", "iptables", "-E c INPUT"),
    // the lock options
    ("", "iptables", "-w 1 -S"),
    ("", "iptables", "-w -W 1000000 -S"),
];

/// Lines where xtnl deliberately differs from one oracle, with the reason.
const DIFFERENT: &[(Side, &str, &str)] = &[(
    Side::Nft,
    "-S nochain",
    "iptables-nft 1.8.9 calls a missing chain \"incompatible, use 'nft' tool\"; xtnl says \
     what iptables-legacy says (No chain/target/match by that name.), status 1 in both",
)];

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_owned).collect()
}

fn compare(side: Side) {
    let dir = links(
        &format!("grammar-{side:?}"),
        &side
            .link_names()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let mut failures = Vec::new();
    for (prepare, tool, line) in CASES {
        if DIFFERENT
            .iter()
            .any(|(s, l, _)| *s == side && line.starts_with(l))
        {
            continue;
        }
        let mut steps: Vec<Step> = SETUP
            .iter()
            .map(|(t, a)| Step {
                setup: true,
                ..Step::new(t, words(a))
            })
            .collect();
        for p in prepare.split(';').filter(|p| !p.is_empty()) {
            steps.push(Step {
                setup: true,
                ..Step::new(tool, words(p))
            });
        }
        steps.push(Step::new(tool, words(line)));
        failures.extend(twin_difference(
            side,
            &dir,
            &format!("{tool} {line} (after {prepare:?})"),
            &side.oracle(tool),
            steps,
            |_| {},
        ));
    }
    assert!(
        failures.is_empty(),
        "{} of {} lines differ from {}:\n{}",
        failures.len(),
        CASES.len(),
        side.oracle("iptables"),
        failures.join("\n")
    );
}

/// Restore files iptables-restore refuses as a whole: status and words as the real tool's
/// (a block without its COMMIT: `PROG: COMMIT expected at line N`, status 1), and nothing
/// changed.
const RESTORE_REFUSALS: &[&str] = &[
    "*filter\n-A INPUT -j ACCEPT\n",
    "*filter\n:INPUT ACCEPT [0:0]\n",
];

fn compare_restore_refusals(side: Side) {
    let dir = links(
        &format!("grammar-restore-{side:?}"),
        &side
            .link_names()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let mut failures = Vec::new();
    for file in RESTORE_REFUSALS {
        let mut steps: Vec<Step> = SETUP
            .iter()
            .map(|(t, a)| Step {
                setup: true,
                ..Step::new(t, words(a))
            })
            .collect();
        steps.push(Step {
            stdin: Some(file.to_string()),
            ..Step::new("iptables-restore", Vec::new())
        });
        // On this side xtnl runs as `iptables-restore` and the real tool as
        // `iptables-nft-restore`; restore names itself as it was invoked.
        let adjust = |out: &mut String| {
            if side == Side::Nft {
                *out = out.replace("iptables-nft-restore", "iptables-restore");
            }
        };
        failures.extend(twin_difference(
            side,
            &dir,
            &format!("{file:?}"),
            &side.oracle("iptables-restore"),
            steps,
            adjust,
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn restore_refusals_as_iptables_nft() {
    common::require_kernel!();
    compare_restore_refusals(Side::Nft);
}

#[test]
fn restore_refusals_as_iptables_legacy() {
    common::require_kernel!();
    compare_restore_refusals(Side::Legacy);
}

#[test]
fn grammar_as_iptables_nft() {
    common::require_kernel!();
    compare(Side::Nft);
}

#[test]
fn grammar_as_iptables_legacy() {
    common::require_kernel!();
    compare(Side::Legacy);
}

/// `-V` under each name says what the real tool says (libraries parse it), the name picks
/// the tool and the -nft/-legacy spelling the backend; `xtnl iptables ...` works like
/// `xtables-nft-multi iptables ...`; `xtnl version` still says what xtnl is.
#[test]
fn identity_under_iptables_names() {
    let mut names = Side::Nft.link_names();
    names.extend(Side::Legacy.link_names());
    names.extend(
        [
            "iptables-nft",
            "ip6tables-nft",
            "iptables-nft-save",
            "ip6tables-nft-save",
            "iptables-nft-restore",
            "ip6tables-nft-restore",
        ]
        .map(String::from),
    );
    let dir = links(
        "identity",
        &names.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let mut failures = Vec::new();
    for name in &names {
        // The oracle for a plain name is the nft tool (the backend xtnl picks with
        // XTNL_BACKEND=nft).
        let oracle = if name.contains("-nft") || name.contains("-legacy") {
            name.clone()
        } else {
            Side::Nft.oracle(name)
        };
        let theirs = common::run(&oracle, &["-V"]);
        let ours = common::run_env(
            dir.join(name).to_str().unwrap(),
            &["-V"],
            &[("XTNL_BACKEND", "nft")],
        );
        let (t, o) = (common::twin::text(&theirs), common::twin::text(&ours));
        // iptables-nft-save names itself as invoked: the plain name's oracle runs under
        // its -nft name, so compare with the name the link has.
        let t = if oracle != *name {
            t.replace(&oracle, name)
        } else {
            t
        };
        if t != o {
            failures.push(format!("{name} -V:\n{t}--- xtnl:\n{o}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    let o = common::run_env(
        common::xtnl_bin(),
        &["iptables", "-V"],
        &[("XTNL_BACKEND", "legacy")],
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "iptables v1.8.9 (legacy)\n"
    );
    let o = common::run(common::xtnl_bin(), &["version"]);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("xtnl "));
    // -h prints iptables' usage shape under its name.
    let o = common::run(dir.join("iptables").to_str().unwrap(), &["-h"]);
    let help = String::from_utf8_lossy(&o.stdout);
    let theirs = common::run("iptables-nft", &["-h"]);
    let theirs = String::from_utf8_lossy(&theirs.stdout);
    assert_eq!(o.status.code(), Some(0));
    for l in theirs.lines().take(12) {
        assert!(help.contains(l), "iptables -h lacks {l:?}:\n{help}");
    }
}
