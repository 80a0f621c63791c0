//! A short-lived process that flushed a non-empty chain must not make its caller wait for the
//! kernel's deferred destroy work when it closes its socket (see shared notes, "The hidden
//! cost of closing the socket"). The test runs this same test binary as the short-lived
//! process, once closing the socket plainly and once with `Session::close_detached`, and checks
//! the mechanism (who makes the last release); `benches/detached_close.rs` measures the wait.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::Pid;

use xtnl::backend::{Backend, Call};
use xtnl::lock::{LockMode, WaitPolicy, XtablesLock};
use xtnl::model::{Action, Family, Rule};
use xtnl::nft::{ChainSpec, Session, TableRef, Transaction};
use xtnl::seam::Enforcement;
use xtnl::transport::Conn;

const CHILD_ENV: &str = "XTNL_TEST_CLOSE_CHILD";

/// Held by the tests that reap re-parented processes (a subreaper reaps every orphan of the
/// test process, whichever test's child it was).
static REAPING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The short-lived process: fills a chain, flushes it, says so, closes, exits.
#[test]
fn child_flush_then_close() {
    let Ok(mode) = std::env::var(CHILD_ENV) else {
        return; // only meaningful when run by `closing_after_a_flush_does_not_make_the_caller_wait`
    };
    common::in_netns(move || {
        let mut s = Session::builder()
            .lock_mode(LockMode::Never)
            .open()
            .unwrap();
        let t = TableRef::new(Family::Ipv4, "nat");
        let c = t.chain("vcld-1");
        let mut tx = Transaction::new();
        tx.ensure_table(&t)
            .ensure_chain(&t, ChainSpec::regular("vcld-1"));
        for i in 0..50 {
            tx.append_rule(
                &c,
                Rule::new().action(Action::Accept).comment(format!("{i}")),
            );
        }
        s.commit(&tx).unwrap();
        if mode != "detached-added-only" {
            let mut tx = Transaction::new();
            tx.flush_chain(&c);
            s.commit(&tx).unwrap();
            assert!(s.freed_objects());
        }
        println!("COMMITTED");
        if mode.starts_with("detached") {
            s.close_detached().unwrap();
        } else {
            drop(s);
        }
    });
}

/// Runs the short-lived process in `mode` as its caller would (reading its output to EOF,
/// then reaping it) and returns what else this process reaped afterwards: the exit statuses of
/// the processes that were re-parented to it (it is a child subreaper).
fn run_child(mode: &str) -> Vec<WaitStatus> {
    run_child_test("child_flush_then_close", mode)
}

/// [`run_child`] for the child test `test`.
fn run_child_test(test: &str, mode: &str) -> Vec<WaitStatus> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, mode)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines: Vec<String> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map_while(|l| l.ok())
        .collect();
    let status = child.wait().unwrap();
    assert!(status.success(), "child failed: {status}");
    assert!(
        lines.iter().any(|l| l.contains("COMMITTED")),
        "child ended without committing: {lines:?}"
    );
    let mut orphans = Vec::new();
    loop {
        match waitpid(None::<Pid>, None) {
            Ok(s) => orphans.push(s),
            Err(nix::errno::Errno::ECHILD) => break,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => panic!("waitpid: {e}"),
        }
    }
    orphans
}

/// The detached close hands the socket's last release to a process of its own, which its
/// caller does not wait for (it holds none of the caller's pipes: the caller reached EOF and
/// reaped the child before it) and which exits cleanly; a plain close leaves no such process.
/// How much waiting this saves is a speed claim, measured by `cargo bench --bench
/// detached_close` (plain against detached in one run), not asserted here.
#[test]
fn a_detached_close_hands_the_last_release_to_a_process_of_its_own() {
    common::require_kernel!();
    let _reaping = REAPING.lock().unwrap_or_else(|p| p.into_inner());
    nix::sys::prctl::set_child_subreaper(true).expect("PR_SET_CHILD_SUBREAPER");
    let plain = run_child("plain");
    assert!(
        plain.is_empty(),
        "a plain close left processes behind: {plain:?}"
    );
    let detached = run_child("detached");
    assert_eq!(
        detached.len(),
        1,
        "one detached closer expected: {detached:?}"
    );
    assert!(
        matches!(detached[0], WaitStatus::Exited(_, 0)),
        "the detached closer did not exit cleanly: {:?}",
        detached[0]
    );
    // A session that deleted nothing hands its socket over too: its release would flush
    // destroy work another process's deletion left pending (docs/benchmarks.md, "The
    // detached close now lingers").
    let added = run_child("detached-added-only");
    assert_eq!(added.len(), 1, "one detached closer expected: {added:?}");
    assert!(
        matches!(added[0], WaitStatus::Exited(_, 0)),
        "the detached closer did not exit cleanly: {:?}",
        added[0]
    );
}

