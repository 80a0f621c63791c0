//! A view of the ruleset as the changes planned so far in a transaction leave it, so that
//! each operation of a transaction plans on what the ones before it did (a forward added to
//! a chain created by the set-up before it, a teardown of a chain another operation
//! referenced...). Rules added by the transaction get provisional ids; a later change to
//! such a rule rewrites the pending addition instead of naming a rule the kernel has not
//! got yet.

use std::collections::BTreeMap;

use crate::error::Result;
use crate::ipt::{IptRule, tables};
use crate::model::Family;
use crate::seam::{ChainInfo, Change, Lookup, RuleEntry, TableAccess};

/// Provisional ids of rules added in this transaction: above any kernel handle in practice
/// (handles count up from 1 per table) and any x_tables rule index.
const PENDING: u64 = 1 << 62;

struct Pending {
    change: Change,
    /// The operation that planned it.
    origin: usize,
    /// For an added rule, its provisional id.
    id: Option<u64>,
}

pub(crate) struct Overlay<'a> {
    inner: &'a mut dyn TableAccess,
    pending: Vec<Pending>,
    next_id: u64,
}

fn table_chain(c: &Change) -> (&str, &str) {
    match c {
        Change::CreateChain { table, chain }
        | Change::FlushChain { table, chain }
        | Change::DeleteChain { table, chain }
        | Change::InsertRule { table, chain, .. }
        | Change::AppendRule { table, chain, .. }
        | Change::ReplaceRule { table, chain, .. }
        | Change::DeleteRule { table, chain, .. }
        | Change::DeleteGuessedJump { table, chain, .. } => (table, chain),
    }
}

fn added_rule(c: &Change) -> Option<&IptRule> {
    match c {
        Change::InsertRule { rule, .. } | Change::AppendRule { rule, .. } => Some(rule),
        _ => None,
    }
}

impl<'a> Overlay<'a> {
    pub(crate) fn new(inner: &'a mut dyn TableAccess) -> Self {
        Overlay {
            inner,
            pending: Vec::new(),
            next_id: PENDING,
        }
    }

    /// Adds an operation's changes, folding changes to rules added earlier in the
    /// transaction into those additions.
    pub(crate) fn push(&mut self, origin: usize, changes: &[Change]) {
        for c in changes {
            match c {
                Change::DeleteRule { id, .. } if *id >= PENDING => {
                    self.pending.retain(|p| p.id != Some(*id));
                }
                Change::ReplaceRule { id, rule, .. } if *id >= PENDING => {
                    if let Some(p) = self.pending.iter_mut().find(|p| p.id == Some(*id)) {
                        match &mut p.change {
                            Change::InsertRule { rule: r, .. }
                            | Change::AppendRule { rule: r, .. } => {
                                *r = rule.clone();
                            }
                            _ => {}
                        }
                    }
                }
                _ => {
                    let id = added_rule(c).map(|_| {
                        self.next_id += 1;
                        self.next_id
                    });
                    self.pending.push(Pending {
                        change: c.clone(),
                        origin,
                        id,
                    });
                }
            }
        }
    }

    /// The transaction's changes, and for each the operation it comes from.
    pub(crate) fn into_changes(self) -> (Vec<Change>, Vec<usize>) {
        self.pending
            .into_iter()
            .map(|p| (p.change, p.origin))
            .unzip()
    }

    fn touching<'s>(&'s self, table: &'s str, chain: &'s str) -> impl Iterator<Item = &'s Pending> {
        self.pending
            .iter()
            .filter(move |p| table_chain(&p.change) == (table, chain))
    }

    /// Whether the chain exists after the pending changes; `None` when they say nothing.
    fn exists(&self, table: &str, chain: &str) -> Option<bool> {
        self.touching(table, chain)
            .filter_map(|p| match p.change {
                Change::CreateChain { .. } => Some(true),
                Change::DeleteChain { .. } => Some(false),
                _ => None,
            })
            .last()
    }

    /// Jumps to `target` that the pending changes add (+) or delete (-).
    fn reference_delta(&self, table: &str, target: &str) -> i64 {
        self.pending
            .iter()
            .filter(|p| table_chain(&p.change).0 == table)
            .map(|p| match &p.change {
                Change::InsertRule { rule, .. } | Change::AppendRule { rule, .. }
                    if rule.jump_target() == Some(target) =>
                {
                    1
                }
                Change::DeleteRule { rule, .. } if rule.jump_target() == Some(target) => -1,
                Change::DeleteGuessedJump { target: t, .. } if t == target => -1,
                _ => 0,
            })
            .sum()
    }

    /// The chain's rules after the pending changes, from what the kernel holds.
    fn apply_rules(&self, table: &str, chain: &str, mut rules: Vec<RuleEntry>) -> Vec<RuleEntry> {
        for p in self.touching(table, chain) {
            match &p.change {
                Change::CreateChain { .. } => {}
                Change::FlushChain { .. } | Change::DeleteChain { .. } => rules.clear(),
                Change::InsertRule { rule, .. } => rules.insert(
                    0,
                    RuleEntry {
                        id: p.id.unwrap_or_default(),
                        rule: rule.clone(),
                    },
                ),
                Change::AppendRule { rule, .. } => rules.push(RuleEntry {
                    id: p.id.unwrap_or_default(),
                    rule: rule.clone(),
                }),
                Change::ReplaceRule { id, rule, .. } => {
                    if let Some(r) = rules.iter_mut().find(|r| r.id == *id) {
                        r.rule = rule.clone();
                    }
                }
                Change::DeleteRule { id, .. } | Change::DeleteGuessedJump { id, .. } => {
                    rules.retain(|r| r.id != *id)
                }
            }
        }
        rules
    }

    /// Whether the kernel's copy of the chain still matters (it was not deleted and made
    /// again by this transaction).
    fn kernel_copy_counts(&self, table: &str, chain: &str) -> bool {
        !self
            .touching(table, chain)
            .any(|p| matches!(p.change, Change::DeleteChain { .. }))
    }
}

