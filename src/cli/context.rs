//! What the command line decides once for the whole run: which backend the user asked for
//! (`--backend`, `$XTNL_BACKEND`, a program name such as `iptables-legacy`) and what every
//! change is held to ([`Enforcement`]: the policy and the audit). Commands open their
//! backend through it, so that each backend they open enforces the same, and the choice
//! between nf_tables and x_tables is made here, in [`Ctx::open`], not in each command.

pub(crate) use xtnl::backend::Opened;
use xtnl::backend::{Backend, BackendChoice, Call};
use xtnl::error::Result;
use xtnl::ipt::Flavour;
use xtnl::lock::{LockMode, WaitPolicy, XtablesLock};
use xtnl::model::Family;
use xtnl::nft::SessionBuilder;
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

    /// The backend for `family` (with `-v`, says which and why), for one call that opens
    /// it, runs a command and closes it: x_tables writes under `lock` around each replace;
    /// nf_tables takes it as `mode` says.
    pub fn call(
        &self,
        family: Family,
        verbose: bool,
        lock: XtablesLock,
        mode: LockMode,
    ) -> Call<'_> {
        Call {
            backend: self.backend(family, verbose),
            family,
            enforcement: &self.enforcement,
            netns: None,
            lock,
            mode,
        }
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
        self.open_chosen_by(family, family, verbose, lock, mode)
    }

    /// As [`Ctx::open`], for `family`'s tables on the backend chosen for `chosen_by`: one
    /// backend for a whole `apply` document, whichever families its transactions touch.
    pub fn open_chosen_by(
        &self,
        chosen_by: Family,
        family: Family,
        verbose: bool,
        lock: XtablesLock,
        mode: LockMode,
    ) -> Result<Opened> {
        let backend = self.backend(chosen_by, verbose);
        xtnl::backend::open(backend, family, &self.enforcement, None, lock, mode)
    }

    /// The backend for `family`, opened without taking the lock, when it answers as
    /// `flavour`; `None` otherwise (nothing is opened then): for what only one iptables
    /// does, such as iptables-legacy's `restore --test -v` reading the kernel.
    pub fn open_if(
        &self,
        flavour: Flavour,
        family: Family,
        verbose: bool,
    ) -> Result<Option<Opened>> {
        let backend = self.backend(family, verbose);
        if backend.flavour() != flavour {
            return Ok(None);
        }
        let lock = self.lock(WaitPolicy::FailFast);
        xtnl::backend::open(
            backend,
            family,
            &self.enforcement,
            None,
            lock,
            LockMode::Never,
        )
        .map(Some)
    }

    /// Refuses, with `why`, a command that only nf_tables can carry when the backend
    /// chosen for `family` is x_tables.
    pub fn require_nft(&self, family: Family, why: impl FnOnce() -> String) -> Result<()> {
        match self.backend(family, false) {
            Backend::Nft => Ok(()),
            Backend::Legacy => Err(xtnl::error::Error::InvalidInput(why())),
        }
    }
}
