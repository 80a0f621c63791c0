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

/// Where `ip netns` keeps its named namespaces (iproute2's `NETNS_RUN_DIR`).
pub const NETNS_RUN_DIR: &str = "/run/netns";

/// A network namespace named the way `ip` names them: a bare name is
/// `/run/netns/NAME` (`ip netns add NAME`), anything with a `/` is a path to an nsfs file
/// (`/proc/PID/ns/net`, a bind mount).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Netns {
    /// As the caller wrote it: what policies match and messages quote.
    pub name: String,
    pub path: std::path::PathBuf,
}

impl Netns {
    /// Resolves `NAME|PATH`. A name must be a single path component (`ip` refuses `.`, `..`
    /// and names with `/` the same way); nothing is opened yet.
    pub fn resolve(spec: &str) -> Result<Netns> {
        let bad = |why: &str| Error::InvalidInput(format!("network namespace {spec:?}: {why}"));
        if spec.is_empty() {
            return Err(bad("empty name"));
        }
        if crate::limits::has_control(spec) || spec.len() > 4096 {
            return Err(bad("not a usable name or path"));
        }
        let path = if spec.contains('/') {
            std::path::PathBuf::from(spec)
        } else if spec == "." || spec == ".." {
            return Err(bad("not a namespace name"));
        } else {
            std::path::Path::new(NETNS_RUN_DIR).join(spec)
        };
        Ok(Netns {
            name: spec.to_owned(),
            path,
        })
    }

    /// Whether it is a bare `ip netns` name (under [`NETNS_RUN_DIR`]).
    pub fn is_named(&self) -> bool {
        !self.name.contains('/')
    }

    /// Opens the namespace file, checking that it is one (a network namespace's nsfs file).
    pub fn open(&self) -> Result<std::fs::File> {
        let f = std::fs::File::open(&self.path).map_err(|e| {
            Error::InvalidInput(format!(
                "network namespace {:?}: cannot open {}: {e}{}",
                self.name,
                self.path.display(),
                if self.is_named() && e.kind() == std::io::ErrorKind::NotFound {
                    " (see `ip netns list`)"
                } else {
                    ""
                }
            ))
        })?;
        Ok(f)
    }

    /// Runs `f` on a thread of its own that has joined this namespace, so that the sockets
    /// `f` opens belong to it, without moving the calling thread or the process. A socket
    /// keeps the namespace it was created in for its whole life, wherever it is used later.
    pub fn run_in<T: Send>(&self, f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
        let file = self.open()?;
        std::thread::scope(|s| {
            s.spawn(move || {
                nix::sched::setns(&file, nix::sched::CloneFlags::CLONE_NEWNET).map_err(|e| {
                    Error::InvalidInput(format!(
                        "network namespace {:?}: cannot join {} ({e}; it must be a network \
                         namespace, and joining one needs CAP_SYS_ADMIN)",
                        self.name,
                        self.path.display()
                    ))
                })?;
                f()
            })
            .join()
            .unwrap_or_else(|_| {
                Err(Error::InvalidInput(
                    "the thread opening a socket in another network namespace panicked".into(),
                ))
            })
        })
    }
}
