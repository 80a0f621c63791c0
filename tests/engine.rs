//! The core engine against the real kernel, each test in its own network namespace.

mod common;

use common::{in_netns, nft_ruleset, run_ok};
use xtnl::model::{Action, Family, Interface, L4Proto, NatTarget, PortRange, Rule};
use xtnl::model::{BaseChain, ChainPolicy, ChainType, Hook};
use xtnl::nft::{ChainSpec, RulePosition, Session, TableRef, Transaction};
use xtnl::{Error, ErrorKind};

fn session() -> Session {
    Session::builder()
        .lock_mode(xtnl::lock::LockMode::Never)
        .open()
        .expect("open netlink session")
}

fn nat_table() -> TableRef {
    TableRef::new(Family::Ipv4, "nat")
}

fn prerouting() -> ChainSpec {
    ChainSpec::base(
        "PREROUTING",
        BaseChain {
            chain_type: ChainType::Nat,
            hook: Hook::Prerouting,
            priority: -100,
            policy: ChainPolicy::Accept,
        },
    )
}

fn dnat(port: u16, to: &str, to_port: u16) -> Rule {
    Rule::new()
        .in_interface(Interface::new("eth1").unwrap())
        .protocol(L4Proto::Tcp)
        .dport(PortRange::single(port))
        .counted()
        .action(Action::Dnat(NatTarget {
            addr: to.parse().unwrap(),
            ports: Some(PortRange::single(to_port)),
        }))
        .comment(format!("VCL: forward eth1:tcp/{port} --> {to}:{to_port}"))
}

/// A reservation in one transaction: chain, jump from PREROUTING, two forwards.
fn reservation_tx(id: u32) -> Transaction {
    let t = nat_table();
    let chain = t.chain(format!("vcld-{id}"));
    let mut tx = Transaction::new();
    tx.ensure_table(&t)
        .ensure_chain(&t, prerouting())
        .ensure_chain(&t, ChainSpec::regular(&chain.name))
        .insert_rule(
            &t.chain("PREROUTING"),
            Rule::new()
                .counted()
                .action(Action::Jump(chain.name.clone()))
                .comment(format!(
                    "VCL: jump from nat table PREROUTING chain to reservation NAT chain {}",
                    chain.name
                )),
        )
        .insert_rule(&chain, dnat(50443, "192.0.2.3", 3389))
        .insert_rule(&chain, dnat(50022, "192.0.2.3", 22));
    tx
}

#[test]
fn reservation_commits_and_lists_back_as_written() {
    in_netns(|| {
        let mut s = session();
        let done = s.commit(&reservation_tx(5205)).unwrap();
        assert_eq!(done.ops, 6);
        assert_eq!(done.attempts, 1);
        let t = nat_table();
        let rules = s.list_rules(&t.chain("vcld-5205")).unwrap();
        assert_eq!(rules.len(), 2);
        // Inserted at the head: the last insert comes first.
        assert_eq!(rules[0].rule, dnat(50022, "192.0.2.3", 22));
        assert_eq!(rules[1].rule, dnat(50443, "192.0.2.3", 3389));
        let chains = s.list_chains(&t).unwrap();
        let pre = chains
            .iter()
            .find(|c| c.chain.name == "PREROUTING")
            .unwrap();
        assert_eq!(pre.base.unwrap().priority, -100);
        let res = chains.iter().find(|c| c.chain.name == "vcld-5205").unwrap();
        assert_eq!(res.use_count, 3, "its two rules and the one jump to it");
        // nft agrees on what is there.
        let listed = run_ok("nft", &["list", "chain", "ip", "nat", "vcld-5205"]);
        assert!(
            listed.contains(
                "iifname \"eth1\" tcp dport 50443 counter packets 0 bytes 0 dnat to 192.0.2.3:3389"
            ),
            "{listed}"
        );
    });
}

