//! The one way a backend is opened, by the command line and by `xtnl serve` alike:
//! [`open`] makes an [`Opened`] (nf_tables' session or x_tables' handle) enforcing what it
//! is given, and [`Opened`] runs the seam's [`crate::seam::Backend`] on whichever it is, so no
//! caller matches on the backend to run a command, a restore, a listing or an operation.
//!
//! [`Call`] is the one call of the backend interface for a command: a front that has parsed
//! it hands it over with the backend chosen and what the change is held to, and the call
//! opens the backend and runs the command, so that the front does not come back between
//! opening a backend and using it (docs/architecture.md, "Three walks from an entry to the
//! kernel"). Both backends are opened lazily there: the socket is made where the command
//! first talks to the kernel; and both end their socket's use themselves (nf_tables: a
//! one-shot session hands it to a detached closer after its commit, or when dropped;
//! x_tables: the handle's socket closes when dropped), so the call makes no close call
//! after the command. [`Call`] sits in this file, with the dispatch over [`Opened`], so
//! that the run enters the backend where the opening left it.

use super::Backend;
use crate::error::Result;
use crate::ipt::Flavour;
use crate::ipt::parse::Invocation;
use crate::ipt::restore_file::Block;
use crate::legacy::Legacy;
use crate::lock::{LockMode, XtablesLock};
use crate::model::Family;
use crate::nathost::{Operation, OperationResult, Report};
use crate::netns::Netns;
use crate::nft::Session;
use crate::seam::{Enforcement, ListTables};

/// A backend opened: nf_tables' session or one family's x_tables.
pub enum Opened {
    /// nf_tables (every family's tables).
    Nft(Session),
    /// x_tables (one family's tables).
    Legacy(Legacy),
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Opened({})", self.backend().as_str())
    }
}

/// Opens `backend` for `family`'s tables in `netns` (`None`: the thread's own), checking
/// and recording every change as `enforcement` says. x_tables writes under `lock` around
/// each replace; nf_tables takes it around its commits as `mode` says.
pub fn open(
    backend: Backend,
    family: Family,
    enforcement: &Enforcement,
    netns: Option<&Netns>,
    lock: XtablesLock,
    mode: LockMode,
) -> Result<Opened> {
    Ok(match backend {
        Backend::Nft => Opened::Nft(
            enforcement
                .session()
                .lock(lock)
                .lock_mode(mode)
                .open_in(netns)?,
        ),
        Backend::Legacy => {
            let legacy = match netns {
                None => Legacy::open(family, lock),
                Some(ns) => ns.run_in(move || Legacy::open(family, lock)),
            }?;
            Opened::Legacy(legacy.enforcing(enforcement.clone()))
        }
    })
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
    /// Which backend this is.
    pub fn backend(&self) -> Backend {
        match self {
            Opened::Nft(_) => Backend::Nft,
            Opened::Legacy(_) => Backend::Legacy,
        }
    }

    /// Which iptables it answers as.
    pub fn flavour(&self) -> Flavour {
        each!(self, b => crate::seam::Backend::flavour(b))
    }

    /// The backend's tables as iptables lists them.
    pub fn lister(&mut self) -> &mut dyn ListTables {
        each!(self, b => b)
    }

    /// Whether this backend carries `family`'s tables (an nf_tables session carries
    /// every family; an x_tables handle one).
    pub fn serves(&self, family: Family) -> bool {
        each!(self, b => crate::seam::Backend::serves(b, family))
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
    pub fn execute(&mut self, inv: &Invocation) -> Result<String> {
        each!(self, b => crate::seam::Backend::execute(b, inv))
    }

    /// Applies parsed restore blocks (see [`crate::seam::Backend::restore`]).
    pub fn restore(&mut self, blocks: &[Block], family: Family, noflush: bool) -> Result<usize> {
        each!(self, b => crate::seam::Backend::restore(b, blocks, family, noflush))
    }

    /// Applies restore blocks handed over (see [`crate::seam::Backend::restore_owned`]).
    pub fn restore_owned(
        &mut self,
        blocks: Vec<Block>,
        reparse: &mut dyn FnMut() -> Result<Vec<Block>>,
        family: Family,
        noflush: bool,
    ) -> Result<usize> {
        each!(self, b => crate::seam::Backend::restore_owned(b, blocks, reparse, family, noflush))
    }

    /// The chains of `table` as the kernel holds it now (see
    /// [`crate::seam::Backend::chain_names`]).
    pub fn chain_names(&mut self, family: Family, table: &str) -> Result<Vec<String>> {
        each!(self, b => crate::seam::Backend::chain_names(b, family, table))
    }

    /// One NAT-host operation, planned and committed on this backend.
    pub fn run_one(&mut self, family: Family, op: Operation) -> Result<Report> {
        each!(self, b => crate::nathost::run_one(b, family, op))
    }

    /// NAT-host operations, planned in order and committed as one transaction on this
    /// backend.
    pub fn transact(
        &mut self,
        family: Family,
        ops: &[Operation],
    ) -> Result<(Vec<OperationResult>, u32)> {
        each!(self, b => crate::nathost::transact(b, family, ops))
    }

    /// Opens the backend's kernel socket now if it is not open yet (an nf_tables session
    /// opened lazily, see [`crate::nft::Session::connect`]; an x_tables handle from
    /// [`open`] opened its socket with it): for a caller that must tell a failure to open
    /// from a failure of its first change.
    pub fn connect(&mut self) -> Result<()> {
        match self {
            Opened::Nft(s) => s.connect(),
            Opened::Legacy(_) => Ok(()),
        }
    }

    /// Ends the use of the backend (nf_tables: without waiting for the kernel's reclaim, as
    /// a short-lived process does).
    pub fn close(self) -> Result<()> {
        match self {
            Opened::Nft(s) => s.close_detached(),
            Opened::Legacy(_) => Ok(()),
        }
    }
}

/// What runs on an opened backend before a restore changes anything, given the blocks
/// (see [`Call::restore`]).
pub type First<'a> = dyn FnMut(&mut Opened, &[Block]) -> Result<()> + 'a;

/// Where one command goes and what it is held to: everything [`open`] takes.
#[derive(Debug)]
pub struct Call<'a> {
    /// The backend chosen (see [`super::BackendChoice::resolve`]).
    pub backend: Backend,
    /// Whose tables: x_tables opens this family's; nf_tables serves every family.
    pub family: Family,
    /// The policy and audit every change is held to.
    pub enforcement: &'a Enforcement,
    /// The network namespace (`None`: the calling thread's own).
    pub netns: Option<&'a Netns>,
    /// The xtables lock: x_tables writes under it around each replace.
    pub lock: XtablesLock,
    /// When nf_tables takes the lock (around its commits, or never).
    pub mode: LockMode,
}

