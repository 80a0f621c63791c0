//! Scratch network namespaces: tests, the demo, examples and the benchmarks change netfilter
//! only inside a namespace they created; these helpers create one for the calling thread and
//! refuse to go on in the initial namespace.
//!
//! Not part of the library's API: this file is a module of the binaries (`mod scratch;` in
//! src/main.rs, `#[path]` from src/bin/xtnl-bench/main.rs), of the tests (tests/common) and of
//! the examples and benches, each of which includes it with `#[path]`. A library user who wants
//! another namespace names one with [`xtnl::netns::Netns`] and opens a session there
//! ([`xtnl::nft::Session::open_in`]).
#![allow(dead_code)] // each includer uses a different part

use std::os::unix::fs::MetadataExt;
use std::sync::OnceLock;

use xtnl::error::{Error, Result};

/// The namespace the process was in before [`enter_new`] first moved a thread out of it.
static ORIGIN: OnceLock<(u64, u64)> = OnceLock::new();

fn ns_id(path: &str) -> std::io::Result<(u64, u64)> {
    std::fs::metadata(path).map(|m| (m.dev(), m.ino()))
}

fn current() -> Result<(u64, u64)> {
    ns_id("/proc/thread-self/ns/net").map_err(|e| Error::Netlink {
        context: "stat /proc/thread-self/ns/net",
        source: e,
    })
}

/// The calling thread's network namespace (device and inode of its nsfs file).
pub fn current_id() -> Result<(u64, u64)> {
    current()
}

/// Moves the calling thread (and processes it spawns afterwards) into a new, empty network
/// namespace. Needs CAP_SYS_ADMIN.
pub fn enter_new() -> Result<()> {
    let here = current()?;
    ORIGIN.get_or_init(|| here);
    nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET).map_err(|e| Error::Netlink {
        context: "unshare(CLONE_NEWNET)",
        source: e.into(),
    })
}

/// Whether the calling thread is in the initial network namespace: the one PID 1 is in when
/// that can be read (it cannot inside some sandboxes), and in any case the one this process
/// was in before [`enter_new`] moved it.
pub fn in_initial() -> Result<bool> {
    let here = current()?;
    if let Ok(init) = ns_id("/proc/1/ns/net")
        && init == here
    {
        return Ok(true);
    }
    match ORIGIN.get() {
        Some(origin) => Ok(*origin == here),
        // Nothing to compare with: we cannot prove this is a scratch namespace.
        None => Ok(ns_id("/proc/1/ns/net").is_err()),
    }
}

/// Fails unless the calling thread is in a network namespace other than the initial one.
pub fn refuse_initial() -> Result<()> {
    if in_initial()? {
        return Err(Error::InvalidInput(
            "refusing to touch netfilter in the initial network namespace; \
             run inside a scratch namespace (unshare -n, ip netns exec)"
                .into(),
        ));
    }
    Ok(())
}

/// [`enter_new`] then [`refuse_initial`]: the calling thread is in a namespace of its own.
pub fn enter_scratch() -> Result<()> {
    enter_new()?;
    refuse_initial()
}

/// CAP_NET_ADMIN and CAP_SYS_ADMIN (capability numbers 12 and 21).
const NEEDED_CAPS: u64 = (1 << 12) | (1 << 21);

/// What a kernel test prints when it cannot run (the words the README's test section quotes).
pub const NEEDS_ROOT: &str =
    "test needs root (CAP_SYS_ADMIN+CAP_NET_ADMIN to create a network namespace): not run";

/// The environment variable that turns "not run" into a failure (`.ci/run` sets it to 1, so
/// that CI cannot pass with its kernel tests not run).
pub const REQUIRE_ENV: &str = "XTNL_REQUIRE_KERNEL_TESTS";

/// Whether this process may create a network namespace and change netfilter in it: its
/// effective capabilities (`CapEff` in /proc/self/status) hold CAP_SYS_ADMIN and
/// CAP_NET_ADMIN. Read rather than tried, so that nothing is left half done.
pub fn privileged() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .is_some_and(|caps| caps & NEEDED_CAPS == NEEDED_CAPS)
}

/// For kernel tests: `true` when the test can run. Otherwise it prints [`NEEDS_ROOT`] (with
/// the test's name) on standard error and returns `false`, so the test returns without
/// running; with `XTNL_REQUIRE_KERNEL_TESTS=1` it panics instead, so the test fails. The line
/// is written to the stderr handle itself, which the test harness does not capture (it
/// captures `eprintln!`), so `cargo test` shows it whether the test passes or not.
pub fn kernel_test_can_run() -> bool {
    if privileged() {
        return true;
    }
    let name = match std::thread::current().name() {
        Some(n) if !n.is_empty() => n.to_owned(),
        _ => "a kernel test".to_owned(),
    };
    if std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "1") {
        panic!("{name}: {NEEDS_ROOT}, and {REQUIRE_ENV}=1 requires it");
    }
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "{name}: {NEEDS_ROOT}");
    false
}