#[test]
fn failing_operation_is_named_and_nothing_is_committed() {
    in_netns(|| {
        let mut s = session();
        let t = nat_table();
        let mut tx = reservation_tx(7);
        // Operation #6 targets a chain that does not exist.
        tx.append_rule(
            &t.chain("no-such-chain"),
            Rule::new().action(Action::Accept),
        );
        let before = nft_ruleset();
        let err = s.commit(&tx).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
        let f = err.op_failure().unwrap();
        assert_eq!(f.index, 6);
        assert_eq!(f.errno, libc::ENOENT);
        assert!(f.op.contains("no-such-chain"), "{}", f.op);
        assert_eq!(err.exit_status(), 1);
        assert_eq!(nft_ruleset(), before, "the whole batch must be aborted");
        assert!(s.list_tables().unwrap().is_empty());
    });
}

#[test]
fn exclusive_create_and_chain_in_use() {
    in_netns(|| {
        let mut s = session();
        let t = nat_table();
        s.commit(&reservation_tx(1)).unwrap();
        let mut tx = Transaction::new();
        tx.create_chain(&t, ChainSpec::regular("vcld-1"));
        let err = s.commit(&tx).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::AlreadyExists, "{err}");
        // Ensure is idempotent.
        let mut tx = Transaction::new();
        tx.ensure_chain(&t, ChainSpec::regular("vcld-1"));
        s.commit(&tx).unwrap();
        // Deleting a chain that is still jumped to: in use.
        let mut tx = Transaction::new();
        tx.flush_chain(&t.chain("vcld-1"))
            .delete_chain(&t.chain("vcld-1"));
        let err = s.commit(&tx).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InUse, "{err}");
        assert_eq!(err.op_failure().unwrap().index, 1);
        // Atomic: the flush in the same batch did not happen either.
        assert_eq!(s.list_rules(&t.chain("vcld-1")).unwrap().len(), 2);
        // Teardown in one transaction: remove the jump, flush, delete.
        let jump = s.list_rules(&t.chain("PREROUTING")).unwrap()[0].handle;
        let mut tx = Transaction::new();
        tx.delete_rule(&t.chain("PREROUTING"), jump)
            .flush_chain(&t.chain("vcld-1"))
            .delete_chain(&t.chain("vcld-1"));
        s.commit(&tx).unwrap();
        assert!(
            s.list_chains(&t)
                .unwrap()
                .iter()
                .all(|c| c.chain.name != "vcld-1")
        );
    });
}

