//! Concurrency, large transactions and large dumps against the real kernel.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use common::{in_netns, nft_ruleset, private_lock_path};
use xtnl::ErrorKind;
use xtnl::lock::{LockMode, WaitPolicy, XtablesLock};
use xtnl::model::{Action, Family, L4Proto, NatTarget, PortRange, Rule};
use xtnl::nft::{ChainSpec, Session, TableRef, Transaction};

fn session() -> Session {
    Session::builder()
        .lock_mode(LockMode::Never)
        .open()
        .expect("open session")
}

#[test]
fn eight_threads_commit_500_transactions_each_without_error() {
    in_netns(|| {
        const THREADS: u32 = 8;
        const TXS: u32 = 500;
        let t = TableRef::new(Family::Ipv4, "nat");
        let mut s = session();
        let mut tx = Transaction::new();
        tx.ensure_table(&t);
        for i in 0..THREADS {
            tx.ensure_chain(&t, ChainSpec::regular(format!("worker-{i}")));
        }
        s.commit(&tx).unwrap();

        let lock = private_lock_path();
        let retries = Arc::new(AtomicU32::new(0));
        // Threads spawned from this thread share its (scratch) network namespace.
        let workers: Vec<_> = (0..THREADS)
            .map(|w| {
                let (t, lock, retries) = (t.clone(), lock.clone(), retries.clone());
                std::thread::spawn(move || {
                    let mut s = Session::builder()
                        .lock(XtablesLock::new(lock, WaitPolicy::Forever))
                        .open()
                        .unwrap();
                    let chain = t.chain(format!("worker-{w}"));
                    for i in 0..TXS {
                        let done = s
                            .transact(|r| {
                                // Every tenth transaction depends on a read, so it carries the
                                // generation id and must be retried when another worker
                                // committed in between.
                                let seen = if i % 10 == 0 {
                                    r.rules(&t, Some(&chain.name))?.len().to_string()
                                } else {
                                    "-".into()
                                };
                                let mut tx = Transaction::new();
                                tx.append_rule(
                                    &chain,
                                    Rule::new()
                                        .protocol(L4Proto::Tcp)
                                        .dport(PortRange::single(10_000 + i as u16))
                                        .action(Action::Dnat(NatTarget {
                                            addr: "192.0.2.10".parse().unwrap(),
                                            ports: Some(PortRange::single(22)),
                                        }))
                                        .comment(format!("w{w} i{i} seen {seen}")),
                                );
                                Ok((tx, ()))
                            })
                            .unwrap_or_else(|e| panic!("worker {w} transaction {i}: {e}"));
                        retries.fetch_add(done.attempts - 1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().expect("worker panicked");
        }
        for w in 0..THREADS {
            let rules = s.list_rules(&t.chain(format!("worker-{w}"))).unwrap();
            assert_eq!(rules.len(), TXS as usize);
            for (i, r) in rules.iter().enumerate() {
                let seen = if i % 10 == 0 {
                    i.to_string()
                } else {
                    "-".into()
                };
                assert_eq!(
                    r.rule.comment.as_deref(),
                    Some(format!("w{w} i{i} seen {seen}").as_str())
                );
            }
        }
        eprintln!(
            "generation conflicts retried: {}",
            retries.load(Ordering::Relaxed)
        );
        // The lock was released every time.
        XtablesLock::new(lock, WaitPolicy::FailFast)
            .acquire()
            .unwrap();
    });
}

fn many_rules(n: u32) -> (TableRef, Transaction) {
    let t = TableRef::new(Family::Ipv4, "big");
    let c = t.chain("c");
    let mut tx = Transaction::new();
    tx.ensure_table(&t)
        .ensure_chain(&t, ChainSpec::regular("c"));
    for i in 0..n {
        tx.append_rule(
            &c,
            Rule::new()
                .source(
                    format!("198.51.{}.{}/32", (i / 250) % 250, i % 250)
                        .parse()
                        .unwrap(),
                )
                .protocol(L4Proto::Udp)
                .dport(PortRange::single((i % 60_000) as u16 + 1))
                .counted()
                .action(Action::Accept)
                .comment(format!("rule {i}")),
        );
    }
    (t, tx)
}

#[test]
fn twenty_thousand_rules_commit_as_one_atomic_batch() {
    in_netns(|| {
        let mut s = session();
        // None: the same batch with one bad operation at its end changes nothing.
        let (t, mut tx) = many_rules(20_000);
        tx.delete_chain(&t.chain("missing"));
        let before = nft_ruleset();
        let err = s.commit(&tx).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
        assert_eq!(err.op_failure().unwrap().index, 20_002);
        assert_eq!(nft_ruleset(), before);
        assert!(s.list_tables().unwrap().is_empty());

        // All: 20,000 rules in one batch, then listed back (a dump far larger than one
        // receive buffer) in order and intact.
        let (t, tx) = many_rules(20_000);
        let done = s.commit(&tx).unwrap();
        assert_eq!(done.ops, 20_002);
        let rules = s.list_rules(&t.chain("c")).unwrap();
        assert_eq!(rules.len(), 20_000);
        let (_, expected) = many_rules(20_000);
        for (i, r) in rules.iter().enumerate() {
            let xtnl::nft::Op::AddRule { rule, .. } = &expected.ops()[i + 2] else {
                unreachable!()
            };
            assert_eq!(&r.rule, rule, "rule {i}");
        }
        // nft sees the same count.
        let listed = common::run_ok("nft", &["list", "chain", "ip", "big", "c"]);
        assert_eq!(listed.matches("accept comment").count(), 20_000);
    });
}

#[test]
fn snapshot_is_consistent_and_dumps_restart_under_concurrent_commits() {
    in_netns(|| {
        let t = TableRef::new(Family::Ipv4, "nat");
        let mut s = session();
        let (_, tx) = many_rules(1_000);
        s.commit(&tx).unwrap();
        let mut tx = Transaction::new();
        tx.ensure_table(&t)
            .ensure_chain(&t, ChainSpec::regular("churn"));
        s.commit(&tx).unwrap();
        // A burst of 30 commits, 5 ms apart: shorter than a 1,000-rule dump (the kernel fills
        // ~4.5 us per rule here), so reads during the burst are interrupted, and bounded, so
        // that the restart limit (64) cannot be reached. A writer that commits back to back
        // for ever can starve any optimistic reader of nf_tables, this library's, nft's or
        // iptables-nft's alike.
        let churn = {
            let t = t.clone();
            std::thread::spawn(move || {
                let mut s = session();
                for _ in 0..30 {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    let mut tx = Transaction::new();
                    tx.append_rule(&t.chain("churn"), Rule::new().action(Action::Return))
                        .flush_chain(&t.chain("churn"));
                    s.commit(&tx).unwrap();
                }
            })
        };
        let big = TableRef::new(Family::Ipv4, "big");
        let mut reads = 0;
        while !churn.is_finished() || reads < 5 {
            let snap = s
                .snapshot(&big)
                .unwrap_or_else(|e| panic!("{e}: {:?}", s.stats()));
            assert_eq!(snap.rules.len(), 1_000);
            assert_eq!(snap.chains.len(), 1);
            assert_eq!(s.list_rules(&big.chain("c")).unwrap().len(), 1_000);
            reads += 1;
        }
        churn.join().unwrap();
        let stats = s.stats();
        eprintln!("{stats:?}");
        assert!(
            stats.dump_restarts + stats.snapshot_retries > 0,
            "no read was interrupted; the test did not exercise the restart path: {stats:?}"
        );
    });
}
