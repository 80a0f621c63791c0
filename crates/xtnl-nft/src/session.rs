//! The nf_tables session: socket, reads, transactions with generation-id retry, guard and
//! auditor hooks; the plan's reads (`reader`), the dump machinery (`dump`) and the
//! diagnosis of missing modules (`diagnose`) in files of their own.

use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::lock::{LockMode, WaitPolicy, XtablesLock};
use crate::transport::{Batch, CommitFailure, Conn, Request};
use crate::wire::nftables::{
    ChainCounters, ChainRepr, GenRepr, RuleRepr, TableRepr, msg, nfproto, split_nfgenmsg,
};

use super::listing::{Chain, ListedRule, RawRule, Table, TableSnapshot};
use super::transaction::{ChainRef, RulePosition, TableRef, Transaction};

/// Attempts of a transaction that plan without holding the xtables lock; later attempts
/// hold it from the plan's first read to the commit.
const OPTIMISTIC_ATTEMPTS: u32 = 4;

/// How many times a dump interrupted by concurrent commits is restarted.
const MAX_DUMP_RESTARTS: u32 = 64;

mod diagnose;
mod dump;
mod reader;
mod zero;

use diagnose::*;
pub use dump::SetElements;
use dump::*;
pub(super) use dump::{absent, dump_all};
pub use reader::Reader;

