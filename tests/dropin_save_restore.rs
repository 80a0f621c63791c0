//! restore and save as scripts use them, compared with the real tools in twin namespaces
//! (iptables-nft-restore/-save for the nf_tables backend, iptables-legacy-restore/-save for
//! x_tables): options, `:CHAIN` under --noflush, `-I CHAIN N` within a file, counters,
//! comments, table order; and save never losing a rule silently.

mod common;

use common::twin::{Side, Step, links, text, twin_run};
use common::{in_netns, private_lock_path, run_env, run_ok};

fn w(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_owned).collect()
}

/// Masks the date of iptables-save's comment lines (the runs are seconds apart).
fn undate(s: &str) -> String {
    common::undated(s)
        .trim_end_matches('\n')
        .to_owned()
        // The nft tools name themselves as invoked: the oracle runs as iptables-nft-save,
        // xtnl's link is iptables-save.
        .replace("-nft-save", "-save")
        .replace("-nft-restore", "-restore")
}

fn restore(tool: &str, args: &str, input: &str) -> Step {
    Step {
        stdin: Some(input.to_owned()),
        ..Step::new(tool, w(args))
    }
}

fn setup(tool: &str, args: &str) -> Step {
    Step {
        setup: true,
        ..Step::new(tool, w(args))
    }
}

fn sh(line: &str) -> Step {
    Step::new("sh", vec!["-c".into(), line.into()])
}

