//! `-m rateest` against the real iptables, and the kernel objects IDLETIMER and RATEEST
//! rules create.
//!
//! rateest rules name rate estimators that RATEEST rules create, and the kernel refuses one
//! naming an estimator no rule has made; so these specs are not in the shared corpus (whose
//! runs flush each chain): here two estimators are made first by RATEEST rules in a chain
//! of their own, then every spec is written by one tool and listed (`-S`, `-L`, `-nL`),
//! checked and deleted by the other, on both backends, IPv4 and IPv6.
//!
//! IDLETIMER's timers are the kernel's for the whole machine (one per label, a file in
//! `/sys/class/xt_idletimer/timers/`), and RATEEST's estimators the namespace's: both must go
//! with the last rule using them, and the timers with the test's namespace.

mod common;

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use common::{in_netns, private_lock_path, run, run_env};

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The estimators the specs name, as RATEEST options.
const ESTIMATORS: [&str; 2] = [
    "--rateest-name xtnl-e1 --rateest-interval 250ms --rateest-ewmalog 1s",
    "--rateest-name xtnl-e2 --rateest-interval 500ms --rateest-ewmalog 2s",
];

/// (rule, table, chain)
const SPECS: &[(&str, &str, &str)] = &[
    (
        "-m rateest --rateest xtnl-e1 --rateest-lt --rateest-bps 8bit",
        "filter",
        "INPUT",
    ),
    (
        "-m rateest --rateest xtnl-e1 --rateest-eq --rateest-pps 5 -j DROP",
        "filter",
        "FORWARD",
    ),
    (
        "-m rateest --rateest xtnl-e1 --rateest-gt --rateest-bps 5kbit",
        "filter",
        "OUTPUT",
    ),
    (
        "-m rateest --rateest xtnl-e2 ! --rateest-gt --rateest-bps 2mbit -j ACCEPT",
        "mangle",
        "PREROUTING",
    ),
    (
        "-m rateest --rateest xtnl-e1 --rateest-lt --rateest-bps 10gbit",
        "mangle",
        "POSTROUTING",
    ),
    (
        "-m rateest --rateest xtnl-e1 --rateest-gt --rateest-bps 1KiBps --rateest-pps 3",
        "mangle",
        "FORWARD",
    ),
    (
        "-m rateest --rateest-delta --rateest xtnl-e1 --rateest-bps1 8bit --rateest-lt --rateest-bps2 16bit",
        "filter",
        "INPUT",
    ),
    (
        "-m rateest --rateest1 xtnl-e1 --rateest-lt --rateest-bps --rateest2 xtnl-e2 -j RETURN",
        "nat",
        "PREROUTING",
    ),
    (
        "-m rateest --rateest1 xtnl-e2 ! --rateest-eq --rateest-pps --rateest2 xtnl-e1",
        "nat",
        "OUTPUT",
    ),
    (
        "-m rateest --rateest-delta --rateest1 xtnl-e1 --rateest-pps1 0 --rateest-lt --rateest-pps2 42 --rateest2 xtnl-e2",
        "raw",
        "PREROUTING",
    ),
    (
        "-m rateest --rateest-delta --rateest xtnl-e2 --rateest-pps1 8 --rateest-gt --rateest-pps2 9",
        "raw",
        "OUTPUT",
    ),
    (
        "-p tcp -m rateest --rateest-delta --rateest xtnl-e1 --rateest-bps1 3MBps --rateest-eq --rateest-bps2 1000",
        "mangle",
        "OUTPUT",
    ),
];

fn words(s: &str) -> Vec<String> {
    xtnl::ipt::parse::split_words(s).expect("the test's command line splits")
}

