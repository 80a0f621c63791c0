//! One call of the backend interface: a front that has parsed a command hands it, with the
//! backend chosen and what the change is held to, to [`Call`], which opens the backend, runs
//! the command and closes it, so that the front does not come back between opening a
//! backend and using it (docs/architecture.md, "Three walks from an entry to the kernel").
//! x_tables is opened lazily: its socket is made where the command first reads.

use super::{Backend, Opened, open};
use crate::error::Result;
use crate::ipt::parse::Invocation;
use crate::ipt::restore_file::Block;
use crate::legacy::Legacy;
use crate::lock::{LockMode, XtablesLock};
use crate::model::Family;
use crate::netns::Netns;
use crate::seam::Enforcement;

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

    /// Opens the backend as the command's first use needs it: x_tables' socket where the
    /// command first reads (before the lock is waited for), nf_tables' session at once.
    fn open_lazily(self) -> Result<Opened> {
        match self.backend {
            Backend::Nft => self.open(),
            Backend::Legacy => {
                let legacy = Legacy::open_lazily(self.family, self.lock, self.netns.cloned())?;
                Ok(Opened::Legacy(legacy.enforcing(self.enforcement.clone())))
            }
        }
    }

    /// Runs one iptables command (the one interpreter, over the chosen backend's tables)
    /// and ends the use of the backend ([`Opened::close`]); what the command prints.
    pub fn execute(self, inv: &Invocation) -> Result<String> {
        let mut opened = self.open_lazily()?;
        let text = opened.execute(inv)?;
        opened.close()?;
        Ok(text)
    }

    /// Applies parsed restore blocks handed over (see [`Opened::restore_owned`]) and ends
    /// the use of the backend; the replaces or commits made. `first`, when given, runs on
    /// the opened backend before anything is changed (`restore -v`'s lines read the tables
    /// as they are): the backend is then opened before it.
    pub fn restore(
        self,
        blocks: Vec<Block>,
        reparse: &mut dyn FnMut() -> Result<Vec<Block>>,
        noflush: bool,
        first: Option<&mut First<'_>>,
    ) -> Result<usize> {
        let family = self.family;
        let mut opened = match first {
            Some(first) => {
                let mut opened = self.open()?;
                first(&mut opened, &blocks)?;
                opened
            }
            None => self.open_lazily()?,
        };
        let n = opened.restore_owned(blocks, reparse, family, noflush)?;
        opened.close()?;
        Ok(n)
    }
}