/// `(name, steps)`: each compared step's status and output, then the saved rulesets.
fn cases() -> Vec<(&'static str, Vec<Step>)> {
    let five = "*raw\n:r - [0:0]\nCOMMIT\n*mangle\n:m - [0:0]\nCOMMIT\n*security\n:s - [0:0]\nCOMMIT\n*nat\n:n - [0:0]\nCOMMIT\n*filter\n:f - [0:0]\nCOMMIT\n";
    vec![
        (
            ":CHAIN under --noflush flushes it; a later -X of what only it referenced works",
            vec![
                setup("iptables", "-N a"),
                setup("iptables", "-N b"),
                setup("iptables", "-A a -j b"),
                setup("iptables", "-A a -s 192.0.2.1"),
                restore(
                    "iptables-restore",
                    "--noflush",
                    "*filter\n:a - [0:0]\n-X b\nCOMMIT\n",
                ),
            ],
        ),
        (
            "-I CHAIN N counts rules added earlier in the same file",
            vec![restore(
                "iptables-restore",
                "",
                "*filter\n:c - [0:0]\n-A c -s 192.0.2.1\n-A c -s 192.0.2.2\n-I c 2 -s 192.0.2.3\n-I c 4 -s 192.0.2.4\n-I c 1 -s 192.0.2.5\n-I c 2 -s 192.0.2.6\n-I c 7 -s 192.0.2.7\n-A INPUT -s 192.0.2.8\n-I INPUT 1 -s 192.0.2.9\n-I INPUT 2 -s 192.0.2.10\nCOMMIT\n",
            )],
        ),
        (
            "-A, then -I at the head and between rules of the file, then among kernel rules",
            vec![
                restore(
                    "iptables-restore",
                    "",
                    "*filter\n-A FORWARD -s 192.0.2.40\n-I FORWARD 1 -s 192.0.2.10\n-I FORWARD 2 -s 192.0.2.20\n-I FORWARD 3 -s 192.0.2.30\nCOMMIT\n",
                ),
                restore(
                    "iptables-restore",
                    "--noflush",
                    "*filter\n-A FORWARD -s 192.0.2.50\n-I FORWARD 1 -s 192.0.2.5\n-I FORWARD 3 -s 192.0.2.15\n-I FORWARD 5 -s 192.0.2.25\n-I FORWARD 9 -s 192.0.2.45\n-I FORWARD 11 -s 192.0.2.55\n-A FORWARD -s 192.0.2.60\n-F FORWARD\n-A FORWARD -s 192.0.2.70\n-I FORWARD 1 -s 192.0.2.65\nCOMMIT\n",
                ),
            ],
        ),
        (
            "-D of rules the file added, by number and by spec, among kernel rules",
            vec![
                setup("iptables", "-A FORWARD -s 192.0.2.1"),
                setup("iptables", "-A FORWARD -s 192.0.2.2"),
                restore(
                    "iptables-restore",
                    "--noflush",
                    "*filter\n-A FORWARD -s 192.0.2.3\n-A FORWARD -s 192.0.2.4\n-I FORWARD 1 -s 192.0.2.5\n-D FORWARD 5\n-D FORWARD -s 192.0.2.3\n-D FORWARD 2\n-I FORWARD 2 -s 192.0.2.6\n-A FORWARD -s 192.0.2.7\nCOMMIT\n",
                ),
            ],
        ),
        (
            "-R then -I before the replaced rule, and -D of a replaced rule",
            vec![
                setup("iptables", "-A FORWARD -s 192.0.2.1"),
                setup("iptables", "-A FORWARD -s 192.0.2.2"),
                setup("iptables", "-A FORWARD -s 192.0.2.3"),
                restore(
                    "iptables-restore",
                    "--noflush",
                    "*filter\n-R FORWARD 2 -s 192.0.2.20\n-I FORWARD 2 -s 192.0.2.15\n-R FORWARD 4 -s 192.0.2.30\n-D FORWARD 4\nCOMMIT\n",
                ),
            ],
        ),
        (
            "-I CHAIN N past the rules of the file",
            vec![restore(
                "iptables-restore",
                "",
                "*filter\n:c - [0:0]\n-A c -s 192.0.2.1\n-I c 3 -s 192.0.2.3\nCOMMIT\n",
            )],
        ),
        (
            "-I CHAIN N among kernel rules and rules of the file (--noflush)",
            vec![
                setup("iptables", "-N c"),
                setup("iptables", "-A c -s 192.0.2.1"),
                setup("iptables", "-A c -s 192.0.2.2"),
                restore(
                    "iptables-restore",
                    "--noflush",
                    "*filter\n-I c 2 -s 192.0.2.3\n-I c 2 -s 192.0.2.4\n-I c 4 -s 192.0.2.5\n-A c -s 192.0.2.6\n-I c 6 -s 192.0.2.7\nCOMMIT\n",
                ),
            ],
        ),
        (
            "comments and blank lines",
            vec![restore(
                "iptables-restore",
                "",
                "# a comment\n\n*filter\n# another\n:c - [0:0]\n\n-A c -j ACCEPT\nCOMMIT\n# end\n",
            )],
        ),
        (
            "-c restores counters; save -c prints them",
            vec![
                restore(
                    "iptables-restore",
                    "-c",
                    "*filter\n:foo - [23:42]\n[13:37] -A foo -j ACCEPT\n-A foo -s 192.0.2.1 -c 5 6\nCOMMIT\n",
                ),
                Step::new("iptables-save", w("-c")),
            ],
        ),
        (
            "without -c the counters start from zero",
            vec![
                restore(
                    "iptables-restore",
                    "",
                    "*filter\n:foo - [23:42]\n[13:37] -A foo -j ACCEPT\nCOMMIT\n",
                ),
                Step::new("iptables-save", w("--counters")),
            ],
        ),
        (
            "-T restores one table of the file",
            vec![restore("iptables-restore", "-T nat", five)],
        ),
        (
            "--table= form",
            vec![restore("iptables-restore", "--table=raw", five)],
        ),
        (
            "--test checks and changes nothing",
            vec![
                // iptables-legacy-restore --test still loads the tables it names; load them
                // first on both sides, so that what is compared is what the test changed.
                setup("iptables", "-t raw -S"),
                setup("iptables", "-t mangle -S"),
                setup("iptables", "-t security -S"),
                setup("iptables", "-t nat -S"),
                setup("iptables", "-S"),
                restore("iptables-restore", "--test", five),
                restore(
                    "iptables-restore",
                    "-t",
                    "*filter\n-A INPUT --bogus\nCOMMIT\n",
                ),
            ],
        ),
        (
            "bundled restore options and -w/-W/-M",
            vec![restore(
                "iptables-restore",
                "-nv -w 5 -M /sbin/modprobe",
                "*filter\n:c - [0:0]\n-A c -j ACCEPT\nCOMMIT\n",
            )],
        ),
        (
            "-4/-6 lines: each family keeps its own",
            vec![
                restore(
                    "iptables-restore",
                    "",
                    "*filter\n:c - [0:0]\n-4 -A c -s 192.0.2.1\n-6 -A c -s 2001:db8::1\nCOMMIT\n",
                ),
                restore(
                    "ip6tables-restore",
                    "",
                    "*filter\n:c - [0:0]\n-4 -A c -s 192.0.2.1\n-6 -A c -s 2001:db8::1\nCOMMIT\n",
                ),
            ],
        ),
        (
            "save prints tables in iptables-save's order, -t one of them, -f into a file",
            vec![
                restore("iptables-restore", "", five),
                Step::new("iptables-save", Vec::new()),
                Step::new("iptables-save", w("-t nat")),
                sh("f=$(mktemp); $SAVE -f \"$f\" -t mangle && cat \"$f\"; rm -f \"$f\""),
            ],
        ),
        (
            "restore -v prints the flushes, deletions and rules (nothing with --noflush)",
            {
                let dump = "*filter\n:foo - [0:0]\n:bar - [0:0]\n-A foo -j ACCEPT\n-A INPUT -s 192.0.2.1 -p tcp --dport 22 -j DROP\nCOMMIT\n*nat\n:natfoo - [0:0]\n-A natfoo -j ACCEPT\nCOMMIT\n*raw\n:rawfoo - [0:0]\nCOMMIT\n";
                vec![
                    restore("iptables-restore", "-v", dump),
                    restore("iptables-restore", "-v", dump),
                    restore("iptables-restore", "--verbose --test", dump),
                    restore("iptables-restore", "-v --noflush", dump),
                    restore(
                        "ip6tables-restore",
                        "-v",
                        "*filter\n:foo - [0:0]\n-A foo -s 2001:db8::1 -j ACCEPT\nCOMMIT\n",
                    ),
                ]
            },
        ),
        (
            ":BUILTIN - keeps the policy under --noflush (a flush resets it on nf_tables)",
            vec![
                setup("iptables", "-t raw -P OUTPUT DROP"),
                setup("iptables", "-t raw -A OUTPUT -s 192.0.2.1"),
                restore(
                    "iptables-restore",
                    "--noflush",
                    "*raw\n:OUTPUT - [0:0]\n:PREROUTING - [0:0]\n:n - [0:0]\n-I OUTPUT 1 -j n\nCOMMIT\n",
                ),
                Step::new("iptables-save", w("-t raw")),
                restore("iptables-restore", "", "*raw\n:OUTPUT - [0:0]\nCOMMIT\n"),
            ],
        ),
        (
            "-Z CHAIN N zeroes one rule's counters",
            vec![
                setup("iptables", "-N z"),
                setup("iptables", "-A z -s 192.0.2.1 -c 5 6"),
                setup("iptables", "-A z -s 192.0.2.2 -c 7 8"),
                setup("iptables", "-A z -s 192.0.2.3 -c 9 10"),
                Step::new("iptables", w("-Z z 2")),
                Step::new("iptables", w("-v -Z z 3")),
                Step::new("iptables", w("-Z z 9")),
                Step::new("iptables", w("-Z nochain 1")),
                Step::new("iptables", w("-Z z 0")),
                Step::new("iptables-save", w("-c")),
            ],
        ),
        (
            "save | restore round trip of iptables-nft's encodings (merged --sport/--dport)",
            vec![
                setup(
                    "iptables",
                    "-A INPUT -p udp --sport 68 --dport 67 -j ACCEPT",
                ),
                setup("iptables", "-A INPUT -p tcp --sport 1 --dport 2 -j DROP"),
                setup("iptables", "-A INPUT -p tcp --sport 1:3 --dport 2 -j DROP"),
                setup("iptables", "-A INPUT -p tcp ! --sport 1 --dport 2 -j DROP"),
                Step::new("iptables", w("-S INPUT")),
                Step::new(
                    "iptables",
                    w("-C INPUT -p udp --sport 68 --dport 67 -j ACCEPT"),
                ),
                sh(
                    "$SAVE > /tmp/.xtnl-rt-$$ && $RESTORE < /tmp/.xtnl-rt-$$; s=$?; rm -f /tmp/.xtnl-rt-$$; exit $s",
                ),
                Step::new(
                    "iptables",
                    w("-D INPUT -p udp --sport 68 --dport 67 -j ACCEPT"),
                ),
            ],
        ),
    ]
}

