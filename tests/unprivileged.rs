//! Without CAP_NET_ADMIN nothing hangs: the kernel answers the first message of a datagram
//! with EPERM and drops the rest (net/netfilter/nfnetlink.c, `nfnetlink_rcv`), and xtnl,
//! which pipelines several requests in one datagram, waited for the others' answers forever
//! (`reservation setup`, `teardown`, the library's `nathost::setup`). Each now fails within
//! a bound with the status iptables-nft gives for the same refusal, checked side by side.

mod common;

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{in_netns, run_ok, xtnl_bin};

/// Far above what a refusal takes (tens of milliseconds) and far below the old hang.
const BOUND: Duration = Duration::from_secs(8);
/// `timeout`'s own bound: a hang ends the child with status 124 instead of the test.
const KILL_AFTER: &str = "20";

/// A lock file uid 65534 can open (the test's own, never /run/xtables.lock).
fn open_lock() -> String {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("xtnl-unpriv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("lock dir");
    let lock = dir.join("xtables.lock");
    std::fs::write(&lock, b"").expect("lock file");
    run_ok("chmod", &["0777", dir.to_str().expect("utf-8")]);
    run_ok("chmod", &["0666", lock.to_str().expect("utf-8")]);
    lock.to_str().expect("utf-8").to_owned()
}

/// `program args` as uid/gid 65534 with no capability at all (bounding, inheritable and
/// ambient sets empty), under `timeout`; its output and how long it took.
fn unprivileged(program: &str, args: &[&str], env: &[(&str, &str)]) -> (Output, Duration) {
    let mut cmd = Command::new("timeout");
    cmd.args([KILL_AFTER, "setpriv", "--reuid=65534", "--regid=65534"])
        .args(["--clear-groups", "--bounding-set=-all", "--inh-caps=-all"])
        .arg(program)
        .args(args)
        .current_dir("/");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let out = cmd.output().expect("run timeout setpriv");
    (out, start.elapsed())
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\n{}{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn reservation_setup_and_teardown_without_cap_net_admin_fail_at_once_as_iptables_does() {
    in_netns(|| {
        // A table and a chain to find: the refusal comes before any of it is read.
        run_ok("iptables-nft", &["-t", "nat", "-N", "vcld-5"]);
        let before = common::nft_ruleset();
        let lock = open_lock();
        let env = [("XTABLES_LOCKFILE", lock.as_str())];
        let (theirs, _) = unprivileged("iptables-nft", &["-t", "nat", "-N", "vcld-6"], &env);
        let expected = theirs.status.code();
        assert_eq!(
            expected,
            Some(4),
            "iptables-nft as uid 65534: {}",
            text(&theirs)
        );
        for args in [
            &[
                "reservation",
                "setup",
                "vcld-7",
                "--forward",
                "eth1:tcp/50443=192.0.2.10:3389",
            ][..],
            &["reservation", "setup", "vcld-5"][..],
            &["teardown", "vcld-5"][..],
            &["forward", "add", "vcld-5", "eth1:tcp/50444=192.0.2.10:22"][..],
            &["sweep", "--prefix", "vcld-", "--keep", "vcld-1"][..],
            &["-t", "nat", "-N", "vcld-6"][..],
            &["-t", "nat", "-S"][..],
            &["list", "ip", "nat"][..],
            &["save"][..],
        ] {
            let (o, took) = unprivileged(xtnl_bin(), args, &env);
            assert!(
                took < BOUND,
                "xtnl {args:?} took {took:?} (status {:?}: 124 is timeout's kill)",
                o.status.code()
            );
            assert_eq!(o.status.code(), expected, "xtnl {args:?}: {}", text(&o));
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains("permission denied") && err.contains("CAP_NET_ADMIN"),
                "xtnl {args:?} names the missing capability: {err}"
            );
        }
        assert_eq!(
            common::nft_ruleset(),
            before,
            "a refused run changed nothing"
        );
    });
}

/// The library's `nathost::setup`, in a child process of this test binary that runs as
/// uid 65534 without capabilities (the `child_` test below, which does nothing unless
/// started so).
#[test]
fn the_library_s_nathost_setup_without_cap_net_admin_returns_not_permitted() {
    in_netns(|| {
        let lock = open_lock();
        let me = std::env::current_exe().expect("test binary");
        let (o, took) = unprivileged(
            me.to_str().expect("utf-8"),
            &[
                "--exact",
                "child_nathost_setup_as_told",
                "--nocapture",
                "--test-threads=1",
            ],
            &[
                ("XTNL_UNPRIV_CHILD", "1"),
                ("XTABLES_LOCKFILE", lock.as_str()),
            ],
        );
        assert!(took < BOUND, "nathost::setup took {took:?}: {}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.contains("child: NotPermitted"),
            "the library's error: {}",
            text(&o)
        );
    });
}

#[test]
fn child_nathost_setup_as_told() {
    if std::env::var_os("XTNL_UNPRIV_CHILD").is_none() {
        return;
    }
    use xtnl::lock::{WaitPolicy, XtablesLock};
    use xtnl::nathost::{self, Forward, Reservation};
    let lock = std::env::var("XTABLES_LOCKFILE").expect("lock path");
    let mut reservation = Reservation::new("vcld-5205");
    reservation
        .forwards
        .push(Forward::parse_spec("eth1:tcp/50443=192.0.2.10:3389").expect("spec"));
    let result = xtnl::nft::Session::builder()
        .lock(XtablesLock::new(lock, WaitPolicy::Forever))
        .open()
        .and_then(|mut s| nathost::setup(&mut s, &reservation));
    match result {
        Ok(r) => println!("child: succeeded: {:?}", r.outcome),
        Err(e) => println!("child: {:?}: {e}", e.kind()),
    }
}