/// Checks every transaction of a session before anything is sent: a policy (the library's
/// `xtnl::policy::Policy`). An error from it is returned as the transaction's error.
pub trait Guard: std::fmt::Debug + Send + Sync {
    /// Checks the final transaction of an attempt. Reads through `reader` belong to the
    /// attempt's generation: if the ruleset changes after them, the commit is refused and the
    /// plan and this check run again.
    fn check_transaction(&self, tx: &Transaction, reader: &mut Reader<'_>) -> Result<()>;
    /// Checks zeroing the counters of a table (`chain: None`) or of one chain.
    fn check_zero(&self, table: &TableRef, chain: Option<&str>) -> Result<()>;
}

/// How a transaction ended, for an [`Auditor`].
#[derive(Debug, Clone, Copy)]
pub enum AuditOutcome<'a> {
    /// About to be sent (the guard allowed it): recorded before the commit, so that a helper
    /// killed between the commit and its result record still leaves a record of the attempt.
    Attempt,
    /// The kernel refused the attempt because the ruleset changed since the plan's reads; it
    /// is planned and attempted again.
    Retried,
    /// The kernel accepted the batch; the change is in the ruleset.
    Committed,
    /// The guard refused it; nothing was sent.
    Denied(&'a Error),
    /// Sent, and refused by the kernel (or the generation kept changing).
    Failed(&'a Error),
}

/// Records every transaction a session sent or was denied (one audit line each).
pub trait Auditor: std::fmt::Debug + Send + Sync {
    /// `count` operations, described one by one by `ops` (pull only as many as needed).
    fn record(
        &self,
        count: usize,
        ops: &mut dyn Iterator<Item = String>,
        outcome: AuditOutcome<'_>,
    );
    /// Records a transaction; the default describes each operation by its `Display`.
    fn record_tx(&self, tx: &Transaction, outcome: AuditOutcome<'_>) {
        self.record(
            tx.len(),
            &mut tx.ops().iter().map(|o| o.to_string()),
            outcome,
        );
    }
    /// How many leading operations of a transaction [`Auditor::record_tx`] may read the
    /// rules of (an added or replaced rule's expressions). Past them, the session frees an
    /// operation's encoded rule once it is in the batch (a restore of 80,000 rules then
    /// does not hold each rule twice, as an operation and as bytes): `record_tx` still sees
    /// every operation, and `Display` describes each, but their rules are empty. The
    /// default: all of them.
    fn rules_read(&self) -> usize {
        usize::MAX
    }
}

#[derive(Debug, Clone, Default)]
struct Enforcement {
    guard: Option<Arc<dyn Guard>>,
    auditor: Option<Arc<dyn Auditor>>,
}

/// Builds a [`Session`] with non-default lock and retry settings.
#[derive(Debug, Clone)]
pub struct SessionBuilder {
    lock_mode: LockMode,
    lock: XtablesLock,
    max_attempts: u32,
    enforcement: Enforcement,
    one_shot: bool,
}

impl Default for SessionBuilder {
    fn default() -> Self {
        SessionBuilder {
            lock_mode: LockMode::Always,
            lock: XtablesLock::from_env(WaitPolicy::Forever),
            max_attempts: 32,
            enforcement: Enforcement::default(),
            one_shot: false,
        }
    }
}

impl SessionBuilder {
    /// Whether mutating transactions take the xtables lock around their commit.
    pub fn lock_mode(mut self, mode: LockMode) -> Self {
        self.lock_mode = mode;
        self
    }
    /// The lock (path and wait policy); default: `$XTABLES_LOCKFILE` or `/run/xtables.lock`,
    /// waiting as long as it takes.
    pub fn lock(mut self, lock: XtablesLock) -> Self {
        self.lock = lock;
        self
    }
    /// How many times a transaction is planned and sent before a generation conflict is
    /// reported (at least 1).
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = n.max(1);
        self
    }
    /// Checks every transaction with `guard` before sending it (default: none).
    pub fn guard(mut self, guard: Option<Arc<dyn Guard>>) -> Self {
        self.enforcement.guard = guard;
        self
    }
    /// Records every transaction with `auditor` (default: none).
    pub fn auditor(mut self, auditor: Option<Arc<dyn Auditor>>) -> Self {
        self.enforcement.auditor = auditor;
        self
    }
    /// A short-lived process's session (one command of `xtnl`): it ends its own socket's
    /// use, so that its caller makes no close call. Once a transaction has committed, the
    /// session hands the socket to a detached closer as [`Session::close_detached`] does,
    /// before [`Session::transact`] returns (which then returns the hand-over's error, if
    /// any); a later use (`-Z`'s counter reset after its transaction) opens a socket again,
    /// in the same namespace. A socket still open when the session is dropped (a listing,
    /// a refused change, one that committed nothing) goes to a detached closer then; a
    /// failure to hand it over there closes it in this process. Default: off (a long-lived
    /// session keeps its socket).
    pub fn one_shot(mut self, one_shot: bool) -> Self {
        self.one_shot = one_shot;
        self
    }
    /// The session with this builder's settings, its socket not opened yet: it is opened in
    /// `netns` (`None`: the namespace of the thread that first uses it) by the first call
    /// that talks to the kernel, so that a command handed to a backend whole opens it where
    /// it first reads (docs/architecture.md, "Three walks"). The errors of
    /// [`SessionBuilder::open_in`] come from that call.
    pub fn open_lazily_in(self, netns: Option<&xtnl_host::netns::Netns>) -> Session {
        let mut s = self.open_on(Conn::replay(crate::transport::Capture::default()));
        s.pending = Some(netns.cloned());
        s.home = netns.cloned();
        s
    }
    /// Opens the NETLINK_NETFILTER socket, in the calling thread's network namespace, and returns
    /// the session with this builder's settings.
    ///
    /// # Errors
    /// An [`Error`] when the socket cannot be opened or bound.
    pub fn open(self) -> Result<Session> {
        Ok(self.open_on(Conn::open()?))
    }
    /// The session with this builder's settings on `conn`: the kernel's socket, a
    /// [`Conn::recording`] of it, or a [`Conn::replay`] of a capture (which needs neither
    /// the kernel nor privilege: the tests of reads, plans and retries use it).
    pub fn open_on(self, conn: Conn) -> Session {
        Session {
            sock: conn,
            pending: None,
            home: None,
            one_shot: self.one_shot,
            lock: (self.lock_mode == LockMode::Always).then_some(self.lock),
            max_attempts: self.max_attempts,
            enforcement: self.enforcement,
            freed_objects: false,
            stats: SessionStats::default(),
        }
    }
}

/// One netlink socket serving any number of transactions and listings. A long-lived agent
/// keeps one; a short-lived command ends it with [`Session::close_detached`], or is built
/// [`SessionBuilder::one_shot`] and ends it by itself.
pub struct Session {
    sock: Conn,
    /// Not connected yet ([`SessionBuilder::open_lazily_in`]): the namespace to open the
    /// socket in on first use (`sock` is an empty replay until then).
    pending: Option<Option<xtnl_host::netns::Netns>>,
    /// The namespace it was opened in (`None`: the thread's own), where a one-shot session
    /// opens its socket again after handing one over.
    pub(crate) home: Option<xtnl_host::netns::Netns>,
    /// Built [`SessionBuilder::one_shot`].
    one_shot: bool,
    lock: Option<XtablesLock>,
    max_attempts: u32,
    enforcement: Enforcement,
    freed_objects: bool,
    stats: SessionStats,
}

/// Counters of what concurrency cost this session, for operators and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionStats {
    /// Transactions the kernel refused for a stale generation id and that were re-planned.
    pub generation_retries: u64,
    /// Dumps restarted because a commit interrupted them (NLM_F_DUMP_INTR).
    pub dump_restarts: u64,
    /// Multi-dump reads repeated because the generation moved between them.
    pub snapshot_retries: u64,
}

