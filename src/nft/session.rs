//! The nf_tables session: socket, reads, transactions with generation-id retry, guard and
//! auditor hooks, dumps. Over 600 lines: issue 14 splits it along these seams (reader, dump
//! machinery, diagnosis of missing modules).

use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::lock::{LockMode, WaitPolicy, XtablesLock};
use crate::transport::{Batch, CommitFailure, NlSocket, Request};
use crate::wire::nftables::{
    ChainRepr, GenRepr, RuleRepr, TableRepr, msg, nfproto, split_nfgenmsg,
};

use super::listing::{Chain, ListedRule, RawRule, Table, TableSnapshot};
use super::transaction::{ChainRef, RulePosition, TableRef, Transaction};

/// Attempts of a transaction that plan without holding the xtables lock; later attempts
/// hold it from the plan's first read to the commit.
const OPTIMISTIC_ATTEMPTS: u32 = 4;

/// How many times a dump interrupted by concurrent commits is restarted.
const MAX_DUMP_RESTARTS: u32 = 64;

/// Checks every transaction of a session before anything is sent: a policy
/// ([`crate::policy::Policy`]). An error from it is returned as the transaction's error.
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
}

impl Default for SessionBuilder {
    fn default() -> Self {
        SessionBuilder {
            lock_mode: LockMode::Always,
            lock: XtablesLock::from_env(WaitPolicy::Forever),
            max_attempts: 32,
            enforcement: Enforcement::default(),
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
    pub fn open(self) -> Result<Session> {
        Ok(Session {
            sock: NlSocket::open()?,
            lock: (self.lock_mode == LockMode::Always).then_some(self.lock),
            max_attempts: self.max_attempts,
            enforcement: self.enforcement,
            freed_objects: false,
            stats: SessionStats::default(),
        })
    }
}

/// One netlink socket serving any number of transactions and listings. A long-lived agent
/// keeps one; a short-lived command ends it with [`Session::close_detached`].
pub struct Session {
    sock: NlSocket,
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

/// Reads the ruleset while a transaction is planned. The first read fetches the generation
/// id, which the commit then carries: if anything changed after it, the kernel refuses the
/// batch and the plan runs again on fresh state.
pub struct Reader<'s> {
    pub(super) sock: &'s mut NlSocket,
    pub(super) stats: &'s mut SessionStats,
    pub(super) generation: Option<u32>,
}

impl Reader<'_> {
    pub(super) fn pin(&mut self) -> Result<()> {
        if self.generation.is_none() {
            self.generation = Some(get_generation(self.sock)?);
        }
        Ok(())
    }
    /// The generation the plan's reads are based on.
    pub fn generation(&mut self) -> Result<u32> {
        self.pin()?;
        Ok(self.generation.unwrap_or_default())
    }
    pub fn tables(&mut self) -> Result<Vec<Table>> {
        self.pin()?;
        dump_tables(self.sock, &mut self.stats.dump_restarts)
    }
    pub fn chains(&mut self, table: &TableRef) -> Result<Vec<Chain>> {
        self.pin()?;
        dump_chains(self.sock, &mut self.stats.dump_restarts, table)
    }
    /// One chain, by name: a single-object request, not a dump of the table's chains.
    pub fn chain(&mut self, chain: &ChainRef) -> Result<Option<Chain>> {
        self.pin()?;
        get_chain(self.sock, chain)
    }
    /// Whether the table exists: a single-object request.
    pub fn table_exists(&mut self, table: &TableRef) -> Result<bool> {
        self.pin()?;
        get_table_exists(self.sock, table)
    }
    /// Rules of one chain, or of the whole table (`chain: None`).
    pub fn rules(&mut self, table: &TableRef, chain: Option<&str>) -> Result<Vec<ListedRule>> {
        self.pin()?;
        dump_rules(self.sock, &mut self.stats.dump_restarts, table, chain)
    }
    /// Rules of a table (or one chain), undecoded.
    pub fn raw_rules(&mut self, table: &TableRef, chain: Option<&str>) -> Result<Vec<RawRule>> {
        self.pin()?;
        dump_rule_reprs(
            self.sock,
            &mut self.stats.dump_restarts,
            table,
            chain,
            RawRule::from_repr,
        )
    }
    /// Where `iptables -I CHAIN n` puts a rule: before the n-th rule (1-based), or at the
    /// end when n is one past the last.
    pub fn position_of_index(&mut self, chain: &ChainRef, n: usize) -> Result<RulePosition> {
        if n == 0 {
            return Err(Error::InvalidInput("rule positions start at 1".into()));
        }
        if n == 1 {
            // Still read, so that a missing chain is reported and the genid is pinned.
            self.chain_must_exist(chain)?;
            return Ok(RulePosition::Head);
        }
        self.chain_must_exist(chain)?;
        let rules = self.rules(&chain.table, Some(&chain.name))?;
        match rules.get(n - 1) {
            Some(r) => Ok(RulePosition::Before(r.handle)),
            None if n == rules.len() + 1 => Ok(RulePosition::Append),
            None => Err(Error::InvalidInput(format!(
                "index of insertion too big: chain {} has {} rules, cannot insert at {n}",
                chain.name,
                rules.len()
            ))),
        }
    }
    /// The handle of the n-th rule (1-based) of a chain.
    pub fn handle_of_index(&mut self, chain: &ChainRef, n: usize) -> Result<u64> {
        self.chain_must_exist(chain)?;
        let rules = self.rules(&chain.table, Some(&chain.name))?;
        n.checked_sub(1)
            .and_then(|i| rules.get(i))
            .map(|r| r.handle)
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "index of rule {n} out of range: chain {} has {} rules",
                    chain.name,
                    rules.len()
                ))
            })
    }
    /// Chains by name and the rules of one chain, in one round trip (that also pins the
    /// generation when nothing was read yet): what an operation on a few known chains needs,
    /// without a dump of the table. A missing chain is `None`; the rules of a missing chain
    /// are empty.
    pub fn chains_and_rules(
        &mut self,
        chains: &[&ChainRef],
        rules_of: Option<&ChainRef>,
    ) -> Result<(Vec<Option<Chain>>, Vec<RawRule>)> {
        let pin = self.generation.is_none();
        let no_attrs = |_: &mut crate::wire::attr::AttrWriter<'_>| {};
        let chain_attrs: Vec<_> = chains
            .iter()
            .map(|c| {
                move |w: &mut crate::wire::attr::AttrWriter<'_>| {
                    w.strz(crate::wire::nftables::NFTA_CHAIN_TABLE, &c.table.name);
                    w.strz(crate::wire::nftables::NFTA_CHAIN_NAME, &c.name);
                }
            })
            .collect();
        let mut gets = Vec::with_capacity(chains.len() + 1);
        if pin {
            gets.push(Request {
                msg: msg::GETGEN,
                family: nfproto::UNSPEC,
                attrs: &no_attrs,
                what: "read generation id",
            });
        }
        for (c, attrs) in chains.iter().zip(&chain_attrs) {
            gets.push(Request {
                msg: msg::GETCHAIN,
                family: c.table.family.nfproto(),
                attrs,
                what: "get chain",
            });
        }
        let rule_attrs = |w: &mut crate::wire::attr::AttrWriter<'_>| {
            if let Some(c) = rules_of {
                w.strz(crate::wire::nftables::NFTA_RULE_TABLE, &c.table.name);
                w.strz(crate::wire::nftables::NFTA_RULE_CHAIN, &c.name);
            }
        };
        let dump = rules_of.map(|c| Request {
            msg: msg::GETRULE,
            family: c.table.family.nfproto(),
            attrs: &rule_attrs,
            what: "list rules",
        });
        let mut reprs = Vec::new();
        let mut parse_error = None;
        let answers = self.sock.pipelined(&gets, dump, |_, payload| {
            let parsed =
                split_nfgenmsg(payload).and_then(|(fam, attrs)| RuleRepr::parse(fam, attrs));
            match parsed {
                Ok(r) => reprs.push(r),
                Err(e) => {
                    parse_error.get_or_insert(e);
                }
            }
            Ok(())
        })?;
        if let Some(e) = parse_error {
            return Err(e.into());
        }
        let mut replies = answers.replies.into_iter();
        if pin {
            let payload = replies.next().unwrap_or_else(|| {
                Err(Error::Netlink {
                    context: "read generation id",
                    source: std::io::Error::other("no answer"),
                })
            })?;
            let (_, attrs) = split_nfgenmsg(&payload)?;
            self.generation = Some(GenRepr::parse(attrs)?.id);
        }
        let mut found = Vec::with_capacity(chains.len());
        for reply in replies {
            found.push(match absent(reply)? {
                Some(payload) => {
                    let (fam, attrs) = split_nfgenmsg(&payload)?;
                    Chain::from_repr(ChainRepr::parse(fam, attrs)?)
                }
                None => None,
            });
        }
        let rules = match (rules_of, answers.dump) {
            (Some(c), Some(Ok(()))) => {
                reprs.retain(|r| r.table == c.table.name && r.chain == c.name);
                with_set_elements(
                    self.sock,
                    &mut self.stats.dump_restarts,
                    &c.table,
                    reprs,
                    RawRule::from_repr,
                )?
            }
            (Some(c), _) => {
                // A commit interrupted the dump: read the chain again the usual way.
                self.stats.dump_restarts += 1;
                self.raw_rules(&c.table, Some(&c.name))?
            }
            (None, _) => Vec::new(),
        };
        Ok((found, rules))
    }
    /// One rule, by handle: a single-object request. `None` when the chain holds no rule
    /// with that handle.
    pub fn rule(&mut self, chain: &ChainRef, handle: u64) -> Result<Option<RawRule>> {
        self.pin()?;
        let reply = absent(self.sock.request_with(
            msg::GETRULE,
            chain.table.family.nfproto(),
            |w| {
                w.strz(crate::wire::nftables::NFTA_RULE_TABLE, &chain.table.name);
                w.strz(crate::wire::nftables::NFTA_RULE_CHAIN, &chain.name);
                w.u64_be(crate::wire::nftables::NFTA_RULE_HANDLE, handle);
            },
            "get rule",
        ))?;
        let Some(payload) = reply else {
            return Ok(None);
        };
        let (fam, attrs) = split_nfgenmsg(&payload)?;
        let repr = RuleRepr::parse(fam, attrs)?;
        let mut rules = with_set_elements(
            self.sock,
            &mut self.stats.dump_restarts,
            &chain.table,
            vec![repr],
            RawRule::from_repr,
        )?;
        Ok(rules.pop())
    }
    fn chain_must_exist(&mut self, chain: &ChainRef) -> Result<()> {
        if self.chain(chain)?.is_none() {
            return Err(Error::NotFound(crate::OpFailure {
                index: 0,
                op: format!("list chain {chain}"),
                errno: libc::ENOENT,
                ext_ack: None,
            }));
        }
        Ok(())
    }
}

