//! xtnl installed as `iptables` (a symbolic link) and run by an agent's unmodified commands,
//! without `-w`, beside an iptables-legacy caller that takes the xtables lock at random
//! moments: no command fails, nothing is left behind, on both backends. Past the bound of the
//! default wait a command fails with status 4 and iptables' words, exactly as
//! iptables-legacy does past its `-w`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{in_netns, private_lock_path, run_env, run_ok, xtnl_bin};

const WORKERS: usize = 64;

/// A directory holding `name` as a symbolic link to the built xtnl: the whole install.
fn link(name: &str) -> PathBuf {
    // One directory per call: the tests run in parallel threads of one process.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("dropin-lock-{}-{call}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create link dir");
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    std::os::unix::fs::symlink(xtnl_bin(), &path).expect("symlink xtnl");
    path
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A small xorshift generator: random moments without a crate.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// The agent's sequence for one reservation, as it spells it (long and short options, no -w).
fn sequence(w: usize) -> Vec<Vec<String>> {
    let chain = format!("vcld-{}", 5000 + w);
    let port = (10_000 + w).to_string();
    let dest = format!("192.0.2.{}:3389", w + 1);
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        s(&["--new-chain", &chain, "--table", "nat"]),
        s(&["-t", "nat", "-I", "PREROUTING", "-j", &chain]),
        s(&[
            "-t",
            "nat",
            "-I",
            &chain,
            "-i",
            "eth1",
            "-p",
            "tcp",
            "-m",
            "tcp",
            "--dport",
            &port,
            "-j",
            "DNAT",
            "--to-destination",
            &dest,
        ]),
        s(&["-t", "nat", "-F", &chain]),
        s(&["-t", "nat", "-D", "PREROUTING", "-j", &chain]),
        s(&["--delete-chain", &chain, "--table", "nat"]),
    ]
}

/// 64 sequences at once through `program` (a link named iptables or iptables-legacy) while
/// a holder takes the lock for 50-200 ms at random moments and a real iptables-legacy
/// writes beside them with `-w`. Returns the failures.
fn contend(program: &Path, lock: &Path, env: &[(&str, &str)]) -> Vec<String> {
    let stop = AtomicBool::new(false);
    let lock_s = lock.to_str().expect("UTF-8 lock path");
    std::thread::scope(|s| {
        let holder = s.spawn(|| {
            let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ u64::from(std::process::id()));
            let mut holds = 0;
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(rng.below(100)));
                let hold = 50 + rng.below(151);
                // Taken exactly as iptables-legacy takes it (flock(1): open O_CREAT, LOCK_EX).
                let st = Command::new("flock")
                    .args(["-x", lock_s, "sleep", &format!("0.{hold:03}")])
                    .status()
                    .expect("run flock (util-linux)");
                assert!(st.success(), "flock holder failed");
                holds += 1;
            }
            holds
        });
        let legacy = s.spawn(|| {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                for args in [["-w", "-N", "legacy-side"], ["-w", "-X", "legacy-side"]] {
                    let o = run_env("iptables-legacy", &args, &[("XTABLES_LOCKFILE", lock_s)]);
                    assert!(o.status.success(), "iptables-legacy {args:?}: {}", text(&o));
                }
                n += 1;
            }
            n
        });
        let workers: Vec<_> = (0..WORKERS)
            .map(|w| {
                s.spawn(move || {
                    let mut failed = Vec::new();
                    for args in sequence(w) {
                        let mut cmd = Command::new(program);
                        cmd.args(&args).env("XTABLES_LOCKFILE", lock);
                        cmd.env_remove("XTNL_LOCK_WAIT");
                        for (k, v) in env {
                            cmd.env(k, v);
                        }
                        let o = cmd.output().expect("run xtnl");
                        if !o.status.success() {
                            failed.push(format!("{args:?}: {}", text(&o)));
                        }
                    }
                    failed
                })
            })
            .collect();
        let failures: Vec<String> = workers
            .into_iter()
            .flat_map(|h| h.join().expect("worker"))
            .collect();
        stop.store(true, Ordering::Relaxed);
        let holds = holder.join().expect("holder");
        let legacy_rounds = legacy.join().expect("legacy caller");
        assert!(holds >= 2, "the holder took the lock only {holds} times");
        assert!(legacy_rounds >= 1, "iptables-legacy never ran beside xtnl");
        failures
    })
}

