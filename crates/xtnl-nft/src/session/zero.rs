//! `-Z CHAIN N` on nf_tables: one rule replaced by itself, committed only when it is that,
//! and judged and recorded as zeroing counters (the guard's `check_zero`), as on x_tables.

use super::*;
use crate::Op;
use crate::wire::expr::{Counter, Expr};

impl Session {
    /// Commits what `plan` plans (as [`Session::transact`] does, with its retries) judged and
    /// recorded as zeroing the counters of `table`'s `chain` (the guard's
    /// [`Guard::check_zero`], one `zero counters` audit line per outcome) instead of as the
    /// operations it holds, and only if those are one rule of that chain replaced by itself
    /// ([`Reader::replaces_rule_by_itself`], in the generation the commit carries). Anything
    /// else fails with [`Error::GenerationConflict`]: the rule changed since the caller looked.
    ///
    /// This is how iptables-nft zeroes one rule's counters (`-Z CHAIN N`).
    ///
    /// # Errors
    /// The guard's refusal, the conflict above, or what [`Session::transact`] returns.
    pub fn zero_by_replacing<T>(
        &mut self,
        table: &TableRef,
        chain: &str,
        mut plan: impl FnMut(&mut Reader<'_>) -> Result<(Transaction, T)>,
    ) -> Result<Committed<T>> {
        self.zeroing(table, Some(chain), |s| {
            s.transact(|r| {
                let (tx, value) = plan(r)?;
                if !r.replaces_rule_by_itself(table, &tx)?
                    || !matches!(tx.ops(), [Op::ReplaceEncodedRule { chain: c, .. }] if c.name == chain)
                {
                    return Err(Error::GenerationConflict { attempts: 1 });
                }
                Ok((tx, value))
            })
        })
    }
}

impl Reader<'_> {
    /// Whether `tx` is one rule of `table` replaced by itself: one replacement, by handle,
    /// whose expressions and userdata are the kernel's rule's (read through this reader, so
    /// in the generation a commit carries) apart from the values of its counters, with no
    /// set of its own.
    ///
    /// # Errors
    /// The kernel's, reading the chain's rules.
    pub fn replaces_rule_by_itself(&mut self, table: &TableRef, tx: &Transaction) -> Result<bool> {
        let [
            Op::ReplaceEncodedRule {
                chain,
                handle,
                rule,
            },
        ] = tx.ops()
        else {
            return Ok(false);
        };
        if chain.table != *table || !rule.sets.is_empty() {
            return Ok(false);
        }
        let zeroed = |exprs: &[Expr]| -> Vec<Expr> {
            exprs
                .iter()
                .map(|e| match e {
                    Expr::Counter(_) => Expr::Counter(Counter::default()),
                    e => e.clone(),
                })
                .collect()
        };
        let kernel = self.raw_rules(table, Some(&chain.name))?;
        Ok(kernel.iter().any(|k| {
            k.handle == *handle
                && k.sets.is_empty()
                && k.userdata == rule.userdata
                && zeroed(&k.exprs) == zeroed(&rule.exprs)
        }))
    }
}
