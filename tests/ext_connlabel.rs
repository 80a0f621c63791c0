//! `-m connlabel` against the real iptables, both backends, IPv4 and IPv6: each rule is
//! written by one tool and listed (`-S`; `-L` and `-nL` too when iptables wrote it), checked (`-C`) and deleted (`-D`) by the other,
//! in every table. A test of its own beside tests/ext_diff.rs because iptables prints a
//! warning on stderr for each connlabel rule it lists when /etc/xtables/connlabel.conf is
//! missing (as on a stock Debian host): the listings are compared on stdout, and iptables'
//! stderr is checked to hold nothing but that warning.

mod common;

use std::process::Output;

use common::{in_netns, private_lock_path, run};

/// (table, chain, rule)
const SPECS: &[(&str, &str, &str)] = &[
    ("filter", "INPUT", "-m connlabel --label 40 -j ACCEPT"),
    (
        "filter",
        "OUTPUT",
        "-m connlabel ! --label 41 --set -j DROP",
    ),
    ("filter", "FORWARD", "-m connlabel --label 0x7f"),
    ("nat", "PREROUTING", "-m connlabel --label 0 -j RETURN"),
    ("nat", "POSTROUTING", "-m connlabel ! --label 5 -j RETURN"),
    (
        "mangle",
        "PREROUTING",
        "-m connlabel --label 12 --set -j MARK --set-mark 0xc",
    ),
    ("mangle", "FORWARD", "-p tcp -m connlabel ! --label 127"),
    ("raw", "OUTPUT", "-m connlabel --label 1 -j ACCEPT"),
];

const WARNING: &str = "Warning: cannot open /etc/xtables/connlabel.conf";

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn all(o: &Output) -> String {
    format!("{}{}", out(o), String::from_utf8_lossy(&o.stderr))
}

fn check(oracle: &'static str, legacy: bool, six: bool) -> Vec<String> {
    in_netns(move || {
        let lock = private_lock_path();
        let lock = lock.to_str().expect("utf-8 path").to_owned();
        let mut base: Vec<&str> = Vec::new();
        if legacy {
            base.extend(["--backend", "legacy"]);
        }
        if six {
            base.push("-6");
        }
        let xtnl = |args: &[&str]| -> Output {
            let mut a = base.clone();
            a.extend(args);
            common::run_env(
                common::xtnl_bin(),
                &a,
                &[("XTABLES_LOCKFILE", lock.as_str())],
            )
        };
        let mut failures = Vec::new();
        for (table, chain, rule) in SPECS {
            let words = xtnl::ipt::parse::split_words(rule).expect("splits");
            let args = |cmd: &'static str| -> Vec<&str> {
                let mut v = vec!["-t", table, cmd, chain];
                v.extend(words.iter().map(String::as_str));
                v
            };
            let list_theirs = || {
                let o = run(oracle, &["-t", table, "-S", chain]);
                let stray: Vec<&str> = std::str::from_utf8(&o.stderr)
                    .unwrap_or("")
                    .lines()
                    .filter(|l| !l.starts_with(WARNING))
                    .collect();
                (out(&o), stray.join("\n"))
            };
            let mut bad = Vec::new();
            // xtnl writes; the oracle lists, checks, deletes.
            let o = xtnl(&args("-A"));
            if !o.status.success() {
                bad.push(format!("xtnl -A: {}", all(&o)));
            } else {
                let ours = out(&xtnl(&["-t", table, "-S", chain]));
                let (theirs, stray) = list_theirs();
                if ours != theirs || !stray.is_empty() {
                    bad.push(format!(
                        "written by xtnl: {oracle} [{theirs}{stray}] xtnl [{ours}]"
                    ));
                }
                for cmd in ["-C", "-D"] {
                    let o = run(oracle, &args(cmd));
                    if !o.status.success() {
                        bad.push(format!("written by xtnl, {oracle} {cmd}: {}", all(&o)));
                    }
                }
            }
            let _ = run(oracle, &["-t", table, "-F", chain]);
            // The oracle writes; xtnl lists, checks, deletes.
            let o = run(oracle, &args("-A"));
            if !o.status.success() {
                bad.push(format!("{oracle} -A: {}", all(&o)));
            } else {
                let ours = xtnl(&["-t", table, "-S", chain]);
                let (theirs, _) = list_theirs();
                if out(&ours) != theirs || !ours.stderr.is_empty() {
                    bad.push(format!("written by {oracle}: {theirs} xtnl {}", all(&ours)));
                }
                // `-L` and `-nL` (stdout only: iptables warns on stderr).
                for opts in [&["-L"][..], &["-n", "-L"][..]] {
                    let mut a = vec!["-t", table];
                    a.extend(opts);
                    a.push(chain);
                    let (theirs, ours) = (out(&run(oracle, &a)), out(&xtnl(&a)));
                    if theirs != ours {
                        bad.push(format!("{opts:?}: {oracle} [{theirs}] xtnl [{ours}]"));
                    }
                }
                for cmd in ["-C", "-D"] {
                    let o = xtnl(&args(cmd));
                    if !o.status.success() {
                        bad.push(format!("written by {oracle}, xtnl {cmd}: {}", all(&o)));
                    }
                }
                if list_theirs().0.lines().any(|l| l.starts_with("-A")) {
                    bad.push("left behind".to_string());
                }
            }
            let _ = run(oracle, &["-t", table, "-F", chain]);
            if !bad.is_empty() {
                failures.push(format!("{table} {chain} {rule}\n  {}", bad.join("\n  ")));
            }
        }
        failures
    })
}

#[test]
fn connlabel_against_iptables_nft_and_legacy() {
    let mut failures = Vec::new();
    for (oracle, legacy, six) in [
        ("iptables-nft", false, false),
        ("ip6tables-nft", false, true),
        ("iptables-legacy", true, false),
        ("ip6tables-legacy", true, true),
    ] {
        failures.extend(check(oracle, legacy, six));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
