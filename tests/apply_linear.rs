//! `apply`'s transactions read each chain once: the round trips of a transaction of
//! `ensure_rule`/`delete_rule` into a chain that already has rules do not grow with the
//! number of operations (a chain dump per operation made 2 x 10,000 take 540 s), and what
//! such a transaction leaves is what the same commands through iptables-nft leave (a twin
//! namespace, compared as `iptables-nft -S`). The time ratio is a benchmark:
//! `cargo bench --bench apply_scale`.

mod common;

use common::{in_netns, private_lock_path, run, run_ok};
use xtnl::lock::{WaitPolicy, XtablesLock};
use xtnl::model::Family;
use xtnl::nathost::{self, Operation, rule_from_words};
use xtnl::nft::Session;

fn session() -> Session {
    Session::builder()
        .lock(XtablesLock::new(private_lock_path(), WaitPolicy::Forever))
        .open()
        .expect("open session")
}

/// A chain `svc` in filter with `n` rules, as iptables-nft-restore writes them.
fn existing_chain(n: usize) {
    let mut file = String::from("*filter\n:svc - [0:0]\n");
    for i in 0..n {
        file.push_str(&format!(
            "-A svc -s 203.0.113.{} -p udp --dport {} -j ACCEPT\n",
            i % 250,
            i + 1
        ));
    }
    file.push_str("COMMIT\n");
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("apply-linear-{}-{n}.rules", std::process::id()));
    std::fs::write(&path, file).expect("write rules");
    run_ok("iptables-nft-restore", &[path.to_str().expect("utf-8")]);
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_owned).collect()
}

fn ensure(spec: &str, at_head: bool) -> Operation {
    Operation::EnsureRule {
        table: "filter".into(),
        chain: "svc".into(),
        rule: rule_from_words(Family::Ipv4, "filter", &words(spec)).expect("rule"),
        at_head,
    }
}

fn delete(spec: &str) -> Operation {
    Operation::DeleteRule {
        table: "filter".into(),
        chain: "svc".into(),
        rule: rule_from_words(Family::Ipv4, "filter", &words(spec)).expect("rule"),
    }
}

fn new_rule(i: usize) -> String {
    format!(
        "-s 198.51.100.{} -p tcp --dport {} -j ACCEPT",
        i % 250,
        i + 1
    )
}

/// Round trips of one transaction of `n` new rules, and of the same again (all there).
fn round_trips(s: &mut Session, n: usize, base: usize) -> (u64, u64) {
    let ops: Vec<Operation> = (0..n)
        .map(|i| ensure(&new_rule(base + i), i % 2 == 0))
        .collect();
    let before = s.socket().round_trips();
    let (results, _) = nathost::transact(s, Family::Ipv4, &ops).expect("transact");
    let first = s.socket().round_trips() - before;
    assert!(
        results.iter().all(|r| r.changes.len() == 1),
        "one addition each"
    );
    let before = s.socket().round_trips();
    let (results, _) = nathost::transact(s, Family::Ipv4, &ops).expect("transact again");
    let again = s.socket().round_trips() - before;
    assert!(
        results.iter().all(|r| r.changes.is_empty()),
        "all there already"
    );
    (first, again)
}

#[test]
fn ensure_rule_transactions_read_the_chain_once_whatever_their_size() {
    in_netns(|| {
        existing_chain(300);
        let mut s = session();
        let small = round_trips(&mut s, 5, 10_000);
        let large = round_trips(&mut s, 600, 20_000);
        assert_eq!(
            small, large,
            "round trips of 5 and of 600 ensure_rule (first, then all present)"
        );
        assert!(small.0 <= 4, "read, then commit: {small:?}");
        let listed = run_ok("iptables-nft", &["-S", "svc"]);
        assert_eq!(listed.lines().count(), 1 + 300 + 5 + 600, "{listed}");
    });
}