/// The short-lived process of a one-shot session (`SessionBuilder::one_shot`, as
/// `backend::Call` makes it for one command): it commits, reads or is refused, and never
/// calls a close itself.
#[test]
fn child_one_shot() {
    let Ok(mode) = std::env::var(CHILD_ENV) else {
        return; // only meaningful when run by `a_one_shot_session_ends_its_socket_itself`
    };
    common::in_netns(move || {
        let none = Enforcement::none();
        let call = || Call {
            backend: Backend::Nft,
            family: Family::Ipv4,
            enforcement: &none,
            netns: None,
            lock: XtablesLock::new(common::private_lock_path(), WaitPolicy::FailFast),
            mode: LockMode::Always,
        };
        let run = |line: &str| {
            let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
            let inv = xtnl::ipt::parse::parse(&args, Family::Ipv4).unwrap();
            call().execute(&inv)
        };
        match mode.as_str() {
            // One committed command: its session hands the socket over after the commit.
            "commit" => assert_eq!(run("-t nat -N vcld-1").unwrap(), ""),
            // A listing commits nothing: the socket goes over when the session is dropped.
            "list" => {
                run("-t nat -S").unwrap();
            }
            // A refused change (the chain exists): the same.
            "refused" => {
                assert_eq!(run("-t nat -N vcld-1").unwrap(), "");
                let e = run("-t nat -N vcld-1").unwrap_err();
                assert!(e.to_string().contains("exist"), "{e}");
            }
            // The session itself: the socket is gone before `transact` returns, and a later
            // read opens one again, in the same namespace.
            "session" => {
                let mut s = Session::builder()
                    .lock_mode(LockMode::Never)
                    .one_shot(true)
                    .open_lazily_in(None);
                let t = TableRef::new(Family::Ipv4, "oneshot");
                let mut tx = Transaction::new();
                tx.ensure_table(&t);
                s.commit(&tx).unwrap();
                assert!(
                    matches!(s.socket(), Conn::Replay(_)),
                    "the socket was not handed over by the commit"
                );
                let names: Vec<String> = s
                    .list_tables()
                    .unwrap()
                    .into_iter()
                    .map(|t| t.table.name)
                    .collect();
                assert!(names.contains(&"oneshot".to_string()), "{names:?}");
                assert!(matches!(s.socket(), Conn::Kernel(_)), "not opened again");
                drop(s);
            }
            other => panic!("unknown mode {other}"),
        }
        println!("COMMITTED");
    });
}

/// A one-shot session ends its socket's use itself: one detached closer for each socket it
/// opened (after the commit, or when it is dropped having committed nothing), none left
/// open for the caller to close, each exiting cleanly.
#[test]
fn a_one_shot_session_ends_its_socket_itself() {
    common::require_kernel!();
    let _reaping = REAPING.lock().unwrap_or_else(|p| p.into_inner());
    nix::sys::prctl::set_child_subreaper(true).expect("PR_SET_CHILD_SUBREAPER");
    for (mode, closers) in [("commit", 1), ("list", 1), ("refused", 2), ("session", 2)] {
        let reaped = run_child_test("child_one_shot", mode);
        assert_eq!(reaped.len(), closers, "{mode}: {reaped:?}");
        for r in &reaped {
            assert!(
                matches!(r, WaitStatus::Exited(_, 0)),
                "{mode}: a detached closer did not exit cleanly: {r:?}"
            );
        }
    }
}
