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
use xtnl::nathost::{Operation, OperationResult, Report};
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

/// Work generic over the seam's [`xtnl::seam::Backend`], run by [`Opened::on`] on
/// whichever backend was opened (the trait's commit takes a closure, so it cannot be a
/// trait object).
pub(crate) trait OnBackend {
    /// What the work returns.
    type Output;
    /// Runs on the backend.
    fn on(self, backend: &mut impl xtnl::seam::Backend) -> Self::Output;
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
        Ok(match self.backend(chosen_by, verbose) {
            Backend::Nft => Opened::Nft(self.session().lock(lock).lock_mode(mode).open()?),
            Backend::Legacy => Opened::Legacy(self.legacy(family, lock)?),
        })
    }

    /// The x_tables handle for `family` when that is the backend chosen, `None` for
    /// nf_tables (nothing is opened then): for what only iptables-legacy does, such as
    /// `restore --test -v` reading the kernel.
    pub fn legacy_if_chosen(
        &self,
        family: Family,
        verbose: bool,
        lock: XtablesLock,
    ) -> Result<Option<Legacy>> {
        match self.backend(family, verbose) {
            Backend::Nft => Ok(None),
            Backend::Legacy => self.legacy(family, lock).map(Some),
        }
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

/// `$body` with `$b` bound to the opened backend, whichever it is (each arm is compiled
/// for its own type, so generic code over the seam's traits runs on both).
macro_rules! each {
    ($opened:expr, $b:ident => $body:expr) => {
        match $opened {
            Opened::Nft($b) => $body,
            Opened::Legacy($b) => $body,
        }
    };
}

impl Opened {
    /// The backend's tables as iptables lists them.
    pub fn lister(&mut self) -> &mut dyn xtnl::seam::ListTables {
        each!(self, b => b)
    }

    /// Whether this backend carries `family`'s tables (an nf_tables session carries
    /// every family; an x_tables handle one).
    pub fn serves(&self, family: Family) -> bool {
        match self {
            Opened::Nft(_) => true,
            Opened::Legacy(l) => l.family() == family,
        }
    }

    /// The nf_tables session, when that is the backend (the map layout lives in
    /// nf_tables whatever the iptables backend).
    pub fn nft(&mut self) -> Option<&mut Session> {
        match self {
            Opened::Nft(s) => Some(s),
            Opened::Legacy(_) => None,
        }
    }

    /// Runs one iptables command (the one interpreter, over this backend's tables); what
    /// it prints.
    pub fn execute(&mut self, inv: &xtnl::ipt::parse::Invocation) -> Result<String> {
        match self {
            Opened::Nft(s) => xtnl::ipt::exec::execute(s, inv),
            Opened::Legacy(l) => xtnl::legacy::execute(l, inv),
        }
    }

    /// Runs `work` on the backend as the seam's [`xtnl::seam::Backend`], whichever it is.
    pub fn on<W: OnBackend>(&mut self, work: W) -> W::Output {
        each!(self, b => work.on(b))
    }

    /// One NAT-host operation, planned and committed on this backend.
    pub fn run_one(&mut self, family: Family, op: Operation) -> Result<Report> {
        struct RunOne(Family, Operation);
        impl OnBackend for RunOne {
            type Output = Result<Report>;
            fn on(self, b: &mut impl xtnl::seam::Backend) -> Self::Output {
                xtnl::nathost::run_one(b, self.0, self.1)
            }
        }
        self.on(RunOne(family, op))
    }

    /// NAT-host operations, planned in order and committed as one transaction on this
    /// backend.
    pub fn transact(
        &mut self,
        family: Family,
        ops: &[Operation],
    ) -> Result<(Vec<OperationResult>, u32)> {
        struct Transact<'o>(Family, &'o [Operation]);
        impl OnBackend for Transact<'_> {
            type Output = Result<(Vec<OperationResult>, u32)>;
            fn on(self, b: &mut impl xtnl::seam::Backend) -> Self::Output {
                xtnl::nathost::transact(b, self.0, self.1)
            }
        }
        self.on(Transact(family, ops))
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