fn no_failures_no_leftovers(
    link_name: &str,
    oracle: &'static str,
    env: &'static [(&'static str, &'static str)],
) {
    let program = link(link_name);
    in_netns(move || {
        let lock = private_lock_path();
        run_ok(oracle, &["-t", "nat", "-N", "keep"]);
        let before = run_ok(oracle, &["-t", "nat", "-S"]);
        let failures = contend(&program, &lock, env);
        assert!(
            failures.is_empty(),
            "{} of {} commands failed, first: {}",
            failures.len(),
            WORKERS * 6,
            failures[0]
        );
        assert_eq!(
            run_ok(oracle, &["-t", "nat", "-S"]),
            before,
            "every chain and jump is gone again"
        );
    });
}

#[test]
fn sixty_four_agents_beside_a_legacy_lock_holder_nft_backend() {
    no_failures_no_leftovers("iptables", "iptables-nft", &[("XTNL_BACKEND", "nft")]);
}

#[test]
fn sixty_four_agents_beside_a_legacy_lock_holder_legacy_backend() {
    // The name chooses the backend, as xtables-legacy-multi's links do.
    no_failures_no_leftovers("iptables-legacy", "iptables-legacy", &[]);
}

/// Holds the lock (the same `flock(LOCK_EX)` on the same file as iptables-legacy) until the
/// guard is dropped.
fn hold(lock: &str) -> xtnl::lock::LockGuard {
    xtnl::lock::XtablesLock::new(lock, xtnl::lock::WaitPolicy::Forever)
        .acquire()
        .expect("take the lock")
}