fn compare(side: Side) {
    let names = side.link_names();
    let dir = links(
        &format!("saverestore-{side:?}"),
        &names.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let mut failures = Vec::new();
    for (name, steps) in cases() {
        let theirs = twin_run(side, dir.clone(), false, private_lock_path(), steps.clone());
        let ours = twin_run(side, dir.clone(), true, private_lock_path(), steps);
        let t = undate(&format!("{}{}", theirs.0.join("\n"), theirs.1));
        let o = undate(&format!("{}{}", ours.0.join("\n"), ours.1));
        if t != o {
            failures.push(format!(
                "{name}:\n--- {}:\n{t}\n--- xtnl:\n{o}",
                side.oracle("iptables-restore")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn restore_and_save_as_iptables_nft() {
    common::require_kernel!();
    compare(Side::Nft);
}

#[test]
fn restore_and_save_as_iptables_legacy() {
    common::require_kernel!();
    compare(Side::Legacy);
}

/// A rule iptables syntax cannot express (here `ip ttl 5`, written by nft, which xtnl does
/// not decode into iptables syntax): save prints the rest, names the rule on stderr and exits
/// 1; restoring that output fails and changes nothing, so `save | restore` cannot drop it.
#[test]
fn save_never_loses_a_rule_silently() {
    let dir = links("lost", &["iptables-save", "iptables-restore"]);
    in_netns(move || {
        let lock = private_lock_path();
        let lock = lock.to_str().unwrap();
        run_ok("iptables-nft", &["-A", "INPUT", "-j", "ACCEPT"]);
        run_ok(
            "nft",
            &[
                "add", "rule", "ip", "filter", "INPUT", "ip", "ttl", "5", "accept",
            ],
        );
        let before = run_ok("nft", &["-a", "list", "ruleset"]);
        let env = [("XTABLES_LOCKFILE", lock), ("XTNL_BACKEND", "nft")];
        let save = run_env(dir.join("iptables-save").to_str().unwrap(), &[], &env);
        assert_eq!(save.status.code(), Some(1), "{}", text(&save));
        let err = String::from_utf8_lossy(&save.stderr);
        assert!(
            err.contains("cannot be expressed")
                && err.contains("handle 3")
                && err.contains("chain INPUT"),
            "save names the rule: {err}"
        );
        let out = String::from_utf8_lossy(&save.stdout).into_owned();
        assert!(
            out.contains("-A INPUT -j ACCEPT\n"),
            "the rest is printed: {out}"
        );
        assert!(out.contains("# handle 3:"), "the rule is shown: {out}");

        let mut child = std::process::Command::new(dir.join("iptables-restore"))
            .env("XTABLES_LOCKFILE", lock)
            .env("XTNL_BACKEND", "nft")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("restore");
        {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(out.as_bytes())
                .unwrap();
        }
        let r = child.wait_with_output().unwrap();
        assert_ne!(
            r.status.code(),
            Some(0),
            "restore of an incomplete save: {}",
            text(&r)
        );
        let n = out
            .lines()
            .position(|l| l.starts_with("# handle 3:"))
            .expect("the # line")
            + 1;
        assert!(
            String::from_utf8_lossy(&r.stderr).contains(&format!("Error occurred at line: {n}")),
            "restore names line {n}: {}",
            text(&r)
        );
        assert_eq!(
            run_ok("nft", &["-a", "list", "ruleset"]),
            before,
            "nothing changed"
        );
    });
}

/// `restore -c` starts a built-in chain's policy counters from its `[packets:bytes]`, as
/// iptables-restore does (iptables' ipt-save/0002load-fedora27-firewalld), on both backends
/// (more in tests/dropin_policy_counters.rs).
#[test]
fn restore_c_sets_builtin_policy_counters() {
    common::require_kernel!();
    for side in [Side::Legacy, Side::Nft] {
        restore_c_policy_counters(side);
    }
}

fn restore_c_policy_counters(side: Side) {
    let names = side.link_names();
    let dir = links(
        &format!("policycounters-{side:?}"),
        &names.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let steps = vec![
        restore(
            "iptables-restore",
            "-c",
            "*filter\n:INPUT ACCEPT [5:600]\n:FORWARD DROP [7:800]\n:OUTPUT ACCEPT [0:0]\n:c - [1:2]\n[3:4] -A c -j ACCEPT\nCOMMIT\n",
        ),
        Step::new("iptables-save", w("-c")),
        restore(
            "iptables-restore",
            "",
            "*filter\n:INPUT ACCEPT [9:900]\nCOMMIT\n",
        ),
        Step::new("iptables-save", w("-c")),
    ];
    let theirs = twin_run(side, dir.clone(), false, private_lock_path(), steps.clone());
    let ours = twin_run(side, dir, true, private_lock_path(), steps);
    assert_eq!(
        undate(&format!("{}{}", theirs.0.join("\n"), theirs.1)),
        undate(&format!("{}{}", ours.0.join("\n"), ours.1))
    );
}
