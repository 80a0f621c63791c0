//! The backend seam: what an iptables command means, written once, over what a backend
//! offers. Below it sit the rule model ([`crate::model`]) and iptables' syntax
//! ([`crate::ipt`]); above it the two backends implement [`IptTable`]: nf_tables
//! ([`crate::ipt::exec::Planner`], which turns the edits into one transaction of
//! operations, re-planned on a generation conflict) and x_tables (the library's
//! `xtnl::legacy`, which applies them to the table read whole and commits it with one
//! replace, retried when a writer bypassing the lock changed it). [`memory`] is a third, in
//! memory, for tests (the NAT-host operations' in-memory ruleset is the library's
//! `xtnl::nathost::memory`). The library re-exports this crate as `xtnl::seam`, and its
//! [`ipt::exec`] and [`ipt::restore`] as `xtnl::ipt::{exec, restore}`.
//!
//! [`interpret`] checks a command against the table as the backend shows it, in iptables'
//! order and words ([`crate::ipt::messages`]), and emits [`Edit`]s: backend-neutral changes
//! in iptables terms (by chain name and rule number). Each backend applies an edit to its
//! view at once, so the next command of a restore block sees it, and commits them all at
//! the end. The few places where iptables-nft and iptables-legacy answer the same command
//! differently are [`Flavour`] questions, answered here, not by two copies of the
//! interpreter.
//!
//! Every trait a backend implements is defined here: [`IptTable`] (the iptables commands),
//! [`ListTables`] (the listings), [`RulesetBackend`] and [`TableAccess`] (the NAT-host
//! operations and `apply`, in [`ruleset`]), and [`Backend`], the two a whole backend is.
//!
//! A restore block interpreted against a table in memory (no kernel, no root): the edits it
//! makes, in iptables terms, and the table it leaves.
//!
//! ```
//! use xtnl_core::model::Family;
//! use xtnl_ipt::restore_file::parse_file;
//! use xtnl_seam::{Edit, Flavour, memory::MemoryTable, restore_block};
//!
//! let file = "*filter\n:web - [0:0]\n-A web -p tcp --dport 443 -j ACCEPT\n\
//!             -A INPUT -j web\nCOMMIT\n";
//! let blocks = parse_file(file, Family::Ipv4)?;
//! let mut table = MemoryTable::new(Family::Ipv4, "filter", Flavour::Nft);
//! let edits = restore_block(&mut table, &blocks[0], false)?;
//! assert!(edits.iter().any(|e| matches!(e, Edit::CreateChain(c) if c == "web")));
//! assert_eq!(table.rules("web").len(), 1);
//! assert_eq!(table.rules("INPUT").len(), 1);
//! # Ok::<(), xtnl_core::Error>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The old paths: this crate was the root package's `seam` module (with nf_tables' executor
// and restore loop, `ipt::{exec, restore}`), and its files keep the `crate::seam::...`,
// `crate::model::...`, `crate::nft::...` paths they had there (as the crates below did).
use crate as seam;
#[cfg(test)]
use xtnl_core::ErrorKind;
use xtnl_core::{error, limits, model};
#[cfg(test)]
use xtnl_host::privilege;
use xtnl_nft as nft;
use xtnl_policy as policy;

pub mod ipt;

pub mod chain_rules;
pub mod dispatch;
mod enforce;
mod interp;
pub mod judge;
#[cfg(test)]
mod judge_tests;
pub mod memory;
pub mod ruleset;
#[cfg(test)]
mod tests;

pub use enforce::Enforcement;
pub use interp::{
    declare_chain, interpret, restore_block, restore_block_with, restore_line, restore_lines_with,
};
pub use judge::{Judge, Judged};
pub use ruleset::{Applied, ChainInfo, Change, Lookup, RuleEntry, RulesetBackend, TableAccess};

use crate::error::Result;
use crate::ipt::IptRule;
use crate::model::{ChainPolicy, Counters, Family};

pub use crate::ipt::Flavour;

