//! Runs iptables commands against nf_tables through a [`Session`]. A [`Planner`] turns
//! commands into operations against a view of the table that it keeps up to date as it
//! goes, so that one command, or a whole `iptables-restore` block of them, becomes one
//! transaction planned from one read: check-then-act sequences that race between separate
//! iptables processes are atomic here.
//!
//! The commands themselves are interpreted once, for every backend, by
//! [`crate::seam::interpret`]; this is the nf_tables side: the plan's view of the table
//! (here), the edits as operations (`table.rs`), and running an invocation (`run.rs`).

use crate::model::{BaseChain, ChainPolicy};
use std::collections::BTreeMap;

use super::parse::{Command, Invocation};
use super::rule::IptRule;
use super::tables::{self, Builtin};
use super::{compat, listing};
use crate::error::{Error, Result};
use crate::model::Family;
use crate::nft::{ChainSpec, Op, Reader, Session, TableRef, Transaction};

mod run;
mod table;

pub use run::execute;

use crate::ipt::messages::{self, Msg};
use table::NftTable;

/// A rule of a chain as the plan sees it: in the kernel (with its handle), or added by an
/// earlier command of the same transaction. The rule is boxed: a slot is 32 bytes, not the
/// 264 of a rule inline (a restore keeps a slot for each of its rules, and each chain's
/// vector of slots starts with room for four).
#[derive(Debug, Clone)]
enum Slot {
    Kernel {
        handle: u64,
        rule: Box<IptRule>,
    },
    /// Added by this plan; `op` is the index of its `AddEncodedRule` (None for a replaced
    /// rule), so that a later `-I CHAIN N` can be placed relative to it.
    /// `rule` is `None` when it is read back from the operation's encoding when needed
    /// ([`Planner::slot_rule`]).
    Pending {
        rule: Option<Box<IptRule>>,
        op: Option<usize>,
    },
}

#[derive(Debug, Clone)]
struct ChainState {
    /// In the kernel at the time of the read.
    in_kernel: bool,
    /// A built-in chain iptables shows before it exists; created by the first write to it,
    /// as iptables-nft does.
    virtual_builtin: bool,
    handle: Option<u64>,
    base: Option<BaseChain>,
    /// The kernel's use count when read: rules in the chain plus jumps to it.
    use_count: u32,
    /// A base chain's policy counters when read, if the kernel keeps them.
    counters: Option<crate::model::Counters>,
    /// Loaded on first need (a single `-A` does not read the chain's rules).
    rules: Option<Vec<Slot>>,
    /// How many rules the chain had in the kernel when its rules were loaded.
    kernel_rules: usize,
    /// Flushed by this plan before its rules were read: their jumps still count in the
    /// use counts read from the kernel until they are read (see `account_unread_flushes`).
    flushed_unread: bool,
    /// Rules this plan added before the chain's rules were loaded, with whether each went
    /// to the head (`-I CHAIN 1`) or the end (`-A`); placed around the kernel's rules when
    /// they are loaded, so that a later `-I CHAIN N` counts them.
    early: Vec<(bool, Slot)>,
}

impl ChainState {
    fn kernel(c: &crate::nft::Chain) -> Self {
        ChainState {
            in_kernel: true,
            virtual_builtin: false,
            handle: c.handle,
            base: c.base,
            use_count: c.use_count,
            counters: c.counters,
            rules: None,
            kernel_rules: 0,
            flushed_unread: false,
            early: Vec::new(),
        }
    }
    fn virtual_builtin(b: &Builtin) -> Self {
        ChainState {
            in_kernel: false,
            virtual_builtin: true,
            handle: None,
            base: Some(b.base(ChainPolicy::Accept)),
            use_count: 0,
            counters: None,
            rules: Some(Vec::new()),
            kernel_rules: 0,
            flushed_unread: false,
            early: Vec::new(),
        }
    }
    fn created() -> Self {
        ChainState {
            in_kernel: false,
            virtual_builtin: false,
            handle: None,
            base: None,
            use_count: 0,
            counters: None,
            rules: Some(Vec::new()),
            kernel_rules: 0,
            flushed_unread: false,
            early: Vec::new(),
        }
    }
}