impl TableAccess for Overlay<'_> {
    fn family(&self) -> Family {
        self.inner.family()
    }

    fn lookup(&mut self, table: &str, chains: &[&str], rules_of: Option<&str>) -> Result<Lookup> {
        let inner = self.inner.lookup(table, chains, rules_of)?;
        let rules = match rules_of {
            Some(c) => {
                let base = if self.kernel_copy_counts(table, c) {
                    inner.rules
                } else {
                    Vec::new()
                };
                self.apply_rules(table, c, base)
            }
            None => Vec::new(),
        };
        let chains = chains
            .iter()
            .zip(inner.chains)
            .map(|(name, found)| {
                let exists = self.exists(table, name).unwrap_or(found.is_some());
                if !exists {
                    return None;
                }
                let kernel = found.filter(|_| self.kernel_copy_counts(table, name));
                let references = match &kernel {
                    Some(k) => k.references,
                    None => Some(0),
                }
                .map(|r| (i64::from(r) + self.reference_delta(table, name)).max(0) as u32);
                Some(ChainInfo {
                    name: name.to_string(),
                    base: kernel
                        .as_ref()
                        .map_or(tables::builtin(table, name).is_some(), |k| k.base),
                    references,
                    // A guess about the kernel's chain says nothing once this transaction
                    // touched its references.
                    jump_hint: kernel
                        .as_ref()
                        .and_then(|k| k.jump_hint)
                        .filter(|_| self.reference_delta(table, name) == 0),
                })
            })
            .collect();
        Ok(Lookup { chains, rules })
    }

    fn rule(&mut self, table: &str, chain: &str, id: u64) -> Result<Option<RuleEntry>> {
        let base = match self.inner.rule(table, chain, id)? {
            Some(r) if self.kernel_copy_counts(table, chain) => vec![r],
            _ => Vec::new(),
        };
        let pending_ids = self.pending.iter().filter_map(|p| p.id).any(|p| p == id);
        if base.is_empty() && !pending_ids {
            return Ok(None);
        }
        // Pending changes to it (or its pending addition) decide what it is now.
        let rules = if pending_ids {
            self.apply_rules(table, chain, Vec::new())
        } else {
            self.apply_rules(table, chain, base)
        };
        Ok(rules.into_iter().find(|r| r.id == id))
    }

    fn chains(&mut self, table: &str) -> Result<Vec<ChainInfo>> {
        let mut by_name: BTreeMap<String, ChainInfo> = self
            .inner
            .chains(table)?
            .into_iter()
            .map(|c| (c.name.clone(), c))
            .collect();
        for p in self
            .pending
            .iter()
            .filter(|p| table_chain(&p.change).0 == table)
        {
            match &p.change {
                Change::CreateChain { chain, .. } => {
                    by_name.entry(chain.clone()).or_insert_with(|| ChainInfo {
                        name: chain.clone(),
                        base: tables::builtin(table, chain).is_some(),
                        references: None,
                        jump_hint: None,
                    });
                }
                Change::DeleteChain { chain, .. } => {
                    by_name.remove(chain);
                }
                _ => {}
            }
        }
        Ok(by_name.into_values().collect())
    }

    fn all_rules(&mut self, table: &str) -> Result<Vec<(String, RuleEntry)>> {
        let mut by_chain: BTreeMap<String, Vec<RuleEntry>> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        for (c, r) in self.inner.all_rules(table)? {
            if !by_chain.contains_key(&c) {
                order.push(c.clone());
            }
            by_chain.entry(c).or_default().push(r);
        }
        for p in &self.pending {
            let (t, c) = table_chain(&p.change);
            if t == table && !by_chain.contains_key(c) {
                order.push(c.to_string());
                by_chain.insert(c.to_string(), Vec::new());
            }
        }
        let mut out = Vec::new();
        for c in order {
            let kernel = by_chain.remove(&c).unwrap_or_default();
            let base = if self.kernel_copy_counts(table, &c) {
                kernel
            } else {
                Vec::new()
            };
            for r in self.apply_rules(table, &c, base) {
                out.push((c.clone(), r));
            }
        }
        Ok(out)
    }

    fn exhaustive(&self) -> bool {
        self.inner.exhaustive()
    }
}
