//! Differential tests of the x_tables backend (`xtnl --backend legacy`) against the real
//! iptables-legacy and ip6tables-legacy 1.8.9 (the oracles), each inside a network namespace
//! the test created. The corpus is the nf_tables front's (tests/corpus): every spec is
//! written by one tool and listed, checked and deleted by the other; `-S` must print the
//! same text from both, and the table the kernel holds after xtnl's write must be byte for
//! byte the one it holds after iptables-legacy's.

mod common;
mod corpus;

use std::process::Output;

use common::{in_netns, private_lock_path, run_env, run_ok};
use corpus::{Spec, corpus_v4, corpus_v6};
use xtnl::legacy::Legacy;
use xtnl::lock::{WaitPolicy, XtablesLock};
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
    // Reading takes no lock; the lock path is never used.
    let lock = XtablesLock::new(private_lock_path(), WaitPolicy::Forever);
    let s = Legacy::open(family, lock).expect("raw socket");
    let raw = match s.read_raw(table) {
        Ok(x) => x,
        Err(e) => panic!("read {table}: {e:?}"),
    };
    let (info, blob) = (raw.info, raw.entries);
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
    common::require_kernel!();
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
    common::require_kernel!();
    const SCRIPT: &[&str] = &[
        "-A INPUT -s 2001:db8::1 -j ACCEPT",
        "-N v6",
        "-I INPUT 1 -p tcp --dport 22 -j v6",
        "-A v6 -p ipv6-icmp -j ACCEPT",
        "-v -A INPUT -s fe80::/64 -m eui64 -j ACCEPT",
        "-v -C INPUT -s fe80::/64 -m eui64 -j ACCEPT",
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

/// `(packets, bytes)` of every rule and policy, from `iptables-legacy -S -v` (or
/// ip6tables-legacy): lines with their counters, in order.
fn counted(oracle: &str, table: &str) -> Vec<String> {
    run_ok(oracle, &["-w", "-t", table, "-S", "-v"])
        .lines()
        .map(str::to_string)
        .collect()
}

/// Sends `n` UDP datagrams to 127.0.0.1 port 9 from this thread's namespace.
fn traffic(n: usize) {
    let s = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind udp");
    for _ in 0..n {
        let _ = s.send_to(b"xtnl counters", "127.0.0.1:9");
    }
}

/// Counters belong to the kernel's entries, and a replace starts them from zero; xtnl
/// carries every kept rule's and policy's counts into the new table, as libiptc does: after
/// a series of xtnl commits the untouched rules count exactly what they counted before,
/// and keep counting; `-Z` zeroes and `-P` restarts a policy's count, as with iptables.
#[test]
fn counters_are_preserved_across_xtnl_commits() {
    in_netns(|| {
        let lock = private_lock_path();
        let lock = lock.to_str().unwrap().to_owned();
        run_ok("ip", &["link", "set", "lo", "up"]);
        for spec in [
            "-A OUTPUT -o lo -p udp -j ACCEPT",
            "-A INPUT -i lo -p udp --dport 9 -j ACCEPT",
            "-A INPUT -i lo -p icmp",
        ] {
            let w = words(spec);
            let a: Vec<&str> = w.iter().map(String::as_str).collect();
            run_ok("iptables-legacy", &a);
        }
        traffic(7);
        let before = counted("iptables-legacy", "filter");
        assert!(
            before.iter().any(|l| l.contains("-o lo -p udp -c 7 ")),
            "traffic was not counted: {before:?}"
        );
        for spec in [
            "-A INPUT -s 192.0.2.1 -j DROP",
            "-N counted",
            "-I OUTPUT 1 -s 192.0.2.2 -j ACCEPT",
            "-A counted -j RETURN",
            "-I INPUT 2 -j counted",
            "-D INPUT -s 192.0.2.1 -j DROP",
            "-R OUTPUT 1 -s 192.0.2.3 -j ACCEPT",
            "-E counted counted2",
            "-D INPUT 2",
            "-F counted2",
            "-X counted2",
            "-D OUTPUT 1",
        ] {
            let w = words(spec);
            let a: Vec<&str> = w.iter().map(String::as_str).collect();
            let o = xtnl(&lock, &a);
            assert!(o.status.success(), "xtnl {spec}: {}", text(&o));
        }
        assert_eq!(counted("iptables-legacy", "filter"), before);
        traffic(3);
        let after = counted("iptables-legacy", "filter");
        assert!(
            after.iter().any(|l| l.contains("-o lo -p udp -c 10 ")),
            "counting stopped: {after:?}"
        );
        // -Z OUTPUT zeroes OUTPUT's rules and policy only.
        assert!(xtnl(&lock, &["-Z", "OUTPUT"]).status.success());
        let zeroed = counted("iptables-legacy", "filter");
        assert!(
            zeroed.contains(&"-P OUTPUT ACCEPT -c 0 0".to_string()),
            "{zeroed:?}"
        );
        assert!(
            zeroed.iter().any(|l| l.contains("-o lo -p udp -c 0 0")),
            "{zeroed:?}"
        );
        assert_eq!(
            zeroed
                .iter()
                .filter(|l| l.contains("INPUT"))
                .collect::<Vec<_>>(),
            after
                .iter()
                .filter(|l| l.contains("INPUT"))
                .collect::<Vec<_>>()
        );
        // xtnl's own listing shows the same counters iptables-legacy does.
        let ours = xtnl(&lock, &["-S", "-v"]);
        assert_eq!(
            String::from_utf8_lossy(&ours.stdout),
            run_ok("iptables-legacy", &["-S", "-v"])
        );
        let ours = xtnl(&lock, &["-L", "-n", "-v", "-x"]);
        assert_eq!(
            String::from_utf8_lossy(&ours.stdout),
            run_ok("iptables-legacy", &["-L", "-n", "-v", "-x"])
        );
    });
}

/// A 5,000-rule table (loaded by iptables-legacy-restore): xtnl's edits in one namespace and
/// iptables-legacy's same edits in another leave byte-identical tables, and both tools list
/// them the same way.
#[test]
fn five_thousand_rule_table() {
    common::require_kernel!();
    let mut file =
        String::from("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n");
    for c in 0..50 {
        file.push_str(&format!(":chain-{c} - [0:0]\n"));
    }
    for i in 0..5000 {
        let chain = if i % 2 == 0 {
            "INPUT".to_string()
        } else {
            format!("chain-{}", i % 50)
        };
        file.push_str(&format!(
            "-A {chain} -s 10.{}.{}.0/24 -p tcp -m tcp --dport {} -m comment --comment \"rule {i}\" -j ACCEPT\n",
            i / 256 % 256,
            i % 256,
            1000 + i
        ));
    }
    file.push_str("-A INPUT -j chain-7\nCOMMIT\n");
    let edits: &'static [&'static str] = &[
        "-I INPUT 1250 -s 192.0.2.1 -j DROP",
        "-A chain-7 -d 198.51.100.7 -j RETURN",
        "-D INPUT -s 10.0.4.0/24 -p tcp -m tcp --dport 1004 -m comment --comment \"rule 4\" -j ACCEPT",
        "-R chain-9 3 -p udp --dport 53 -j ACCEPT",
        "-N late",
        "-F chain-11",
        "-X chain-11",
        "-D INPUT 2000",
    ];
    let run_side = |tool: &'static str, file: String| {
        in_netns(move || {
            let lock = private_lock_path();
            let lock = lock.to_str().unwrap().to_owned();
            let path = lock.replace(".lock", ".rules");
            std::fs::write(&path, &file).unwrap();
            run_ok("iptables-legacy-restore", &[&path]);
            let start = std::time::Instant::now();
            for e in edits {
                let w = words(e);
                let a: Vec<&str> = w.iter().map(String::as_str).collect();
                let o = if tool == "xtnl" {
                    xtnl(&lock, &a)
                } else {
                    run_env(tool, &a, &[("XTABLES_LOCKFILE", lock.as_str())])
                };
                assert!(o.status.success(), "{tool} {e}: {}", text(&o));
            }
            let _ = start;
            let listing = run_ok("iptables-legacy", &["-S"]);
            let ours = xtnl(&lock, &["-S"]);
            assert_eq!(String::from_utf8_lossy(&ours.stdout), listing, "{tool}: -S");
            (raw_table(Family::Ipv4, "filter"), listing)
        })
    };
    let (ours, ours_list) = run_side("xtnl", file.clone());
    let (theirs, theirs_list) = run_side("iptables-legacy", file);
    // 5,000 + the jump to chain-7, + 2 added, - 2 deleted, - chain-11's 100.
    assert_eq!(
        ours_list.lines().filter(|l| l.starts_with("-A")).count(),
        4901
    );
    assert_eq!(ours_list, theirs_list);
    assert_eq!(ours.0, theirs.0);
    assert!(
        ours.1 == theirs.1,
        "{}",
        first_difference(&ours.1, &theirs.1)
    );
}