/// The outcome of a committed transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Committed<T> {
    /// What the plan returned on the attempt that committed.
    pub value: T,
    /// How many times the plan ran (1 unless the ruleset changed under it).
    pub attempts: u32,
    /// Operations committed (0: nothing to do, nothing was sent).
    pub ops: usize,
    /// `(operation index, handle)` of added rules, when the transaction asked for them.
    pub rule_handles: Vec<(usize, u64)>,
}

impl Session {
    /// A session with the default settings (lock always, waiting; 32 attempts).
    pub fn open() -> Result<Session> {
        SessionBuilder::default().open()
    }
    /// A [`SessionBuilder`] for a session with a namespace, guard or auditor.
    pub fn builder() -> SessionBuilder {
        SessionBuilder::default()
    }

    /// Whether a guard (a policy) checks this session's transactions.
    pub fn has_guard(&self) -> bool {
        self.enforcement.guard.is_some()
    }

    /// Whether its socket is open (a lazily opened session: once its first use opened it;
    /// a one-shot one: until it handed it over).
    pub fn is_open(&self) -> bool {
        self.pending.is_none()
    }

    /// Opens the socket of a session opened lazily now, if it is not open yet (every call
    /// that talks to the kernel does it on its first use): for a caller that must tell a
    /// failure to open the socket from a failure of what it then sends (`xtnl serve`'s
    /// `apply` documents).
    ///
    /// # Errors
    /// An [`Error`] when the socket cannot be opened or bound, or the namespace joined.
    pub fn connect(&mut self) -> Result<()> {
        if let Some(netns) = &self.pending {
            self.sock = match netns {
                None => Conn::open()?,
                Some(ns) => ns.run_in(Conn::open)?,
            };
            self.pending = None;
        }
        Ok(())
    }

    /// The current ruleset generation id.
    pub fn generation(&mut self) -> Result<u32> {
        self.connect()?;
        get_generation(&mut self.sock)
    }

