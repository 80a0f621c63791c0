//! A long-lived handle on the map layout ([`MapLayout`]): it plans each operation from the
//! elements it learnt by earlier ones, at the generation they were true, and pins its batch
//! to that generation, so that an operation in the steady state (no other writer committed
//! since the handle's last operation) is one round trip: the commit.
//!
//! - **Adds** of a key the handle does not know are sent as exclusive creates
//!   (`NLM_F_EXCL`): the kernel refuses a key that is taken, whoever holds it; the handle
//!   then plans the operation again from reads (which makes a repeated add `Unchanged`, a
//!   changed one a replacement, another reservation's key an error).
//! - **Removes** and teardowns delete only elements the plan knows to be the reservation's,
//!   at the pinned generation: a key the handle does not know is read first (a point read, in
//!   the same round trip as any others), since the kernel cannot check whose element a
//!   `DELSETELEM` deletes.
//! - **Any change since** (another process's element, an `iptables-nft` command, any commit
//!   in the namespace) moves the generation: the kernel refuses the batch with ERESTART and
//!   the operation is planned again from reads, as a plan without a cache is. A cached plan
//!   that fails in any other way (a refused create, an error of the plan) is also planned
//!   again from reads before anything is reported, so the answer is always the one reads
//!   give; a failed batch changed nothing.
//!
//! Cost, in round trips: 1 in the steady state; 2 for the first operation of a handle, and
//! for a remove of a key the handle never saw; 3 after another writer's commit (the refused
//! batch, the reads, the commit), or for an add of a key that exists already.

use super::plan::{Cache, Learnt, plan};
use super::{MapOp, result};
use crate::error::{Error, ErrorKind, Result};
use crate::model::Family;
use crate::nathost::{OperationResult, Report};
use crate::nft::{Committed, Session, Transaction};

/// What a handle's operations cost, for operators and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MapLayoutStats {
    /// Transactions planned from the cache alone and committed as planned.
    pub from_cache: u64,
    /// Transactions planned from the cache that had to be planned again from reads
    /// (the generation moved, a presumed-absent key existed, or the plan failed).
    pub replanned: u64,
    /// Transactions planned from reads because the handle held no cache (its first, or
    /// the one after a failure).
    pub from_reads: u64,
}

/// The map layout of one family, through one [`Session`] that the handle owns (a cache
/// belongs to the namespace its session's socket is in).
pub struct MapLayout {
    session: Session,
    family: Family,
    cache: Option<Cache>,
    stats: MapLayoutStats,
}

impl MapLayout {
    /// A handle with nothing cached: its first operation reads.
    pub fn new(session: Session, family: Family) -> MapLayout {
        MapLayout {
            session,
            family,
            cache: None,
            stats: MapLayoutStats::default(),
        }
    }

    /// The family (ip or ip6) the handle's layout is in.
    pub fn family(&self) -> Family {
        self.family
    }

    /// The session, for other transactions and reads (a commit through it moves the
    /// generation, so the next operation of the handle plans from reads).
    pub fn session(&mut self) -> &mut Session {
        &mut self.session
    }

    /// Gives the session back, dropping the cache.
    pub fn into_session(self) -> Session {
        self.session
    }

    /// Drops what the handle has cached: its next operation reads.
    pub fn forget(&mut self) {
        self.cache = None;
    }

    /// The generation the cache is valid at, if the handle holds one.
    pub fn cached_generation(&self) -> Option<u32> {
        self.cache.as_ref().map(|c| c.generation)
    }

    /// What the handle's cache saved and cost so far.
    pub fn stats(&self) -> MapLayoutStats {
        self.stats
    }

    /// Runs one operation as its own transaction.
    pub fn run(&mut self, op: MapOp) -> Result<Report> {
        let (mut results, attempts) = self.transact(std::slice::from_ref(&op))?;
        let r = results
            .pop()
            .ok_or_else(|| Error::InvalidInput("no operation".into()))?;
        Ok(Report {
            outcome: r.outcome,
            changes: r.changes,
            attempts,
            removed_chains: r.removed_chains,
        })
    }

    /// [`MapLayout::transact`] of NAT-host [`crate::nathost::Operation`]s (a JSON document's).
    pub fn transact_operations(
        &mut self,
        ops: &[crate::nathost::Operation],
    ) -> Result<(Vec<OperationResult>, u32)> {
        let map_ops = ops
            .iter()
            .enumerate()
            .map(|(i, o)| {
                MapOp::from_operation(o)
                    .map_err(|e| e.context(format!("operation {i} ({})", o.kind())))
            })
            .collect::<Result<Vec<_>>>()?;
        self.transact(&map_ops)
    }