impl Call<'_> {
    /// Opens the backend now ([`open`]), for a caller that uses it in several steps.
    pub fn open(self) -> Result<Opened> {
        open(
            self.backend,
            self.family,
            self.enforcement,
            self.netns,
            self.lock,
            self.mode,
        )
    }

    /// Opens the backend as the command's first use needs it: its socket is made where
    /// the command first talks to the kernel (x_tables: before the lock is waited for).
    /// nf_tables' session is one-shot ([`crate::nft::SessionBuilder::one_shot`]): it ends
    /// its socket's use itself, after its commit, without waiting for the kernel's reclaim.
    fn open_lazily(self) -> Result<Opened> {
        match self.backend {
            Backend::Nft => Ok(Opened::Nft(
                self.enforcement
                    .session()
                    .lock(self.lock)
                    .lock_mode(self.mode)
                    .one_shot(true)
                    .open_lazily_in(self.netns),
            )),
            Backend::Legacy => {
                let legacy = Legacy::open_lazily(self.family, self.lock, self.netns.cloned())?;
                Ok(Opened::Legacy(legacy.enforcing(self.enforcement.clone())))
            }
        }
    }

    /// Runs one iptables command (the one interpreter, over the chosen backend's tables);
    /// what the command prints. The backend ends its socket's use itself (nf_tables' session
    /// is one-shot, see [`crate::nft::SessionBuilder::one_shot`]): a failure to hand its
    /// socket to the closer after the commit is the command's error, as [`Opened::close`]'s.
    pub fn execute(self, inv: &Invocation) -> Result<String> {
        self.open_lazily()?.execute(inv)
    }

    /// Applies parsed restore blocks handed over (see [`Opened::restore_owned`]); the
    /// replaces or commits made. The backend ends its socket's use itself, as in
    /// [`Call::execute`]. `first`, when given, runs on the opened backend before anything
    /// is changed (`restore -v`'s lines read the tables as they are): the backend is then
    /// opened before it (and closed after the restore).
    pub fn restore(
        self,
        blocks: Vec<Block>,
        reparse: &mut dyn FnMut() -> Result<Vec<Block>>,
        noflush: bool,
        first: Option<&mut First<'_>>,
    ) -> Result<usize> {
        let family = self.family;
        match first {
            Some(first) => {
                let mut opened = self.open()?;
                first(&mut opened, &blocks)?;
                let n = opened.restore_owned(blocks, reparse, family, noflush)?;
                opened.close()?;
                Ok(n)
            }
            None => self
                .open_lazily()?
                .restore_owned(blocks, reparse, family, noflush),
        }
    }
}