/// `xtnl restore` and `xtnl save` on the legacy backend against iptables-legacy-restore and
/// iptables-legacy-save: the same tables byte for byte, the same saved text (less the
/// comment lines), with and without --noflush.
#[test]
fn restore_and_save_as_iptables_legacy() {
    common::require_kernel!();
    const FILE: &str = "*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n:vcld-1 - [0:0]\n-A PREROUTING -m comment --comment \"VCL: jump\" -j vcld-1\n-A POSTROUTING ! -d 10.0.0.0/20 -o eth1 -j MASQUERADE\n-A vcld-1 -i eth1 -p tcp -m tcp --dport 50443 -j DNAT --to-destination 192.0.2.3:3389\nCOMMIT\n*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:vcl-nat_host - [0:0]\n-A INPUT -j vcl-nat_host\n-A vcl-nat_host -i eth1 -o eth0 -m state --state RELATED,ESTABLISHED -j ACCEPT\nCOMMIT\n";
    const MORE: &str =
        "*filter\n:extra - [0:0]\n-A extra -s 192.0.2.0/24 -j DROP\n-I INPUT 1 -j extra\nCOMMIT\n";
    let side = |tool: &'static str| {
        in_netns(move || {
            let lock = private_lock_path();
            let lock = lock.to_str().unwrap().to_owned();
            let path = lock.replace(".lock", ".rules");
            let mut snapshots = Vec::new();
            for (content, noflush) in [(FILE, false), (MORE, true), (FILE, false)] {
                std::fs::write(&path, content).unwrap();
                let mut args = vec![];
                if noflush {
                    args.push("--noflush");
                }
                args.push(path.as_str());
                let o = if tool == "xtnl" {
                    let mut a = vec!["--backend", "legacy", "restore"];
                    a.extend(args);
                    run_env(
                        common::xtnl_bin(),
                        &a,
                        &[("XTABLES_LOCKFILE", lock.as_str())],
                    )
                } else {
                    run_env(tool, &args, &[("XTABLES_LOCKFILE", lock.as_str())])
                };
                assert!(o.status.success(), "{tool}: {}", text(&o));
                let saved: String = run_ok("iptables-legacy-save", &[])
                    .lines()
                    .filter(|l| !l.starts_with('#'))
                    .map(|l| format!("{l}\n"))
                    .collect();
                let ours: String = String::from_utf8_lossy(
                    &run_env(common::xtnl_bin(), &["--backend", "legacy", "save"], &[]).stdout,
                )
                .lines()
                .filter(|l| !l.starts_with('#'))
                .map(|l| format!("{l}\n"))
                .collect();
                assert_eq!(ours, saved, "xtnl save after {tool}");
                snapshots.push((
                    saved,
                    raw_table(Family::Ipv4, "filter"),
                    raw_table(Family::Ipv4, "nat"),
                ));
            }
            snapshots
        })
    };
    let ours = side("xtnl");
    let theirs = side("iptables-legacy-restore");
    for (i, (o, t)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(o.0, t.0, "step {i}: saved text");
        assert!(
            o.1 == t.1,
            "step {i}: filter: {}",
            first_difference(&o.1.1, &t.1.1)
        );
        assert!(
            o.2 == t.2,
            "step {i}: nat: {}",
            first_difference(&o.2.1, &t.2.1)
        );
    }
    assert!(
        ours[1].0.contains("-A extra -s 192.0.2.0/24 -j DROP"),
        "{}",
        ours[1].0
    );
}