/// Past the bound: status 4 and iptables-legacy's own two lines (compared with
/// `iptables-legacy -w 1`, which says the same after the same wait); before it, a command
/// without -w waits for a holder instead of failing; `-w 0` and `XTNL_LOCK_WAIT=0` fail at
/// once; the NAT-host commands and `apply` have the same bound.
#[test]
fn past_the_bound_status_4_and_iptables_words() {
    let ipt = link("iptables");
    let ipt_legacy = link("iptables-legacy");
    in_netns(move || {
        let lock = private_lock_path();
        let lock = lock.to_str().expect("UTF-8").to_owned();
        let env_lock = ("XTABLES_LOCKFILE", lock.as_str());
        run_ok("iptables-legacy", &["-t", "nat", "-N", "keep"]);
        run_ok("iptables-nft", &["-t", "nat", "-N", "keep"]);

        let holder = hold(&lock);
        let t = Instant::now();
        let oracle = run_env(
            "iptables-legacy",
            &["-w", "1", "-t", "nat", "-N", "x"],
            &[env_lock],
        );
        let oracle_took = t.elapsed();
        assert_eq!(oracle.status.code(), Some(4), "{}", text(&oracle));
        let expected = String::from_utf8_lossy(&oracle.stderr).into_owned();
        assert!(
            expected.contains("Stopped waiting after 1s."),
            "iptables-legacy said: {expected}"
        );
        for (program, backend) in [(&ipt, "nft"), (&ipt_legacy, "legacy")] {
            let t = Instant::now();
            let o = run_env(
                program.to_str().unwrap(),
                &["-t", "nat", "-N", "x"],
                &[env_lock, ("XTNL_LOCK_WAIT", "1"), ("XTNL_BACKEND", backend)],
            );
            let took = t.elapsed();
            assert_eq!(o.status.code(), Some(4), "{backend}: {}", text(&o));
            assert_eq!(
                String::from_utf8_lossy(&o.stderr),
                expected,
                "{backend}: iptables-legacy's words"
            );
            assert!(o.stdout.is_empty());
            assert!(
                took >= Duration::from_millis(900) && took < oracle_took + Duration::from_secs(1),
                "{backend}: gave up after {took:?} (iptables-legacy -w 1: {oracle_took:?})"
            );
            // -w N keeps its meaning; so does -w 0 (fail at once), and XTNL_LOCK_WAIT=0.
            let o = run_env(
                program.to_str().unwrap(),
                &["-w", "1", "-t", "nat", "-N", "x"],
                &[env_lock, ("XTNL_BACKEND", backend)],
            );
            assert_eq!(
                String::from_utf8_lossy(&o.stderr),
                expected,
                "{backend} -w 1"
            );
            for (args, env) in [
                (&["-w", "0", "-t", "nat", "-N", "x"][..], None),
                (&["-t", "nat", "-N", "x"][..], Some(("XTNL_LOCK_WAIT", "0"))),
            ] {
                let mut e = vec![env_lock, ("XTNL_BACKEND", backend)];
                e.extend(env);
                let t = Instant::now();
                let o = run_env(program.to_str().unwrap(), args, &e);
                assert_eq!(o.status.code(), Some(4), "{backend} {args:?}: {}", text(&o));
                assert_eq!(
                    String::from_utf8_lossy(&o.stderr),
                    format!(
                        "Can't lock {lock}: Resource temporarily unavailable\n\
                         Another app is currently holding the xtables lock. Perhaps you want \
                         to use the -w option?\n"
                    ),
                    "{backend} {args:?}"
                );
                assert!(
                    t.elapsed() < Duration::from_millis(500),
                    "{backend} {args:?}"
                );
            }
        }
        // The NAT-host commands and apply: the same bound (they used to wait forever).
        for args in [
            &[
                "reservation",
                "setup",
                "vcld-1",
                "--forward",
                "eth1:tcp/50443=192.0.2.3:3389",
            ][..],
            &["teardown", "keep"][..],
        ] {
            let t = Instant::now();
            let o = run_env(xtnl_bin(), args, &[env_lock, ("XTNL_LOCK_WAIT", "1")]);
            assert_eq!(o.status.code(), Some(4), "xtnl {args:?}: {}", text(&o));
            assert!(
                t.elapsed() < Duration::from_secs(3),
                "xtnl {args:?} waited on"
            );
        }
        let mut apply = Command::new(xtnl_bin())
            .arg("apply")
            .env("XTABLES_LOCKFILE", &lock)
            .env("XTNL_LOCK_WAIT", "1")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("xtnl apply");
        {
            use std::io::Write;
            let doc = r#"{"version":1,"transactions":[{"operations":[{"op":"create_chain","table":"nat","chain":"vcld-2"}]}]}"#;
            apply
                .stdin
                .take()
                .expect("stdin")
                .write_all(doc.as_bytes())
                .expect("write document");
        }
        let o = apply.wait_with_output().expect("apply output");
        assert_eq!(
            o.status.code(),
            Some(4),
            "apply under a held lock: {}",
            text(&o)
        );
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("xtables lock")
                || String::from_utf8_lossy(&o.stderr).contains("xtables lock"),
            "apply names the lock: {}",
            text(&o)
        );
        drop(holder);

        // Within the bound a command without -w waits for the holder and succeeds (the
        // default is 30 s; here a holder keeps the lock 2 s).
        let holder = hold(&lock);
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(2));
            drop(holder);
        });
        let t = Instant::now();
        let o = run_env(
            ipt.to_str().unwrap(),
            &["-t", "nat", "-N", "after-wait"],
            &[env_lock, ("XTNL_BACKEND", "nft")],
        );
        assert!(o.status.success(), "no -w waits: {}", text(&o));
        assert!(
            t.elapsed() >= Duration::from_millis(1500),
            "did not wait: {:?}",
            t.elapsed()
        );
        release.join().expect("release thread");
        assert!(run_ok("iptables-nft", &["-t", "nat", "-S"]).contains("-N after-wait"));
    });
}
