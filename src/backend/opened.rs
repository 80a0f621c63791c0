//! The one way a backend is opened, by the command line and by `xtnl serve` alike:
//! [`open`] makes an [`Opened`] (nf_tables' session or x_tables' handle) enforcing what it
//! is given, and [`Opened`] runs the seam's [`crate::seam::Backend`] on whichever it is, so no
//! caller matches on the backend to run a command, a restore, a listing or an operation.

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

    /// Ends the use of the backend (nf_tables: without waiting for the kernel's reclaim, as
    /// a short-lived process does).
    pub fn close(self) -> Result<()> {
        match self {
            Opened::Nft(s) => s.close_detached(),
            Opened::Legacy(_) => Ok(()),
        }
    }
}
