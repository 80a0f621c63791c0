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

use xtnl::lock::LockMode;
use xtnl::model::{Action, Family, Rule};
use xtnl::nft::{ChainSpec, Session, TableRef, Transaction};

const CHILD_ENV: &str = "XTNL_TEST_CLOSE_CHILD";

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
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_flush_then_close",
            "--nocapture",
            "--test-threads=1",
        ])
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
