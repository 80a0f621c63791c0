//! What real programs need of iptables that the grammar cases do not cover (issue 24),
//! compared with the real iptables 1.8.9 in twin namespaces on both backends: firewalld's
//! start (`*TABLE -F -X -Z COMMIT` through `iptables-restore -w -n`, counters zeroed where the
//! `-Z` line stands), `-i +`/`-o +`, and `--help` with the help of the extensions named
//! before it (firewalld reads the ICMP types from `iptables -p icmp --help`).

mod common;

use common::twin::{Side, Step, links, twin_difference};

/// Rules and policies with counts in every table of both families (restored with `-c` by
/// the real tool on both sides before each case).
const COUNTED4: &str = "*filter\n:INPUT DROP [7:700]\n:FORWARD ACCEPT [3:300]\n:OUTPUT ACCEPT [0:0]\n\
:c - [0:0]\n[5:500] -A INPUT -s 192.0.2.1/32 -j ACCEPT\n[0:0] -A INPUT -j c\n\
[9:900] -A c -d 198.51.100.0/24 -j RETURN\nCOMMIT\n\
*nat\n:PREROUTING ACCEPT [4:400]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [2:200]\n\
[6:600] -A PREROUTING -p tcp -m tcp --dport 2222 -j DNAT --to-destination 192.0.2.9:22\nCOMMIT\n\
*mangle\n:PREROUTING ACCEPT [8:800]\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n\
[1:100] -A PREROUTING -j MARK --set-xmark 0x1/0xffffffff\nCOMMIT\n\
*raw\n:PREROUTING ACCEPT [2:20]\n:OUTPUT ACCEPT [0:0]\n[3:30] -A OUTPUT -j ACCEPT\nCOMMIT\n\
*security\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [5:50]\n[4:40] -A OUTPUT -j ACCEPT\nCOMMIT\n";

const COUNTED6: &str = "*filter\n:INPUT ACCEPT [7:700]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n\
[5:500] -A INPUT -s 2001:db8::1/128 -j ACCEPT\nCOMMIT\n\
*mangle\n:PREROUTING ACCEPT [8:800]\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n\
[1:100] -A PREROUTING -j ACCEPT\nCOMMIT\n";

