//! The privileged-helper safety rules against the real kernel: a policy allows and denies each
//! verb (a denial changes nothing), bad policies are refused with their line and column, and
//! a setuid or capability-bearing copy of the binary run by an unprivileged user ignores the
//! caller's overrides and refuses unsafe files.
//!
//! Every test runs in a network namespace it created; the secure-mode tests also run the
//! binary in a private mount namespace with its own /run (a fresh tmpfs, so the real
//! /run/xtables.lock is never touched) and its own /etc (a copy holding the test's policy at
//! /etc/xtnl/policy.toml), so nothing on the host changes.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicU32, Ordering};

use common::*;

fn scratch(name: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "xtnl-policy-{}-{}-{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// The NAT host's policy, laid out so that its entries start on known lines.
const POLICY: &str = common::nat_host_policy!(4);
const LINE_MAX_OPS: u32 = 1;
const LINE_VCLD: u32 = 3;
const LINE_PREROUTING: u32 = 9;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn outcome(o: Output) -> Run {
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn xtnl_with(policy: &Path, args: &[&str]) -> Run {
    let p = policy.to_str().unwrap();
    let mut all = vec!["--policy-file", p, "--audit", "stderr"];
    all.extend_from_slice(args);
    let lock = private_lock_path();
    outcome(run_env(
        xtnl_bin(),
        &all,
        &[("XTABLES_LOCKFILE", lock.to_str().unwrap())],
    ))
}

/// The state a NAT host is in before the agent runs: a foreign chain with a jump to it from
/// PREROUTING, and a reservation chain with a DNAT rule and its jump.
fn nat_host_state() {
    for cmd in [
        "-t nat -N other",
        "-t nat -N spare",
        "-t nat -A PREROUTING -j other",
        "-t nat -N vcld-1",
        "-t nat -A vcld-1 -p tcp --dport 50443 -j DNAT --to-destination 192.0.2.10:22",
        "-t nat -I PREROUTING -j vcld-1",
        "-t filter -N keep",
    ] {
        let args: Vec<&str> = cmd.split(' ').collect();
        run_ok("iptables-nft", &args);
    }
}

fn assert_allowed(policy: &Path, args: &[&str], audit: &str) {
    let before = nft_ruleset();
    let r = xtnl_with(policy, args);
    assert_eq!(r.code, 0, "{args:?} should be allowed: {}", r.stderr);
    assert_ne!(nft_ruleset(), before, "{args:?} changed nothing");
    assert!(
        r.stderr
            .lines()
            .any(|l| l.starts_with("xtnl: audit: result ")
                && l.contains(&format!("uid=0 euid=0 mode=direct result=ok {audit}"))),
        "{args:?}: audit line missing: {}",
        r.stderr
    );
}

fn assert_denied(policy: &Path, args: &[&str], line: Option<u32>, says: &str) {
    let before = nft_ruleset();
    let r = xtnl_with(policy, args);
    assert_eq!(
        r.code, 5,
        "{args:?} should be denied (status 5): {}{}",
        r.stdout, r.stderr
    );
    assert_eq!(
        nft_ruleset(),
        before,
        "{args:?} was denied but changed the ruleset"
    );
    let at = match line {
        Some(l) => format!("xtnl: policy {}:{l} ", policy.display()),
        None => format!("xtnl: policy {} ", policy.display()),
    };
    assert!(
        r.stderr.lines().any(|l| l.starts_with(&at)),
        "{args:?}: expected a line starting {at:?}: {}",
        r.stderr
    );
    assert!(
        r.stderr.contains(says),
        "{args:?}: expected {says:?}: {}",
        r.stderr
    );
    assert!(
        r.stderr.contains("result=denied"),
        "{args:?}: a denial is audited too: {}",
        r.stderr
    );
}

#[test]
fn policy_allows_and_denies_each_verb_and_a_denial_changes_nothing() {
    in_netns(|| {
        let dir = scratch("verbs");
        let policy = dir.join("policy.toml");
        std::fs::write(&policy, POLICY).unwrap();
        nat_host_state();

        // Denied: each verb outside what the policy allows.
        let cases: &[(&str, Option<u32>, &str)] = &[
            (
                "-t nat -N other2",
                Some(LINE_VCLD),
                "denied: create in ip nat other2",
            ),
            (
                "-t nat -F other",
                Some(LINE_VCLD),
                "denied: flush in ip nat other",
            ),
            (
                "-t nat -X spare",
                Some(LINE_VCLD),
                "denied: delete in ip nat spare",
            ),
            (
                "-t nat -A other -j ACCEPT",
                Some(LINE_VCLD),
                "denied: add-rule in ip nat other",
            ),
            (
                "-t nat -I PREROUTING -j other",
                Some(LINE_PREROUTING),
                "denied: add-rule in ip nat PREROUTING (a rule jumping to other)",
            ),
            (
                "-t nat -A PREROUTING -p tcp --dport 80 -j DNAT --to-destination 192.0.2.1",
                Some(LINE_PREROUTING),
                "(a rule that jumps nowhere)",
            ),
            // The rule to delete is known to the policy only by handle: its jump target is
            // read in the same generation, and it is not a reservation chain.
            (
                "-t nat -D PREROUTING -j other",
                Some(LINE_PREROUTING),
                "denied: delete-rule in ip nat PREROUTING (a rule jumping to other)",
            ),
            (
                "-t nat -D PREROUTING 2",
                Some(LINE_PREROUTING),
                "jumping to other",
            ),
            (
                "-t nat -F PREROUTING",
                Some(LINE_PREROUTING),
                "denied: flush in ip nat PREROUTING",
            ),
            (
                "-t nat -P PREROUTING ACCEPT",
                Some(LINE_PREROUTING),
                "denied: policy in ip nat PREROUTING",
            ),
            (
                "-t nat -E vcld-1 other3",
                Some(LINE_VCLD),
                "denied: create in ip nat other3",
            ),
            ("-t nat -Z", Some(LINE_VCLD), "denied: zero in ip nat"),
            (
                "-t nat -F",
                Some(LINE_VCLD),
                "denied: flush-table in ip nat",
            ),
            (
                "-t filter -X keep",
                None,
                "allows nothing in table ip filter",
            ),
            (
                "-6 -t nat -N vcld-9",
                None,
                "allows nothing in table ip6 nat",
            ),
        ];
        for (cmd, line, says) in cases {
            let args: Vec<&str> = cmd.split(' ').collect();
            assert_denied(&policy, &args, *line, says);
        }

        // The legacy backend checks the same policy (on what its replace changes) and
        // writes the same audit records.
        let legacy_save = || common::save_undated("iptables-legacy-save", &["-t", "nat"]);
        let before = legacy_save();
        let r = xtnl_with(
            &policy,
            &["--backend", "legacy", "-t", "nat", "-N", "other3"],
        );
        assert_eq!(r.code, 5, "{}", r.stderr);
        assert!(
            r.stderr.lines().any(|l| l.starts_with(&format!(
                "xtnl: policy {}:{LINE_VCLD} allows",
                policy.display()
            ))) && r.stderr.contains(
                "denied: create in ip nat other3 by operation #0 (create chain ip nat other3)"
            ),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains("result=denied"), "{}", r.stderr);
        assert_eq!(legacy_save(), before);
        let r = xtnl_with(
            &policy,
            &["--backend", "legacy", "-t", "nat", "-N", "vcld-3"],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            r.stderr.contains("xtnl: audit: attempt ")
                && r.stderr
                    .contains("result=ok ops=1: create chain ip nat vcld-3"),
            "{}",
            r.stderr
        );
        assert!(legacy_save().contains(":vcld-3 -"));

        // Denied through restore too, and by size: five operations where four are allowed.
        let many = dir.join("many.rules");
        std::fs::write(
            &many,
            "*nat\n:vcld-a - [0:0]\n:vcld-b - [0:0]\n:vcld-c - [0:0]\n:vcld-d - [0:0]\n:vcld-e - [0:0]\nCOMMIT\n",
        )
        .unwrap();
        assert_denied(
            &policy,
            &["restore", "--noflush", many.to_str().unwrap()],
            Some(LINE_MAX_OPS),
            "allows at most 4 operations per transaction; denied: a transaction of 5 operations",
        );
        let foreign = dir.join("foreign.rules");
        std::fs::write(
            &foreign,
            "*nat\n:vcld-a - [0:0]\n-A PREROUTING -j other\nCOMMIT\n",
        )
        .unwrap();
        assert_denied(
            &policy,
            &["restore", "--noflush", foreign.to_str().unwrap()],
            Some(LINE_PREROUTING),
            "(a rule jumping to other)",
        );

        // Allowed: a whole reservation life cycle, verb by verb.
        assert_allowed(
            &policy,
            &["-t", "nat", "-N", "vcld-2"],
            "ops=1: create chain ip nat vcld-2",
        );
        assert_allowed(
            &policy,
            &["-t", "nat", "-I", "PREROUTING", "-j", "vcld-2"],
            "ops=1: insert rule ip nat PREROUTING",
        );
        assert_allowed(
            &policy,
            &[
                "-t",
                "nat",
                "-I",
                "vcld-2",
                "-p",
                "tcp",
                "--dport",
                "50444",
                "-j",
                "DNAT",
                "--to-destination",
                "192.0.2.11:3389",
            ],
            "ops=1: insert rule ip nat vcld-2",
        );
        assert_allowed(
            &policy,
            &["-t", "nat", "-F", "vcld-2"],
            "ops=1: flush chain ip nat vcld-2",
        );
        assert_allowed(
            &policy,
            &["-t", "nat", "-D", "PREROUTING", "-j", "vcld-2"],
            "ops=1: delete rule ip nat PREROUTING handle",
        );
        assert_allowed(
            &policy,
            &["-t", "nat", "-X", "vcld-2"],
            "ops=1: delete chain ip nat vcld-2",
        );
        let four = dir.join("four.rules");
        std::fs::write(
            &four,
            "*nat\n:vcld-a - [0:0]\n:vcld-b - [0:0]\n-A vcld-a -p tcp --dport 1 -j DNAT --to-destination 192.0.2.1\n-I PREROUTING -j vcld-a\nCOMMIT\n",
        )
        .unwrap();
        assert_allowed(
            &policy,
            &["restore", "--noflush", four.to_str().unwrap()],
            "ops=4: ",
        );

        // Listings are not changes: the policy does not restrict them.
        let r = xtnl_with(&policy, &["-t", "filter", "-S"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stdout.contains("-N keep"), "{}", r.stdout);

        // The same denials through the library: a session with the policy as its guard.
        let p = xtnl::policy::load_file(&policy).unwrap();
        let mut s = xtnl::nft::Session::builder()
            .lock_mode(xtnl::lock::LockMode::Never)
            .guard(Some(std::sync::Arc::new(p)))
            .open()
            .unwrap();
        let nat = xtnl::nft::TableRef::new(xtnl::model::Family::Ipv4, "nat");
        let mut tx = xtnl::nft::Transaction::new();
        tx.flush_chain(&nat.chain("other"));
        let before = nft_ruleset();
        let e = s.commit(&tx).unwrap_err();
        assert_eq!(e.kind(), xtnl::ErrorKind::PolicyDenied);
        assert_eq!(e.exit_status(), 5);
        assert_eq!(nft_ruleset(), before);
        std::fs::remove_dir_all(&dir).unwrap();
    });
}

#[test]
fn bad_policy_is_refused_with_line_and_column_and_nothing_changes() {
    in_netns(|| {
        let dir = scratch("bad");
        let policy = dir.join("policy.toml");
        std::fs::write(
            &policy,
            "max_ops = 4\n\n[[allow]]\ntable = \"nat\"\nchain = [\"vcld-*\"]\nverbs = [\"create\"]\n",
        )
        .unwrap();
        let before = nft_ruleset();
        let r = xtnl_with(&policy, &["-t", "nat", "-N", "vcld-1"]);
        assert_eq!(r.code, 6, "{}", r.stderr);
        assert!(
            r.stderr.starts_with(&format!(
                "xtnl: policy {}:5:1: unknown field `chain`",
                policy.display()
            )),
            "{}",
            r.stderr
        );
        assert_eq!(nft_ruleset(), before);

        // A file named explicitly must exist.
        let r = xtnl_with(&dir.join("absent.toml"), &["-t", "nat", "-N", "vcld-1"]);
        assert_eq!(r.code, 6, "{}", r.stderr);
        assert!(r.stderr.contains("cannot open it"), "{}", r.stderr);
        assert_eq!(nft_ruleset(), before);
        std::fs::remove_dir_all(&dir).unwrap();
    });
}

#[test]
fn oversized_names_and_comments_are_refused_before_anything_is_sent() {
    in_netns(|| {
        let before = nft_ruleset();
        let lock = private_lock_path();
        let env = [("XTABLES_LOCKFILE", lock.to_str().unwrap())];
        let long = "c".repeat(29);
        let r = outcome(run_env(xtnl_bin(), &["-t", "nat", "-N", &long], &env));
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(
            r.stderr.contains("too long (must be under 29 chars)"),
            "{}",
            r.stderr
        );
        let comment = "x".repeat(256);
        let r = outcome(run_env(
            xtnl_bin(),
            &[
                "-A",
                "INPUT",
                "-m",
                "comment",
                "--comment",
                &comment,
                "-j",
                "ACCEPT",
            ],
            &env,
        ));
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(
            r.stderr.contains("COMMENT must be shorter than 256"),
            "{}",
            r.stderr
        );
        // The library bounds chain names in iptables' tables the same way.
        let mut s = xtnl::nft::Session::builder()
            .lock_mode(xtnl::lock::LockMode::Never)
            .open()
            .unwrap();
        let nat = xtnl::nft::TableRef::new(xtnl::model::Family::Ipv4, "nat");
        let mut tx = xtnl::nft::Transaction::new();
        tx.ensure_table(&nat)
            .create_chain(&nat, xtnl::nft::ChainSpec::regular(long.clone()));
        let e = s.commit(&tx).unwrap_err();
        assert_eq!(e.kind(), xtnl::ErrorKind::InvalidInput, "{e}");
        assert!(e.to_string().contains("at most 28 bytes"), "{e}");
        let mut tx = xtnl::nft::Transaction::new();
        tx.ensure_table(&nat)
            .create_chain(&nat, xtnl::nft::ChainSpec::regular("a\u{7}b"));
        let e = s.commit(&tx).unwrap_err();
        assert!(e.to_string().contains("control character"), "{e}");
        assert_eq!(nft_ruleset(), before);
    });
}

#[test]
fn nat_host_commands_and_json_apply_are_checked_by_the_same_policy() {
    in_netns(|| {
        let dir = scratch("fronts");
        let policy = dir.join("policy.toml");
        std::fs::write(&policy, POLICY).unwrap();
        nat_host_state();

        // A reservation's whole life cycle is allowed...
        let r = xtnl_with(
            &policy,
            &[
                "reservation",
                "setup",
                "vcld-20",
                "--forward",
                "eth1:tcp/50450=192.0.2.20:22",
            ],
        );
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        assert!(nft_ruleset().contains("chain vcld-20"));
        // An attempt record before the commit and a result record after, each operation with
        // its rule in iptables syntax.
        for phase in ["attempt", "result"] {
            let result = if phase == "attempt" { "pending" } else { "ok" };
            let line = r
                .stderr
                .lines()
                .find(|l| l.starts_with(&format!("xtnl: audit: {phase} ")))
                .unwrap_or_else(|| panic!("no {phase} record: {}", r.stderr));
            assert!(
                line.contains(&format!("result={result} ops=4: add table ip nat; create chain ip nat vcld-20; insert rule ip nat PREROUTING: -t nat -I PREROUTING -m comment "))
                    && line.contains("-j vcld-20; add rule ip nat vcld-20: -t nat -A vcld-20 -i eth1 -p tcp")
                    && line.ends_with("-m tcp --dport 50450 -j DNAT --to-destination 192.0.2.20:22"),
                "{line}"
            );
        }
        let r = xtnl_with(&policy, &["teardown", "vcld-20"]);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        assert!(!nft_ruleset().contains("chain vcld-20"));

        // ...but tearing down a chain outside it, or sweeping with a prefix that reaches one,
        // is denied and changes nothing.
        for args in [
            &["teardown", "other"][..],
            &["sweep", "--prefix", "oth", "--keep", "nothing"][..],
            &["reservation", "setup", "evil"][..],
            // The legacy backend checks the same policy.
            &["--backend", "legacy", "reservation", "setup", "evil"][..],
        ] {
            let before = nft_ruleset();
            let r = xtnl_with(&policy, args);
            assert_eq!(r.code, 5, "{args:?}: {}{}", r.stdout, r.stderr);
            assert!(r.stderr.contains("xtnl: policy "), "{args:?}: {}", r.stderr);
            assert_eq!(nft_ruleset(), before, "{args:?}");
        }

        // JSON documents go through the same check: the denial is the transaction's error.
        let doc = dir.join("doc.json");
        std::fs::write(
            &doc,
            r#"{"transactions": [{"operations": [{"op": "create_chain", "table": "nat", "chain": "evil"}]}]}"#,
        )
        .unwrap();
        let before = nft_ruleset();
        let r = xtnl_with(&policy, &["apply", doc.to_str().unwrap()]);
        assert_eq!(r.code, 5, "{}{}", r.stdout, r.stderr);
        assert!(
            r.stdout.contains(r#""kind":"policy_denied""#),
            "{}",
            r.stdout
        );
        assert!(
            r.stdout.contains(&format!("policy {}:", policy.display())),
            "{}",
            r.stdout
        );
        assert_eq!(nft_ruleset(), before);
        std::fs::remove_dir_all(&dir).unwrap();
    });
}

// ---- secure mode ----------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Privilege {
    Setuid,
    Capability,
}

/// An /etc for the private mount namespace: what xtnl and the tools read, and the policy.
fn secure_etc(policy: &str) -> PathBuf {
    let etc = scratch("etc");
    for f in [
        "protocols",
        "services",
        "ld.so.cache",
        "passwd",
        "group",
        "nsswitch.conf",
    ] {
        let src = Path::new("/etc").join(f);
        if src.exists() {
            std::fs::copy(&src, etc.join(f)).unwrap();
        }
    }
    let x = etc.join("xtnl");
    std::fs::create_dir(&x).unwrap();
    std::fs::set_permissions(&x, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(x.join("policy.toml"), policy).unwrap();
    std::fs::set_permissions(
        x.join("policy.toml"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    etc
}

/// Runs a privileged copy of xtnl as uid/gid 65534 in a private mount namespace (in the
/// calling thread's network namespace). `setup` runs first as root (after /run and /etc are
/// replaced); `check` runs after xtnl as root and may print; the status is xtnl's.
fn secure_run(
    how: Privilege,
    etc: &Path,
    setup: &str,
    check: &str,
    env: &[(&str, &str)],
    args: &[&str],
) -> Run {
    const SCRIPT: &str = r#"
set -eu
# A private /run: the binary's copy lives here (tmpfs, not nosuid) and so does the lock.
mount -t tmpfs -o mode=0755 xtnl-test-run /run
mkdir /run/bin
# The system log: a delegated run refuses to change anything it cannot record there.
mkdir -p /run/systemd/journal
touch /run/systemd/journal/socket
mount --bind "$XTNL_JOURNAL" /run/systemd/journal/socket
cp "$XTNL_SRC" /run/bin/xtnl
chown root:root /run/bin/xtnl
if [ "$XTNL_HOW" = setuid ]; then
    chmod 4755 /run/bin/xtnl
else
    chmod 0755 /run/bin/xtnl
    # cap_net_raw: the legacy backend's x_tables socket is a raw socket (as iptables-legacy's).
    setcap cap_net_admin,cap_net_raw+ep /run/bin/xtnl
    # A capability does not let uid 65534 create or read root's 0600 lock file: the
    # recipe of docs/privileged-helper.md makes it readable.
    install -m 0644 /dev/null /run/xtables.lock
fi
mount --bind "$XTNL_ETC" /etc
eval "$XTNL_SETUP"
set +e
setpriv --reuid=65534 --regid=65534 --clear-groups /run/bin/xtnl "$@"
rc=$?
set -e
eval "$XTNL_CHECK"
exit $rc
"#;
    let mut all = vec![
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        SCRIPT,
        "sh",
    ];
    all.extend_from_slice(args);
    let how_s = match how {
        Privilege::Setuid => "setuid",
        Privilege::Capability => "capability",
    };
    // The records arrive here as journald would receive them; they are shown after the
    // run's standard error as `xtnl: audit: MESSAGE` lines.
    let jdir = scratch("journal");
    let jsock = jdir.join("journal");
    let journal = std::os::unix::net::UnixDatagram::bind(&jsock).unwrap();
    std::fs::set_permissions(&jsock, std::fs::Permissions::from_mode(0o666)).unwrap();
    journal.set_nonblocking(true).unwrap();
    let mut vars = vec![
        ("XTNL_SRC", xtnl_bin()),
        ("XTNL_HOW", how_s),
        ("XTNL_ETC", etc.to_str().unwrap()),
        ("XTNL_SETUP", setup),
        ("XTNL_CHECK", check),
        ("XTNL_JOURNAL", jsock.to_str().unwrap()),
    ];
    vars.extend_from_slice(env);
    let mut r = outcome(run_env("unshare", &all, &vars));
    let mut buf = vec![0u8; 1 << 16];
    while let Ok(n) = journal.recv(&mut buf) {
        let text = String::from_utf8_lossy(&buf[..n]).into_owned();
        if let Some(m) = text.lines().find_map(|l| l.strip_prefix("MESSAGE=")) {
            r.stderr.push_str(&format!("xtnl: audit: {m}\n"));
        }
    }
    r
}

fn secure_suite(how: Privilege) {
    in_netns(move || {
        nat_host_state();
        let etc = secure_etc(POLICY);
        let euid = match how {
            Privilege::Setuid => 0,
            Privilege::Capability => 65534,
        };
        // An allow-all policy an attacker would like to use instead.
        let loose_dir = scratch("loose");
        let loose = loose_dir.join("all.toml");
        std::fs::write(
            &loose,
            "[[allow]]\ntable = \"nat\"\nchains = [\"*\"]\nverbs = [\"create\", \"flush\", \"delete\", \"add-rule\", \"delete-rule\"]\n",
        )
        .unwrap();
        let loose = loose.to_str().unwrap();

        // The policy is enforced: allowed and denied, audited with the real uid.
        let before = nft_ruleset();
        let r = secure_run(how, &etc, "", "", &[], &["-t", "nat", "-N", "vcld-7"]);
        assert_eq!(r.code, 0, "{how:?}: {}", r.stderr);
        assert!(nft_ruleset().contains("chain vcld-7"), "{how:?}");
        assert!(
            r.stderr.contains(&format!(
                "uid=65534 euid={euid} mode=secure result=ok ops=1: create chain ip nat vcld-7"
            )),
            "{how:?}: the record is in the system log (shown after stderr): {}",
            r.stderr
        );
        let before_denied = nft_ruleset();
        assert_ne!(before, before_denied);
        let r = secure_run(how, &etc, "", "", &[], &["-t", "nat", "-N", "other2"]);
        assert_eq!(r.code, 5, "{how:?}: {}", r.stderr);
        assert!(
            r.stderr
                .lines()
                .any(|l| l.starts_with("xtnl: policy /etc/xtnl/policy.toml:3 allows")),
            "{how:?}: {}",
            r.stderr
        );
        assert_eq!(nft_ruleset(), before_denied);

        // Neither the environment nor the option selects another policy.
        let r = secure_run(
            how,
            &etc,
            "",
            "",
            &[("XTNL_POLICY", loose)],
            &["-t", "nat", "-N", "other2"],
        );
        assert_eq!(
            r.code, 5,
            "{how:?}: XTNL_POLICY must be ignored: {}",
            r.stderr
        );
        assert!(r.stderr.contains("ignoring XTNL_POLICY"), "{}", r.stderr);
        let r = secure_run(
            how,
            &etc,
            "",
            "",
            &[],
            &[
                "--policy-file",
                loose,
                "--audit",
                "off",
                "-t",
                "nat",
                "-N",
                "other2",
            ],
        );
        assert_eq!(
            r.code, 5,
            "{how:?}: --policy-file must be ignored: {}",
            r.stderr
        );
        assert!(r.stderr.contains("ignoring --policy-file"), "{}", r.stderr);
        assert!(r.stderr.contains("ignoring --audit"), "{}", r.stderr);
        assert!(
            r.stderr.contains("result=denied"),
            "--audit off is not honoured: {}",
            r.stderr
        );
        assert_eq!(nft_ruleset(), before_denied);

        // The legacy backend checks the policy too: XTNL_BACKEND (kept by the environment
        // reset) selects it, and a denial there changes nothing.
        let r = secure_run(
            how,
            &etc,
            "",
            "",
            &[("XTNL_BACKEND", "legacy")],
            &["-t", "nat", "-N", "other11"],
        );
        assert_eq!(r.code, 5, "{how:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("denied: create in ip nat other11"),
            "{how:?}: {}",
            r.stderr
        );
        assert!(
            !run_ok("iptables-legacy-save", &["-t", "nat"]).contains("other11"),
            "{how:?}"
        );
        // `auto` does not follow the caller's PATH: the environment is reset.
        let path = format!(
            "/run/fakepath:{}",
            std::env::var("PATH").unwrap_or_default()
        );
        let r = secure_run(
            how,
            &etc,
            "mkdir /run/fakepath; ln -s \"$(command -v iptables-legacy)\" /run/fakepath/iptables",
            "",
            &[("PATH", &path)],
            &["-v", "-t", "nat", "-N", "vcld-11"],
        );
        assert_eq!(r.code, 0, "{how:?}: {}", r.stderr);
        assert!(r.stderr.contains("backend nft"), "{how:?}: {}", r.stderr);
        assert!(nft_ruleset().contains("chain vcld-11"), "{how:?}");
        run_ok("iptables-nft", &["-t", "nat", "-X", "vcld-11"]);
        let before_denied = nft_ruleset();

        // Files named by the caller are not opened (root would open them, and a parse error
        // quotes the line it rejects); standard input carries documents instead.
        for args in [
            &["restore", "--noflush", "/etc/xtnl/policy.toml"][..],
            &["apply", "/etc/xtnl/policy.toml"][..],
            &[
                "sweep",
                "--prefix",
                "vcld-",
                "--keep",
                "@/etc/xtnl/policy.toml",
            ][..],
        ] {
            let r = secure_run(how, &etc, "", "", &[], args);
            assert_eq!(r.code, 2, "{how:?} {args:?}: {}", r.stderr);
            assert!(
                r.stderr
                    .contains("does not open files named by its caller (/etc/xtnl/policy.toml)"),
                "{how:?} {args:?}: {}",
                r.stderr
            );
            assert!(
                !r.stderr.contains("allow"),
                "{how:?} {args:?}: {}",
                r.stderr
            );
            assert_eq!(nft_ruleset(), before_denied);
        }

        // XTABLES_LOCKFILE is ignored: with /run/xtables.lock held (by a descriptor the
        // shell hands down) and the variable naming a free file, xtnl still finds the lock
        // busy, and says which file it locked.
        let r = secure_run(
            how,
            &etc,
            "exec 9>/run/xtables.lock; flock -n 9",
            "",
            &[("XTABLES_LOCKFILE", "/run/free.lock")],
            &["-t", "nat", "-N", "vcld-8"],
        );
        assert_eq!(r.code, 4, "{how:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("can't lock /run/xtables.lock"),
            "{how:?}: {}",
            r.stderr
        );
        assert_eq!(nft_ruleset(), before_denied);
        // Control: the same binary run by root without privilege elevation honours it.
        let control = outcome(run_env(
            "unshare",
            &[
                "--mount",
                "sh",
                "-c",
                "mount -t tmpfs tmpfs /run && exec 9>/run/xtables.lock && flock -n 9 && \
                 exec \"$0\" --audit off -t nat -N vcld-8",
                xtnl_bin(),
            ],
            &[("XTABLES_LOCKFILE", "/run/free.lock")],
        ));
        assert_eq!(control.code, 0, "control: {}", control.stderr);
        run_ok("iptables-nft", &["-t", "nat", "-X", "vcld-8"]);

        // A lock path that is a symbolic link is refused, and nothing is created through it.
        let r = secure_run(
            how,
            &etc,
            "rm -f /run/xtables.lock; ln -s /run/target /run/xtables.lock",
            "test -e /run/target && echo TARGET-CREATED || true",
            &[],
            &["-t", "nat", "-N", "vcld-9"],
        );
        assert_eq!(r.code, 4, "{how:?}: {}", r.stderr);
        assert!(r.stderr.contains("symbolic link"), "{how:?}: {}", r.stderr);
        assert!(!r.stdout.contains("TARGET-CREATED"), "{how:?}");
        assert_eq!(nft_ruleset(), before_denied);

        // Unsafe policy files refuse everything (status 6), even what the policy allows.
        let unsafe_cases = [
            (
                "chown 65534 /etc/xtnl/policy.toml",
                "owned by uid 65534, not root",
            ),
            (
                "chmod 0666 /etc/xtnl/policy.toml",
                "writable by group or others",
            ),
            (
                "chmod 0664 /etc/xtnl/policy.toml",
                "writable by group or others",
            ),
            ("chmod 0777 /etc/xtnl", "directory /etc/xtnl is writable"),
            (
                "chown 65534 /etc/xtnl",
                "directory /etc/xtnl is owned by uid 65534",
            ),
            (
                "mv /etc/xtnl/policy.toml /etc/xtnl/real.toml && ln -s real.toml /etc/xtnl/policy.toml",
                "symbolic link",
            ),
            ("rm /etc/xtnl/policy.toml", "cannot open it: No such file"),
        ];
        for (setup, says) in unsafe_cases {
            // Each case gets a fresh /etc: the setup changes it.
            let etc = secure_etc(POLICY);
            let r = secure_run(how, &etc, setup, "", &[], &["-t", "nat", "-N", "vcld-10"]);
            assert_eq!(r.code, 6, "{how:?} {setup}: {}", r.stderr);
            assert!(
                r.stderr.starts_with("xtnl: policy /etc/xtnl/policy.toml: "),
                "{how:?} {setup}: {}",
                r.stderr
            );
            assert!(r.stderr.contains(says), "{how:?} {setup}: {}", r.stderr);
            assert_eq!(nft_ruleset(), before_denied, "{setup}");
            std::fs::remove_dir_all(&etc).unwrap();
        }
        std::fs::remove_dir_all(&etc).unwrap();
        std::fs::remove_dir_all(&loose_dir).unwrap();
    });
}

#[test]
fn setuid_copy_run_by_an_unprivileged_user_is_in_secure_mode() {
    secure_suite(Privilege::Setuid);
}

#[test]
fn capability_copy_run_by_an_unprivileged_user_is_in_secure_mode() {
    secure_suite(Privilege::Capability);
}

#[test]
fn capability_copy_cannot_open_roots_lock_file() {
    // What an operator meets without the lock-file recipe (privileged-helper.md): iptables creates
    // /run/xtables.lock as root with mode 0600, which CAP_NET_ADMIN does not open.
    in_netns(|| {
        nat_host_state();
        let etc = secure_etc(POLICY);
        let r = secure_run(
            Privilege::Capability,
            &etc,
            "rm /run/xtables.lock; install -m 0600 /dev/null /run/xtables.lock",
            "",
            &[],
            &["-t", "nat", "-N", "vcld-7"],
        );
        assert_eq!(r.code, 4, "{}", r.stderr);
        assert!(
            r.stderr.contains("can't open lock file /run/xtables.lock"),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains("Permission denied"), "{}", r.stderr);
        std::fs::remove_dir_all(&etc).unwrap();
    });
}

/// The x_tables backend is held to the same policy, verb by verb: each denial (exit status
/// 5, the policy line, an audit record) leaves iptables-legacy's tables as they were, and
/// an allowed life cycle is audited as it commits.
#[test]
fn the_legacy_backend_is_held_to_the_same_policy_verb_by_verb() {
    in_netns(|| {
        let dir = scratch("legacy-verbs");
        let policy = dir.join("policy.toml");
        std::fs::write(&policy, POLICY).unwrap();
        for cmd in [
            "-t nat -N other",
            "-t nat -N spare",
            // x_tables judges the command, not what its replace changes: `-F other`
            // (with a rule) and `-F spare` (empty) are both flushes.
            "-t nat -A other -j RETURN",
            "-t nat -A PREROUTING -j other",
            "-t nat -N vcld-1",
            "-t nat -A vcld-1 -p tcp --dport 50443 -j DNAT --to-destination 192.0.2.10:22",
            "-t nat -I PREROUTING -j vcld-1",
            "-t filter -N keep",
        ] {
            let args: Vec<&str> = cmd.split(' ').collect();
            run_ok("iptables-legacy", &args);
        }
        let state = || {
            common::save_undated("iptables-legacy-save", &["-t", "nat"])
                + &common::save_undated("iptables-legacy-save", &["-t", "filter"])
        };
        let legacy = |cmd: &str| -> Run {
            let mut args = vec!["--backend", "legacy"];
            args.extend(cmd.split(' '));
            xtnl_with(&policy, &args)
        };
        let cases: &[(&str, Option<u32>, &str)] = &[
            (
                "-t nat -N other2",
                Some(LINE_VCLD),
                "denied: create in ip nat other2",
            ),
            (
                "-t nat -F other",
                Some(LINE_VCLD),
                "denied: flush in ip nat other",
            ),
            (
                "-t nat -F spare",
                Some(LINE_VCLD),
                "denied: flush in ip nat spare",
            ),
            // The policy PREROUTING already has: still a policy change, as on nf_tables.
            (
                "-t nat -P PREROUTING ACCEPT",
                Some(LINE_PREROUTING),
                "denied: policy in ip nat PREROUTING",
            ),
            (
                "-t nat -X spare",
                Some(LINE_VCLD),
                "denied: delete in ip nat spare",
            ),
            (
                "-t nat -A other -j ACCEPT",
                Some(LINE_VCLD),
                "denied: add-rule in ip nat other",
            ),
            (
                "-t nat -I PREROUTING -j other",
                Some(LINE_PREROUTING),
                "denied: add-rule in ip nat PREROUTING (a rule jumping to other)",
            ),
            (
                "-t nat -D PREROUTING -j other",
                Some(LINE_PREROUTING),
                "jumping to other",
            ),
            (
                "-t nat -D PREROUTING 2",
                Some(LINE_PREROUTING),
                "jumping to other",
            ),
            (
                "-t filter -P INPUT DROP",
                None,
                "allows nothing in table ip filter",
            ),
            // A rename is one change, the chain deleted under its old name and created under
            // its new one (as on nf_tables): the new name is outside the reservations.
            (
                "-t nat -E vcld-1 other3",
                Some(LINE_VCLD),
                "denied: create in ip nat other3",
            ),
            ("-t nat -Z", Some(LINE_VCLD), "denied: zero in ip nat"),
            (
                "-t filter -X keep",
                None,
                "allows nothing in table ip filter",
            ),
        ];
        for (cmd, line, says) in cases {
            let before = state();
            let r = legacy(cmd);
            assert_eq!(
                r.code, 5,
                "{cmd} should be denied: {}{}",
                r.stdout, r.stderr
            );
            assert_eq!(state(), before, "{cmd} was denied but changed the tables");
            let at = match line {
                Some(l) => format!("xtnl: policy {}:{l} ", policy.display()),
                None => format!("xtnl: policy {} ", policy.display()),
            };
            assert!(
                r.stderr.lines().any(|l| l.starts_with(&at)),
                "{cmd}: expected a line starting {at:?}: {}",
                r.stderr
            );
            assert!(
                r.stderr.contains(says),
                "{cmd}: expected {says:?}: {}",
                r.stderr
            );
            assert!(r.stderr.contains("result=denied"), "{cmd}: {}", r.stderr);
        }
        // Allowed: a reservation's life cycle, each step audited as committed.
        for cmd in [
            "-t nat -N vcld-2",
            "-t nat -A vcld-2 -p tcp --dport 50444 -j DNAT --to-destination 192.0.2.11:22",
            "-t nat -I PREROUTING -j vcld-2",
            "-t nat -D PREROUTING -j vcld-2",
            "-t nat -F vcld-2",
            "-t nat -X vcld-2",
        ] {
            let before = state();
            let r = legacy(cmd);
            assert_eq!(r.code, 0, "{cmd} should be allowed: {}", r.stderr);
            assert_ne!(state(), before, "{cmd} changed nothing");
            assert!(
                r.stderr
                    .lines()
                    .any(|l| l.starts_with("xtnl: audit: result ") && l.contains("result=ok")),
                "{cmd}: audit line missing: {}",
                r.stderr
            );
        }
    });
}
