//! What the command line decides once for the whole run: which backend the user asked for
//! (`--backend`, `$XTNL_BACKEND`, a program name such as `iptables-legacy`) and what every
//! change is held to ([`Enforcement`]: the policy and the audit). Commands open their
//! backend through it, so that each backend they open enforces the same, and the choice
//! between nf_tables and x_tables is made here, in [`Ctx::open`], not in each command.

use xtnl::backend::{Backend, BackendChoice};
use xtnl::error::Result;
use xtnl::legacy::Legacy;
use xtnl::lock::{LockMode, WaitPolicy, XtablesLock};
use xtnl::model::Family;
use xtnl::nft::{Session, SessionBuilder};
use xtnl::seam::Enforcement;

/// The run's backend choice and enforcement.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ctx {
    pub choice: BackendChoice,
    pub enforcement: Enforcement,
    /// A delegated run (setuid, capabilities, sudo...): the lock is never followed through
    /// a symbolic link.
    pub delegated: bool,
}

/// A backend opened for a command.
pub(crate) enum Opened {
    Nft(Session),
    Legacy(Legacy),
}

impl Ctx {
    /// The backend for `family` (with `-v`, says which and why on stderr).
    pub fn backend(&self, family: Family, verbose: bool) -> Backend {
        super::resolve_backend(self.choice, family, verbose)
    }

    /// The xtables lock iptables would take here, waiting as `wait` says.
    pub fn lock(&self, wait: WaitPolicy) -> XtablesLock {
        XtablesLock::from_env(wait).with_no_follow(self.delegated)
    }

    /// An nf_tables session builder that enforces the run's policy and audit.
    pub fn session(&self) -> SessionBuilder {
        self.enforcement
            .session()
            .lock(self.lock(WaitPolicy::Forever))
    }

    /// One family's x_tables, enforcing the run's policy and audit.
    pub fn legacy(&self, family: Family, lock: XtablesLock) -> Result<Legacy> {
        Ok(Legacy::open(family, lock)?.enforcing(self.enforcement.clone()))
    }

    /// The backend for `family`, opened: x_tables writes under `lock` around each replace;
    /// nf_tables takes it as `mode` says.
    pub fn open(
        &self,
        family: Family,
        verbose: bool,
        lock: XtablesLock,
        mode: LockMode,
    ) -> Result<Opened> {
        Ok(match self.backend(family, verbose) {
            Backend::Nft => Opened::Nft(self.session().lock(lock).lock_mode(mode).open()?),
            Backend::Legacy => Opened::Legacy(self.legacy(family, lock)?),
        })
    }
}

impl Opened {
    /// The backend's tables as iptables lists them.
    pub fn lister(&mut self) -> &mut dyn xtnl::seam::ListTables {
        match self {
            Opened::Nft(s) => s,
            Opened::Legacy(l) => l,
        }
    }

    /// Ends the run's use of the backend (nf_tables: without waiting for the kernel's
    /// reclaim, as a short-lived process).
    pub fn close(self) -> Result<()> {
        match self {
            Opened::Nft(s) => s.close_detached(),
            Opened::Legacy(_) => Ok(()),
        }
    }
}
