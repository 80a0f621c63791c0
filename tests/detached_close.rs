//! A short-lived process that flushed a non-empty chain must not make its caller wait for the
//! kernel's deferred destroy work when it closes its socket (see shared notes, "The hidden
//! cost of closing the socket"). The test runs this same test binary as the short-lived
//! process, once closing the socket plainly and once with `Session::close_detached`.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
        let mut tx = Transaction::new();
        tx.flush_chain(&c);
        s.commit(&tx).unwrap();
        assert!(s.freed_objects());
        println!("COMMITTED");
        if mode == "detached" {
            s.close_detached().unwrap();
        } else {
            drop(s);
        }
    });
}

/// Time from the child's "committed" line to its exit, as its caller sees it.
fn exit_delay(mode: &str) -> Duration {
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
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let committed = loop {
        match lines.next() {
            Some(Ok(l)) if l.contains("COMMITTED") => break Instant::now(),
            Some(_) => continue,
            None => panic!("child ended without committing"),
        }
    };
    // Read to EOF as a caller capturing output would, then reap.
    for _ in lines {}
    let status = child.wait().unwrap();
    assert!(status.success(), "child failed: {status}");
    committed.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[test]
fn closing_after_a_flush_does_not_make_the_caller_wait() {
    common::require_kernel!();
    let plain = median((0..7).map(|_| exit_delay("plain")).collect());
    let detached = median((0..7).map(|_| exit_delay("detached")).collect());
    eprintln!("exit after commit: plain close {plain:?}, detached close {detached:?}");
    // The plain close waits for an RCU grace period (15-28 ms measured on this kind of
    // machine); the detached one hands that wait to a process nobody waits for.
    assert!(
        plain >= detached + Duration::from_millis(5),
        "plain {plain:?} vs detached {detached:?}: the detached close did not remove the wait"
    );
}
