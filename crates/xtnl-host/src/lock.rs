//! The xtables lock, taken exactly as iptables 1.6+ takes it, so that our changes and those of
//! `iptables-legacy` / `iptables-legacy-restore` never interleave.
//!
//! iptables serialises its read-modify-replace of a table with an exclusive `flock(2)` on a
//! well-known file. Anyone who wants to coexist with it has to lock the same file in the same
//! way: the same path (including the `XTABLES_LOCKFILE` override of iptables 1.8.6+), the same
//! lock type (BSD `flock`, not `fcntl` record locks, which do not conflict with it), and the
//! same creation mode so that a file we create is indistinguishable from one iptables created.

#![deny(missing_docs)]

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use xtnl_core::error::{Error, Result};

/// iptables' compiled-in `XT_LOCK_NAME`; every distribution's iptables uses it unless
/// `XTABLES_LOCKFILE` says otherwise.
pub const DEFAULT_LOCK_PATH: &str = "/run/xtables.lock";

/// The environment variable iptables 1.8.6+ reads to override [`DEFAULT_LOCK_PATH`].
pub const LOCK_PATH_ENV: &str = "XTABLES_LOCKFILE";

/// Small enough that a freed lock is picked up with little delay, large enough not to spin.
/// (iptables 1.6-1.8.7 defaulted to 1 s, which only made its own callers slow.)
const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(10);

/// The lock path iptables would use given this value of `XTABLES_LOCKFILE`.
///
/// iptables treats an empty value like an unset one, so we must too: otherwise an exported but
/// empty variable would make us lock a different file than the iptables running beside us.
pub fn lock_path_from(env_value: Option<&OsStr>) -> PathBuf {
    match env_value {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from(DEFAULT_LOCK_PATH),
    }
}

/// The lock path iptables would use in this process's environment.
///
/// A privileged program must not let its caller steer this (point a root-privileged
/// `open(O_CREAT)` at a file of the caller's choosing, or dodge the lock iptables callers
/// take): it resets its environment first, as xtnl's delegated run does before anything
/// else (`cli::delegated`), so that the variable is gone; and it opens the lock with
/// [`XtablesLock::with_no_follow`].
pub fn lock_path_from_env() -> PathBuf {
    lock_path_from(std::env::var_os(LOCK_PATH_ENV).as_deref())
}

/// How long to wait for a lock held by someone else; mirrors iptables' `-w` option so callers
/// can pass their users' choice straight through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitPolicy {
    /// No `-w`: give up at once if the lock is held.
    FailFast,
    /// `-w`: wait as long as it takes.
    Forever,
    /// `-w N`: wait up to this long, then give up.
    Timeout(Duration),
}

/// How long a command given no `-w` waits for the lock before it fails with iptables' status
/// 4: 30 s.
///
/// Failing at once (what iptables 1.8.11 does without `-w`) brings back the failure a drop-in
/// exists to remove: each xtnl command holds the lock for microseconds, so of 32 commands
/// started together some always met another's commit and failed, and any legacy caller
/// holding the lock failed every xtnl command that met it. Waiting forever (what iptables
/// 1.8.8-1.8.10 do by accident) hangs a caller behind a stuck holder. The bound is far above
/// the longest legitimate hold: on a 10,000-chain, 20,000-rule nat table iptables-legacy
/// 1.8.9 holds the lock 0.35 s for a whole restore and 0.25 s for `-N` (measured, see
/// docs/drop-in.md), so a queue of about a hundred such commands still fits.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(30);

/// Environment variable that overrides [`DEFAULT_WAIT`] for commands given no `-w`: seconds
/// (a decimal fraction is allowed), `0` meaning fail at once. Ignored in a delegated run.
pub const WAIT_ENV: &str = "XTNL_LOCK_WAIT";

impl WaitPolicy {
    /// The wait of a command given no `-w`: [`DEFAULT_WAIT`], or `$XTNL_LOCK_WAIT` when set
    /// and not empty (a delegated run has reset its environment, so there the caller's
    /// environment steers nothing).
    pub fn default_for_command() -> Result<WaitPolicy> {
        Self::default_from(std::env::var_os(WAIT_ENV).as_deref())
    }