    /// Plans and commits a transaction as one atomic batch.
    ///
    /// `plan` reads what it needs through the [`Reader`] and returns the operations (and any
    /// value). If it read anything, the commit carries the generation of those reads, and when
    /// the ruleset changed in between the kernel refuses the batch (ERESTART): the plan then
    /// runs again on fresh state, up to the session's attempt limit, after which
    /// [`Error::GenerationConflict`] is returned. A plan that reads nothing is sent without a
    /// generation id: its operations do not depend on the state, and it costs one round trip.
    /// An empty transaction sends nothing. The xtables lock is held only around the send,
    /// except after four lost races, when it is held from the plan's first read to the commit
    /// (so that a long plan is not starved by other xtnl writers).
    pub fn transact<T>(
        &mut self,
        mut plan: impl FnMut(&mut Reader<'_>) -> Result<(Transaction, T)>,
    ) -> Result<Committed<T>> {
        self.connect()?;
        let mut backoff = Duration::from_micros(20);
        for attempt in 1..=self.max_attempts {
            // After a few lost races, plan and commit under the xtables lock: every other
            // xtnl writer (and iptables-legacy) commits under it too, so a plan that reads a
            // lot (a sweep) is no longer starved by short writers. Callers that commit
            // without the lock (iptables-nft, nft) can still move the generation.
            let early_guard = match &self.lock {
                Some(lock) if attempt > OPTIMISTIC_ATTEMPTS => Some(lock.acquire()?),
                _ => None,
            };
            let mut reader = Reader {
                sock: &mut self.sock,
                stats: &mut self.stats,
                generation: None,
            };
            let (mut tx, value) = plan(&mut reader)?;
            if tx.is_empty() {
                return Ok(Committed {
                    value,
                    attempts: attempt,
                    ops: 0,
                    rule_handles: Vec::new(),
                });
            }
            if tx.len() > crate::limits::MAX_TRANSACTION_OPS {
                return Err(Error::InvalidInput(format!(
                    "a transaction of {} operations; at most {} fit in one",
                    tx.len(),
                    crate::limits::MAX_TRANSACTION_OPS
                )));
            }
            // The policy sees the very operations about to be encoded; its reads (if any)
            // join the attempt's generation, so a change after them forces a new check.
            if let Some(g) = &self.enforcement.guard
                && let Err(e) = g.check_transaction(&tx, &mut reader)
            {
                if matches!(e.kind(), crate::ErrorKind::PolicyDenied) {
                    self.audit(&tx, AuditOutcome::Denied(&e));
                }
                return Err(e);
            }
            let generation = reader.generation;
            let mut batch = Batch::new(&mut self.sock, generation);
            let keep = self
                .enforcement
                .auditor
                .as_ref()
                .map_or(0, |a| a.rules_read());
            tx.encode_releasing(&mut batch, keep)?;
            self.audit(&tx, AuditOutcome::Attempt);
            let guard = match (&self.lock, early_guard) {
                (_, Some(held)) => Some(held),
                (Some(lock), None) => Some(lock.acquire()?),
                (None, None) => None,
            };
            let result = batch.commit_described(&mut self.sock, &|i| {
                super::transaction::describe(tx.ops(), i)
            });
            drop(guard);
            match &result {
                Ok(_) => self.audit(&tx, AuditOutcome::Committed),
                Err(CommitFailure::Error(e)) => self.audit(&tx, AuditOutcome::Failed(e)),
                Err(CommitFailure::GenerationChanged) if attempt == self.max_attempts => {
                    let e = Error::GenerationConflict {
                        attempts: self.max_attempts,
                    };
                    self.audit(&tx, AuditOutcome::Failed(&e));
                }
                Err(CommitFailure::GenerationChanged) => self.audit(&tx, AuditOutcome::Retried),
            }
            match result {
                Ok(reply) => {
                    if tx.ops().iter().any(|op| op.deletes()) {
                        self.freed_objects = true;
                    }
                    let rule_handles = reply
                        .echoes
                        .iter()
                        .filter(|(_, m, _)| *m == msg::NEWRULE)
                        .filter_map(|(i, _, payload)| {
                            let (fam, attrs) = split_nfgenmsg(payload).ok()?;
                            Some((*i, RuleRepr::parse(fam, attrs).ok()?.handle?))
                        })
                        .collect();
                    if self.one_shot {
                        // The command's change is in: its socket's use ends here (its
                        // caller does not come back to close it).
                        self.hand_over()?;
                    }
                    return Ok(Committed {
                        value,
                        attempts: attempt,
                        ops: tx.len(),
                        rule_handles,
                    });
                }
                Err(CommitFailure::GenerationChanged) => {
                    self.stats.generation_retries += 1;
                    // Back off a little, with jitter, so that writers racing for the same
                    // generation spread out instead of colliding again.
                    let jitter =
                        u64::from(std::process::id() ^ attempt.wrapping_mul(2_654_435_761));
                    std::thread::sleep(
                        backoff + Duration::from_micros(jitter % (backoff.as_micros() as u64 + 1)),
                    );
                    backoff = (backoff * 2).min(Duration::from_millis(5));
                }
                Err(CommitFailure::Error(e)) => {
                    // The diagnosis of a missing object reads the failing rule, freed once
                    // it was in the batch past `keep`: the same plan made again gives it
                    // back (the batch was aborted, so the plan reads what it read).
                    let freed = e
                        .op_failure()
                        .filter(|f| f.errno == libc::ENOENT && f.index >= keep)
                        .is_some();
                    if freed {
                        let mut reader = Reader {
                            sock: &mut self.sock,
                            stats: &mut self.stats,
                            generation: None,
                        };
                        if let Ok((again, _)) = plan(&mut reader) {
                            tx = again;
                        }
                    }
                    return Err(missing_extension(&mut self.sock, &tx, e));
                }
            }
        }
        Err(Error::GenerationConflict {
            attempts: self.max_attempts,
        })
    }

    fn audit(&self, tx: &Transaction, outcome: AuditOutcome<'_>) {
        if let Some(a) = &self.enforcement.auditor {
            a.record_tx(tx, outcome);
        }
    }

    /// Commits a fixed transaction (no reads, no generation id).
    pub fn commit(&mut self, tx: &Transaction) -> Result<Committed<()>> {
        self.transact(|_| Ok((tx.clone(), ())))
    }

    /// Every nf_tables table of every family (one dump, restarted if the ruleset changes).
    pub fn list_tables(&mut self) -> Result<Vec<Table>> {
        self.connect()?;
        dump_tables(&mut self.sock, &mut self.stats.dump_restarts)
    }
    /// The chains of `table` (one dump).
    pub fn list_chains(&mut self, table: &TableRef) -> Result<Vec<Chain>> {
        self.connect()?;
        dump_chains(&mut self.sock, &mut self.stats.dump_restarts, table)
    }
    /// The rules of one chain, with their handles, decoded into expressions.
    pub fn list_rules(&mut self, chain: &ChainRef) -> Result<Vec<ListedRule>> {
        self.connect()?;
        dump_rules(
            &mut self.sock,
            &mut self.stats.dump_restarts,
            &chain.table,
            Some(&chain.name),
        )
    }
    /// The rules of every chain of `table` (one dump), each with its chain.
    pub fn list_table_rules(&mut self, table: &TableRef) -> Result<Vec<ListedRule>> {
        self.connect()?;
        dump_rules(&mut self.sock, &mut self.stats.dump_restarts, table, None)
    }

    /// Rules of a table (or one chain) as the kernel reported them, undecoded.
    pub fn list_raw_rules(
        &mut self,
        table: &TableRef,
        chain: Option<&str>,
    ) -> Result<Vec<RawRule>> {
        self.connect()?;
        dump_rule_reprs(
            &mut self.sock,
            &mut self.stats.dump_restarts,
            table,
            chain,
            RawRule::from_repr,
        )
    }

    /// Zeroes the counters of every rule of a table, or of one chain (`iptables -Z`): a dump
    /// that resets what it reads, in the kernel, rule by rule; then the policy counters of
    /// its base chains, as iptables-nft does.
    pub fn reset_counters(&mut self, table: &TableRef, chain: Option<&str>) -> Result<()> {
        self.zeroing(table, chain, |s| s.reset_counters_unchecked(table, chain))
    }

    /// Runs `f` judged and recorded as zeroing the counters of `table` (or of its `chain`):
    /// the guard's [`Guard::check_zero`] and one `zero counters` audit line per outcome,
    /// whatever `f` sends; what `f` commits is neither checked nor recorded again. Only for
    /// changes that zero counters and nothing else, which the caller proves in the
    /// generation it commits to (`-Z CHAIN N`: a rule replaced by itself, as iptables-nft
    /// does it).
    pub(crate) fn zeroing<T>(
        &mut self,
        table: &TableRef,
        chain: Option<&str>,
        f: impl FnOnce(&mut Session) -> Result<T>,
    ) -> Result<T> {
        let what = match chain {
            Some(c) => format!("zero counters {table} {c}"),
            None => format!("zero counters {table}"),
        };
        if let Some(g) = &self.enforcement.guard
            && let Err(e) = g.check_zero(table, chain)
        {
            if let Some(a) = &self.enforcement.auditor
                && e.kind() == crate::ErrorKind::PolicyDenied
            {
                a.record(1, &mut std::iter::once(what), AuditOutcome::Denied(&e));
            }
            return Err(e);
        }
        if let Some(a) = &self.enforcement.auditor {
            a.record(1, &mut std::iter::once(what.clone()), AuditOutcome::Attempt);
        }
        // The guard and auditor come back whatever `f` does, a panic included (a session
        // kept after it, by `xtnl serve`'s engine, must not go on unchecked).
        let enforcement = std::mem::take(&mut self.enforcement);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(self)));
        self.enforcement = enforcement;
        let result = result.unwrap_or_else(|p| std::panic::resume_unwind(p));
        if let Some(a) = &self.enforcement.auditor {
            let outcome = match &result {
                Ok(_) => AuditOutcome::Committed,
                Err(e) => AuditOutcome::Failed(e),
            };
            a.record(1, &mut std::iter::once(what), outcome);
        }
        result
    }

    fn reset_counters_unchecked(&mut self, table: &TableRef, chain: Option<&str>) -> Result<()> {
        self.connect()?;
        let name = table.name.clone();
        let chain_name = chain.map(str::to_owned);
        dump_all(
            &mut self.sock,
            &mut self.stats.dump_restarts,
            msg::GETRULE_RESET,
            table.family.nfproto(),
            &|w| {
                w.strz(crate::wire::nftables::NFTA_RULE_TABLE, &name);
                if let Some(c) = &chain_name {
                    w.strz(crate::wire::nftables::NFTA_RULE_CHAIN, c);
                }
            },
            |_, _| Ok(Some(())),
        )?;
        self.zero_chain_counters(table, chain)
    }

    /// The policy counters of the table's base chains (or of `chain`, if it is one) back to
    /// zero, as iptables-nft's `-Z` does: one `NEWCHAIN` per base chain carrying
    /// `NFTA_CHAIN_COUNTERS` of zeros. Sent without hook, policy or `NLM_F_CREATE`, so it
    /// only updates a chain that exists and leaves its policy as it is; the batch carries the
    /// generation of the read, and is planned again if the ruleset changed in between.
    fn zero_chain_counters(&mut self, table: &TableRef, chain: Option<&str>) -> Result<()> {
        self.connect()?;
        for _ in 0..self.max_attempts.max(1) {
            let generation = get_generation(&mut self.sock)?;
            let chains = dump_chains(&mut self.sock, &mut self.stats.dump_restarts, table)?;
            let base: Vec<ChainRepr> = chains
                .iter()
                .filter(|c| {
                    (c.base.is_some() || c.base_unknown) && chain.is_none_or(|n| n == c.chain.name)
                })
                .map(|c| ChainRepr {
                    family: table.family.nfproto(),
                    table: table.name.clone(),
                    name: c.chain.name.clone(),
                    counters: Some(ChainCounters::default()),
                    ..Default::default()
                })
                .collect();
            if base.is_empty() {
                return Ok(());
            }
            let mut batch = Batch::new(&mut self.sock, Some(generation));
            for c in &base {
                let desc = format!("zero counters {table} {}", c.name);
                batch.push(msg::NEWCHAIN, c.family, 0, desc, |w| c.emit(w));
            }
            let guard = match &self.lock {
                Some(lock) => Some(lock.acquire()?),
                None => None,
            };
            let result = batch.commit(&mut self.sock);
            drop(guard);
            match result {
                Ok(_) => return Ok(()),
                Err(CommitFailure::Error(e)) => return Err(e),
                Err(CommitFailure::GenerationChanged) => self.stats.generation_retries += 1,
            }
        }
        Err(Error::GenerationConflict {
            attempts: self.max_attempts.max(1),
        })
    }

    /// Runs `read` on a consistent view: its dumps are bracketed by generation reads and the
    /// whole read is repeated if a commit landed in between (up to 64 times, then
    /// [`Error::GenerationConflict`]). Never takes the xtables lock.
    pub fn read<T>(&mut self, mut read: impl FnMut(&mut Reader<'_>) -> Result<T>) -> Result<T> {
        self.connect()?;
        let limit = self.max_attempts.max(MAX_DUMP_RESTARTS);
        for _ in 0..limit {
            let mut reader = Reader {
                sock: &mut self.sock,
                stats: &mut self.stats,
                generation: None,
            };
            reader.pin()?;
            let before = reader.generation;
            let value = read(&mut reader)?;
            if Some(get_generation(&mut self.sock)?) == before {
                return Ok(value);
            }
            self.stats.snapshot_retries += 1;
        }
        Err(Error::GenerationConflict { attempts: limit })
    }

    /// Chains and rules of a table from one generation: two dumps, bracketed by generation
    /// reads, repeated if a commit landed between them.
    pub fn snapshot(&mut self, table: &TableRef) -> Result<TableSnapshot> {
        self.connect()?;
        for _ in 0..self.max_attempts.max(MAX_DUMP_RESTARTS) {
            let before = get_generation(&mut self.sock)?;
            let chains = dump_chains(&mut self.sock, &mut self.stats.dump_restarts, table)?;
            let rules = dump_rules(&mut self.sock, &mut self.stats.dump_restarts, table, None)?;
            if get_generation(&mut self.sock)? == before {
                return Ok(TableSnapshot {
                    generation: before,
                    chains,
                    rules,
                });
            }
        }
        Err(Error::GenerationConflict {
            attempts: self.max_attempts.max(MAX_DUMP_RESTARTS),
        })
    }

    /// Ends the session. The release of a NETLINK_NETFILTER socket flushes the namespace's
    /// pending deferred destroy work (an RCU grace period, tens of ms), whoever's commit
    /// queued it, and holds the commit mutex while it waits: after this session's deleting
    /// commit, or any other process's a moment before. This hands the socket to a detached
    /// process that closes it once that work has run (see `sys::close_in_detached_process`),
    /// so that neither the caller nor the next commit in the namespace waits. The rules are
    /// committed and visible before either way of closing.
    pub fn close_detached(mut self) -> Result<()> {
        self.hand_over()
    }

    /// Hands the socket, if one is open, to the detached closer (see
    /// [`Session::close_detached`]); the session is then as if opened lazily in its
    /// namespace again.
    fn hand_over(&mut self) -> Result<()> {
        if self.pending.is_some() {
            return Ok(()); // never opened: nothing to close
        }
        let sock = std::mem::replace(
            &mut self.sock,
            Conn::replay(crate::transport::Capture::default()),
        );
        self.pending = Some(self.home.clone());
        close_socket_detached(sock)
    }

    /// Replaces the xtables lock its mutating transactions take (`None`: they take none),
    /// returning the previous one: a long-lived service gives each request the lock and wait
    /// that request's own process would have used (`xtnl serve`'s drop-in requests).
    pub fn replace_lock(&mut self, lock: Option<XtablesLock>) -> Option<XtablesLock> {
        std::mem::replace(&mut self.lock, lock)
    }

    /// What concurrency has cost this session so far.
    pub fn stats(&self) -> SessionStats {
        self.stats
    }

    /// Whether a committed transaction of this session freed kernel objects.
    pub fn freed_objects(&self) -> bool {
        self.freed_objects
    }

    /// The underlying connection (the socket, a recording or a replay), for benchmarks that
    /// count round trips or tap the datagrams sent, and tests that check a replay's end.
    /// (A session opened lazily and not used yet has an empty replay here.)
    pub fn socket(&mut self) -> &mut Conn {
        &mut self.sock
    }
}