/// One transaction mixing appends, inserts at the head, deletions of rules the kernel has
/// and of rules the transaction added, and re-adding what it deleted; the same commands one
/// by one through iptables-nft (-C, then -A/-I; -D when -C finds it) in a twin namespace.
#[test]
fn a_mixed_transaction_leaves_what_iptables_nft_commands_leave() {
    common::require_kernel!();
    let steps: Vec<(&str, String)> = {
        let mut v = Vec::new();
        for i in 0..40 {
            v.push(("append", new_rule(i)));
            v.push(("head", new_rule(1000 + i)));
        }
        for i in (0..40).step_by(3) {
            v.push(("delete", new_rule(i))); // added by this transaction
            v.push((
                "delete",
                format!(
                    "-s 203.0.113.{} -p udp --dport {} -j ACCEPT",
                    i % 250,
                    i + 1
                ),
            )); // the kernel's
        }
        for i in (0..40).step_by(6) {
            v.push(("append", new_rule(i))); // deleted above: added again, at the end
            v.push(("head", new_rule(1000 + i))); // there: unchanged
        }
        v.push(("delete", new_rule(9999))); // absent
        v
    };
    let ours = {
        let steps = steps.clone();
        in_netns(move || {
            existing_chain(60);
            let mut s = session();
            let ops: Vec<Operation> = steps
                .iter()
                .map(|(what, spec)| match *what {
                    "delete" => delete(spec),
                    how => ensure(spec, how == "head"),
                })
                .collect();
            nathost::transact(&mut s, Family::Ipv4, &ops).expect("transact");
            run_ok("iptables-nft", &["-S", "svc"])
        })
    };
    let theirs = in_netns(move || {
        existing_chain(60);
        for (what, spec) in &steps {
            let mut check = vec!["-C", "svc"];
            check.extend(spec.split_whitespace());
            let there = run("iptables-nft", &check).status.success();
            let verb = match (*what, there) {
                ("delete", true) => "-D",
                ("delete", false) | ("append" | "head", true) => continue,
                ("head", false) => "-I",
                _ => "-A",
            };
            let mut args = vec![verb, "svc"];
            args.extend(spec.split_whitespace());
            run_ok("iptables-nft", &args);
        }
        run_ok("iptables-nft", &["-S", "svc"])
    });
    assert_eq!(ours, theirs);
}

/// Root's own `xtnl apply` has no fixed cap: a document over 8 MiB with a transaction of
/// 12,000 operations is applied (delegated callers keep the bounds: tests/hardening.rs).
#[test]
fn root_applies_a_document_over_the_delegated_bounds() {
    in_netns(|| {
        existing_chain(10);
        let padding = "x".repeat(100);
        let ops: Vec<String> = (0..12_000)
            .map(|i| {
                format!(
                    r#"{{"op": "ensure_rule", "table": "filter", "chain": "svc", "rule": "{} -m comment --comment {padding}{i}"}}"#,
                    new_rule(30_000 + i)
                )
            })
            .collect();
        // Whitespace between operations takes the document over 8 MiB.
        let doc = format!(
            r#"{{"version": 1, "transactions": [{{"operations": [{}]}}]}}"#,
            ops.join(&format!(",\n{}", " ".repeat(600)))
        );
        assert!(
            doc.len() > xtnl::json::MAX_DOCUMENT_BYTES,
            "{} bytes",
            doc.len()
        );
        let lock = private_lock_path();
        let mut child = std::process::Command::new(common::xtnl_bin())
            .arg("apply")
            .env("XTABLES_LOCKFILE", &lock)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn xtnl");
        let mut input = child.stdin.take().expect("stdin");
        let feeder = std::thread::spawn(move || {
            use std::io::Write;
            let _ = input.write_all(doc.as_bytes());
        });
        let out = child.wait_with_output().expect("wait");
        let _ = feeder.join();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let listed = run_ok("iptables-nft", &["-S", "svc"]);
        assert_eq!(listed.lines().count(), 1 + 10 + 12_000);
    });
}