/// Chains a plan looks up one request each before it reads them all in one dump: a command
/// names one or two, a restore's lines may name every chain of the table.
const LOOKUPS_BEFORE_LOAD: usize = 64;

/// Plans iptables commands for one table into operations.
pub struct Planner {
    table: TableRef,
    iptables_table: bool,
    table_exists: bool,
    table_created: bool,
    /// Chains known so far: looked up one by one (a command names one or two), or all of
    /// them once a command needs the whole table.
    chains: BTreeMap<String, ChainState>,
    /// Names looked up and found absent, or deleted by this plan.
    absent: std::collections::BTreeSet<String>,
    all_loaded: bool,
    /// Chains looked up one by one so far: past [`LOOKUPS_BEFORE_LOAD`], every chain is
    /// read at once instead.
    lookups: usize,
    /// Jumps to a chain added (+) or removed (-) by this plan, for `-X`'s reference check.
    ref_delta: BTreeMap<String, i64>,
    ops: Vec<Op>,
    /// Built-in chains this plan creates: index of their op, so a later policy lands in it.
    created_builtins: BTreeMap<&'static str, usize>,
    /// Set by `-Z`: counters are reset after the commit.
    pub(crate) zero: Option<Option<String>>,
    /// Set by restore: `-Z` zeroes in the plan's own transaction instead, as
    /// iptables-nft-restore does (rules with counts replaced by themselves at zero, base
    /// chains' policy counters sent as zero), so that it takes effect where its line stands.
    pub zero_in_plan: bool,
    /// A `-X` of every chain ran in this plan: as iptables-nft 1.8.9 (which drops the
    /// built-in chains from its cache then), a later `-Z` of the plan leaves them alone.
    builtins_forgotten: bool,
    /// Set by `restore --noflush`: a `:BUILTIN -` line leaves the policy alone.
    pub keep_builtin_policy: bool,
    /// Set by a restore without `--noflush` outside a policy: a reset of one of iptables'
    /// tables deletes it and makes it again ([`Planner::drop_table`]), as iptables-nft does.
    pub drop_on_reset: bool,
    /// What `-v` prints for the planned changes.
    pub(crate) verbose_lines: Vec<String>,
    /// Whether `-v` was given (listing every chain for its messages costs a full read).
    pub(crate) verbose: bool,
}

impl Planner {
    /// Reads the table's chains. iptables' built-in chains that do not exist yet are part of
    /// the view (iptables lists them) and are created by the first command that writes to
    /// them. A table that is not one of iptables' must exist.
    pub fn new(r: &mut Reader<'_>, table: &TableRef) -> Result<Planner> {
        let table_exists = r.table_exists(table)?;
        let iptables_table = tables::is_iptables_table(&table.name);
        if !iptables_table && !table_exists {
            return Err(Error::NoSuchTable(table.name.clone()));
        }
        Ok(Planner {
            table: table.clone(),
            iptables_table,
            table_exists,
            table_created: false,
            chains: BTreeMap::new(),
            absent: Default::default(),
            all_loaded: false,
            lookups: 0,
            ref_delta: BTreeMap::new(),
            ops: Vec::new(),
            created_builtins: BTreeMap::new(),
            zero: None,
            zero_in_plan: false,
            builtins_forgotten: false,
            keep_builtin_policy: false,
            drop_on_reset: false,
            verbose_lines: Vec::new(),
            verbose: false,
        })
    }

    /// Whether `name` exists in the plan's view, looking it up (one request) if unknown.
    fn lookup(&mut self, r: &mut Reader<'_>, name: &str) -> Result<bool> {
        if self.chains.contains_key(name) {
            return Ok(true);
        }
        if self.absent.contains(name) {
            return Ok(false);
        }
        if self.table_exists && !self.all_loaded && self.lookups >= LOOKUPS_BEFORE_LOAD {
            // A plan that names many chains (a `--noflush` restore jumping to thousands):
            // one dump of them all, not a request and its answer for each.
            self.load_all(r)?;
            if self.chains.contains_key(name) {
                return Ok(true);
            }
            self.absent.insert(name.to_string());
            return Ok(false);
        }
        let found = if self.table_exists && !self.all_loaded {
            self.lookups += 1;
            r.chain(&self.table.chain(name))?
        } else {
            None
        };
        match found {
            Some(c) => {
                self.chains.insert(name.to_string(), ChainState::kernel(&c));
                Ok(true)
            }
            None => match self.builtin(name) {
                Some(b) => {
                    self.chains
                        .insert(name.to_string(), ChainState::virtual_builtin(&b));
                    Ok(true)
                }
                None => {
                    self.absent.insert(name.to_string());
                    Ok(false)
                }
            },
        }
    }

