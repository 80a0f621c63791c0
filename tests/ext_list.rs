//! `-L` output of the registry modules against the real iptables: every spec of
//! tests/ext_corpus is written by iptables, then each chain is listed by iptables and by
//! xtnl with `-nL`, `-L` and `-nvL --line-numbers` and compared line by line (counters are
//! all zero: no packet passes). This is the text programs that parse `iptables -nL` read.
//! nf_tables backend against iptables-nft, x_tables backend against iptables-legacy, IPv4
//! and IPv6.

mod common;
mod ext_corpus;

use std::collections::BTreeMap;
use std::process::Output;

use common::{in_netns, private_lock_path, run};
use ext_corpus::{ExtSpec, ext_corpus, make_sets};

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The listing modes compared: options before `-L CHAIN`, and after.
const MODES: &[(&[&str], &[&str])] = &[
    (&["-n"], &[]),
    (&[], &[]),
    (&["-n", "-v"], &["--line-numbers"]),
];

/// Writes the corpus of one family with `oracle`, lists every chain both ways, and returns
/// the lines that differ (with the rule they belong to).
fn check(oracle: &'static str, legacy: bool, six: bool, corpus: Vec<ExtSpec>) -> Vec<String> {
    in_netns(move || {
        let lock = private_lock_path();
        let lock = lock.to_str().unwrap().to_owned();
        let xtnl = |args: &[&str]| -> Output {
            let mut a: Vec<&str> = Vec::new();
            if legacy {
                a.extend(["--backend", "legacy"]);
            }
            if six {
                a.push("-6");
            }
            a.extend(args);
            common::run_env(
                common::xtnl_bin(),
                &a,
                &[("XTABLES_LOCKFILE", lock.as_str())],
            )
        };
        make_sets();
        for table in ["filter", "nat", "mangle", "raw"] {
            let o = run(oracle, &["-t", table, "-N", "user-chain"]);
            assert!(o.status.success(), "{oracle}: {}", text(&o));
        }
        // The rules of each chain, in the order they were appended.
        let mut chains: BTreeMap<(&str, &str), Vec<String>> = BTreeMap::new();
        for s in corpus.iter().filter(|s| s.six == six) {
            let words = xtnl::ipt::parse::split_words(&s.rule).expect("the spec splits");
            let mut a: Vec<&str> = vec!["-t", s.table, "-A", s.chain];
            a.extend(words.iter().map(String::as_str));
            let o = run(oracle, &a);
            assert!(o.status.success(), "{oracle} -A {}: {}", s.rule, text(&o));
            chains
                .entry((s.table, s.chain))
                .or_default()
                .push(s.rule.clone());
        }
        let mut failures = Vec::new();
        for ((table, chain), rules) in &chains {
            for (before, after) in MODES {
                let mut a: Vec<&str> = vec!["-t", table];
                a.extend(before.iter());
                a.extend(["-L", chain]);
                a.extend(after.iter());
                let mode = &a[2..];
                let theirs = run(oracle, &a);
                let ours = xtnl(&a);
                assert!(theirs.status.success(), "{oracle}: {}", text(&theirs));
                assert!(ours.status.success(), "xtnl {a:?}: {}", text(&ours));
                let theirs = String::from_utf8_lossy(&theirs.stdout).into_owned();
                let ours = String::from_utf8_lossy(&ours.stdout).into_owned();
                let (t, o): (Vec<&str>, Vec<&str>) =
                    (theirs.lines().collect(), ours.lines().collect());
                assert_eq!(
                    t.len(),
                    o.len(),
                    "{table} {chain} {mode:?}: line counts differ\n{oracle}:\n{theirs}xtnl:\n{ours}"
                );
                for (i, (t, o)) in t.iter().zip(&o).enumerate() {
                    if t != o {
                        let rule = i.checked_sub(2).and_then(|k| rules.get(k));
                        failures.push(format!(
                            "{table} {chain} {mode:?} {}\n  {oracle}: {t}\n  xtnl:   {o}",
                            rule.map(String::as_str).unwrap_or("(header)")
                        ));
                    }
                }
            }
        }
        failures
    })
}

fn assert_clean(what: &str, failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{what}: {} listing lines differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn ipv4_listing_against_iptables_nft() {
    assert_clean(
        "iptables-nft",
        check("iptables-nft", false, false, ext_corpus()),
    );
}

#[test]
fn ipv6_listing_against_ip6tables_nft() {
    assert_clean(
        "ip6tables-nft",
        check("ip6tables-nft", false, true, ext_corpus()),
    );
}

#[test]
fn ipv4_listing_against_iptables_legacy() {
    assert_clean(
        "iptables-legacy",
        check("iptables-legacy", true, false, ext_corpus()),
    );
}

#[test]
fn ipv6_listing_against_ip6tables_legacy() {
    assert_clean(
        "ip6tables-legacy",
        check("ip6tables-legacy", true, true, ext_corpus()),
    );
}
