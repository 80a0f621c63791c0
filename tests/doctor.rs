//! `xtnl doctor` against the real kernel and real privilege states: what it reports for
//! root, for an unprivileged user, and for a capability-only delegated run; and that in a
//! delegated run it neither starts a program from the caller's `PATH` nor lets that `PATH`
//! steer what it reports. Every run is in a network namespace of its own; the delegated runs
//! also in a private mount namespace (a tmpfs /run holds the binary's privileged copy).

mod common;

use common::{in_netns, run_env, xtnl_bin};

struct Run {
    status: i32,
    stdout: String,
    stderr: String,
}

fn outcome(o: std::process::Output) -> Run {
    Run {
        status: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Runs `doctor` in a private mount namespace with a tmpfs /run, where
/// `/run/fakebin` is a `PATH` entry holding an `iptables` that claims to be iptables-legacy
/// and an `update-alternatives` that leaves a marker if anything runs it. `how` is `root`
/// (the plain binary, run by root), `user` (the plain binary run by uid 65534) or
/// `capability` (a cap_net_admin+ep copy run by uid 65534, with `XTNL_BACKEND=legacy`).
/// Prints the marker check last.
fn doctor(how: &str) -> Run {
    const SCRIPT: &str = r#"
set -eu
mount -t tmpfs -o mode=0755 xtnl-doctor-run /run
mkdir /run/bin /run/fakebin
cp "$XTNL_SRC" /run/bin/xtnl
chown root:root /run/bin/xtnl
chmod 0755 /run/bin/xtnl
: > /run/fakebin/xtables-legacy-multi
ln -s xtables-legacy-multi /run/fakebin/iptables-legacy
ln -s iptables-legacy /run/fakebin/iptables
printf '#!/bin/sh\ntouch /run/ran-a-program\n' > /run/fakebin/update-alternatives
chmod 0755 /run/fakebin/update-alternatives
set +e
case "$XTNL_HOW" in
    root) PATH=/run/fakebin:$PATH /run/bin/xtnl doctor ;;
    user) setpriv --reuid=65534 --regid=65534 --clear-groups env PATH=/run/fakebin:/usr/bin:/bin /run/bin/xtnl doctor ;;
    capability)
        setcap cap_net_admin+ep /run/bin/xtnl
        setpriv --reuid=65534 --regid=65534 --clear-groups env PATH=/run/fakebin:/usr/bin:/bin \
            XTNL_BACKEND=legacy /run/bin/xtnl doctor ;;
esac
rc=$?
set -e
if [ -e /run/ran-a-program ]; then echo "MARKER: doctor started a program from PATH"; fi
exit $rc
"#;
    outcome(run_env(
        "unshare",
        &["--mount", "--propagation", "private", "sh", "-c", SCRIPT],
        &[("XTNL_SRC", xtnl_bin()), ("XTNL_HOW", how)],
    ))
}

fn line<'a>(r: &'a Run, start: &str) -> &'a str {
    r.stdout
        .lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starting {start:?}:\n{}", r.stdout))
}

#[test]
fn root_gets_a_clean_report_and_auto_follows_its_path() {
    in_netns(|| {
        let r = doctor("root");
        assert_eq!(r.status, 0, "{}\n{}", r.stdout, r.stderr);
        assert!(!r.stdout.contains("MARKER"), "{}", r.stdout);
        assert!(line(&r, "ok   run:").contains("not delegated; CAP_NET_ADMIN held"));
        // A fresh namespace: nf_tables answers and holds no table.
        assert!(line(&r, "ok   nf_tables:").contains("tables in this network namespace: none"));
        assert!(
            line(&r, "ok   x_tables: ip:")
                .contains("legacy tables in this network namespace: none")
        );
        // Not delegated: `auto` follows PATH, where the fake iptables says legacy.
        let b = line(&r, "ok   backend: iptables:");
        assert!(
            b.contains("legacy") && b.contains("/run/fakebin/iptables"),
            "{b}"
        );
        // The lock path is /run/xtables.lock (the private /run has none yet): root may
        // create it.
        assert!(line(&r, "ok   lock:").contains("/run/xtables.lock does not exist yet"));
        assert!(
            r.stdout.ends_with("doctor: nothing found that will fail\n"),
            "{}",
            r.stdout
        );
    });
}

#[test]
fn an_unprivileged_user_is_told_what_is_missing() {
    in_netns(|| {
        let r = doctor("user");
        assert_eq!(r.status, 1, "{}\n{}", r.stdout, r.stderr);
        assert!(!r.stdout.contains("MARKER"), "{}", r.stdout);
        let run = line(&r, "FAIL run:");
        assert!(
            run.contains("uid 65534") && run.contains("CAP_NET_ADMIN not held"),
            "{run}"
        );
        assert!(
            r.stdout
                .contains("hint: listing and changing the firewall need CAP_NET_ADMIN")
        );
        assert!(
            line(&r, "FAIL nf_tables:").contains("ermission")
                || r.stdout.contains("CAP_NET_ADMIN is missing")
        );
        assert!(
            r.stdout.contains("finding(s) will make commands fail"),
            "{}",
            r.stdout
        );
    });
}

#[test]
fn a_capability_only_helper_learns_about_its_lock_and_policy_and_path_does_not_steer_it() {
    in_netns(|| {
        let r = doctor("capability");
        assert_eq!(r.status, 1, "{}\n{}", r.stdout, r.stderr);
        // No program ran, though `update-alternatives` and `iptables` were first in PATH.
        assert!(!r.stdout.contains("MARKER"), "{}", r.stdout);
        assert!(line(&r, "ok   run:").contains("delegated (secure mode"));
        assert!(line(&r, "ok   binary:").contains("file capabilities cap_net_admin+ep"));
        assert!(line(&r, "ok   nf_tables:").contains("answers"));
        // Delegated: XTNL_BACKEND=legacy is kept and used (x_tables is held to the policy
        // too), and the detection shown ignores the caller's PATH (the host's
        // /usr/sbin/iptables, not /run/fakebin's legacy one).
        assert!(
            line(&r, "note backend:").contains("XTNL_BACKEND=legacy sets the default"),
            "{}",
            r.stdout
        );
        let b = line(&r, "ok   backend: iptables:");
        assert!(
            b.starts_with("ok   backend: iptables: legacy (asked for")
                && b.contains("/usr/sbin:/usr/bin:/sbin:/bin")
                && b.contains("held to the policy")
                && !b.contains("/run/fakebin"),
            "{b}"
        );
        assert!(!r.stdout.contains("FAIL backend"), "{}", r.stdout);
        assert!(
            !r.stdout.contains("cannot check the policy"),
            "{}",
            r.stdout
        );
        // Uid 65534 cannot create the lock in /run, and there is no policy.
        assert!(line(&r, "FAIL lock:").contains("/run/xtables.lock does not exist yet"));
        assert!(
            r.stdout
                .contains("tmpfiles line `f /run/xtables.lock 0640 root AGENT-GROUP -`")
        );
        assert!(line(&r, "FAIL policy:").contains("/etc/xtnl/policy.toml does not exist"));
    });
}

#[test]
fn doctor_takes_no_arguments_and_reads_no_named_file() {
    let r = outcome(run_env(xtnl_bin(), &["doctor", "/etc/shadow"], &[]));
    assert_eq!(r.status, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("unexpected argument '/etc/shadow'"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty());
}