    /// Loads every chain of the table (for commands about the whole table).
    fn load_all(&mut self, r: &mut Reader<'_>) -> Result<()> {
        if self.all_loaded {
            return Ok(());
        }
        if self.table_exists {
            for c in r.chains(&self.table)? {
                let name = c.chain.name.clone();
                if !self.chains.contains_key(&name) && !self.absent.contains(&name) {
                    self.chains.insert(name, ChainState::kernel(&c));
                }
            }
        }
        for b in tables::builtins(&self.table.name).unwrap_or(&[]) {
            if !self.absent.contains(b.name) {
                self.chains
                    .entry(b.name.into())
                    .or_insert_with(|| ChainState::virtual_builtin(b));
            }
        }
        self.all_loaded = true;
        Ok(())
    }

    fn builtin(&self, chain: &str) -> Option<Builtin> {
        tables::builtin(&self.table.name, chain)
    }

    fn chain_ref(&self, name: &str) -> crate::nft::ChainRef {
        self.table.chain(name)
    }

    fn ensure_table(&mut self) {
        if !self.table_exists && !self.table_created {
            self.ops.push(Op::EnsureTable(self.table.clone()));
            self.table_created = true;
        }
    }

    /// Makes a chain about to be written to exist: creates the table and a built-in chain
    /// that is only virtual so far.
    fn materialize(&mut self, chain: &str) {
        let Some(b) = self.builtin(chain) else { return };
        if self.chains.get(chain).is_some_and(|c| c.virtual_builtin) {
            self.ensure_table();
            self.created_builtins.insert(b.name, self.ops.len());
            self.ops.push(Op::EnsureChain {
                table: self.table.clone(),
                chain: ChainSpec::base(b.name, b.base(ChainPolicy::Accept)),
            });
            if let Some(c) = self.chains.get_mut(chain) {
                c.virtual_builtin = false;
            }
        }
    }

    fn require(&mut self, r: &mut Reader<'_>, chain: &str) -> Result<()> {
        if self.lookup(r, chain)? {
            Ok(())
        } else {
            Err(self.not_found(format!("chain {chain} in table {}", self.table)))
        }
    }

    fn not_found(&self, what: String) -> Error {
        messages::not_found(self.table.family, what)
    }

    fn rules(&mut self, r: &mut Reader<'_>, chain: &str) -> Result<&mut Vec<Slot>> {
        self.require(r, chain)?;
        let table = self.table.clone();
        let state = self
            .chains
            .get_mut(chain)
            .ok_or_else(|| messages::not_found(table.family, chain.to_string()))?;
        if state.rules.is_none() {
            let raw = if state.in_kernel {
                r.raw_rules(&table, Some(chain))?
            } else {
                Vec::new()
            };
            state.kernel_rules = raw.len();
            let mut slots: Vec<Slot> = raw
                .iter()
                .map(|x| Slot::Kernel {
                    handle: x.handle,
                    rule: Box::new(compat::decode(&table, x)),
                })
                .collect();
            for (head, slot) in state.early.drain(..) {
                if head {
                    slots.insert(0, slot);
                } else {
                    slots.push(slot);
                }
            }
            state.rules = Some(slots);
        }
        Ok(state.rules.get_or_insert_with(Vec::new))
    }