/// `--backend auto` follows the host's iptables command (here a PATH holding an `iptables`
/// that resolves to xtables-legacy-multi, then one resolving to xtables-nft-multi); `-v`
/// says which backend and why on standard error.
#[test]
fn auto_backend_follows_the_iptables_command() {
    in_netns(|| {
        let lock = private_lock_path();
        let dir = lock.with_extension("bin");
        std::fs::create_dir_all(&dir).unwrap();
        let link = dir.join("iptables");
        let lock = lock.to_str().unwrap().to_owned();
        for (target, want) in [
            ("/usr/sbin/xtables-legacy-multi", "legacy"),
            ("/usr/sbin/xtables-nft-multi", "nft"),
        ] {
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(target, &link).unwrap();
            let path = dir.to_str().unwrap();
            let o = run_env(
                common::xtnl_bin(),
                &["-v", "-A", "INPUT", "-s", "192.0.2.77", "-j", "DROP"],
                &[
                    ("XTABLES_LOCKFILE", lock.as_str()),
                    ("PATH", path),
                    ("XTNL_BACKEND", ""),
                ],
            );
            assert!(o.status.success(), "{}", text(&o));
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains(&format!("backend {want} (auto: ")) && err.contains(target),
                "{err}"
            );
            let legacy = run_ok("iptables-legacy", &["-S", "INPUT"]);
            let nft = run_ok("iptables-nft", &["-S", "INPUT"]);
            let (has, lacks) = if want == "legacy" {
                (&legacy, &nft)
            } else {
                (&nft, &legacy)
            };
            assert!(has.contains("192.0.2.77"), "{want}: {has}");
            assert!(!lacks.contains("192.0.2.77"), "{want}: {lacks}");
            run_ok(
                if want == "legacy" {
                    "iptables-legacy"
                } else {
                    "iptables-nft"
                },
                &["-F"],
            );
        }
    });
}