    /// [`Self::default_for_command`] given the value of `$XTNL_LOCK_WAIT`.
    pub fn default_from(env_value: Option<&OsStr>) -> Result<WaitPolicy> {
        let Some(v) = env_value.filter(|v| !v.is_empty()) else {
            return Ok(WaitPolicy::Timeout(DEFAULT_WAIT));
        };
        let secs = v
            .to_str()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && (0.0..=86_400.0).contains(s))
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "{WAIT_ENV}={} is not a number of seconds between 0 and 86400",
                    v.to_string_lossy()
                ))
            })?;
        Ok(if secs == 0.0 {
            WaitPolicy::FailFast
        } else {
            WaitPolicy::Timeout(Duration::from_secs_f64(secs))
        })
    }
}

/// Whether mutating transactions take the xtables lock.
///
/// nf_tables transactions are already atomic in the kernel, so the lock only matters for
/// coexistence with legacy iptables callers; `Never` is for callers that know none exist (or
/// that hold the lock themselves) and do not want to contend with them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LockMode {
    /// Take the lock around every mutating commit (the default, as iptables does).
    #[default]
    Always,
    /// Never take it; for callers that know no legacy iptables runs beside them, or that hold it
    /// themselves.
    Never,
}

/// Where and how patiently to take the xtables lock.
#[derive(Debug, Clone)]
pub struct XtablesLock {
    path: PathBuf,
    wait: WaitPolicy,
    poll_interval: Duration,
    no_follow: bool,
}

impl XtablesLock {
    /// A lock at `path`, followed through symbolic links; a privileged run asks for
    /// `O_NOFOLLOW` with [`Self::with_no_follow`].
    pub fn new(path: impl Into<PathBuf>, wait: WaitPolicy) -> Self {
        XtablesLock {
            path: path.into(),
            wait,
            poll_interval: DEFAULT_POLL_INTERVAL,
            no_follow: false,
        }
    }

    /// Refuse a lock path that is a symbolic link (`O_NOFOLLOW`) instead of following it, so
    /// that a privileged run never creates or locks a file a link points it at.
    pub fn with_no_follow(mut self, yes: bool) -> Self {
        self.no_follow = yes;
        self
    }

    /// Uses the same path an iptables started from this process's environment would lock.
    pub fn from_env(wait: WaitPolicy) -> Self {
        Self::new(lock_path_from_env(), wait)
    }

    /// How often a [`WaitPolicy::Timeout`] wait retries; the counterpart of iptables' `-W usecs`.
    ///
    /// A timed wait has to poll (a blocking `flock` cannot be given a deadline without signals,
    /// which a library must not install), so this bounds how late we notice a released lock.
    pub fn with_poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How long to wait for the lock.
    pub fn wait(&self) -> WaitPolicy {
        self.wait
    }

    /// How often a timed wait retries (see [`Self::with_poll_interval`]).
    pub fn poll_interval(&self) -> Duration {
        self.poll_interval
    }

    /// Takes the lock according to the wait policy; it is held until the guard is dropped.
    ///
    /// The file is created if missing, as iptables does, so that whichever of us comes first
    /// leaves a file the other can lock.
    pub fn acquire(&self) -> Result<LockGuard> {
        let mut file = self.open()?;
        match self.wait {
            WaitPolicy::FailFast => match self.try_lock(file)? {
                Ok(lock) => Ok(self.guard(lock)),
                Err(_) => Err(self.busy(None)),
            },
            WaitPolicy::Forever => loop {
                match Flock::lock(file, FlockArg::LockExclusive) {
                    Ok(lock) => return Ok(self.guard(lock)),
                    // A signal handler in the host program interrupted the wait; keep waiting,
                    // as `-w` without a limit promises.
                    Err((f, Errno::EINTR)) => file = f,
                    Err((_, errno)) => return Err(self.lock_file_error(errno)),
                }
            },
            WaitPolicy::Timeout(limit) => {
                let start = Instant::now();
                // A zero interval would turn the wait into a busy loop of flock calls.
                let interval = self.poll_interval.max(Duration::from_micros(1));
                loop {
                    file = match self.try_lock(file)? {
                        Ok(lock) => return Ok(self.guard(lock)),
                        Err(f) => f,
                    };
                    let elapsed = start.elapsed();
                    if elapsed >= limit {
                        return Err(self.busy(Some(limit)));
                    }
                    std::thread::sleep(interval.min(limit - elapsed));
                }
            }
        }
    }