/// `(setup, compared)`: shell lines (`$IPT`, `$RESTORE`, `$SAVE`, `$REAL_SAVE`, and the
/// `6` forms name this side's tools; setup lines run the real tools on both sides).
/// Every case ends by saving with counters through both tools.
const CASES: &[(&str, &str)] = &[
    // firewalld's start: each table flushed, emptied and zeroed under --noflush
    (
        "COUNTED",
        "for t in security raw mangle nat filter; do printf '*%s\\n-F\\n-X\\n-Z\\nCOMMIT\\n' $t | $RESTORE -w -n; echo rc=$?; done",
    ),
    (
        "COUNTED",
        "for t in security raw mangle filter; do printf '*%s\\n-F\\n-X\\n-Z\\nCOMMIT\\n' $t | $RESTORE6 -w -n; echo rc=$?; done",
    ),
    // the same blocks in one file
    (
        "COUNTED",
        "printf '*security\\n-F\\n-X\\n-Z\\nCOMMIT\\n*raw\\n-F\\n-X\\n-Z\\nCOMMIT\\n*filter\\n-F\\n-X\\n-Z\\nCOMMIT\\n' | $RESTORE -w -n; echo rc=$?",
    ),
    // -Z alone: the rules stay, their counters and the policies' go to zero
    (
        "COUNTED",
        "printf '*filter\\n-Z\\nCOMMIT\\n*nat\\n-Z\\nCOMMIT\\n' | $RESTORE -n; echo rc=$?",
    ),
    (
        "COUNTED",
        "printf '*filter\\n-Z c\\nCOMMIT\\n' | $RESTORE -n; echo rc=$?",
    ),
    (
        "COUNTED",
        "printf '*filter\\n-Z INPUT\\nCOMMIT\\n' | $RESTORE6 -n; echo rc=$?",
    ),
    // what the file adds after its -Z keeps the counts it brings (-c)
    (
        "COUNTED",
        "printf '*filter\\n-Z\\n[3:33] -A c -j ACCEPT\\n-D INPUT -s 192.0.2.1/32 -j ACCEPT\\nCOMMIT\\n' | $RESTORE -n -c; echo rc=$?",
    ),
    // a -Z of a chain that is not there
    (
        "COUNTED",
        "printf '*filter\\n-Z nochain\\nCOMMIT\\n' | $RESTORE -n; echo rc=$?",
    ),
    // without --noflush: the table is restored, then zeroed
    (
        "COUNTED",
        "printf '*filter\\n:INPUT ACCEPT [1:1]\\n[2:2] -A INPUT -j ACCEPT\\n-Z\\nCOMMIT\\n' | $RESTORE -c; echo rc=$?",
    ),
    // firewalld's zone dispatch: `-i +` / `-o +` match every interface and are saved
    // without the option
    (
        "$IPT -t raw -N PREROUTING_ZONES; $IPT -t raw -N PRE_public; $IPT -t nat -N POSTROUTING_ZONES; $IPT -t nat -N POST_public",
        "$IPT -t raw -A PREROUTING_ZONES -i + -g PRE_public; echo rc=$?; $IPT -t nat -A POSTROUTING_ZONES -o + -g POST_public; echo rc=$?; $IPT -t raw -S PREROUTING_ZONES; $IPT -t raw -C PREROUTING_ZONES -g PRE_public; echo rc=$?; $IPT -t nat -D POSTROUTING_ZONES -o + -g POST_public; echo rc=$?",
    ),
    (
        "",
        "$IPT -A INPUT -o + -j ACCEPT; echo rc=$?; $IPT -A OUTPUT -i + -j ACCEPT; echo rc=$?; $IPT -A FORWARD -i + -o + -j ACCEPT; echo rc=$?; $IP6T -A FORWARD -i + -j ACCEPT; echo rc=$?",
    ),
    (
        "",
        "printf '*raw\\n:PREROUTING_ZONES - [0:0]\\n:PRE_public - [0:0]\\n-A PREROUTING_ZONES -i + -g PRE_public\\nCOMMIT\\n' | $RESTORE -w -n; echo rc=$?",
    ),
    // --help, with the help of the extensions named before it
    ("", "$IPT -p icmp --help; echo rc=$?"),
    ("", "$IP6T -p ipv6-icmp --help; echo rc=$?"),
    ("", "$IP6T -p icmpv6 -h; echo rc=$?"),
    ("", "$IPT --help; echo rc=$?"),
    ("", "$IP6T -h; echo rc=$?"),
    ("", "$IPT -p tcp -j DNAT --help; echo rc=$?"),
    ("", "$IPT -m comment -p tcp --help; echo rc=$?"),
    ("", "$IPT -p tcp --dport 22 -m comment --help; echo rc=$?"),
    (
        "",
        "$IPT -p udp -m multiport -m state -j ACCEPT --help; echo rc=$?",
    ),
    ("", "$IPT -j REJECT --help; echo rc=$?"),
    ("", "$IP6T -j TEE --help; echo rc=$?"),
    ("", "$IP6T -j REJECT --help; echo rc=$?"),
    ("", "$IPT -p ICMP --help; echo rc=$?"),
    ("", "$IPT -p 1 --help; echo rc=$?"),
    ("", "$IPT -h -p icmp; echo rc=$?"),
    (
        "",
        "$IPT -A INPUT -m foobar; echo rc=$?; $IP6T -A INPUT -m nosuch --x 1; echo rc=$?",
    ),
    // messages programs read: ufw's listing of a chain it has not made yet, fail2ban's check
    // before its chain exists
    (
        "",
        "$IPT -L ufw-user-input -n; echo rc=$?; $IPT -S ufw-user-input; echo rc=$?; $IP6T -t nat -L nochain; echo rc=$?",
    ),
    (
        "",
        "$IPT -w -C f2b-xt-mp -j RETURN; echo rc=$?; $IPT -D nochain -p tcp -j LOG; echo rc=$?; $IP6T -C nochain -j DROP; echo rc=$?",
    ),
    // refusals: a chain still jumped to or holding rules, a rule the kernel refuses, a
    // table iptables does not have
    (
        "$IPT -N a; $IPT -N b; $IPT -A a -j b",
        "$IPT -X b; echo rc=$?; $IPT -X a; $IPT -A b -j ACCEPT; $IPT -X b; echo rc=$?; $IPT -X; echo rc=$?; printf '*filter\\n-X b\\nCOMMIT\\n' | $RESTORE -n; echo rc=$?",
    ),
    (
        "$IPT -t nat -N y; $IPT -t nat -A y -j MASQUERADE",
        "$IPT -t nat -A PREROUTING -j y; echo rc=$?; $IPT -t nat -I PREROUTING -j y; echo rc=$?",
    ),
    (
        "",
        "printf '*nofilter\\n-A INPUT -j ACCEPT\\nCOMMIT\\n' | $RESTORE; echo rc=$?; printf '# x\\n*bogus\\nCOMMIT\\n' | $RESTORE6; echo rc=$?",
    ),
    // host names from /etc/hosts (localhost is there on every Debian), a zero mask
    // (go-iptables' `ip6tables -s 0/0`), names in -L without -n
    (
        "",
        "$IPT -A INPUT -s localhost/24 -j ACCEPT; $IPT -A INPUT -d localhost,127.0.0.1 -j ACCEPT; $IPT -A INPUT -s 127.0.0.2 -d 192.0.2.0/24; $IP6T -A INPUT -s 0/0 -j ACCEPT; $IP6T -A INPUT -s foo.invalid/0 -j ACCEPT; $IPT -A INPUT -s 0.0.0.0/8; echo rc=$?; $IPT -L INPUT; $IP6T -L INPUT; $IPT -C INPUT -d localhost -j ACCEPT; echo rc=$?",
    ),
    // NAT ports: a service name with a dash is a name, a range is numbers
    (
        "",
        "for p in ftp-data echo-ssh ssh-30 20-ssh foo 1000-2000 0; do $IPT -t nat -A PREROUTING -p tcp -j REDIRECT --to-ports $p; echo rc=$?; $IPT -t nat -A PREROUTING -p tcp -j DNAT --to-destination 192.0.2.1:$p; echo rc=$?; done",
    ),
    // -v -F makes the table's missing built-in chains on nf_tables (iptables-nft flushes
    // chain by chain then), so -v -Z names them (iptables/0002-verbose-output); -F of a
    // built-in chain makes it; -Z of one not made yet is "No chain/target/match"
    (
        "$IPT -A FORWARD -j ACCEPT; $IPT -N foobar",
        "$IPT -v -Z INPUT; echo rc=$?; $IPT -v -Z; echo rc=$?; $IPT -v -F; echo rc=$?; $IPT -v -Z; echo rc=$?; $IPT -t raw -v -F; echo rc=$?; $IPT -t mangle -F OUTPUT; echo rc=$?; $IP6T -t nat -v -Z POSTROUTING; echo rc=$?; $IP6T -v -F; $IP6T -v -Z; echo rc=$?",
    ),
    // -X of built-in chains (iptables-nft deletes those empty with policy ACCEPT)
    (
        "$IPT -P FORWARD DROP; $IPT -A OUTPUT -j ACCEPT; $IPT -D OUTPUT -j ACCEPT; $IPT -A INPUT -j ACCEPT",
        "$IPT -X FORWARD; echo rc=$?; $IPT -X INPUT; echo rc=$?; $IPT -X OUTPUT; echo rc=$?; $IPT -t mangle -X INPUT; echo rc=$?; $IPT -N foo; $IPT -X -v; echo rc=$?; $IPT -t nat -N x; $IPT -t nat -A POSTROUTING -j x; $IPT -t nat -D POSTROUTING -j x; $IPT -t nat -X; echo rc=$?",
    ),
    // a restore without --noflush deletes and makes again each table it names (ferm's
    // restore): chains and tables in the block's order, undeclared base chains gone
    (
        "$IPT -t mangle -A PREROUTING -j ACCEPT; $IPT -t nat -A POSTROUTING -j ACCEPT; $IPT -A INPUT -j ACCEPT; $IPT -A OUTPUT -j ACCEPT; $IPT -N zz",
        "printf '*filter\\n:FORWARD DROP [0:0]\\n:INPUT ACCEPT [0:0]\\n:aa - [0:0]\\n-A INPUT -j aa\\nCOMMIT\\n*mangle\\n:POSTROUTING ACCEPT [0:0]\\n:PREROUTING ACCEPT [0:0]\\nCOMMIT\\n' | $RESTORE; echo rc=$?",
    ),
    // firewalld's start: an insert before rules of the same block that jumps to a chain the
    // block creates after them
    (
        "",
        "printf '*filter\\n-A FORWARD -j ACCEPT\\n-A FORWARD -j DROP\\n-A FORWARD -j ACCEPT\\n-N X\\n-I FORWARD 2 -j X\\n-N Y\\n-A Y -j RETURN\\n-I FORWARD 1 -g Y\\n-I FORWARD 3 -j Y\\nCOMMIT\\n' | $RESTORE6 -w -n; echo rc=$?",
    ),
    // NFLOG's numbers out of range, in xtables' words
    (
        "",
        "for a in '--nflog-group 65536' '--nflog-group x' '--nflog-threshold -1' '--nflog-threshold 65536' '--nflog-size 4294967296' '--nflog-range -1' '--nflog-size 0x10'; do $IPT -A INPUT -j NFLOG $a; echo rc=$?; done",
    ),
    // NFLOG's --nflog-range warning on stderr, printed when a rule is parsed (also before
    // the exclusion's refusal, a missing chain, a missing command), never when printed
    (
        "",
        "$IPT -A INPUT -j NFLOG --nflog-range 5; echo rc=$?; \
         $IP6T -A INPUT -j NFLOG --nflog-group 2 --nflog-range 6; echo rc=$?; \
         $IPT -A INPUT -j NFLOG --nflog-range 5 --nflog-size 3; echo rc=$?; \
         $IPT -A INPUT -j NFLOG --nflog-size 3 --nflog-range 5; echo rc=$?; \
         $IPT -A INPUT -j NFLOG --nflog-range 5 --nflog-group 70000; echo rc=$?; \
         $IPT -A NOPE -j NFLOG --nflog-range 5; echo rc=$?; \
         $IPT -j NFLOG --nflog-range 5; echo rc=$?; \
         $IPT -A INPUT -p udp -j NFLOG --nflog-range 5 --nflog-threshold 2; echo rc=$?; \
         $IPT -S; $IPT -L INPUT -n; $IP6T -S; echo rc=$?",
    ),
    // -C/-D with --nflog-range: iptables-nft finds the rule with or without the range it did
    // not write; iptables-legacy keeps the range and compares it
    (
        "$IPT -A INPUT -j NFLOG --nflog-group 3 --nflog-range 5; $IPT -A INPUT -j NFLOG --nflog-group 4",
        "$IPT -C INPUT -j NFLOG --nflog-group 3 --nflog-range 5; echo rc=$?; \
         $IPT -C INPUT -j NFLOG --nflog-group 3; echo rc=$?; \
         $IPT -C INPUT -j NFLOG --nflog-group 3 --nflog-range 7; echo rc=$?; \
         $IPT -C INPUT -j NFLOG --nflog-group 4 --nflog-range 9; echo rc=$?; \
         $IPT -D INPUT -j NFLOG --nflog-group 4 --nflog-range 9; echo rc=$?; \
         $IPT -D INPUT -j NFLOG --nflog-group 3 --nflog-range 5; echo rc=$?; $IPT -S",
    ),
    // a restore line refused in words that end in a newline of their own: a blank line
    // before `Error occurred at line:`, as in the command's refusal (the setup makes the
    // table on both sides: iptables-legacy-restore makes it before it reads the line)
    (
        "$IPT -A INPUT -j ACCEPT",
        "for l in '-A INPUT -j NFLOG --nflog-range x' '-A INPUT -j NFLOG --nflog-group 65536' \
           '-A INPUT -m foo --bar' '-A INPUT -o eth0 -j ACCEPT' \
           '-A INPUT -j NFLOG --nflog-range 5 --nflog-size 3'; do \
           printf '*filter\\n%s\\nCOMMIT\\n' \"$l\" | $RESTORE; echo rc=$?; done",
    ),
    // a table the kernel refuses (limit's burst 0: ERANGE from the extension's check) in a
    // restore: iptables-legacy-restore names the block's COMMIT line, iptables-nft-restore
    // the rule's; a table committed before it stays (x_tables commits table by table)
    (
        "$IPT -A INPUT -j ACCEPT",
        "printf '*filter\\n-A INPUT -m limit --limit-burst 0 -j ACCEPT\\n\\nCOMMIT\\n' | $RESTORE; echo rc=$?; \
         printf '*mangle\\n-A INPUT -j ACCEPT\\nCOMMIT\\n*filter\\n# c\\n-A INPUT -m limit --limit-burst 0\\n-A INPUT -j DROP\\nCOMMIT\\n' | $RESTORE --noflush; echo rc=$?",
    ),
    // connlabel's warning when /etc/xtables/connlabel.conf cannot be opened (Debian ships
    // none): once per rule printed (-S, -S CHAIN N, -L, -L -n, save, the -v echo) and for a
    // label given by name, never for a rule only checked, deleted or added
    (
        "$IPT -A INPUT -m connlabel --label 3 -j ACCEPT; $IPT -A INPUT -m connlabel --label 4 --set; $IPT -A OUTPUT -m connlabel ! --label 5",
        "$IPT -A INPUT -m connlabel --label 6; echo rc=$?; $IPT -S; $IPT -S INPUT 2; $IPT -L; $IPT -L OUTPUT -n; $IPT -L INPUT 1; \
         $IPT -v -A INPUT -m connlabel --label 7; $IPT -C INPUT -m connlabel --label 3 -j ACCEPT; echo rc=$?; \
         $IPT -D INPUT -m connlabel --label 3 -j ACCEPT; echo rc=$?; $IPT -A INPUT -m connlabel --label foo; echo rc=$?; $SAVE -t filter | grep -v '^#'",
    ),
    // options that exclude each other, in libxtables' words and order (the first two given
    // in the extension's table order, a newline of their own), found once every option was
    // read; connlimit's --connlimit-saddr/--connlimit-daddr do not exclude each other
    (
        "",
        "$IPT -A INPUT -p tcp -m connlimit --connlimit-upto 1 --connlimit-above 2; echo rc=$?; \
         $IPT -A INPUT -p tcp -m connlimit --connlimit-saddr --connlimit-daddr; echo rc=$?; \
         $IPT -A INPUT -p tcp -m connlimit --connlimit-above 2 --connlimit-daddr --connlimit-saddr; echo rc=$?; \
         $IPT -A INPUT -m cluster --cluster-total-nodes 2 --cluster-local-nodemask 1 --cluster-local-node 1 --cluster-hash-seed 1; echo rc=$?; \
         $IPT -A INPUT -m string --algo bm --hex-string '|41|' --string a; echo rc=$?; \
         $IPT -A INPUT -m hashlimit --hashlimit-above 2/s --hashlimit-upto 1/s --hashlimit-name x; echo rc=$?; \
         $IP6T -A INPUT -m frag --fraglast --fragmore; echo rc=$?; \
         $IPT -A INPUT -j CONNSECMARK --restore --save; echo rc=$?; \
         $IPT -t mangle -A INPUT -j MARK --or-mark 1 --and-mark 2 --set-mark 3; echo rc=$?; \
         $IPT -t mangle -A INPUT -j DSCP --set-dscp-class EF --set-dscp 1; echo rc=$?; \
         $IPT -A INPUT -j NFQUEUE --queue-balance 1:2 --queue-num 1; echo rc=$?; \
         $IPT -A INPUT -j NFQUEUE --queue-balance 2:1 --queue-num 1; echo rc=$?; $IPT -S",
    ),
    // pairs iptables leaves to the kernel: of TCPMSS's --set-mss and --clamp-mss-to-pmtu
    // the last given wins (clamping is refused outside FORWARD/OUTPUT/POSTROUTING, and
    // without a SYN match); cgroup's --path with --cgroup is refused
    (
        "",
        "$IPT -A INPUT -p tcp -j TCPMSS --set-mss 1000 --clamp-mss-to-pmtu; echo rc=$?; \
         $IPT -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss 1000 --clamp-mss-to-pmtu; echo rc=$?; \
         $IPT -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu --set-mss 1000; echo rc=$?; \
         $IPT -A INPUT -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss 1000 --clamp-mss-to-pmtu; echo rc=$?; \
         $IP6T -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu --set-mss 1000; echo rc=$?; \
         $IPT -A INPUT -m cgroup --path / --cgroup 1; echo rc=$?; \
         $IPT -A INPUT -m cgroup --cgroup 1 --path /; echo rc=$?; \
         $IP6T -A INPUT -m cgroup ! --cgroup 1 --path / -j ACCEPT; echo rc=$?; $IPT -S; $IP6T -S",
    ),
    // an NFLOG prefix longer than its char[64]: cut to 63 bytes, as iptables-legacy saves it
    // (libxt_NFLOG.t); -C with the long prefix finds the rule
    (
        "",
        "$IPT -A INPUT -j NFLOG --nflog-prefix xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; echo rc=$?; $IPT -S INPUT; \
         $IPT -C INPUT -j NFLOG --nflog-prefix xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; echo rc=$?",
    ),
    // ... and in a restore, once for each line, before the refusal of a later line
    (
        "",
        "printf '*filter\\n-A INPUT -j NFLOG --nflog-range 7\\n-A INPUT -j NFLOG --nflog-range 8 -p udp\\nCOMMIT\\n' | $RESTORE; echo rc=$?; \
         printf '*filter\\n-A INPUT -j NFLOG --nflog-range 7\\n-A INPUT -j NFLOG --nflog-range 8 --nflog-size 2\\nCOMMIT\\n' | $RESTORE; echo rc=$?; \
         printf '*filter\\n-A INPUT -j NFLOG --nflog-range 9\\nCOMMIT\\n' | $RESTORE6 -n; echo rc=$?",
    ),
    // time's --localtz warning, printed as the option is read (not after an earlier refusal),
    // and its exclusion with --utc in the final check
    (
        "",
        "for a in '--localtz --timestart 01:00' '--kerneltz --localtz' '--localtz --timestart 25:00' \
         '--timestart 25:00 --localtz' '--utc --localtz' '--localtz --utc' '--kerneltz --utc' \
         '--utc --kerneltz --localtz' '--utc --localtz --timestart 25:00' '--localtz --localtz' \
         '--timestart 1:00 --timestart 2:00 --localtz' '--localtz -j NFLOG --nflog-range 3'; do \
         $IPT -A INPUT -m time $a; echo rc=$?; $IP6T -A INPUT -m time $a; echo rc=$?; done; \
         printf '*filter\\n-A INPUT -m time --localtz\\n-A INPUT -m time --utc --localtz\\nCOMMIT\\n' | $RESTORE; echo rc=$?",
    ),
];

