//! Differential tests of the iptables front against the real iptables-nft (the oracle):
//! every spec of the corpus is created by one tool and listed, checked and deleted by the
//! other, and `-S` must print the same text from both.

mod common;
mod corpus;

use std::process::Output;

use common::{in_netns, private_lock_path, run};
use corpus::{Spec, corpus_v4, corpus_v6};

fn xtnl(lock: &str, args: &[&str]) -> Output {
    common::run_env(common::xtnl_bin(), args, &[("XTABLES_LOCKFILE", lock)])
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Splits a spec as iptables-restore splits a rule line.
fn words(s: &str) -> Vec<String> {
    xtnl::ipt::parse::split_words(s).expect("the test's command line splits")
}

/// Creates the user chains the corpus jumps to or writes into, in every table.
fn prepare(oracle: &str) {
    for table in ["filter", "nat", "mangle", "raw"] {
        for chain in ["target-chain", "user-chain"] {
            let o = run(oracle, &["-t", table, "-N", chain]);
            assert!(
                o.status.success(),
                "{oracle} -t {table} -N {chain}: {}",
                text(&o)
            );
        }
    }
}

fn check_corpus(oracle: &str, six: bool, corpus: Vec<Spec>) {
    let lock = private_lock_path();
    let lock = lock.to_str().unwrap().to_owned();
    let fam: &[&str] = if six { &["-6"] } else { &[] };
    prepare(oracle);
    let mut failures = Vec::new();
    for s in &corpus {
        let rule = words(&s.rule);
        let args = |cmd: &str| -> Vec<String> {
            let mut v: Vec<String> = fam.iter().map(|x| x.to_string()).collect();
            v.extend(["-t".into(), s.table.into(), cmd.into(), s.chain.into()]);
            v.extend(rule.iter().cloned());
            v
        };
        let refs = |v: &Vec<String>| v.iter().map(String::as_str).collect::<Vec<_>>().join(" ");
        let list = |tool: &str| -> String {
            let mut a: Vec<&str> = fam.to_vec();
            a.extend(["-t", s.table, "-S", s.chain]);
            let o = if tool == "xtnl" {
                xtnl(&lock, &a)
            } else {
                run(tool, &a)
            };
            text(&o)
        };
        let call = |tool: &str, v: &Vec<String>| -> Output {
            let a: Vec<&str> = v.iter().map(String::as_str).collect();
            if tool == "xtnl" {
                xtnl(&lock, &a)
            } else {
                run(tool, &a)
            }
        };
        let name = format!("{} {} {}", s.table, s.chain, s.rule);
        // Direction 1: xtnl writes, the oracle reads, checks and deletes.
        let o = call("xtnl", &args("-A"));
        if !o.status.success() {
            failures.push(format!("{name}\n  xtnl -A failed: {}", text(&o)));
            continue;
        }
        let (ours, theirs) = (list("xtnl"), list(oracle));
        if ours != theirs {
            failures.push(format!(
                "{name}\n  written by xtnl; -S differs:\n  {oracle}: {theirs}\n  xtnl: {ours}"
            ));
        }
        for (who, cmd) in [(oracle, "-C"), ("xtnl", "-C"), (oracle, "-D")] {
            let o = call(who, &args(cmd));
            if !o.status.success() {
                failures.push(format!(
                    "{name}\n  written by xtnl; {who} {} failed: {}",
                    refs(&args(cmd)),
                    text(&o)
                ));
            }
        }
        // Direction 2: the oracle writes, xtnl reads, checks and deletes.
        let o = call(oracle, &args("-A"));
        if !o.status.success() {
            failures.push(format!("{name}\n  {oracle} -A failed: {}", text(&o)));
            continue;
        }
        let (ours, theirs) = (list("xtnl"), list(oracle));
        if ours != theirs {
            failures.push(format!(
                "{name}\n  written by {oracle}; -S differs:\n  {oracle}: {theirs}\n  xtnl: {ours}"
            ));
        }
        for (who, cmd) in [("xtnl", "-C"), ("xtnl", "-D")] {
            let o = call(who, &args(cmd));
            if !o.status.success() {
                failures.push(format!(
                    "{name}\n  written by {oracle}; xtnl {cmd} failed: {}",
                    text(&o)
                ));
            }
        }
        // Both gone: the chain lists empty in both tools' eyes.
        let after = list(oracle);
        if after.lines().any(|l| l.starts_with("-A")) {
            failures.push(format!("{name}\n  rules left behind: {after}"));
            let _ = call(oracle, &args("-F"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} specs failed:\n{}",
        failures.len(),
        corpus.len(),
        failures.join("\n")
    );
}

#[test]
fn ipv4_corpus_both_directions_against_iptables_nft() {
    let corpus = corpus_v4();
    assert!(corpus.len() >= 150, "corpus has {} specs", corpus.len());
    in_netns(move || check_corpus("iptables-nft", false, corpus));
}

#[test]
fn ipv6_corpus_both_directions_against_ip6tables_nft() {
    in_netns(|| check_corpus("ip6tables-nft", true, corpus_v6()));
}

/// The NAT host's commands (shared notes, nat-host-workload.md) verbatim, once through
/// iptables-nft and once through xtnl, in two namespaces: the resulting tables are equal.
#[test]
fn nat_host_commands_verbatim_give_the_same_tables() {
    common::require_kernel!();
    let script = [
        "--new-chain vcld-5205 --table nat",
        "--insert PREROUTING --table nat --jump vcld-5205 --match comment --comment \"VCL: jump from nat table PREROUTING chain to reservation NAT chain vcld-5205\"",
        "--insert vcld-5205 --table nat --in-interface eth1 --protocol tcp --match comment --comment \"VCL: forward eth1:tcp/50443 --> 10.1.2.3:3389\" --match tcp --destination-port 50443 --jump DNAT --to-destination 10.1.2.3:3389",
        "--new-chain vcl-nat_host --table nat",
        "--new-chain vcl-nat_host --table filter",
        "--insert vcl-nat_host --table nat ! --destination 10.0.0.0/20 --jump MASQUERADE --out-interface eth1 --match comment --comment \"VCL: change IP of outbound eth1 packets to NAT host IP address 152.1.1.1\"",
        "--insert vcl-nat_host --table filter --destination 152.1.1.1 --in-interface eth1 --jump ACCEPT --protocol tcp --match comment --comment \"VCL: allow inbound TCP traffic on the NAT port ranges to public eth1\" --match multiport --destination-ports 5700:6500,9696:9701,49152:65535 --match state --state NEW,RELATED,ESTABLISHED",
        "--insert vcl-nat_host --table filter --in-interface eth1 --jump ACCEPT --out-interface eth0 --match state --state NEW,RELATED,ESTABLISHED",
    ];
    let teardown = [
        "--flush vcld-5205 --table nat",
        "--delete PREROUTING -t nat -j vcld-5205 -m comment --comment \"VCL: jump from nat table PREROUTING chain to reservation NAT chain vcld-5205\"",
        "--delete-chain vcld-5205 --table nat",
    ];
    let run_all = |tool: &'static str| {
        in_netns(move || {
            let lock = private_lock_path();
            let lock = lock.to_str().unwrap().to_owned();
            let exec = |line: &str| {
                let a = words(line);
                let a: Vec<&str> = a.iter().map(String::as_str).collect();
                let o = if tool == "xtnl" {
                    xtnl(&lock, &a)
                } else {
                    run(tool, &a)
                };
                assert!(o.status.success(), "{tool} {line}: {}", text(&o));
            };
            script.iter().for_each(|l| exec(l));
            // Listing by the oracle in both cases: the rules must be iptables-nft's own.
            let set_up = format!(
                "{}{}",
                text(&run("iptables-nft", &["-t", "nat", "-S"])),
                text(&run("iptables-nft", &["-S"]))
            );
            // Idempotency the agent relies on: creating an existing chain fails with
            // iptables' words (the agent treats it as success).
            let again = words(script[0]);
            let again: Vec<&str> = again.iter().map(String::as_str).collect();
            let o = if tool == "xtnl" {
                xtnl(&lock, &again)
            } else {
                run(tool, &again)
            };
            assert_eq!(o.status.code(), Some(1));
            assert!(
                text(&o).contains("Chain already exists"),
                "{tool}: {}",
                text(&o)
            );
            teardown.iter().for_each(|l| exec(l));
            let torn = text(&run("iptables-nft", &["-t", "nat", "-S"]));
            (set_up, torn)
        })
    };
    let (theirs, theirs_torn) = run_all("iptables-nft");
    let (ours, ours_torn) = run_all("xtnl");
    assert_eq!(ours, theirs);
    assert_eq!(ours_torn, theirs_torn);
    assert!(
        ours.contains("-A vcld-5205 -i eth1 -p tcp -m comment"),
        "{ours}"
    );
    assert!(!ours_torn.contains("vcld-5205"), "{ours_torn}");
}

#[test]
fn iptables_error_phrases_and_exit_statuses() {
    in_netns(|| {
        let lock = private_lock_path();
        let lock = lock.to_str().unwrap().to_owned();
        let cases: [(&[&str], i32, &str); 9] = [
            (&["-N", "A"], 0, ""),
            (&["-N", "A"], 1, "Chain already exists"),
            (
                &["-A", "NOPE", "-j", "ACCEPT"],
                1,
                "No chain/target/match by that name",
            ),
            (
                &["-D", "INPUT", "-j", "DROP"],
                1,
                "Bad rule (does a matching rule exist in that chain?)",
            ),
            (
                &["-C", "INPUT", "-j", "DROP"],
                1,
                "Bad rule (does a matching rule exist in that chain?)",
            ),
            (&["-A", "INPUT", "-j", "A"], 0, ""),
            (&["-X", "A"], 1, "Too many links"),
            (&["-A", "INPUT", "--bogus"], 2, "unknown option"),
            (
                &["-I", "INPUT", "5", "-j", "DROP"],
                1,
                "Index of insertion too big",
            ),
        ];
        for (args, status, phrase) in cases {
            let o = xtnl(&lock, args);
            assert_eq!(o.status.code(), Some(status), "xtnl {args:?}: {}", text(&o));
            assert!(text(&o).contains(phrase), "xtnl {args:?}: {}", text(&o));
        }
    });
}

/// In a table of our own (not one of iptables'), iptables syntax is encoded natively: each
/// spec written by xtnl must list, in nft's own words and expressions, exactly as the nft
/// rule next to it (written by nft itself), and xtnl must read both back the same way.
#[test]
fn iptables_syntax_in_a_table_of_our_own_is_native_nftables() {
    in_netns(|| {
        let lock = private_lock_path();
        let lock = lock.to_str().unwrap().to_owned();
        common::run_ok("nft", &["add", "table", "ip", "own"]);
        common::run_ok("nft", &["add", "chain", "ip", "own", "target-chain"]);
        let cases = [
            (
                "-p tcp --dport 22 -m state --state NEW -j ACCEPT",
                "meta l4proto tcp tcp dport 22 ct state new counter accept",
            ),
            (
                "-m conntrack ! --ctstate INVALID -j ACCEPT",
                "ct state != invalid counter accept",
            ),
            (
                "-m state --state RELATED,ESTABLISHED -j RETURN",
                "ct state established,related counter return",
            ),
            (
                "-p tcp -j REJECT --reject-with tcp-reset",
                "meta l4proto tcp counter reject with tcp reset",
            ),
            ("-j REJECT", "counter reject"),
            (
                "-j REJECT --reject-with icmp-host-prohibited",
                "counter reject with icmp type host-prohibited",
            ),
            (
                "-s 192.0.2.0/24 -j LOG --log-prefix \"own: \" --log-level 6",
                "ip saddr 192.0.2.0/24 counter log prefix \"own: \" level info",
            ),
            ("-j LOG", "counter log"),
            (
                "-p tcp --dport 80 -j REDIRECT --to-ports 8080",
                "meta l4proto tcp tcp dport 80 counter redirect to :8080",
            ),
            (
                "-p udp -j REDIRECT --to-ports 1000-2000",
                "meta l4proto udp counter redirect to :1000-2000",
            ),
            (
                "-i eth1 -p tcp --dport 50443 -m comment --comment fwd -j DNAT --to-destination 192.0.2.3:3389",
                "iifname \"eth1\" meta l4proto tcp tcp dport 50443 counter dnat to 192.0.2.3:3389 comment \"fwd\"",
            ),
            (
                "-o eth1 -j MASQUERADE",
                "oifname \"eth1\" counter masquerade",
            ),
            ("-j target-chain", "counter jump target-chain"),
            (
                "-p tcp -m multiport --dports 80,443,1000:2000 -j ACCEPT",
                "meta l4proto tcp tcp dport { 80, 443, 1000-2000 } counter accept",
            ),
            (
                "-p udp -m multiport ! --sports 53,5353 -j DROP",
                "meta l4proto udp udp sport != { 53, 5353 } counter drop",
            ),
        ];
        let mut failures = Vec::new();
        for (i, (spec, nft_rule)) in cases.iter().enumerate() {
            let (a, b) = (format!("a{i}"), format!("b{i}"));
            common::run_ok("nft", &["add", "chain", "ip", "own", &a]);
            common::run_ok("nft", &["add", "chain", "ip", "own", &b]);
            let mut args = vec!["-t", "own", "-A", a.as_str()];
            let spec_words = words(spec);
            args.extend(spec_words.iter().map(String::as_str));
            let o = xtnl(&lock, &args);
            if !o.status.success() {
                failures.push(format!("{spec}: xtnl -A failed: {}", text(&o)));
                continue;
            }
            // One argument: nft joins its arguments and parses the quotes itself.
            let o = run("nft", &["add", "rule", "ip", "own", &b, nft_rule]);
            if !o.status.success() {
                failures.push(format!("{spec}: nft {nft_rule}: {}", text(&o)));
                continue;
            }
            let body = |chain: &str, debug: bool| -> String {
                let mut argv = vec![];
                if debug {
                    argv.push("--debug=netlink");
                }
                argv.extend(["list", "chain", "ip", "own", chain]);
                common::run_ok("nft", &argv)
                    .lines()
                    .filter(|l| !l.contains("chain ") && !l.contains("own "))
                    // The kernel numbers anonymous sets table-wide (`__set0`, `__set1`).
                    .map(|l| match l.find("__set") {
                        Some(i) => {
                            let rest = l[i + 5..].trim_start_matches(|c: char| c.is_ascii_digit());
                            format!("{}__set{rest}", &l[..i])
                        }
                        None => l.to_owned(),
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            if body(&a, false) != body(&b, false) || body(&a, true) != body(&b, true) {
                failures.push(format!(
                    "{spec}\n  xtnl wrote: {}\n  nft wrote:  {}",
                    body(&a, true),
                    body(&b, true)
                ));
            }
            let (sa, sb) = (
                xtnl(&lock, &["-t", "own", "-S", &a]),
                xtnl(&lock, &["-t", "own", "-S", &b]),
            );
            if text(&sa).replace(&a, "X") != text(&sb).replace(&b, "X") {
                failures.push(format!(
                    "{spec}\n  xtnl -S of its rule: {}\n  xtnl -S of nft's:    {}",
                    text(&sa),
                    text(&sb)
                ));
            }
            // And -D by the same spec removes nft's rule.
            let mut del = vec!["-t", "own", "-D", b.as_str()];
            del.extend(spec_words.iter().map(String::as_str));
            let o = xtnl(&lock, &del);
            if !o.status.success() {
                failures.push(format!(
                    "{spec}: xtnl -D of nft's rule failed: {}",
                    text(&o)
                ));
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} specs differ:\n{}",
            failures.len(),
            cases.len(),
            failures.join("\n")
        );
    });
}