impl Session {
    /// A session with the default settings (lock always, waiting; 32 attempts).
    pub fn open() -> Result<Session> {
        SessionBuilder::default().open()
    }
    pub fn builder() -> SessionBuilder {
        SessionBuilder::default()
    }

    /// Whether a guard (a policy) checks this session's transactions.
    pub fn has_guard(&self) -> bool {
        self.enforcement.guard.is_some()
    }

    /// The current ruleset generation id.
    pub fn generation(&mut self) -> Result<u32> {
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
            let (tx, value) = plan(&mut reader)?;
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
            tx.encode(&mut batch)?;
            self.audit(&tx, AuditOutcome::Attempt);
            let guard = match (&self.lock, early_guard) {
                (_, Some(held)) => Some(held),
                (Some(lock), None) => Some(lock.acquire()?),
                (None, None) => None,
            };
            let result = batch.commit(&mut self.sock);
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

    pub fn list_tables(&mut self) -> Result<Vec<Table>> {
        dump_tables(&mut self.sock, &mut self.stats.dump_restarts)
    }
    pub fn list_chains(&mut self, table: &TableRef) -> Result<Vec<Chain>> {
        dump_chains(&mut self.sock, &mut self.stats.dump_restarts, table)
    }
    pub fn list_rules(&mut self, chain: &ChainRef) -> Result<Vec<ListedRule>> {
        dump_rules(
            &mut self.sock,
            &mut self.stats.dump_restarts,
            &chain.table,
            Some(&chain.name),
        )
    }
    pub fn list_table_rules(&mut self, table: &TableRef) -> Result<Vec<ListedRule>> {
        dump_rules(&mut self.sock, &mut self.stats.dump_restarts, table, None)
    }

    /// Rules of a table (or one chain) as the kernel reported them, undecoded.
    pub fn list_raw_rules(
        &mut self,
        table: &TableRef,
        chain: Option<&str>,
    ) -> Result<Vec<RawRule>> {
        dump_rule_reprs(
            &mut self.sock,
            &mut self.stats.dump_restarts,
            table,
            chain,
            RawRule::from_repr,
        )
    }

    /// Zeroes the counters of every rule of a table, or of one chain (`iptables -Z`): a dump
    /// that resets what it reads, in the kernel, rule by rule.
    pub fn reset_counters(&mut self, table: &TableRef, chain: Option<&str>) -> Result<()> {
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
        let result = self.reset_counters_unchecked(table, chain);
        if let Some(a) = &self.enforcement.auditor {
            let outcome = match &result {
                Ok(()) => AuditOutcome::Committed,
                Err(e) => AuditOutcome::Failed(e),
            };
            a.record(1, &mut std::iter::once(what), outcome);
        }
        result
    }

    fn reset_counters_unchecked(&mut self, table: &TableRef, chain: Option<&str>) -> Result<()> {
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
        Ok(())
    }

    /// Runs `read` on a consistent view: its dumps are bracketed by generation reads and the
    /// whole read is repeated if a commit landed in between (up to 64 times, then
    /// [`Error::GenerationConflict`]). Never takes the xtables lock.
    pub fn read<T>(&mut self, mut read: impl FnMut(&mut Reader<'_>) -> Result<T>) -> Result<T> {
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

    /// Ends the session. After a commit that deleted anything, the socket's release would
    /// wait for the kernel's deferred destroy work (an RCU grace period, tens of ms); this
    /// hands the socket to a detached process so that the caller does not wait. The rules
    /// are committed and visible before either way of closing.
    pub fn close_detached(self) -> Result<()> {
        if !self.freed_objects {
            return Ok(());
        }
        crate::sys::close_in_detached_process(self.sock.into_socket()).map_err(|e| Error::Netlink {
            context: "detached close",
            source: e,
        })
    }

    /// What concurrency has cost this session so far.
    pub fn stats(&self) -> SessionStats {
        self.stats
    }

    /// Whether a committed transaction of this session freed kernel objects.
    pub fn freed_objects(&self) -> bool {
        self.freed_objects
    }

    /// The underlying socket, for benchmarks that send hand-built batches beside the API.
    pub fn socket(&mut self) -> &mut NlSocket {
        &mut self.sock
    }
}

pub(super) fn absent<T>(r: Result<T>) -> Result<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.kind() == crate::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn get_chain(sock: &mut NlSocket, chain: &ChainRef) -> Result<Option<Chain>> {
    let reply = absent(sock.request_with(
        msg::GETCHAIN,
        chain.table.family.nfproto(),
        |w| {
            w.strz(crate::wire::nftables::NFTA_CHAIN_TABLE, &chain.table.name);
            w.strz(crate::wire::nftables::NFTA_CHAIN_NAME, &chain.name);
        },
        "get chain",
    ))?;
    let Some(payload) = reply else {
        return Ok(None);
    };
    let (fam, attrs) = split_nfgenmsg(&payload)?;
    Ok(Chain::from_repr(ChainRepr::parse(fam, attrs)?))
}

fn get_table_exists(sock: &mut NlSocket, table: &TableRef) -> Result<bool> {
    let reply = absent(sock.request_with(
        msg::GETTABLE,
        table.family.nfproto(),
        |w| {
            w.strz(crate::wire::nftables::NFTA_TABLE_NAME, &table.name);
        },
        "get table",
    ))?;
    Ok(reply.is_some())
}

fn get_generation(sock: &mut NlSocket) -> Result<u32> {
    let payload = sock.request(msg::GETGEN, nfproto::UNSPEC, "read generation id")?;
    let (_, attrs) = split_nfgenmsg(&payload)?;
    Ok(GenRepr::parse(attrs)?.id)
}

/// Runs a dump, restarting it while concurrent commits interrupt it.
pub(super) fn dump_all<T>(
    sock: &mut NlSocket,
    restarts: &mut u64,
    m: u8,
    family: u8,
    filter: &dyn Fn(&mut crate::wire::attr::AttrWriter<'_>),
    parse: impl Fn(u8, &[u8]) -> Result<Option<T>>,
) -> Result<Vec<T>> {
    for _ in 0..MAX_DUMP_RESTARTS {
        let mut out = Vec::new();
        let done = sock.dump(m, family, filter, |_, payload| {
            let (fam, attrs) = split_nfgenmsg(payload)?;
            if let Some(v) = parse(fam, attrs)? {
                out.push(v);
            }
            Ok(())
        })?;
        if done.is_ok() {
            return Ok(out);
        }
        *restarts += 1;
    }
    Err(Error::GenerationConflict {
        attempts: MAX_DUMP_RESTARTS,
    })
}

fn dump_tables(sock: &mut NlSocket, restarts: &mut u64) -> Result<Vec<Table>> {
    dump_all(
        sock,
        restarts,
        msg::GETTABLE,
        nfproto::UNSPEC,
        &|_| {},
        |fam, attrs| Ok(Table::from_repr(TableRepr::parse(fam, attrs)?)),
    )
}

fn dump_chains(sock: &mut NlSocket, restarts: &mut u64, table: &TableRef) -> Result<Vec<Chain>> {
    let name = table.name.clone();
    dump_all(
        sock,
        restarts,
        msg::GETCHAIN,
        table.family.nfproto(),
        &|w| {
            w.strz(crate::wire::nftables::NFTA_CHAIN_TABLE, &name);
        },
        |fam, attrs| {
            let c = ChainRepr::parse(fam, attrs)?;
            // The kernel filters by family; the table filter is applied here as well, since
            // older kernels ignore it for dumps.
            Ok(if c.table == name {
                Chain::from_repr(c)
            } else {
                None
            })
        },
    )
}

fn dump_rules(
    sock: &mut NlSocket,
    restarts: &mut u64,
    table: &TableRef,
    chain: Option<&str>,
) -> Result<Vec<ListedRule>> {
    dump_rule_reprs(sock, restarts, table, chain, ListedRule::from_repr)
}

/// Above this many chains and estimated rules a table's rules are dumped chain by chain:
/// every continuation of a whole-table rule dump walks the table again from its start in
/// the kernel, while one dump per chain stays linear but pays a round trip per chain.
/// Measured crossover: 10,000 rules 0.14 s whole vs 0.19 s per chain; 30,000 rules 0.93 s
/// vs 0.55 s (10,000 chains). Callers bracket
/// multi-dump reads with generation checks ([`Session::read`], [`Session::transact`]).
const PER_CHAIN_DUMP_CHAINS: usize = 64;
const PER_CHAIN_DUMP_RULES: u64 = 15_000;

fn dump_rule_reprs<T>(
    sock: &mut NlSocket,
    restarts: &mut u64,
    table: &TableRef,
    chain: Option<&str>,
    convert: impl Fn(RuleRepr, &SetElements) -> Option<T>,
) -> Result<Vec<T>> {
    if chain.is_none() {
        let chains = dump_chains(sock, restarts, table)?;
        let estimated: u64 = chains.iter().map(|c| u64::from(c.use_count)).sum();
        if chains.len() > PER_CHAIN_DUMP_CHAINS && estimated > PER_CHAIN_DUMP_RULES {
            let mut out = Vec::new();
            for c in &chains {
                out.extend(dump_rule_reprs_once(
                    sock,
                    restarts,
                    table,
                    Some(&c.chain.name),
                    &convert,
                )?);
            }
            return Ok(out);
        }
    }
    dump_rule_reprs_once(sock, restarts, table, chain, convert)
}

fn dump_rule_reprs_once<T>(
    sock: &mut NlSocket,
    restarts: &mut u64,
    table: &TableRef,
    chain: Option<&str>,
    convert: impl Fn(RuleRepr, &SetElements) -> Option<T>,
) -> Result<Vec<T>> {
    let name = table.name.clone();
    let chain_name = chain.map(str::to_owned);
    let reprs = dump_all(
        sock,
        restarts,
        msg::GETRULE,
        table.family.nfproto(),
        &|w| {
            w.strz(crate::wire::nftables::NFTA_RULE_TABLE, &name);
            if let Some(c) = &chain_name {
                w.strz(crate::wire::nftables::NFTA_RULE_CHAIN, c);
            }
        },
        |fam, attrs| {
            let r = RuleRepr::parse(fam, attrs)?;
            if r.table != name || chain_name.as_ref().is_some_and(|c| *c != r.chain) {
                return Ok(None);
            }
            Ok(Some(r))
        },
    )?;
    with_set_elements(sock, restarts, table, reprs, convert)
}

/// Converts rule reprs, with the elements of the anonymous sets they look up, so that they
/// decode in full.
fn with_set_elements<T>(
    sock: &mut NlSocket,
    restarts: &mut u64,
    table: &TableRef,
    reprs: Vec<RuleRepr>,
    convert: impl Fn(RuleRepr, &SetElements) -> Option<T>,
) -> Result<Vec<T>> {
    let mut sets = SetElements::new();
    for r in &reprs {
        for e in &r.exprs {
            if let crate::wire::expr::Expr::Lookup(l) = e
                && l.set.starts_with("__set")
                && !sets.contains_key(&l.set)
            {
                let elements = dump_set_elements(sock, restarts, table, &l.set)?;
                sets.insert(l.set.clone(), elements);
            }
        }
    }
    Ok(reprs
        .into_iter()
        .filter_map(|r| convert(r, &sets))
        .collect())
}

/// Elements of the named sets, by set name.
pub type SetElements = std::collections::HashMap<String, Vec<crate::wire::nftables::SetElem>>;

fn dump_set_elements(
    sock: &mut NlSocket,
    restarts: &mut u64,
    table: &TableRef,
    set: &str,
) -> Result<Vec<crate::wire::nftables::SetElem>> {
    let lists = dump_all(
        sock,
        restarts,
        msg::GETSETELEM,
        table.family.nfproto(),
        &|w| {
            w.strz(crate::wire::nftables::NFTA_SET_ELEM_LIST_TABLE, &table.name);
            w.strz(crate::wire::nftables::NFTA_SET_ELEM_LIST_SET, set);
        },
        |_, attrs| Ok(Some(crate::wire::nftables::SetElemsRepr::parse(attrs)?)),
    )?;
    Ok(lists.into_iter().flat_map(|l| l.elements).collect())
}

/// Expressions every nf_tables kernel has (nf_tables' core); any other one may be a module
/// the kernel lacks.
const CORE_EXPRESSIONS: &[&str] = &[
    "payload",
    "meta",
    "cmp",
    "range",
    "bitwise",
    "immediate",
    "lookup",
    "counter",
];

/// nf_tables answers ENOENT to a rule for its chain, for the chain it jumps to, and for an
/// expression type or x_tables extension the kernel lacks (no module to load). When the
/// rule's chain exists, the error names the missing jump target, or else says that the
/// kernel lacks what the rule needs, naming it.
fn missing_extension(sock: &mut NlSocket, tx: &Transaction, e: Error) -> Error {
    let Some(f) = e.op_failure().filter(|f| f.errno == libc::ENOENT) else {
        return e;
    };
    let exprs = match tx.ops().get(f.index) {
        Some(
            super::Op::AddEncodedRule { chain, rule, .. }
            | super::Op::ReplaceEncodedRule { chain, rule, .. },
        ) => (chain, rule.exprs.clone()),
        Some(
            super::Op::AddRule { chain, rule, .. } | super::Op::ReplaceRule { chain, rule, .. },
        ) => match super::codec::encode_native(rule, chain.table.family) {
            Ok(n) => (chain, n.exprs),
            Err(_) => return e,
        },
        _ => return e,
    };
    let (chain, exprs) = exprs;
    if !matches!(get_chain(sock, chain), Ok(Some(_))) {
        return e;
    }
    // The chain is there: the jump target may not be.
    for x in &exprs {
        if let crate::wire::expr::Expr::Immediate(i) = x
            && let crate::wire::expr::ImmediateData::Verdict(
                crate::wire::expr::Verdict::Jump(target) | crate::wire::expr::Verdict::Goto(target),
            ) = &i.data
            && matches!(
                get_chain(sock, &chain.table.chain(target.clone())),
                Ok(None)
            )
        {
            let mut f = f.clone();
            f.op = format!("{}, whose jump target chain {target} does not exist", f.op);
            return Error::NotFound(f);
        }
    }
    let needs: Vec<String> = exprs
        .iter()
        .filter_map(|x| match x {
            crate::wire::expr::Expr::Match(m) => {
                Some(format!("x_tables match {} rev {}", m.name, m.rev))
            }
            crate::wire::expr::Expr::Target(t) => {
                Some(format!("x_tables target {} rev {}", t.name, t.rev))
            }
            other if !CORE_EXPRESSIONS.contains(&other.name()) => {
                Some(format!("expression {}", other.name()))
            }
            _ => None,
        })
        .collect();
    if needs.is_empty() {
        return e;
    }
    let mut f = f.clone();
    f.op = format!("{}, which needs {}", f.op, needs.join(", "));
    Error::Unsupported(f)
}