/// Cases where xtnl differs on purpose, with the reason (`(side, start of the case)`).
const DIFFERENT: &[(Side, &str, &str)] = &[
    (
        Side::Nft,
        "$IPT -A INPUT -j NFLOG --nflog-prefix xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "iptables-nft writes the whole prefix in a native log expression; xtnl carries NFLOG's \
         char[64] and cuts it to 63 bytes as iptables-legacy does (docs/drop-in.md)",
    ),
    (
        Side::Legacy,
        "printf '*filter\\n-Z c\\n",
        "iptables-legacy zeroes every policy counter of a table it changes; xtnl keeps \
         those -Z did not name (docs/drop-in.md, Policy counters)",
    ),
    (
        Side::Nft,
        "printf '*filter\\n:INPUT ACCEPT [1:1]",
        "iptables-nft 1.8.9 fails with `RULE_REPLACE failed (Invalid argument)` (it replaces \
         a rule its flush deleted); xtnl zeroes the kernel's counters and keeps the file's",
    ),
    (
        Side::Legacy,
        "$IPT -A INPUT -o + -j ACCEPT",
        "iptables-legacy keeps `+` in the entry (mask zero, matching every name) and -L \
         shows it; xtnl writes no interface match, so -L shows `*` (-S and save agree)",
    ),
];

