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
