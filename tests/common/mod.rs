//! Test harness: every test that touches netfilter runs inside a network namespace that it
//! created itself, on its own thread, so nothing here can change the host's ruleset.
#![allow(dead_code)]

#[path = "../../src/scratch.rs"]
pub mod scratch;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

/// Runs `body` on a fresh thread that has unshared its network namespace.
///
/// Netlink sockets and child processes created by `body` live in that namespace; the thread
/// (and with it the namespace) goes away when `body` returns. Panics are propagated.
pub fn in_netns<R: Send + 'static>(body: impl FnOnce() -> R + Send + 'static) -> R {
    let handle = std::thread::Builder::new()
        .name("netns-test".into())
        .spawn(move || {
            scratch::enter_new().expect("unshare(CLONE_NEWNET) (tests run as root)");
            scratch::refuse_initial().expect("test must not run in the initial netns");
            body()
        })
        .expect("spawn test thread");
    match handle.join() {
        Ok(r) => r,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// Runs an external program in the calling thread's network namespace (children are forked
/// from the calling thread, so they inherit it). Panics if it cannot be started.
pub fn run(program: &str, args: &[&str]) -> Output {
    run_env(program, args, &[])
}

pub fn run_env(program: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(program);
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e} (.ci/run installs it)"))
}

/// Like [`run`] but panics with the program's stderr unless it exits 0; returns stdout.
pub fn run_ok(program: &str, args: &[&str]) -> String {
    let out = run(program, args);
    assert!(
        out.status.success(),
        "{program} {args:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The ruleset as `nft` prints it (handles included), for before/after comparisons.
pub fn nft_ruleset() -> String {
    run_ok("nft", &["-a", "list", "ruleset"])
}

/// A private xtables lock path for this test (never the real `/run/xtables.lock`).
pub fn private_lock_path() -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    // Under cargo's per-target scratch folder, so runs leave nothing in /tmp.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("xtnl-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir.join(format!(
        "xtables-{}.lock",
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Path of the built `xtnl` binary (cargo builds it for integration tests).
pub fn xtnl_bin() -> &'static str {
    env!("CARGO_BIN_EXE_xtnl")
}