fn sh(line: &str) -> Vec<String> {
    vec!["-c".into(), line.into()]
}

fn compare(side: Side) {
    let dir = links(
        &format!("lastmile-{side:?}"),
        &side
            .link_names()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let mut failures = Vec::new();
    for (setup, line) in CASES {
        if DIFFERENT
            .iter()
            .any(|(s, l, _)| *s == side && line.starts_with(l))
        {
            continue;
        }
        let mut steps = Vec::new();
        if *setup == "COUNTED" {
            for (tool, file) in [
                ("iptables-restore", COUNTED4),
                ("ip6tables-restore", COUNTED6),
            ] {
                steps.push(Step {
                    setup: true,
                    stdin: Some(file.to_string()),
                    ..Step::new(tool, vec!["-c".into()])
                });
            }
        } else if !setup.is_empty() {
            steps.push(Step {
                setup: true,
                ..Step::new("sh", sh(setup))
            });
        }
        steps.push(Step::new("sh", sh(line)));
        for save in [
            "$REAL_SAVE -c; $REAL_SAVE6 -c",
            "$SAVE -c; $SAVE6 -c",
            "$IPT -L -v -n -x; $IP6T -L -v -n -x",
            // what other tools read: the same base chains, in the same order
            "nft list ruleset 2>&1",
        ] {
            steps.push(Step::new(
                "sh",
                sh(&format!("{{ {save}; }} | grep -v '^#'")),
            ));
        }
        // xtnl runs as `iptables-restore`, the real tool as `iptables-nft-restore`; each
        // names itself as invoked.
        let adjust = |out: &mut String| {
            if side == Side::Nft {
                *out = out.replace("-nft-restore", "-restore");
            }
        };
        failures.extend(twin_difference(
            side,
            &dir,
            &format!("{line} (after {setup:?})"),
            &side.oracle("iptables"),
            steps,
            adjust,
        ));
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from {}:\n{}",
        failures.len(),
        CASES.len(),
        side.oracle("iptables"),
        failures.join("\n")
    );
}

#[test]
fn last_mile_as_iptables_nft() {
    common::require_kernel!();
    compare(Side::Nft);
}

#[test]
fn last_mile_as_iptables_legacy() {
    common::require_kernel!();
    compare(Side::Legacy);
}