/// Hands `sock` to a process that closes it once the namespace's deferred destroy work has
/// run (see [`Session::close_detached`]); a replay has nothing to close.
fn close_socket_detached(mut sock: Conn) -> Result<()> {
    // The closer's probe: GETGEN without an ACK, one reply message.
    let seq = crate::transport::Transport::next_seq(&mut sock);
    let mut w = crate::wire::netlink::MsgWriter::new();
    w.message(
        crate::wire::nftables::nft_type(msg::GETGEN),
        crate::wire::netlink::NLM_F_REQUEST,
        seq,
        &crate::wire::nftables::nfgenmsg(nfproto::UNSPEC, 0),
        |_| {},
    );
    let probe = w.into_bytes();
    let Some(sock) = sock.into_kernel_socket() else {
        return Ok(()); // a replay: no socket to close
    };
    crate::sys::close_in_detached_process(sock.into_socket(), &probe).map_err(|e| Error::Netlink {
        context: "detached close",
        source: e,
    })
}

impl Drop for Session {
    /// A one-shot session's socket still open (nothing committed since it was opened) goes
    /// to the detached closer; if that fails, dropping it closes it here, as any other
    /// session's. A panic closes it here too.
    fn drop(&mut self) {
        if self.one_shot && !std::thread::panicking() {
            let _ = self.hand_over();
        }
    }
}