    /// `open(path, O_CREAT, 0600)` like iptables: read-only, so that a lock file we may only
    /// read (owned by someone else, or on a read-only mount) works for us whenever it works for
    /// iptables, and mode 0600 so that a file we create looks like one iptables created.
    /// `O_CLOEXEC` (which std always sets) keeps the descriptor out of programs we spawn: a
    /// child that inherited it would share our lock, keeping iptables out after we died, or
    /// releasing it under us.
    fn open(&self) -> Result<File> {
        let flags = libc::O_CREAT | if self.no_follow { libc::O_NOFOLLOW } else { 0 };
        OpenOptions::new()
            .read(true)
            .custom_flags(flags)
            .mode(0o600)
            .open(&self.path)
            .map_err(|source| {
                if self.no_follow && source.raw_os_error() == Some(libc::ELOOP) {
                    return Error::LockFile {
                        path: self.path.clone(),
                        source: io::Error::new(
                            source.kind(),
                            "it is a symbolic link, which a privileged run refuses to follow",
                        ),
                    };
                }
                Error::LockFile {
                    path: self.path.clone(),
                    source,
                }
            })
    }

    /// One non-blocking attempt: `Ok(Ok(lock))` taken, `Ok(Err(file))` held elsewhere.
    fn try_lock(&self, mut file: File) -> Result<std::result::Result<Flock<File>, File>> {
        loop {
            match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                Ok(lock) => return Ok(Ok(lock)),
                Err((f, Errno::EWOULDBLOCK)) => return Ok(Err(f)),
                Err((f, Errno::EINTR)) => file = f,
                Err((_, errno)) => return Err(self.lock_file_error(errno)),
            }
        }
    }

    fn guard(&self, lock: Flock<File>) -> LockGuard {
        LockGuard {
            path: self.path.clone(),
            lock,
        }
    }

    fn busy(&self, waited: Option<Duration>) -> Error {
        Error::LockBusy {
            path: self.path.clone(),
            waited,
        }
    }

    fn lock_file_error(&self, errno: Errno) -> Error {
        Error::LockFile {
            path: self.path.clone(),
            source: io::Error::from(errno),
        }
    }
}

/// Proof that we hold the xtables lock; iptables callers wait (or fail) until it is dropped.
///
/// Dropping it unlocks and closes the file, exactly what iptables does on exit, so holding it
/// across a whole transaction gives the same exclusion an `iptables` invocation gets.
#[derive(Debug)]
pub struct LockGuard {
    path: PathBuf,
    lock: Flock<File>,
}

impl LockGuard {
    /// The path of the lock file held.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl std::os::fd::AsFd for LockGuard {
    /// The locked descriptor, for callers that hand the lock to a child on purpose (as
    /// `flock(1)` does, by clearing `FD_CLOEXEC` on a duplicate) or want to inspect it.
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.lock.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn lock_path_unset_is_default() {
        assert_eq!(lock_path_from(None), PathBuf::from("/run/xtables.lock"));
    }

    #[test]
    fn lock_path_set_is_used() {
        let v = OsString::from("/tmp/other.lock");
        assert_eq!(lock_path_from(Some(&v)), PathBuf::from("/tmp/other.lock"));
    }

    #[test]
    fn lock_path_empty_is_default() {
        let v = OsString::new();
        assert_eq!(lock_path_from(Some(&v)), PathBuf::from(DEFAULT_LOCK_PATH));
    }

    #[test]
    fn lock_path_relative_is_kept_verbatim() {
        // iptables passes the value to open(2) unchanged, so a relative path stays relative.
        let v = OsString::from("x.lock");
        assert_eq!(lock_path_from(Some(&v)), PathBuf::from("x.lock"));
    }

    #[test]
    fn default_wait_is_bounded_and_overridable() {
        assert_eq!(
            WaitPolicy::default_from(None).unwrap(),
            WaitPolicy::Timeout(DEFAULT_WAIT)
        );
        let v = |s: &str| WaitPolicy::default_from(Some(OsStr::new(s)));
        assert_eq!(v("").unwrap(), WaitPolicy::Timeout(DEFAULT_WAIT));
        assert_eq!(v("0").unwrap(), WaitPolicy::FailFast);
        assert_eq!(
            v("1.5").unwrap(),
            WaitPolicy::Timeout(Duration::from_millis(1500))
        );
        assert!(v("-1").is_err());
        assert!(v("soon").is_err());
        assert!(v("NaN").is_err());
    }

    #[test]
    fn builder_keeps_settings() {
        let l = XtablesLock::new("/tmp/a.lock", WaitPolicy::Timeout(Duration::from_secs(3)))
            .with_poll_interval(Duration::from_millis(50));
        assert_eq!(l.path(), Path::new("/tmp/a.lock"));
        assert_eq!(l.wait(), WaitPolicy::Timeout(Duration::from_secs(3)));
        assert_eq!(l.poll_interval(), Duration::from_millis(50));
        assert_eq!(LockMode::default(), LockMode::Always);
    }
}