/// One change of one table, in iptables terms (chains by name, rules as [`IptRule`]): the
/// one vocabulary of changes the iptables interpreter ([`interpret`]) and the NAT-host plans
/// (the library's `xtnl::nathost`, as [`Change`]s: an edit with its table) speak to both
/// backends, and what the policy check and the audit see of them, whichever backend carries
/// them.
///
/// The interpreter's edits address rules by number ([`RuleRef::Number`]), as the table
/// stood when the edit was made, and are applied by each backend's [`IptTable::apply`]; a
/// NAT-host plan's address them by stable id ([`RuleRef::Id`]), which its other changes do
/// not move, and are committed by [`RulesetBackend::transact`], which takes the subset
/// [`Change::plannable`] accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// `-A`: a rule at the end of a chain.
    Append {
        /// The chain.
        chain: String,
        /// The rule.
        rule: IptRule,
    },
    /// `-I CHAIN N`: a rule that becomes rule `index` (a NAT-host plan inserts at the head,
    /// 1).
    Insert {
        /// The chain.
        chain: String,
        /// Its number once inserted (1 is the head).
        index: usize,
        /// The rule.
        rule: IptRule,
    },
    /// `-R CHAIN N`: a rule replaced in place.
    Replace {
        /// The chain.
        chain: String,
        /// The rule replaced.
        at: RuleRef,
        /// The new rule.
        rule: IptRule,
    },
    /// `-D`: a rule deleted.
    Delete {
        /// The chain.
        chain: String,
        /// The rule deleted.
        at: RuleRef,
    },
    /// Delete the rule `id` of `chain`, believed to be the only jump to `target` (a guess,
    /// [`ChainInfo::jump_hint`]). Only ever planned, by a NAT-host teardown, together with
    /// deleting `target`: if the rule is missing, or was not that jump (the target then
    /// stays referenced), the commit fails as a whole and the plan runs again looking for
    /// the jump.
    DeleteGuessedJump {
        /// The chain.
        chain: String,
        /// The rule's id ([`RuleEntry::id`]).
        id: u64,
        /// The chain it jumps to, deleted by the same plan.
        target: String,
    },
    /// `-N`, or a restore's `:CHAIN -` of a chain that does not exist. In a NAT-host plan, a
    /// chain with a built-in's name is that built-in chain, created with policy ACCEPT as
    /// iptables creates it on first use (nf_tables; x_tables has it always).
    CreateChain(String),
    /// `-X CHAIN` (the interpreter checks it empty and unreferenced); in a NAT-host plan,
    /// the chain and whatever rules it still holds, refused while referenced.
    DeleteChain(String),
    /// `-F CHAIN`, or a restore's `:CHAIN -` of a user chain that exists.
    Flush(String),
    /// `-F` of the whole table.
    FlushAll,
    /// `-Z [CHAIN]`: counters back to zero.
    Zero(Option<String>),
    /// `-P`: a built-in chain's policy.
    Policy {
        /// The chain.
        chain: String,
        /// The policy.
        policy: ChainPolicy,
    },
    /// `-E FROM TO`.
    Rename {
        /// The chain's name.
        from: String,
        /// Its new name.
        to: String,
    },
    /// A restore block without `--noflush`: every rule goes, as each backend's restore
    /// does it (see [`IptTable::apply`]).
    Reset,
    /// A restore's `:BUILTIN POLICY [p:b]` line.
    DeclareBuiltin {
        /// The chain.
        chain: String,
        /// The policy given, `None` for `-`.
        policy: Option<ChainPolicy>,
        /// The counters given (`restore -c`).
        counters: Option<Counters>,
    },
    /// The end of a restore block without `--noflush`: the user chains that were there
    /// before and were not declared again go.
    FinishReset {
        /// The chains the block declared.
        declared: Vec<String>,
    },
}

/// Which rule of a chain an [`Edit`] replaces or deletes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleRef {
    /// Its number (1 is the first) in the chain as the edits before this one left it: how
    /// the interpreter, and so each backend's [`IptTable::apply`], addresses rules.
    Number(usize),
    /// Its stable id ([`RuleEntry::id`]: the nf_tables handle; for x_tables, its place in
    /// the table as read), which the other changes of the plan do not move: how a NAT-host
    /// plan addresses rules.
    Id {
        /// The rule's id.
        id: u64,
        /// What it says, as the plan read it.
        rule: Box<IptRule>,
    },
}