    /// A `-F` that did not read the chain (a flush needs no read) left its rules' jumps in
    /// the use counts read from the kernel; a `-X` later in the same plan reads them, so
    /// that `-D` of the jump, `-F`, `-X` in one restore block works as in iptables-restore.
    fn account_unread_flushes(&mut self, r: &mut Reader<'_>) -> Result<()> {
        let pending: Vec<String> = self
            .chains
            .iter()
            .filter(|(_, c)| c.flushed_unread)
            .map(|(n, _)| n.clone())
            .collect();
        let table = self.table.clone();
        for name in pending {
            let raw = r.raw_rules(&table, Some(&name))?;
            if let Some(c) = self.chains.get_mut(&name) {
                c.kernel_rules = raw.len();
                c.flushed_unread = false;
            }
            for x in &raw {
                self.note_jump(&compat::decode(&table, x), -1);
            }
        }
        Ok(())
    }

    fn note_jump(&mut self, rule: &IptRule, delta: i64) {
        if let Some(t) = rule.jump_target() {
            *self.ref_delta.entry(t.to_string()).or_default() += delta;
        }
    }

    /// A slot's rule: a pending rule that kept no copy is decoded from the encoding its
    /// operation sends, as the rules of the kernel are.
    fn slot_rule<'a>(ops: &[Op], table: &TableRef, s: &'a Slot) -> std::borrow::Cow<'a, IptRule> {
        use std::borrow::Cow;
        match s {
            Slot::Kernel { rule, .. }
            | Slot::Pending {
                rule: Some(rule), ..
            } => Cow::Borrowed(rule),
            Slot::Pending { rule: None, op } => {
                let raw = op.and_then(|j| match ops.get(j)? {
                    Op::AddEncodedRule { chain, rule, .. }
                    | Op::ReplaceEncodedRule { chain, rule, .. } => Some(crate::nft::RawRule {
                        chain: chain.clone(),
                        handle: 0,
                        exprs: rule.exprs.clone(),
                        userdata: rule.userdata.clone(),
                        sets: Default::default(),
                    }),
                    _ => None,
                });
                Cow::Owned(raw.map(|x| compat::decode(table, &x)).unwrap_or_default())
            }
        }
    }

    /// The rules of a chain as loaded (none when not loaded).
    fn loaded(&self, chain: &str) -> &[Slot] {
        self.chains
            .get(chain)
            .and_then(|c| c.rules.as_deref())
            .unwrap_or(&[])
    }

    /// iptables checks a jump's target chain before anything else: status 2.
    fn find(
        slots: &[Slot],
        ops: &[Op],
        table: &TableRef,
        rule: &IptRule,
        native: bool,
    ) -> Option<usize> {
        // In a table of our own both state modules become the same `ct state`.
        let norm = |r: &IptRule| {
            let mut r = r.without_counters();
            super::ext::native::normalize_nflog(&mut r);
            if !native {
                super::ext::native::normalize_ports(&mut r);
            }
            if native {
                for m in &mut r.matches {
                    if let super::IptMatch::Conntrack(s) = m {
                        *m = super::IptMatch::State(s.clone());
                    }
                }
            }
            r
        };
        let want = norm(rule);
        slots.iter().position(|s| {
            let r = Self::slot_rule(ops, table, s);
            r.is_expressible() && norm(&r) == want
        })
    }

    /// Sets a built-in chain's policy, and its policy counters when `counters` is given
    /// (iptables-nft sends them with every policy it sets: see [`ChainSpec::counters`]).
    fn set_policy(
        &mut self,
        b: Builtin,
        policy: ChainPolicy,
        counters: Option<crate::model::Counters>,
    ) {
        self.materialize(b.name);
        let mut spec = ChainSpec::base(b.name, b.base(policy));
        spec.counters = counters;
        let op = Op::EnsureChain {
            table: self.table.clone(),
            chain: spec,
        };
        match self.created_builtins.get(b.name) {
            Some(&i) => self.ops[i] = op,
            None => self.ops.push(op),
        }
        if let Some(c) = self.chains.get_mut(b.name) {
            c.base = Some(b.base(policy));
            if counters.is_some() {
                c.counters = counters;
            }
        }
    }

    /// `-Z [CHAIN]` inside the plan, as iptables-nft's `nft_chain_zero_counters`: each rule
    /// of the kernel that counted something is replaced by itself with zero counters, and a
    /// built-in chain whose policy counted something is sent again with zero counters.
    fn zero_planned(&mut self, r: &mut Reader<'_>, chain: Option<&str>) -> Result<()> {
        if !self.table_exists {
            return Ok(());
        }
        let names: Vec<String> = match chain {
            Some(c) => vec![c.to_string()],
            None => {
                self.load_all(r)?;
                self.chains.keys().cloned().collect()
            }
        };
        let zero = crate::model::Counters::default();
        for name in names {
            if self.builtins_forgotten && self.builtin(&name).is_some() {
                continue;
            }
            let Some(state) = self.chains.get(&name) else {
                continue;
            };
            if !state.in_kernel {
                continue;
            }
            if let (Some(b), Some(base)) = (self.builtin(&name), state.base)
                && state.counters.is_some_and(|c| c != zero)
            {
                self.set_policy(b, base.policy, Some(zero));
            }
            let table = self.table.clone();
            let mut next = self.ops.len();
            let mut ops = Vec::new();
            for slot in self.rules(r, &name)?.iter_mut() {
                let Slot::Kernel { handle, rule } = slot else {
                    continue;
                };
                if rule.counters.is_none_or(|c| c == zero) {
                    continue;
                }
                let mut rule = rule.clone();
                rule.counters = Some(zero);
                ops.push(Op::ReplaceEncodedRule {
                    chain: table.chain(&name),
                    handle: *handle,
                    rule: compat::encode(&table, &rule)?,
                });
                *slot = Slot::Pending {
                    rule: Some(rule),
                    op: Some(next),
                };
                next += 1;
            }
            self.ops.extend(ops);
        }
        Ok(())
    }

    /// Chains in iptables' listing order: built-ins, then user chains by name.
    fn listing_order(&mut self, r: &mut Reader<'_>) -> Result<Vec<String>> {
        self.load_all(r)?;
        Ok(self.listing_order_loaded())
    }

    fn listing_order_loaded(&self) -> Vec<String> {
        let builtins: Vec<String> = tables::builtins(&self.table.name)
            .unwrap_or(&[])
            .iter()
            .map(|b| b.name.to_string())
            .collect();
        let mut rest: Vec<String> = self
            .chains
            .keys()
            .filter(|n| !builtins.contains(n))
            .cloned()
            .collect();
        rest.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        builtins
            .into_iter()
            .filter(|n| self.chains.contains_key(n))
            .chain(rest)
            .collect()
    }

    /// Plans one command (through the one interpreter, [`crate::seam::interpret`]).
    pub fn plan(&mut self, r: &mut Reader<'_>, cmd: &Command) -> Result<()> {
        crate::seam::interpret(&mut NftTable { p: self, r }, cmd).map(drop)
    }

    /// A restore block planned through the one restore loop
    /// ([`crate::seam::restore_block_with`]): after each step, `mark` is told how many
    /// operations the plan holds and the line they came from.
    pub fn restore_block(
        &mut self,
        r: &mut Reader<'_>,
        block: &crate::ipt::restore_file::Block,
        noflush: bool,
        mark: impl FnMut(usize, usize),
    ) -> Result<()> {
        let lines = block.lines.iter().map(|(n, l)| (*n, l));
        self.restore_lines(r, block.line, lines, noflush, mark)
    }

    /// [`Planner::restore_block`] over the block's lines one at a time (owned lines are
    /// freed as they are planned); `table_line` is the line of its `*table`.
    pub fn restore_lines<L: std::borrow::Borrow<crate::ipt::restore_file::Line>>(
        &mut self,
        r: &mut Reader<'_>,
        table_line: usize,
        lines: impl IntoIterator<Item = (usize, L)>,
        noflush: bool,
        mut mark: impl FnMut(usize, usize),
    ) -> Result<()> {
        // `:BUILTIN -` under --noflush keeps the chain's policy; a `-Z` line is planned
        // where it stands.
        self.keep_builtin_policy = noflush;
        self.zero_in_plan = true;
        // About an operation a line: room made once, not by doubling (each doubling of a
        // vector on the heap copies it, the old and the new held at once).
        let lines = lines.into_iter();
        self.ops.reserve(lines.size_hint().0);
        let mut t = NftTable { p: self, r };
        crate::seam::restore_lines_with(&mut t, table_line, lines, noflush, |t, n, _| {
            mark(t.p.op_count(), n)
        })
    }

    /// `iptables-nft-restore` without `--noflush` on one of iptables' tables: the table is
    /// deleted (when it exists) and made again by what the block declares, in the block's
    /// order, as iptables-nft 1.8.9 does (its table flush is a `delete table`): the chains
    /// the block does not declare or write to are gone, and `nft list ruleset` lists tables
    /// and chains in the order iptables-nft leaves them. Other tables are reset in place
    /// (`Edit::Reset`). Returns whether the table was dropped.
    pub fn drop_table(&mut self) -> bool {
        if !self.iptables_table {
            return false;
        }
        if self.table_exists || self.table_created {
            self.ops.push(Op::DeleteTable(self.table.clone()));
        }
        self.table_exists = false;
        self.table_created = false;
        self.chains.clear();
        self.absent.clear();
        self.all_loaded = false;
        self.ref_delta.clear();
        self.created_builtins.clear();
        self.builtins_forgotten = false;
        true
    }

    /// Deletes the user chains that existed before a reset and were not declared again.
    pub fn finish_reset(&mut self, declared: &[String]) {
        let stale: Vec<String> = self
            .chains
            .iter()
            .filter(|(n, c)| c.in_kernel && c.base.is_none() && !declared.contains(n))
            .map(|(n, _)| n.clone())
            .collect();
        for n in stale {
            self.ops.push(Op::DeleteChain(self.chain_ref(&n)));
            self.chains.remove(&n);
            self.absent.insert(n);
        }
    }

    /// Whether a rule in a chain not in `except` jumps or goes to `chain`.
    fn referenced_from_outside(
        &mut self,
        r: &mut Reader<'_>,
        chain: &str,
        except: &[String],
    ) -> Result<bool> {
        self.load_all(r)?;
        let names: Vec<String> = self
            .chains
            .keys()
            .filter(|n| !except.contains(n))
            .cloned()
            .collect();
        for n in names {
            self.rules(r, &n)?;
            if self
                .loaded(&n)
                .iter()
                .any(|s| Self::slot_rule(&self.ops, &self.table, s).jump_target() == Some(chain))
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `-F CHAIN`: the jumps in its rules no longer count against their targets.
    fn flush(&mut self, chain: &str) {
        if let Some(c) = self.chains.get_mut(chain)
            && c.in_kernel
            && c.rules.is_none()
        {
            c.flushed_unread = true;
        }
        // The jumps of its rules: those added before it was read, then those in the view.
        let targets: Vec<String> = self
            .chains
            .get(chain)
            .map(|c| {
                let early = c.early.iter().map(|(_, s)| s);
                early
                    .chain(c.rules.iter().flatten())
                    .filter_map(|s| {
                        let r = Self::slot_rule(&self.ops, &self.table, s);
                        r.jump_target().map(str::to_string)
                    })
                    .collect()
            })
            .unwrap_or_default();
        for t in targets {
            *self.ref_delta.entry(t).or_default() -= 1;
        }
        if self
            .chains
            .get(chain)
            .is_some_and(|c| c.in_kernel || c.rules.as_ref().is_some_and(|r| !r.is_empty()))
        {
            self.ops.push(Op::FlushChain(self.chain_ref(chain)));
        }
        if let Some(c) = self.chains.get_mut(chain) {
            c.rules = Some(Vec::new());
            c.early.clear();
        }
    }

    /// How many operations are planned so far.
    pub fn op_count(&self) -> usize {
        self.ops.len()
    }

    /// The operations planned so far.
    pub fn into_ops(self) -> Vec<Op> {
        self.ops
    }

    /// Whether the table is one of iptables' own (`filter`, `nat`, `mangle`, `raw`, `security`),
    /// whose chains iptables-nft creates on first use; `false` for other nf_tables tables.
    pub fn iptables_table(&self) -> bool {
        self.iptables_table
    }
}
