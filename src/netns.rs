//! Network-namespace guards. Tests, the demo and the benchmarks change netfilter only inside a
//! namespace they created; these helpers create one for the calling thread and refuse to go on
//! in the initial namespace.

use std::os::unix::fs::MetadataExt;
use std::sync::OnceLock;

use crate::error::{Error, Result};

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
