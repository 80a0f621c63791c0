//! How long a short-lived process that flushed a non-empty chain makes its caller wait after
//! its commit, closing its netlink socket plainly against `Session::close_detached` (see
//! shared notes, "The hidden cost of closing the socket": the last release of a socket whose
//! transaction freed objects waits for an RCU grace period).
//!
//! `cargo bench --bench detached_close` (as root; each child enters a scratch network
//! namespace of its own). `XTNL_BENCH_ROUNDS` (default 15) rounds, plain and detached
//! alternated so both see the same load; prints each median and their ratio.

#[path = "../src/scratch.rs"]
mod scratch;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use xtnl::lock::LockMode;
use xtnl::model::{Action, Family, Rule};
use xtnl::nft::{ChainSpec, Session, TableRef, Transaction};

const CHILD_ENV: &str = "XTNL_BENCH_CLOSE_CHILD";

/// The short-lived process: fills a chain, flushes it, says so, closes as `mode` says, exits.
fn child(mode: &str) {
    scratch::enter_new().expect("unshare(CLONE_NEWNET): run as root");
    scratch::refuse_initial().expect("not in the initial network namespace");
    let mut s = Session::builder()
        .lock_mode(LockMode::Never)
        .open()
        .expect("open a session");
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
    s.commit(&tx).expect("fill");
    let mut tx = Transaction::new();
    tx.flush_chain(&c);
    s.commit(&tx).expect("flush");
    println!("COMMITTED");
    if mode == "detached" {
        s.close_detached().expect("detached close");
    } else {
        drop(s);
    }
}

/// Time from the child's "committed" line to its exit, as a caller capturing its output sees.
fn exit_delay(mode: &str) -> Duration {
    let mut c = Command::new(std::env::current_exe().expect("bench path"))
        .env(CHILD_ENV, mode)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn the child");
    let mut lines = BufReader::new(c.stdout.take().expect("piped")).lines();
    let committed = loop {
        match lines.next() {
            Some(Ok(l)) if l.contains("COMMITTED") => break Instant::now(),
            Some(_) => continue,
            None => panic!("child ended without committing"),
        }
    };
    for _ in lines {}
    let status = c.wait().expect("reap the child");
    assert!(status.success(), "child failed: {status}");
    committed.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    if let Ok(mode) = std::env::var(CHILD_ENV) {
        child(&mode);
        return;
    }
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` asks for a list; there is nothing to list
    }
    let rounds: usize = std::env::var("XTNL_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    let (mut plain, mut detached) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        plain.push(exit_delay("plain"));
        detached.push(exit_delay("detached"));
    }
    let (p, d) = (median(plain), median(detached));
    println!("exit after commit, median of {rounds} rounds (alternated):");
    println!("  plain close:    {p:?}");
    println!("  detached close: {d:?}");
    println!(
        "  the caller waits {:.1}x as long after a plain close",
        p.as_secs_f64() / d.as_secs_f64().max(1e-9)
    );
}
