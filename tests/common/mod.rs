//! Test harness: every test that touches netfilter runs inside a network namespace that it
//! created itself, on its own thread, so nothing here can change the host's ruleset.
#![allow(dead_code)]

pub mod agent;
#[path = "../../src/scratch.rs"]
pub mod scratch;
pub mod twin;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

/// Runs `body` on a fresh thread that has unshared its network namespace.
///
/// Netlink sockets and child processes created by `body` live in that namespace; the thread
/// (and with it the namespace) goes away when `body` returns. Panics are propagated.
///
/// Without the privileges to create a namespace (`cargo test` as a user), `body` does not
/// run: the test prints `test needs root (...): not run` and returns (a body that returns a
/// value the test goes on to use needs [`kernel_test`] first), or, with
/// `XTNL_REQUIRE_KERNEL_TESTS=1` (CI), fails. See the README's test section.
pub fn in_netns<R: Send + 'static>(body: impl FnOnce() -> R + Send + 'static) -> R {
    if !scratch::kernel_test_can_run() {
        return not_run();
    }
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

/// For a kernel test to call first: `false` (after printing that it needs root, as
/// [`in_netns`] does) when it cannot run, so the test returns: `if !kernel_test() { return; }`.
pub fn kernel_test() -> bool {
    scratch::kernel_test_can_run()
}

/// The first line of a kernel test that does more than run one `()` body in [`in_netns`]
/// (it uses what the body returns, or needs root outside a namespace): without the
/// privileges it needs, the test says so and returns (see [`kernel_test`]).
#[allow(unused_macros)]
macro_rules! require_kernel {
    () => {
        if !$crate::common::kernel_test() {
            return;
        }
    };
}
#[allow(unused_imports)]
pub(crate) use require_kernel;

/// The NAT host's test policy, `crates/xtnl-policy/fixtures/nat_host_policy.toml` (the one
/// copy, in the crate whose unit tests read it so that its package holds it; the library's
/// unit tests include the same file): reservation chains `vcld-*` made, flushed, deleted and
/// filled, PREROUTING holding only jumps to them. `nat_host_policy!()` is the file as it is;
/// `nat_host_policy!(N)` puts `max_ops = N` and a blank line before it, so that its entries
/// start on lines 3 and 9. A `&'static str` usable in a `const`.
#[allow(unused_macros)]
macro_rules! nat_host_policy {
    () => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/crates/xtnl-policy/fixtures/nat_host_policy.toml"
        ))
    };
    ($max_ops:literal) => {
        concat!(
            "max_ops = ",
            $max_ops,
            "\n\n",
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/crates/xtnl-policy/fixtures/nat_host_policy.toml"
            ))
        )
    };
}
#[allow(unused_imports)]
pub(crate) use nat_host_policy;

/// What [`in_netns`] returns for a body that did not run: `()`; a test whose body returns a
/// value it goes on to check must ask [`kernel_test`] first, and this says so.
fn not_run<R: 'static>() -> R {
    let unit: Box<dyn std::any::Any> = Box::new(());
    match unit.downcast::<R>() {
        Ok(r) => *r,
        Err(_) => panic!(
            "{}; this test uses what its namespace body returns: start it with \
             `if !common::kernel_test() {{ return; }}`",
            scratch::NEEDS_ROOT
        ),
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

/// iptables-save's text with the time of its comment lines masked (`# Generated by
/// iptables-save v1.8.9 (legacy) on DATE`, `# Completed on DATE`): two saves of one ruleset
/// a second apart differ only there. Every comparison of saved text goes through it (or
/// drops the comment lines).
pub fn undated(save: &str) -> String {
    let mut out = String::with_capacity(save.len());
    for l in save.lines() {
        match l.find(" on ") {
            Some(i) if l.starts_with("# Generated by ") || l.starts_with("# Completed on ") => {
                out.push_str(&l[..i]);
                out.push_str(" on DATE");
            }
            _ => out.push_str(l),
        }
        out.push('\n');
    }
    out
}

/// iptables-save's output of `program` (run with `args`), with the time masked
/// ([`undated`]).
pub fn save_undated(program: &str, args: &[&str]) -> String {
    undated(&run_ok(program, args))
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