impl Edit {
    /// The chain the edit changes (`-E`: the chain renamed); `None` for an edit of the
    /// whole table.
    pub fn chain(&self) -> Option<&str> {
        match self {
            Edit::Append { chain, .. }
            | Edit::Insert { chain, .. }
            | Edit::Replace { chain, .. }
            | Edit::Delete { chain, .. }
            | Edit::DeleteGuessedJump { chain, .. }
            | Edit::CreateChain(chain)
            | Edit::DeleteChain(chain)
            | Edit::Flush(chain)
            | Edit::Policy { chain, .. }
            | Edit::DeclareBuiltin { chain, .. }
            | Edit::Rename { from: chain, .. } => Some(chain),
            Edit::Zero(chain) => chain.as_deref(),
            Edit::FlushAll | Edit::Reset | Edit::FinishReset { .. } => None,
        }
    }

    /// The refusal of an edit that addresses a rule otherwise than by number, given to an
    /// [`IptTable`] (which only the interpreter feeds, by number).
    pub fn not_by_number(&self) -> crate::error::Error {
        crate::error::Error::InvalidInput(format!(
            "{self:?}: an iptables table view addresses rules by number"
        ))
    }
}

/// One iptables table of a backend, as the interpreter reads and changes it. Reads show the
/// table with every edit applied so far. Rule numbers start at 1.
pub trait IptTable {
    /// A rule in the backend's own encoding, made before an edit that adds it (so that an
    /// encoding error comes before a bad rule number, as in iptables).
    type Encoded;

    /// Which iptables this backend answers as.
    fn flavour(&self) -> Flavour;
    /// The table's family (it chooses `iptables` or `ip6tables` in messages).
    fn family(&self) -> Family;
    /// The table as the detail of an error names it.
    fn label(&self) -> String;
    /// Whether `-v` was given: lines that cost a read of the whole table are only made
    /// then.
    fn verbose(&self) -> bool;
    /// Records a line of what `-v` prints.
    fn say(&mut self, line: String);

    /// Whether the chain exists (an iptables built-in chain always does).
    fn exists(&mut self, chain: &str) -> Result<bool>;
    /// Whether `chain` is one of iptables' built-in chains of this table.
    fn builtin(&self, chain: &str) -> bool;
    /// Whether an existing chain is hooked into the stack (built-in, or a base chain).
    fn is_base(&mut self, chain: &str) -> Result<bool>;
    /// Whether the chain is in the kernel already (`-Z -v` names only those).
    fn counted(&mut self, chain: &str) -> Result<bool>;
    /// How many rules an existing chain holds.
    fn rule_count(&mut self, chain: &str) -> Result<usize>;
    /// Rule `index` of a chain, in iptables terms.
    fn rule_at(&mut self, chain: &str, index: usize) -> Result<Option<IptRule>>;
    /// The number of the first rule of `chain` equal to `rule` (counters aside); a rule
    /// holding what iptables syntax cannot express never matches.
    fn find(&mut self, chain: &str, rule: &IptRule) -> Result<Option<usize>>;
    /// Jumps and gotos to `chain` from rules of the table, as `-X CHAIN` counts them.
    fn references(&mut self, chain: &str) -> Result<i64>;
    /// Whether any rule of the table jumps or goes to `chain` (`-X` of every chain).
    fn jumped_to(&mut self, chain: &str) -> Result<bool>;
    /// Every chain in the order iptables lists them.
    fn chain_order(&mut self) -> Result<Vec<String>>;
    /// The user chains in the order iptables deletes them (`-X`).
    fn user_chains(&mut self) -> Result<Vec<String>>;
    /// The policy of a built-in chain in the kernel (`None`: not in the kernel, or a
    /// backend that does not say; only iptables-nft's `-X` asks).
    fn policy(&mut self, _chain: &str) -> Result<Option<crate::model::ChainPolicy>> {
        Ok(None)
    }
    /// iptables-nft 1.8.9's `-X` drops every built-in chain from its cache, kept or not, so
    /// a `-Z` later in the same restore block zeroes none of them; a backend that
    /// reproduces it notes it here (the default: nothing).
    fn forget_builtins(&mut self) {}

    /// A rule in the backend's encoding; refuses what the backend cannot carry.
    fn encode(&mut self, rule: &IptRule) -> Result<Self::Encoded>;
    /// Applies an edit the interpreter checked; `encoded` is the rule of an append, insert
    /// or replace.
    fn apply(&mut self, edit: &Edit, encoded: Option<Self::Encoded>) -> Result<()>;

