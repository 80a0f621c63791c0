//! The extension registry against the real iptables: every spec of tests/ext_corpus is
//! written by one tool and listed (`-S`), checked (`-C`) and deleted (`-D`) by the other,
//! on the nf_tables backend against iptables-nft and on the x_tables backend against
//! iptables-legacy, IPv4 and IPv6.

mod common;
mod ext_corpus;

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

fn words(s: &str) -> Vec<String> {
    xtnl::ipt::parse::split_words(s).expect("the test's command line splits")
}

/// Runs the corpus of one family against `oracle` (`iptables-nft`, `ip6tables-legacy`...);
/// `legacy` selects xtnl's x_tables backend. Returns the failures.
fn check(oracle: &'static str, legacy: bool, six: bool, corpus: Vec<ExtSpec>) -> Vec<String> {
    in_netns(move || {
        let lock = private_lock_path();
        let lock = lock.to_str().unwrap().to_owned();
        let mut base: Vec<String> = Vec::new();
        if legacy {
            base.extend(["--backend".into(), "legacy".into()]);
        }
        if six {
            base.push("-6".into());
        }
        let xtnl = |args: &[String]| -> Output {
            let mut a = base.clone();
            a.extend(args.iter().cloned());
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            common::run_env(
                common::xtnl_bin(),
                &a,
                &[("XTABLES_LOCKFILE", lock.as_str())],
            )
        };
        let call = |tool: &str, args: &[String]| -> Output {
            if tool == "xtnl" {
                xtnl(args)
            } else {
                let a: Vec<&str> = args.iter().map(String::as_str).collect();
                run(tool, &a)
            }
        };
        make_sets();
        for table in ["filter", "nat", "mangle", "raw"] {
            let o = run(oracle, &["-t", table, "-N", "user-chain"]);
            assert!(o.status.success(), "{oracle}: {}", text(&o));
        }
        let mut failures = Vec::new();
        for s in corpus.iter().filter(|s| s.six == six) {
            let rule = words(&s.rule);
            let args = |cmd: &str| -> Vec<String> {
                let mut v = vec!["-t".to_string(), s.table.into(), cmd.into(), s.chain.into()];
                v.extend(rule.iter().cloned());
                v
            };
            let list = |tool: &str| -> String {
                let a: Vec<String> = vec!["-t".into(), s.table.into(), "-S".into(), s.chain.into()];
                text(&call(tool, &a))
            };
            let name = format!("{} {} {}", s.table, s.chain, s.rule);
            let mut bad = Vec::new();
            // xtnl writes; the oracle lists, checks, deletes.
            let o = call("xtnl", &args("-A"));
            if !o.status.success() {
                bad.push(format!("xtnl -A failed: {}", text(&o)));
            } else {
                let (ours, theirs) = (list("xtnl"), list(oracle));
                if ours != theirs {
                    bad.push(format!(
                        "written by xtnl, -S differs:\n  {oracle}: {theirs}  xtnl: {ours}"
                    ));
                }
                for (who, cmd) in [(oracle, "-C"), ("xtnl", "-C"), (oracle, "-D")] {
                    let o = call(who, &args(cmd));
                    if !o.status.success() {
                        bad.push(format!("written by xtnl, {who} {cmd} failed: {}", text(&o)));
                    }
                }
            }
            let _ = call(
                oracle,
                &["-t".into(), s.table.into(), "-F".into(), s.chain.into()],
            );
            // The oracle writes; xtnl lists, checks, deletes.
            let o = call(oracle, &args("-A"));
            if !o.status.success() {
                bad.push(format!("{oracle} -A failed: {}", text(&o)));
            } else {
                let (ours, theirs) = (list("xtnl"), list(oracle));
                if ours != theirs {
                    bad.push(format!(
                        "written by {oracle}, -S differs:\n  {oracle}: {theirs}  xtnl: {ours}"
                    ));
                }
                for cmd in ["-C", "-D"] {
                    let o = call("xtnl", &args(cmd));
                    if !o.status.success() {
                        bad.push(format!(
                            "written by {oracle}, xtnl {cmd} failed: {}",
                            text(&o)
                        ));
                    }
                }
                let after = list(oracle);
                if after.lines().any(|l| l.starts_with("-A")) {
                    bad.push(format!("left behind: {after}"));
                }
            }
            let _ = call(
                oracle,
                &["-t".into(), s.table.into(), "-F".into(), s.chain.into()],
            );
            if !bad.is_empty() {
                failures.push(format!("{name}\n  {}", bad.join("\n  ")));
            }
        }
        failures
    })
}

fn assert_clean(what: &str, failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{what}: {} specs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn corpus_is_large_and_covers_every_table() {
    let c = ext_corpus();
    assert!(c.len() >= 300, "corpus has {} specs", c.len());
    for t in ["filter", "nat", "mangle", "raw"] {
        assert!(c.iter().filter(|s| s.table == t).count() >= 40, "{t}");
    }
}

#[test]
fn ipv4_extensions_against_iptables_nft() {
    common::require_kernel!();
    assert_clean(
        "iptables-nft",
        check("iptables-nft", false, false, ext_corpus()),
    );
}

#[test]
fn ipv6_extensions_against_ip6tables_nft() {
    common::require_kernel!();
    assert_clean(
        "ip6tables-nft",
        check("ip6tables-nft", false, true, ext_corpus()),
    );
}

#[test]
fn ipv4_extensions_against_iptables_legacy() {
    common::require_kernel!();
    assert_clean(
        "iptables-legacy",
        check("iptables-legacy", true, false, ext_corpus()),
    );
}

#[test]
fn ipv6_extensions_against_ip6tables_legacy() {
    common::require_kernel!();
    assert_clean(
        "ip6tables-legacy",
        check("ip6tables-legacy", true, true, ext_corpus()),
    );
}