/// Every spec both ways against `oracle`; returns the failures.
fn check(oracle: &'static str, legacy: bool, six: bool) -> Vec<String> {
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
            run_env(
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
        let o = run(oracle, &["-N", "xtnl-est"]);
        assert!(o.status.success(), "{oracle}: {}", text(&o));
        for e in ESTIMATORS {
            let mut a = vec![
                "-A".to_string(),
                "xtnl-est".into(),
                "-j".into(),
                "RATEEST".into(),
            ];
            a.extend(words(e));
            let o = call(oracle, &a);
            assert!(o.status.success(), "{oracle} RATEEST: {}", text(&o));
        }
        let mut failures = Vec::new();
        for &(rule, table, chain) in SPECS {
            let rule_words = words(rule);
            let args = |cmd: &str| -> Vec<String> {
                let mut v = vec!["-t".to_string(), table.into(), cmd.into(), chain.into()];
                v.extend(rule_words.iter().cloned());
                v
            };
            let list = |tool: &str, how: &[&str]| -> String {
                let mut a: Vec<String> = vec!["-t".into(), table.into()];
                a.extend(how.iter().map(|s| s.to_string()));
                a.push(chain.into());
                // stdout (`xtnl -v` names its backend on stderr).
                String::from_utf8_lossy(&call(tool, &a).stdout).into_owned()
            };
            let flush = || {
                call(
                    oracle,
                    &["-t".into(), table.into(), "-F".into(), chain.into()],
                );
            };
            let mut bad = Vec::new();
            for writer in ["xtnl", oracle] {
                let reader = if writer == "xtnl" { oracle } else { "xtnl" };
                let o = call(writer, &args("-A"));
                if !o.status.success() {
                    bad.push(format!("{writer} -A failed: {}", text(&o)));
                    continue;
                }
                for how in [&["-S"][..], &["-L"], &["-n", "-L"], &["-n", "-v", "-L"]] {
                    let (t, x) = (list(oracle, how), list("xtnl", how));
                    if t != x {
                        bad.push(format!(
                            "written by {writer}, {how:?}:\n{oracle}:\n{t}xtnl:\n{x}"
                        ));
                    }
                }
                for (who, cmd) in [(reader, "-C"), (writer, "-C"), (reader, "-D")] {
                    let o = call(who, &args(cmd));
                    if !o.status.success() {
                        bad.push(format!("written by {writer}, {who} {cmd}: {}", text(&o)));
                    }
                }
                if list(oracle, &["-S"]).lines().any(|l| l.starts_with("-A")) {
                    bad.push(format!("written by {writer}: left behind"));
                }
                flush();
            }
            if !bad.is_empty() {
                failures.push(format!("{table} {chain} {rule}\n  {}", bad.join("\n  ")));
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
fn rateest_against_iptables_nft() {
    common::require_kernel!();
    assert_clean("iptables-nft", check("iptables-nft", false, false));
    assert_clean("ip6tables-nft", check("ip6tables-nft", false, true));
}

#[test]
fn rateest_against_iptables_legacy() {
    common::require_kernel!();
    assert_clean("iptables-legacy", check("iptables-legacy", true, false));
    assert_clean("ip6tables-legacy", check("ip6tables-legacy", true, true));
}

/// Waits up to 20 s for `done` (the kernel frees x_tables targets of a deleted nf_tables
/// rule, and everything of a dead namespace, from a work queue).
fn eventually(done: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

fn timer_file(label: &str) -> std::path::PathBuf {
    Path::new("/sys/class/xt_idletimer/timers").join(label)
}

/// An IDLETIMER rule written by xtnl makes its timer, `-D` removes it, and a rule left in
/// the namespace goes with it; a RATEEST rule makes the estimator a rateest rule needs, and
/// `-D` frees it (the rateest rule is then refused, as by iptables).
#[test]
fn idletimer_timers_and_rateest_estimators_go_with_their_rules() {
    common::require_kernel!();
    for legacy in [false, true] {
        // Labels are the machine's: one of this run's own.
        let label = format!("xtnl-{}-{}", std::process::id(), u8::from(legacy));
        let (l, kept) = (label.clone(), format!("{label}k"));
        let k = kept.clone();
        in_netns(move || {
            let lock = private_lock_path();
            let lock = lock.to_str().unwrap().to_owned();
            let xtnl = |args: &str| -> Output {
                let mut a: Vec<String> = Vec::new();
                if legacy {
                    a.extend(["--backend".into(), "legacy".into()]);
                }
                a.extend(words(args));
                let a: Vec<&str> = a.iter().map(String::as_str).collect();
                run_env(
                    common::xtnl_bin(),
                    &a,
                    &[("XTABLES_LOCKFILE", lock.as_str())],
                )
            };
            let ok = |args: &str| {
                let o = xtnl(args);
                assert!(o.status.success(), "xtnl {args}: {}", text(&o));
            };
            let timer = format!("-A INPUT -j IDLETIMER --timeout 60 --label {l}");
            ok(&timer);
            assert!(timer_file(&l).exists(), "the timer {l} exists");
            ok(&timer.replacen("-A", "-D", 1));
            assert!(eventually(|| !timer_file(&l).exists()), "-D removed {l}");
            ok(&format!(
                "-A OUTPUT -j IDLETIMER --timeout 60 --label {k} --alarm"
            ));
            assert!(timer_file(&k).exists(), "the timer {k} exists");

            let est = "-A FORWARD -j RATEEST --rateest-name xtnl-gone --rateest-interval 1s --rateest-ewmalog 4s";
            let uses = "-A INPUT -m rateest --rateest xtnl-gone --rateest-lt --rateest-pps 5";
            let o = xtnl(uses);
            assert!(!o.status.success(), "no estimator yet: {}", text(&o));
            ok(est);
            ok(uses);
            ok(&uses.replacen("-A", "-D", 1));
            ok(&est.replacen("-A", "-D", 1));
            assert!(
                eventually(|| !xtnl(uses).status.success()),
                "the estimator went with its rule"
            );
        });
        assert!(
            eventually(|| !timer_file(&kept).exists()),
            "the timer {kept} went with the namespace"
        );
    }
}

/// Rules the kernel refuses (no LSM to map a SECMARK context, no nfacct object or rate
/// estimator of that name, CONNSECMARK outside mangle/security, LED on a kernel without
/// the LED class): xtnl fails with iptables-legacy's words and status on both backends
/// (iptables-nft says `RULE_APPEND failed (...)`, status 4), iptables refuses them too, and
/// nothing changes.
const KERNEL_REFUSES: &[(&str, &str)] = &[
    (
        "-t security -A INPUT -j SECMARK --selctx system_u:object_r:xtnl_t:s0",
        "iptables: No chain/target/match by that name.",
    ),
    (
        "-A INPUT -m nfacct --nfacct-name xtnl-no-such-object",
        "iptables: No chain/target/match by that name.",
    ),
    (
        "-A INPUT -m rateest --rateest nosuch --rateest-lt --rateest-pps 1",
        "iptables: No chain/target/match by that name.",
    ),
    ("-A INPUT -j CONNSECMARK --save", "Invalid argument"),
];

#[test]
fn kernel_refusals_are_reported_and_change_nothing() {
    in_netns(|| {
        let lock = private_lock_path();
        let lock = lock.to_str().expect("utf-8 path").to_owned();
        // The rules of both (an x_tables table the kernel instantiates at first use shows
        // up empty in iptables-legacy-save, as after iptables-legacy).
        let state = || {
            let legacy = text(&run("iptables-legacy-save", &[]));
            let rules: Vec<String> = legacy
                .lines()
                .filter(|l| l.starts_with("-A"))
                .map(str::to_owned)
                .collect();
            (common::nft_ruleset(), rules)
        };
        let mut failures = Vec::new();
        for legacy in [false, true] {
            let oracle = if legacy {
                "iptables-legacy"
            } else {
                "iptables-nft"
            };
            for (line, needle) in KERNEL_REFUSES {
                let w = words(line);
                let mut a: Vec<&str> = if legacy {
                    vec!["--backend", "legacy"]
                } else {
                    vec![]
                };
                a.extend(w.iter().map(String::as_str));
                let before = state();
                let o = run_env(
                    common::xtnl_bin(),
                    &a,
                    &[("XTABLES_LOCKFILE", lock.as_str())],
                );
                let msg = text(&o);
                if o.status.code() != Some(1) || !msg.contains(needle) {
                    failures.push(format!("{oracle} {line}: {:?} {msg}", o.status.code()));
                }
                if state() != before {
                    failures.push(format!("{oracle} {line}: xtnl changed the ruleset"));
                }
                let w: Vec<&str> = w.iter().map(String::as_str).collect();
                let t = run(oracle, &w);
                if t.status.success() {
                    failures.push(format!("{oracle} accepted {line}"));
                }
                // iptables-legacy says the words xtnl says.
                if legacy && needle.starts_with("iptables:") && !text(&t).contains(needle) {
                    failures.push(format!("{oracle} {line}: {}", text(&t)));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    });
}

/// Refused on purpose where iptables cuts the value silently (docs/extensions.md): status 2,
/// the ruleset unchanged, while iptables-nft accepts a shortened one.
#[test]
fn values_iptables_would_cut_are_refused() {
    in_netns(|| {
        let lock = private_lock_path();
        let lock = lock.to_str().expect("utf-8 path").to_owned();
        for (line, needle) in [
            (
                "-A INPUT -j IDLETIMER --timeout 1 --label xtnl-01234567890123456789012",
                "--label\" is too long (max 27",
            ),
            (
                "-A INPUT -j RATEEST --rateest-name xtnl-0123456789ab --rateest-interval 1s --rateest-ewmalog 4s",
                "--rateest-name\" is too long (max 15",
            ),
            (
                "-A INPUT -m nfacct --nfacct-name xtnl-0123456789012345678901234567",
                "--nfacct-name\" is too long (max 31",
            ),
        ] {
            let w = words(line);
            let a: Vec<&str> = w.iter().map(String::as_str).collect();
            let before = common::nft_ruleset();
            let o = run_env(
                common::xtnl_bin(),
                &a,
                &[("XTABLES_LOCKFILE", lock.as_str())],
            );
            assert_eq!(o.status.code(), Some(2), "{line}: {}", text(&o));
            assert!(text(&o).contains(needle), "{line}: {}", text(&o));
            assert_eq!(common::nft_ruleset(), before, "{line}");
        }
    });
}
