//! Other network namespaces, named the way `ip netns` names them: [`Netns`] resolves a name
//! or path, and runs a closure on a thread that joined the namespace, so that the sockets it
//! opens act there while the process stays where it is (the library's
//! `xtnl::nft::Session::open_in`, `xtnl --netns`, `xtnl serve`'s requests).
//!
//! The scratch-namespace guards that tests, the demo, the examples and the benchmarks use
//! (create a namespace for the calling thread, refuse the initial one) are not library API:
//! they live in the root package's src/scratch.rs, a module of the binaries, tests and examples.

use xtnl_core::error::{Error, Result};

/// Where `ip netns` keeps its named namespaces (iproute2's `NETNS_RUN_DIR`).
pub const NETNS_RUN_DIR: &str = "/run/netns";

/// A network namespace named the way `ip` names them: a bare name is
/// `/run/netns/NAME` (`ip netns add NAME`), anything with a `/` is a path to an nsfs file
/// (`/proc/PID/ns/net`, a bind mount).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Netns {
    /// As the caller wrote it: what policies match and messages quote.
    pub name: String,
    /// The nsfs file opened to enter it: `/run/netns/NAME` for a bare name, else the name
    /// itself.
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
        if xtnl_core::limits::has_control(spec) || spec.len() > 4096 {
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
