//! Faults that come from the kernel side, each provoked for real in a namespace of its own:
//! an extension the running kernel lacks, a caller without CAP_NET_ADMIN, a dump many times
//! larger than the socket's receive buffer, and dumps interrupted by a concurrent writer
//! (NLM_F_DUMP_INTR).

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::{in_netns, nft_ruleset, private_lock_path, run, run_ok};
use xtnl::ErrorKind;
use xtnl::model::{Action, Family, Rule};
use xtnl::nft::{ChainSpec, EncodedRule, Op, RulePosition, Session, TableRef, Transaction};
use xtnl::wire::expr::{Counter, Expr, Match, OtherExpr, Target};

/// x_tables extensions that exist upstream but that this kernel may lack; the first one
/// missing from /proc/net/ip_tables_* is used. The made-up names at the end make the test
/// work on a kernel that has all the real ones.
const MATCH_CANDIDATES: &[&str] = &["ipvs", "geoip", "xtnl_no_such_match"];
const TARGET_CANDIDATES: &[&str] = &["LED", "CLUSTERIP", "XTNL_NO_SUCH_TARGET"];

fn missing(list: &str, candidates: &[&'static str]) -> &'static str {
    let have = std::fs::read_to_string(list).unwrap_or_default();
    let have: Vec<&str> = have.lines().map(str::trim).collect();
    candidates
        .iter()
        .find(|c| !have.contains(c))
        .copied()
        .expect("a made-up name is never registered")
}

fn add(chain: &xtnl::nft::ChainRef, exprs: Vec<Expr>) -> Transaction {
    let mut tx = Transaction::new();
    tx.push(Op::AddEncodedRule {
        chain: chain.clone(),
        rule: EncodedRule {
            exprs,
            userdata: None,
            compat: None,
            sets: Vec::new(),
        },
        position: RulePosition::Append,
    });
    tx
}

#[test]
fn an_extension_the_kernel_lacks_is_named_as_unsupported() {
    in_netns(|| {
        let m = missing("/proc/net/ip_tables_matches", MATCH_CANDIDATES);
        let t = missing("/proc/net/ip_tables_targets", TARGET_CANDIDATES);
        let mut s = Session::open().unwrap();
        let table = TableRef::new(Family::Ipv4, "filter");
        let chain = table.chain("c");
        let mut tx = Transaction::new();
        tx.ensure_table(&table)
            .ensure_chain(&table, ChainSpec::regular("c"))
            .append_rule(&chain, Rule::new().counted().action(Action::Accept));
        s.commit(&tx).unwrap();
        let before = nft_ruleset();

        let cases = [
            (
                vec![
                    Expr::Match(Match {
                        name: m.into(),
                        rev: 0,
                        info: vec![0; 32],
                    }),
                    Expr::Counter(Counter::default()),
                ],
                format!("x_tables match {m} rev 0"),
            ),
            (
                vec![
                    Expr::Counter(Counter::default()),
                    Expr::Target(Target {
                        name: t.into(),
                        rev: 0,
                        info: vec![0; 32],
                    }),
                ],
                format!("x_tables target {t} rev 0"),
            ),
            (
                vec![Expr::Other(OtherExpr {
                    name: "xtnlnosuchexpr".into(),
                    data: Vec::new(),
                })],
                "expression xtnlnosuchexpr".to_owned(),
            ),
        ];
        for (exprs, what) in cases {
            let err = s.commit(&add(&chain, exprs)).unwrap_err();
            let text = err.to_string();
            assert_eq!(err.kind(), ErrorKind::Unsupported, "{text}");
            assert_eq!(err.exit_status(), 4);
            assert!(text.contains("not supported by this kernel"), "{text}");
            assert!(text.contains(&what), "names {what}: {text}");
            assert_eq!(nft_ruleset(), before, "nothing changed");
        }
        // The same ENOENT for a chain that is not there stays "not found".
        let err = s
            .commit(&add(
                &table.chain("nosuchchain"),
                vec![Expr::Match(Match {
                    name: m.into(),
                    rev: 0,
                    info: vec![0; 32],
                })],
            ))
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    });
}

#[test]
fn without_cap_net_admin_the_message_says_how_to_grant_it() {
    in_netns(|| {
        let lock = private_lock_path();
        let lock = lock.to_str().unwrap().to_owned();
        run_ok("iptables-nft", &["-N", "keep"]);
        let before = nft_ruleset();
        let rules = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("nocap-{}.rules", std::process::id()));
        std::fs::write(&rules, "*filter\n-A INPUT -j ACCEPT\nCOMMIT\n").unwrap();
        let rules = rules.to_str().unwrap().to_owned();
        // setpriv (util-linux) drops the capability from the bounding set, so the exec'd
        // xtnl runs as root without CAP_NET_ADMIN.
        for args in [
            vec!["-S"],
            vec!["-A", "INPUT", "-j", "ACCEPT"],
            vec!["-X", "keep"],
            vec!["restore", "--noflush", &rules],
            vec!["list"],
        ] {
            let mut a = vec!["--bounding-set", "-net_admin", common::xtnl_bin()];
            a.extend(&args);
            let o = common::run_env("setpriv", &a, &[("XTABLES_LOCKFILE", &lock)]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(4), "{args:?}: {err}");
            assert!(err.contains("needs CAP_NET_ADMIN"), "{args:?}: {err}");
            assert!(err.contains("setcap cap_net_admin+ep"), "{args:?}: {err}");
            assert!(!err.contains("panicked"), "{err}");
            assert_eq!(nft_ruleset(), before);
        }
        // iptables-nft exits with the same status.
        let o = run(
            "setpriv",
            &["--bounding-set", "-net_admin", "iptables-nft", "-S"],
        );
        assert_eq!(o.status.code(), Some(4));
        let _ = std::fs::remove_file(&rules);
    });
}

/// `n` DNAT rules in one chain of `ip nat`, written by nft (one `nft -f`).
fn populate(table: &str, chain: &str, n: usize) {
    let mut s = format!("add table ip {table}\nadd chain ip {table} {chain}\n");
    for i in 0..n {
        s.push_str(&format!(
            "add rule ip {table} {chain} iifname \"eth1\" tcp dport {} counter dnat to 192.0.2.{}:22 comment \"reservation {i}\"\n",
            10_000 + i % 50_000,
            1 + i % 250
        ));
    }
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("populate-{}-{table}.nft", std::process::id()));
    std::fs::write(&path, s).unwrap();
    run_ok("nft", &["-f", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
}

/// Handles of the rules of a chain as nft lists them.
fn nft_handles(table: &str, chain: &str) -> Vec<u64> {
    run_ok("nft", &["-a", "list", "chain", "ip", table, chain])
        .lines()
        .filter(|l| !l.trim_start().starts_with("chain "))
        .filter_map(|l| l.trim().rsplit_once("# handle ").map(|(_, h)| h))
        .filter_map(|h| h.trim().parse().ok())
        .collect()
}

#[test]
fn a_dump_many_times_the_socket_buffer_is_complete() {
    in_netns(|| {
        // 30,000 rules: about 6 MB of dump, against a 320 KiB receive buffer.
        populate("big", "c", 30_000);
        let mut s = Session::open().unwrap();
        let table = TableRef::new(Family::Ipv4, "big");
        let rules = s.list_table_rules(&table).unwrap();
        let ours: Vec<u64> = rules.iter().map(|r| r.handle).collect();
        let theirs = nft_handles("big", "c");
        assert_eq!(theirs.len(), 30_000);
        assert_eq!(ours, theirs, "every rule, in order");
        let bytes: usize = s
            .list_raw_rules(&table, Some("c"))
            .unwrap()
            .iter()
            .map(|r| {
                r.exprs
                    .iter()
                    .map(|e| format!("{e:?}").len())
                    .sum::<usize>()
            })
            .sum();
        assert!(bytes > 4 * 320 * 1024, "the dump is larger than the buffer");
        // Every rule decoded, the last one included.
        let last = rules.last().unwrap();
        assert!(last.rule.is_expressible(), "{:?}", last.rule);
        assert_eq!(last.rule.comment.as_deref(), Some("reservation 29999"));
    });
}

#[test]
fn dumps_interrupted_by_a_concurrent_writer_are_restarted_and_consistent() {
    in_netns(|| {
        populate("steady", "c", 5_000);
        let expected = nft_handles("steady", "c");
        // One listing alone gives the pace: the writer commits a bit less often than a
        // dump lasts, so that many dumps are interrupted and each restart can finish.
        let t = std::time::Instant::now();
        Session::open()
            .unwrap()
            .list_table_rules(&TableRef::new(Family::Ipv4, "steady"))
            .unwrap();
        let pace = t.elapsed().mul_f64(1.5);
        let stop = Arc::new(AtomicBool::new(false));
        // The writer commits to another table every few milliseconds: every commit moves
        // the ruleset generation, which interrupts any dump in progress.
        let writer = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut s = Session::builder()
                    .lock_mode(xtnl::lock::LockMode::Never)
                    .open()
                    .unwrap();
                let t = TableRef::new(Family::Ipv4, "churn");
                let c = t.chain("c");
                let mut tx = Transaction::new();
                tx.ensure_table(&t)
                    .ensure_chain(&t, ChainSpec::regular("c"));
                s.commit(&tx).unwrap();
                let mut commits = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let mut tx = Transaction::new();
                    tx.flush_chain(&c)
                        .append_rule(&c, Rule::new().counted().action(Action::Accept));
                    s.commit(&tx).unwrap();
                    commits += 1;
                    std::thread::sleep(pace);
                }
                commits
            })
        };
        let mut s = Session::open().unwrap();
        let table = TableRef::new(Family::Ipv4, "steady");
        let mut listings = 0;
        while listings < 200 && (listings < 20 || s.stats().dump_restarts == 0) {
            let rules = s
                .list_table_rules(&table)
                .unwrap_or_else(|e| panic!("listing #{listings}: {e}"));
            let got: Vec<u64> = rules.iter().map(|r| r.handle).collect();
            assert_eq!(
                got, expected,
                "listing #{listings} is complete and in order"
            );
            listings += 1;
        }
        stop.store(true, Ordering::Relaxed);
        let commits = writer.join().unwrap();
        let restarts = s.stats().dump_restarts;
        eprintln!(
            "{listings} listings of 5,000 rules during {commits} concurrent commits (one every {pace:?}): {restarts} dumps restarted"
        );
        assert!(restarts > 0, "the writer interrupted some dump");
    });
}
