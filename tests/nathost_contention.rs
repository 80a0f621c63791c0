//! Many `xtnl reservation setup` / `xtnl teardown` processes at once on one nat table, as
//! the NAT-host agent forks them: every one succeeds and the table ends as it began. A
//! transaction takes the xtables lock around its commit; after four lost races on the
//! generation id it holds the lock from its reads to its commit (`Session::transact`).
//! Without that fallback, 64 such workers ran out of re-plan attempts (11-12 failures in
//! 384-768 operations, measured with `xtnl bench`).

mod common;

use std::process::Command;

use common::{in_netns, private_lock_path, run_ok, xtnl_bin};

const WORKERS: usize = 64;
const CYCLES: usize = 3;

#[test]
fn sixty_four_concurrent_workers_never_fail() {
    in_netns(|| {
        let lock = private_lock_path();
        run_ok("iptables-nft", &["-t", "nat", "-N", "vcld-keep"]);
        let before = run_ok("iptables-nft", &["-t", "nat", "-S"]);
        let failures: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..WORKERS)
                .map(|w| {
                    let lock = &lock;
                    s.spawn(move || {
                        let chain = format!("vcw-{w}");
                        let forward = format!("eth1:tcp/{}=192.0.2.{}:22", 10_000 + w, w + 1);
                        let mut failed = Vec::new();
                        for _ in 0..CYCLES {
                            for args in [
                                vec![
                                    "reservation",
                                    "setup",
                                    &chain,
                                    "--forward",
                                    &forward,
                                    "--comment-prefix",
                                    "VCL: ",
                                ],
                                vec!["teardown", &chain],
                            ] {
                                let out = Command::new(xtnl_bin())
                                    .args(&args)
                                    .env("XTABLES_LOCKFILE", lock)
                                    .output()
                                    .expect("run xtnl");
                                if !out.status.success() {
                                    failed.push(format!(
                                        "{args:?}: {}",
                                        String::from_utf8_lossy(&out.stderr).trim()
                                    ));
                                }
                            }
                        }
                        failed
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("worker thread"))
                .collect()
        });
        assert!(
            failures.is_empty(),
            "{} of {} operations failed, first: {}",
            failures.len(),
            WORKERS * CYCLES * 2,
            failures[0]
        );
        assert_eq!(
            run_ok("iptables-nft", &["-t", "nat", "-S"]),
            before,
            "every worker's chain and jump is gone again"
        );
    });
}