    /// Plans and commits the operations as one atomic transaction: from the cache when the
    /// handle holds one, else (and whenever that fails) from reads.
    pub fn transact(&mut self, ops: &[MapOp]) -> Result<(Vec<OperationResult>, u32)> {
        for (i, op) in ops.iter().enumerate() {
            op.validate(self.family)
                .map_err(|e| e.context(format!("operation {i} ({})", op.kind())))?;
        }
        let mut extra_attempts = 0;
        let started_from_cache = self.cache.is_some();
        if started_from_cache {
            match self.attempt(ops, true) {
                Ok(Some(c)) => return Ok(self.finish(c, 0, true)),
                Ok(None) => {}
                Err(e) if e.kind() == ErrorKind::PolicyDenied => {
                    self.cache = None;
                    return Err(e);
                }
                Err(_) => {}
            }
            self.cache = None;
            extra_attempts = 1;
        }
        if started_from_cache {
            self.stats.replanned += 1;
        } else {
            self.stats.from_reads += 1;
        }
        match self.attempt(ops, false) {
            Ok(Some(c)) => Ok(self.finish(c, extra_attempts, false)),
            Ok(None) => Err(Error::InvalidInput(
                "a plan from reads was judged stale".into(),
            )),
            Err(e) => {
                self.cache = None;
                Err(e)
            }
        }
    }

    /// One planned and committed transaction. `Ok(None)`: a plan from the cache found
    /// nothing to do, but the generation had moved (so the cache may be wrong).
    fn attempt(&mut self, ops: &[MapOp], from_cache: bool) -> Result<Option<Committed<Learnt>>> {
        let MapLayout {
            session,
            family,
            cache,
            ..
        } = self;
        let family = *family;
        let base = if from_cache { cache.as_ref() } else { None };
        let mut first = true;
        let mut stale = false;
        let c = session.transact(|r| {
            // A re-plan after the kernel refused a pinned batch starts from reads.
            let base = base.filter(|_| std::mem::take(&mut first));
            let (tx, learnt) = plan(r, family, ops, base)?;
            if let Some(b) = base
                && tx.is_empty()
                && r.current_generation()? != b.generation
            {
                stale = true;
                return Ok((Transaction::new(), learnt));
            }
            Ok((tx, learnt))
        })?;
        Ok((!stale).then_some(c))
    }

    /// Folds what a committed plan learnt into the cache.
    fn finish(
        &mut self,
        c: Committed<Learnt>,
        extra_attempts: u32,
        started_from_cache: bool,
    ) -> (Vec<OperationResult>, u32) {
        let Committed {
            value: learnt,
            attempts,
            ops,
            ..
        } = c;
        let from_cache = learnt.cached && attempts == 1;
        if from_cache {
            self.stats.from_cache += 1;
        } else if started_from_cache {
            // The kernel refused the pinned batch; the session planned it again from reads.
            self.stats.replanned += 1;
        }
        let next = |g: u32| if ops == 0 { g } else { next_generation(g) };
        self.cache = match (learnt.generation, learnt.layout) {
            (Some(g), true) => {
                let mut cache = if from_cache {
                    self.cache.take().unwrap_or_default()
                } else {
                    Cache::default()
                };
                cache.generation = next(g);
                if learnt.complete {
                    cache.elements = learnt.elements;
                    cache.complete = true;
                } else {
                    cache.elements.extend(learnt.elements);
                }
                Some(cache)
            }
            _ => None,
        };
        (
            learnt.outcomes.into_iter().map(result).collect(),
            attempts + extra_attempts,
        )
    }
}

/// The generation after a commit pinned to `g`: nf_tables holds its commit mutex from the
/// batch's generation check to the end of the commit, and the commit adds one to the
/// generation, skipping 0 (a genid attribute of 0 means "do not check"). If another commit
/// lands before the handle's next batch, that batch is refused and planned again, so a wrong
/// guess would cost a round trip, never a wrong plan (tests/nathost_map.rs checks that the
/// guess holds: one round trip per operation in the steady state).
pub(super) fn next_generation(g: u32) -> u32 {
    g.wrapping_add(1).max(1)
}
