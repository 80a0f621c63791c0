//! Differential tests of the x_tables backend (`xtnl --backend legacy`) against the real
//! iptables-legacy and ip6tables-legacy 1.8.9 (the oracles), each inside a network namespace
//! the test created. The corpus is the nf_tables front's (tests/corpus): every spec is
//! written by one tool and listed, checked and deleted by the other; `-S` must print the
//! same text from both, and the table the kernel holds after xtnl's write must be byte for
//! byte the one it holds after iptables-legacy's.

mod common;
mod corpus;

use std::process::Output;

use common::{in_netns, private_lock_path, run, run_env, run_ok};
use corpus::{Spec, corpus_v4, corpus_v6};
use xtnl::legacy::kernel::XtSocket;
use xtnl::model::Family;

fn xtnl(lock: &str, args: &[&str]) -> Output {
    let mut a = vec!["--backend", "legacy"];
    a.extend_from_slice(args);
    run_env(common::xtnl_bin(), &a, &[("XTABLES_LOCKFILE", lock)])
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn words(s: &str) -> Vec<String> {
    xtnl::ipt::parse::split_words(s).expect("the test's command line splits")
}

/// The table as the kernel holds it: hook offsets, entry count, and the blob.
fn raw_table(family: Family, table: &str) -> (Vec<u32>, Vec<u8>) {
    let s = XtSocket::open(family).expect("raw socket");
    let (info, blob) = match s.read_raw(table) {
        Ok(x) => x,
        Err(e) => panic!("read {table}: {e:?}"),
    };
    let mut head = vec![info.valid_hooks, info.num_entries, info.size];
    head.extend(info.hook_entry);
    head.extend(info.underflow);
    (head, blob)
}

fn first_difference(a: &[u8], b: &[u8]) -> String {
    let at = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let win = |v: &[u8]| {
        v.get(at.saturating_sub(8)..(at + 24).min(v.len()))
            .map(|s| format!("{s:02x?}"))
            .unwrap_or_default()
    };
    format!(
        "sizes {} / {}; first difference at byte {at}:\n    xtnl:   {}\n    oracle: {}",
        a.len(),
        b.len(),
        win(a),
        win(b)
    )
}

/// Creates the user chains the corpus jumps to or writes into, in every table.
fn prepare(oracle: &str, lock: &str) {
    for table in ["filter", "nat", "mangle", "raw"] {
        for chain in ["target-chain", "user-chain"] {
            let o = run_env(
                oracle,
                &["-w", "-t", table, "-N", chain],
                &[("XTABLES_LOCKFILE", lock)],
            );
            assert!(
                o.status.success(),
                "{oracle} -t {table} -N {chain}: {}",
                text(&o)
            );
        }
    }
}

fn check_corpus(oracle: &'static str, six: bool, corpus: Vec<Spec>) {
    let lock = private_lock_path();
    let lock = lock.to_str().unwrap().to_owned();
    let family = if six { Family::Ipv6 } else { Family::Ipv4 };
    let fam: &[&str] = if six { &["-6"] } else { &[] };
    prepare(oracle, &lock);
    let mut failures = Vec::new();
    for s in &corpus {
        let rule = words(&s.rule);
        let args = |cmd: &str| -> Vec<String> {
            let mut v: Vec<String> = fam.iter().map(|x| x.to_string()).collect();
            v.extend(["-t".into(), s.table.into(), cmd.into(), s.chain.into()]);
            v.extend(rule.iter().cloned());
            v
        };
        let call = |tool: &str, v: &[String]| -> Output {
            let a: Vec<&str> = v.iter().map(String::as_str).collect();
            if tool == "xtnl" {
                xtnl(&lock, &a)
            } else {
                // The oracle never gets -6: ip6tables-legacy is IPv6 already.
                let a: Vec<&str> = a.into_iter().filter(|x| *x != "-6").collect();
                run_env(tool, &a, &[("XTABLES_LOCKFILE", lock.as_str())])
            }
        };
        let list = |tool: &str| -> String {
            let v: Vec<String> = fam
                .iter()
                .copied()
                .chain(["-t", s.table, "-S", s.chain])
                .map(String::from)
                .collect();
            text(&call(tool, &v))
        };
        let name = format!("{} {} {}", s.table, s.chain, s.rule);
        // Direction 1: xtnl writes, the oracle reads, checks and deletes.
        let o = call("xtnl", &args("-A"));
        if !o.status.success() {
            failures.push(format!("{name}\n  xtnl -A failed: {}", text(&o)));
            continue;
        }
        let ours_raw = raw_table(family, s.table);
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
                    "{name}\n  written by xtnl; {who} {cmd} failed: {}",
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
        let theirs_raw = raw_table(family, s.table);
        if ours_raw.0 != theirs_raw.0 || ours_raw.1 != theirs_raw.1 {
            failures.push(format!(
                "{name}\n  the kernel's tables differ: info {:?} / {:?}; {}",
                ours_raw.0,
                theirs_raw.0,
                first_difference(&ours_raw.1, &theirs_raw.1)
            ));
        }
        let (ours, theirs) = (list("xtnl"), list(oracle));
        if ours != theirs {
            failures.push(format!(
                "{name}\n  written by {oracle}; -S differs:\n  {oracle}: {theirs}\n  xtnl: {ours}"
            ));
        }
        for cmd in ["-C", "-D"] {
            let o = call("xtnl", &args(cmd));
            if !o.status.success() {
                failures.push(format!(
                    "{name}\n  written by {oracle}; xtnl {cmd} failed: {}",
                    text(&o)
                ));
            }
        }
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
fn ipv4_corpus_both_directions_against_iptables_legacy() {
    let corpus = corpus_v4();
    assert!(corpus.len() >= 150, "corpus has {} specs", corpus.len());
    in_netns(move || check_corpus("iptables-legacy", false, corpus));
}

#[test]
fn ipv6_corpus_both_directions_against_ip6tables_legacy() {
    in_netns(|| check_corpus("ip6tables-legacy", true, corpus_v6()));
}

/// Runs `script` (iptables command lines) in a fresh namespace with `tool`, returning each
/// line's exit status, standard output and standard error.
fn run_script(
    tool: &'static str,
    script: &'static [&'static str],
    six: bool,
) -> Vec<(i32, String, String)> {
    in_netns(move || {
        let lock = private_lock_path();
        let lock = lock.to_str().unwrap().to_owned();
        script
            .iter()
            .map(|line| {
                let mut a = words(line);
                if six {
                    a.insert(0, "-6".into());
                }
                let a: Vec<&str> = a.iter().map(String::as_str).collect();
                let o = if tool == "xtnl" {
                    xtnl(&lock, &a)
                } else {
                    run_env(tool, &a, &[("XTABLES_LOCKFILE", lock.as_str())])
                };
                (
                    o.status.code().unwrap_or(-1),
                    String::from_utf8_lossy(&o.stdout).into_owned(),
                    String::from_utf8_lossy(&o.stderr).into_owned(),
                )
            })
            .collect()
    })
}

/// Every command of the drop-in, run line by line by iptables-legacy in one namespace and by
/// xtnl in another: the same exit statuses and standard output, and iptables' own error
/// phrase in xtnl's standard error.
#[test]
fn every_command_as_iptables_legacy_runs_it() {
    const SCRIPT: &[&str] = &[
        "-N A",
        "-N A",
        "-N B",
        "-A A -j ACCEPT",
        "-A INPUT -j A",
        "-I INPUT 1 -p tcp --dport 22 -j ACCEPT",
        "-I INPUT 3 -s 192.0.2.1 -j DROP",
        "-I INPUT 9 -j DROP",
        "-A INPUT -p udp -m multiport --dports 53,123 -m comment --comment \"two ports\"",
        "-R INPUT 2 -p udp --dport 53 -j ACCEPT",
        "-R INPUT 9 -j DROP",
        "-A NOPE -j ACCEPT",
        "-S",
        "-S INPUT",
        "-S NOPE",
        "-L -n",
        "-L",
        "-L -n -v --line-numbers",
        "-L INPUT -n -x -v",
        "-C INPUT -p udp --dport 53 -j ACCEPT",
        "-C INPUT -j DROP",
        "-D INPUT -j DROP",
        "-D INPUT 2",
        "-D INPUT 7",
        "-X A",
        "-X B",
        "-X NOPE",
        "-X INPUT",
        "-E A C",
        "-E C OUTPUT",
        "-E INPUT D",
        "-S",
        "-P FORWARD DROP",
        "-P C DROP",
        "-L FORWARD -n",
        "-S FORWARD",
        "-X",
        "-F INPUT",
        "-X",
        "-F",
        "-X",
        "-Z",
        "-Z INPUT",
        "-Z NOPE",
        "-L -n -Z",
        "-t nat -N vcld-1",
        "-t nat -A vcld-1 -i eth1 -p tcp -m comment --comment \"VCL: forward\" -m tcp --dport 50443 -j DNAT --to-destination 192.0.2.3:3389",
        "-t nat -I PREROUTING -j vcld-1 -m comment --comment \"VCL: jump\"",
        "-t nat -A POSTROUTING ! -d 10.0.0.0/20 -o eth1 -j MASQUERADE",
        "-t nat -S",
        "-t nat -L -n -v",
        "-t nat -F vcld-1",
        "-t nat -X vcld-1",
        "-t nat -D PREROUTING -j vcld-1 -m comment --comment \"VCL: jump\"",
        "-t nat -X vcld-1",
        "-t nat -S",
        "-v -A INPUT -s 192.0.2.9 -j DROP",
        "-v -I INPUT -d 192.0.2.8 -j ACCEPT",
        "-v -D INPUT -s 192.0.2.9 -j DROP",
        "-v -F INPUT",
        "-v -N Z",
        "-v -X Z",
        "-v -Z",
        "-t nosuchtable -S",
    ];
    compare_scripts("iptables-legacy", SCRIPT);
}

/// The IPv6 side: ip6tables-legacy against `xtnl -6`.
#[test]
fn ip6tables_commands_as_ip6tables_legacy_runs_them() {
    const SCRIPT: &[&str] = &[
        "-A INPUT -s 2001:db8::1 -j ACCEPT",
        "-N v6",
        "-I INPUT 1 -p tcp --dport 22 -j v6",
        "-A v6 -p ipv6-icmp -j ACCEPT",
        "-S",
        "-L -n -v",
        "-D INPUT -j DROP",
        "-C INPUT -s 2001:db8::1 -j ACCEPT",
        "-X v6",
        "-t nat -A POSTROUTING -s 2001:db8::/64 -j SNAT --to-source 2001:db8::99",
        "-t nat -S",
        "-F",
        "-X",
        "-S",
    ];
    compare_scripts("ip6tables-legacy", SCRIPT);
}

fn compare_scripts(oracle: &'static str, script: &'static [&'static str]) {
    let theirs = run_script(oracle, script, false);
    let ours = run_script("xtnl", script, oracle.starts_with("ip6"));
    let mut failures = Vec::new();
    for ((line, t), o) in script.iter().zip(&theirs).zip(&ours) {
        if t.0 != o.0 || t.1 != o.1 {
            failures.push(format!(
                "{line}\n  iptables-legacy: {} {:?} {:?}\n  xtnl:            {} {:?} {:?}",
                t.0, t.1, t.2, o.0, o.1, o.2
            ));
            continue;
        }
        // iptables' own phrase (`iptables: ...`), where it printed one, must be in ours.
        for l in
            t.2.lines()
                .filter(|l| l.starts_with("iptables: ") || l.starts_with("ip6tables: "))
        {
            if !o.2.contains(l) {
                failures.push(format!(
                    "{line}\n  phrase {l:?} missing from xtnl's {:?}",
                    o.2
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} lines differ:\n{}",
        failures.len(),
        script.len(),
        failures.join("\n")
    );
}