#[test]
fn rule_positions_handles_replace_and_rename() {
    in_netns(|| {
        let mut s = session();
        let t = TableRef::new(Family::Inet, "xt");
        let c = t.chain("c");
        let mut tx = Transaction::new();
        tx.ensure_table(&t)
            .ensure_chain(&t, ChainSpec::regular("c"))
            .want_rule_handles(true);
        let tagged = |n: u32| Rule::new().action(Action::Accept).comment(format!("r{n}"));
        tx.append_rule(&c, tagged(2)).append_rule(&c, tagged(4));
        let done = s.commit(&tx).unwrap();
        assert_eq!(done.rule_handles.len(), 2, "echoed handles of added rules");
        let (h2, h4) = (done.rule_handles[0].1, done.rule_handles[1].1);
        let mut tx = Transaction::new();
        tx.add_rule(&c, tagged(3), RulePosition::After(h2))
            .add_rule(&c, tagged(1), RulePosition::Before(h2))
            .add_rule(&c, tagged(5), RulePosition::After(h4))
            .add_rule(&c, tagged(0), RulePosition::Head);
        s.commit(&tx).unwrap();
        let order = |s: &mut Session| -> Vec<String> {
            s.list_rules(&c)
                .unwrap()
                .into_iter()
                .map(|r| r.rule.comment.unwrap())
                .collect()
        };
        assert_eq!(order(&mut s), ["r0", "r1", "r2", "r3", "r4", "r5"]);

        // iptables -I c 3: before the third rule.
        s.transact(|r| {
            let pos = r.position_of_index(&c, 3)?;
            let mut tx = Transaction::new();
            tx.add_rule(&c, tagged(15), pos);
            Ok((tx, ()))
        })
        .unwrap();
        assert_eq!(order(&mut s), ["r0", "r1", "r15", "r2", "r3", "r4", "r5"]);
        // One past the end appends; two past is refused, and nothing changes.
        s.transact(|r| {
            let pos = r.position_of_index(&c, 8)?;
            let mut tx = Transaction::new();
            tx.add_rule(&c, tagged(6), pos);
            Ok((tx, ()))
        })
        .unwrap();
        let err = s
            .transact(|r| {
                let pos = r.position_of_index(&c, 10)?;
                let mut tx = Transaction::new();
                tx.add_rule(&c, tagged(99), pos);
                Ok((tx, ()))
            })
            .unwrap_err();
        assert!(err.to_string().contains("too big"), "{err}");

        // Replace and delete by handle.
        let mut tx = Transaction::new();
        tx.replace_rule(&c, h4, Rule::new().action(Action::Drop).comment("r4'"))
            .delete_rule(&c, h2);
        s.commit(&tx).unwrap();
        assert_eq!(order(&mut s), ["r0", "r1", "r15", "r3", "r4'", "r5", "r6"]);

        // Rename by handle, planned from a read.
        s.transact(|r| {
            let chain = r.chain(&c)?.expect("chain c exists");
            let mut tx = Transaction::new();
            tx.push(xtnl::nft::Op::RenameChain {
                chain: c.clone(),
                handle: chain.handle.unwrap(),
                new_name: "renamed".into(),
            });
            Ok((tx, ()))
        })
        .unwrap();
        let names: Vec<_> = s
            .list_chains(&t)
            .unwrap()
            .into_iter()
            .map(|c| c.chain.name)
            .collect();
        assert_eq!(names, ["renamed"]);
    });
}

#[test]
fn invalid_input_is_refused_before_anything_is_sent() {
    in_netns(|| {
        let mut s = session();
        let t = nat_table();
        let before = nft_ruleset();
        let mut tx = reservation_tx(9);
        tx.append_rule(&t.chain("vcld-9"), Rule::new().dport(PortRange::single(80)));
        let err = s.commit(&tx).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert_eq!(err.exit_status(), 2);
        assert!(err.to_string().contains("operation #6"), "{err}");
        let mut tx = Transaction::new();
        tx.ensure_table(&TableRef::new(Family::Ipv4, "bad\nname"));
        assert!(matches!(s.commit(&tx), Err(Error::InvalidInput(_))));
        let mut tx = Transaction::new();
        tx.ensure_table(&TableRef::new(Family::Ipv4, "x".repeat(256)));
        assert!(matches!(s.commit(&tx), Err(Error::InvalidInput(_))));
        assert_eq!(nft_ruleset(), before);
    });
}

#[test]
fn stale_generation_is_detected_and_the_plan_reruns() {
    in_netns(|| {
        let mut s = session();
        let mut other = session();
        let t = nat_table();
        s.commit(&reservation_tx(1)).unwrap();
        let mut runs = 0;
        let done = s
            .transact(|r| {
                runs += 1;
                let n = r.rules(&t, Some("vcld-1"))?.len();
                if runs == 1 {
                    // Someone else commits after our read: our genid is now stale.
                    other.commit(&reservation_tx(2)).unwrap();
                }
                let mut tx = Transaction::new();
                tx.append_rule(
                    &t.chain("vcld-1"),
                    Rule::new()
                        .action(Action::Return)
                        .comment(format!("seen {n}")),
                );
                Ok((tx, n))
            })
            .unwrap();
        assert_eq!(
            runs, 2,
            "the kernel refused the stale batch and the plan ran again"
        );
        assert_eq!(done.attempts, 2);
        // Bounded: a plan that always loses the race ends in a distinct error.
        let mut s = Session::builder()
            .lock_mode(xtnl::lock::LockMode::Never)
            .max_attempts(3)
            .open()
            .unwrap();
        let mut n = 10;
        let err = s
            .transact(|r| {
                r.generation()?;
                n += 1;
                other.commit(&reservation_tx(n)).unwrap();
                let mut tx = Transaction::new();
                tx.flush_chain(&t.chain("vcld-1"));
                Ok((tx, ()))
            })
            .unwrap_err();
        assert!(
            matches!(err, Error::GenerationConflict { attempts: 3 }),
            "{err}"
        );
        assert_eq!(err.exit_status(), 4);
        assert_eq!(
            s.list_rules(&t.chain("vcld-1")).unwrap().len(),
            3,
            "nothing was flushed"
        );
    });
}