    /// The [`Judge`] deriving what this view's edits touch for the policy and the audit,
    /// taken while it notes an edit (before the edit is applied). `None` (the default):
    /// this view judges nothing from its edits.
    fn take_judge(&mut self) -> Option<Judge> {
        None
    }
    /// Gives back the judge [`IptTable::take_judge`] took.
    fn put_judge(&mut self, _judge: Judge) {}
}

/// A backend's tables as iptables lists them: what `-S --json`, `save --json` and the
/// JSON listings read, whichever backend holds the tables.
pub trait ListTables {
    /// The chains of `table` (or only `chain`, which must exist) in iptables' listing
    /// order, with their rules.
    fn listings(
        &mut self,
        family: Family,
        table: &str,
        chain: Option<&str>,
    ) -> Result<Vec<crate::ipt::listing::ChainListing>>;
    /// The tables iptables-save prints, in its order (only `table` when given).
    fn saved_tables(&mut self, family: Family, table: Option<&str>) -> Result<Vec<String>>;
    /// `table`'s body as iptables-save prints it (`[packets:bytes]` before each rule when
    /// `counters`): by default its [`ListTables::listings`] rendered
    /// ([`crate::ipt::listing::render_save_counters`]); a backend may print it straight
    /// from what it read, without holding every rule's listing at once.
    fn save_body(&mut self, family: Family, table: &str, counters: bool) -> Result<String> {
        let chains = self.listings(family, table, None)?;
        let body = crate::ipt::listing::render_save_counters(&chains, counters);
        // The process ends once the text is out: freeing every decoded rule one by one was
        // some 5 ms of a 75 ms save of 10,000 rules (docs/extensions.md).
        std::mem::forget(chains);
        Ok(body)
    }
}

/// A backend as the command line and `xtnl serve` hold it: the one interface every kernel
/// backend implements once. Its tables are listed as iptables lists them ([`ListTables`]),
/// changed by plans committed atomically ([`RulesetBackend`]: the NAT-host operations and
/// `apply`), and driven by iptables' commands and restore files (below); `save` is its
/// listings rendered ([`crate::ipt::listing::render_save_counters`]). nf_tables'
/// [`crate::nft::Session`] (its adapters in [`crate::ipt::exec`]) and x_tables'
/// `xtnl::legacy::Legacy` are both; both carry the iptables commands through the one
/// interpreter ([`interpret`]) over their [`IptTable`] views.
pub trait Backend: ListTables + RulesetBackend {
    /// Which iptables this backend answers as.
    fn flavour(&self) -> Flavour;
    /// Whether this backend carries `family`'s tables (an nf_tables session carries every
    /// family; an x_tables handle one).
    fn serves(&self, family: Family) -> bool;
    /// Runs one iptables invocation (listings included); returns what iptables prints on
    /// standard output.
    fn execute(&mut self, inv: &crate::ipt::parse::Invocation) -> Result<String>;
    /// Applies parsed restore blocks of `family`: each block atomic (nf_tables: the whole
    /// file one batch; x_tables: one replace per table, the whole file judged first under a
    /// policy). Returns what was committed (operations, or replaces).
    fn restore(
        &mut self,
        blocks: &[crate::ipt::restore_file::Block],
        family: Family,
        noflush: bool,
    ) -> Result<usize>;
    /// [`Backend::restore`] of blocks the caller hands over: a backend may free each line
    /// once it is planned. `reparse` gives the same blocks again when a plan must be made
    /// anew (nf_tables' generation moved under it). The default borrows them.
    fn restore_owned(
        &mut self,
        blocks: Vec<crate::ipt::restore_file::Block>,
        reparse: &mut dyn FnMut() -> Result<Vec<crate::ipt::restore_file::Block>>,
        family: Family,
        noflush: bool,
    ) -> Result<usize> {
        let _ = reparse;
        self.restore(&blocks, family, noflush)
    }
    /// The chains of `table` as the kernel holds it now (none when the table is not
    /// there): what `restore -v` names.
    fn chain_names(&mut self, family: Family, table: &str) -> Result<Vec<String>>;
}