#[test]
fn tables_of_every_family_are_ensured_idempotently_and_deleted() {
    in_netns(|| {
        let mut s = session();
        let tables: Vec<_> = [Family::Ipv4, Family::Ipv6, Family::Inet]
            .into_iter()
            .map(|f| TableRef::new(f, "xtnl"))
            .collect();
        for _ in 0..2 {
            let mut tx = Transaction::new();
            for t in &tables {
                tx.ensure_table(t);
            }
            s.commit(&tx).unwrap();
        }
        let mut listed: Vec<_> = s
            .list_tables()
            .unwrap()
            .into_iter()
            .map(|t| t.table)
            .collect();
        listed.sort();
        assert_eq!(listed, tables);
        let ruleset = nft_ruleset();
        for f in ["ip", "ip6", "inet"] {
            assert!(ruleset.contains(&format!("table {f} xtnl")), "{ruleset}");
        }
        let mut tx = Transaction::new();
        tx.delete_table(&tables[1]);
        s.commit(&tx).unwrap();
        assert_eq!(s.list_tables().unwrap().len(), 2);
        let err = s.commit(&tx).unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::NotFound,
            "deleting a missing table: {err}"
        );
    });
}

#[test]
fn a_commit_waits_for_or_gives_up_on_a_held_xtables_lock() {
    use std::time::{Duration, Instant};
    use xtnl::lock::{WaitPolicy, XtablesLock};
    in_netns(|| {
        let path = common::private_lock_path();
        std::fs::write(&path, b"").unwrap();
        let p = path.to_str().unwrap().to_owned();
        // flock(1) holds the lock for 600 ms.
        let mut holder = std::process::Command::new("flock")
            .args(["-x", &p, "sleep", "0.6"])
            .spawn()
            .unwrap();
        let probe = XtablesLock::new(&path, WaitPolicy::FailFast);
        let start = Instant::now();
        while probe.acquire().is_ok() {
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "flock never took the lock"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let before = nft_ruleset();
        let mut fail_fast = Session::builder()
            .lock(XtablesLock::new(&path, WaitPolicy::FailFast))
            .open()
            .unwrap();
        let err = fail_fast.commit(&reservation_tx(1)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::LockBusy, "{err}");
        assert_eq!(err.exit_status(), 4);
        assert!(
            err.to_string()
                .contains("another app is currently holding the xtables lock"),
            "{err}"
        );
        assert_eq!(nft_ruleset(), before, "nothing is sent without the lock");
        // Waiting: the commit goes through once flock(1) lets go.
        let mut waiting = Session::builder()
            .lock(XtablesLock::new(&path, WaitPolicy::Forever))
            .open()
            .unwrap();
        let t = Instant::now();
        waiting.commit(&reservation_tx(1)).unwrap();
        assert!(
            t.elapsed() >= Duration::from_millis(50),
            "it should have waited for the holder"
        );
        assert!(holder.wait().unwrap().success());
        assert_eq!(
            waiting
                .list_rules(&nat_table().chain("vcld-1"))
                .unwrap()
                .len(),
            2
        );
        // Reads never take the lock: list while someone holds it.
        let mut holder = std::process::Command::new("flock")
            .args(["-x", &p, "sleep", "0.3"])
            .spawn()
            .unwrap();
        while probe.acquire().is_ok() {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(
            fail_fast
                .list_rules(&nat_table().chain("vcld-1"))
                .unwrap()
                .len(),
            2
        );
        holder.wait().unwrap();
    });
}
