//! A view of the ruleset as the changes planned so far in a transaction leave it, so that
//! each operation of a transaction plans on what the ones before it did (a forward added to
//! a chain created by the set-up before it, a teardown of a chain another operation
//! referenced...). Rules added by the transaction get provisional ids; a later change to
//! such a rule rewrites the pending addition instead of naming a rule the kernel has not
//! got yet.
//!
//! Cost: each operation's reads are answered from what this plan has already read (one
//! plan reads one generation; a generation change runs the plan again from scratch, with a
//! new overlay), and each chain read is kept up to date as changes are pushed, with its rules
//! indexed: a transaction of N operations into a chain reads the chain once and plans in
//! time linear in N and the chain's size (a read and a copy per operation made `apply` of
//! 10,000 `ensure_rule` take minutes).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::Hasher;

use crate::error::Result;
use crate::ipt::{IptRule, tables};
use crate::model::Family;
use crate::seam::{ChainInfo, Change, Edit, Lookup, RuleEntry, RuleRef, TableAccess};

/// Provisional ids of rules added in this transaction: above any kernel handle in practice
/// (handles count up from 1 per table) and any x_tables rule index.
const PENDING: u64 = 1 << 62;

struct Pending {
    change: Change,
    /// The operation that planned it.
    origin: usize,
    /// For an added rule, its provisional id.
    id: Option<u64>,
    /// A later operation deleted this pending addition: it is not sent.
    removed: bool,
}

/// (table, chain).
type Key = (String, String);

fn key(table: &str, chain: &str) -> Key {
    (table.to_string(), chain.to_string())
}

/// A hash of the rule with its counters left out, consistent with [`IptRule::same_rule`]
/// (equal rules print the same `Debug` text): an index key, each hit checked with
/// `same_rule`.
fn rule_hash(r: &IptRule) -> u64 {
    struct Feed(std::collections::hash_map::DefaultHasher);
    impl std::fmt::Write for Feed {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.write(s.as_bytes());
            Ok(())
        }
    }
    let mut h = Feed(std::collections::hash_map::DefaultHasher::new());
    let _ = std::fmt::Write::write_fmt(
        &mut h,
        format_args!(
            "{:?}",
            (
                &r.src,
                &r.dst,
                &r.in_iface,
                &r.out_iface,
                &r.proto,
                &r.target,
                &r.matches
            )
        ),
    );
    h.0.finish()
}

/// A chain's rules as the pending changes leave them, in order, indexed by id and by rule.
#[derive(Default)]
struct ChainView {
    rules: BTreeMap<i64, RuleEntry>,
    place: HashMap<u64, i64>,
    by_rule: HashMap<u64, Vec<u64>>,
    lo: i64,
    hi: i64,
}

impl ChainView {
    fn new(base: Vec<RuleEntry>) -> ChainView {
        let mut v = ChainView::default();
        for e in base {
            v.add(false, e);
        }
        v
    }

    fn add(&mut self, at_head: bool, e: RuleEntry) {
        let at = if self.rules.is_empty() {
            self.lo = 0;
            self.hi = 0;
            0
        } else if at_head {
            self.lo -= 1;
            self.lo
        } else {
            self.hi += 1;
            self.hi
        };
        self.place.insert(e.id, at);
        self.by_rule
            .entry(rule_hash(&e.rule))
            .or_default()
            .push(e.id);
        self.rules.insert(at, e);
    }

    fn unindex(&mut self, id: u64, rule: &IptRule) {
        let h = rule_hash(rule);
        if let Some(ids) = self.by_rule.get_mut(&h) {
            ids.retain(|i| *i != id);
            if ids.is_empty() {
                self.by_rule.remove(&h);
            }
        }
    }

    fn remove(&mut self, id: u64) {
        if let Some(at) = self.place.remove(&id)
            && let Some(e) = self.rules.remove(&at)
        {
            self.unindex(id, &e.rule);
        }
    }

    fn replace(&mut self, id: u64, rule: &IptRule) {
        let Some(at) = self.place.get(&id).copied() else {
            return;
        };
        let old = self.rules.get(&at).map(|e| e.rule.clone());
        if let Some(old) = old {
            self.unindex(id, &old);
        }
        if let Some(e) = self.rules.get_mut(&at) {
            e.rule = rule.clone();
        }
        self.by_rule.entry(rule_hash(rule)).or_default().push(id);
    }

    fn clear(&mut self) {
        *self = ChainView::default();
    }

    /// Applies one pending change to this chain (`id`: an added rule's provisional id).
    fn apply(&mut self, change: &Change, id: Option<u64>) {
        match &change.edit {
            Edit::Flush(_) | Edit::DeleteChain(_) => self.clear(),
            Edit::Insert { rule, .. } | Edit::Append { rule, .. } => {
                let at_head = matches!(change.edit, Edit::Insert { .. });
                let e = RuleEntry {
                    id: id.unwrap_or_default(),
                    rule: rule.clone(),
                };
                self.add(at_head, e);
            }
            Edit::Replace {
                at: RuleRef::Id { id, .. },
                rule,
                ..
            } => self.replace(*id, rule),
            Edit::Delete {
                at: RuleRef::Id { id, .. },
                ..
            }
            | Edit::DeleteGuessedJump { id, .. } => self.remove(*id),
            // A chain created; nothing else is planned (`Change::plannable`).
            _ => {}
        }
    }

    fn get(&self, id: u64) -> Option<&RuleEntry> {
        self.place.get(&id).and_then(|at| self.rules.get(at))
    }

    /// The first rule in chain order that is `rule` (counters aside).
    fn find(&self, rule: &IptRule) -> Option<&RuleEntry> {
        self.by_rule
            .get(&rule_hash(rule))?
            .iter()
            .filter_map(|id| self.place.get(id).map(|at| (*at, id)))
            .filter_map(|(at, _)| self.rules.get(&at).map(|e| (at, e)))
            .filter(|(_, e)| e.rule.same_rule(rule))
            .min_by_key(|(at, _)| *at)
            .map(|(_, e)| e)
    }

    fn to_vec(&self) -> Vec<RuleEntry> {
        self.rules.values().cloned().collect()
    }
}

/// What the plan read of the kernel's ruleset (one generation), kept for the next reads.
#[derive(Default)]
struct Read {
    chains: HashMap<Key, Option<ChainInfo>>,
    rules: HashMap<Key, Vec<RuleEntry>>,
    tables: HashMap<String, Vec<ChainInfo>>,
    all_rules: HashMap<String, Vec<(String, RuleEntry)>>,
}

pub(crate) struct Overlay<'a> {
    inner: &'a mut dyn TableAccess,
    pending: Vec<Pending>,
    next_id: u64,
    /// Pending additions by provisional id: their index in `pending`.
    by_id: HashMap<u64, usize>,
    /// The pending changes of each chain, by index in `pending`, in order.
    touching: HashMap<Key, Vec<usize>>,
    /// Whether each chain exists after the pending changes, where they say.
    exists: HashMap<Key, bool>,
    /// Chains a pending change deletes (the kernel's copy no longer counts).
    deleted: HashSet<Key>,
    /// Jumps to each (table, target) that the pending changes add (+) or delete (-).
    ref_delta: HashMap<Key, i64>,
    /// The chains read so far, as the pending changes leave them.
    views: HashMap<Key, ChainView>,
    read: Read,
}

/// The table and chain of a change (every change a plan makes is to one chain).
fn table_chain(c: &Change) -> (&str, &str) {
    (&c.table, c.chain().unwrap_or_default())
}

fn added_rule(c: &Change) -> Option<&IptRule> {
    match &c.edit {
        Edit::Insert { rule, .. } | Edit::Append { rule, .. } => Some(rule),
        _ => None,
    }
}

/// The jump a change adds (+1) or deletes (-1), as (target, delta).
fn jump_delta(c: &Change) -> Option<(&str, i64)> {
    match &c.edit {
        Edit::Insert { rule, .. } | Edit::Append { rule, .. } => rule.jump_target().map(|t| (t, 1)),
        Edit::Delete {
            at: RuleRef::Id { rule, .. },
            ..
        } => rule.jump_target().map(|t| (t, -1)),
        Edit::DeleteGuessedJump { target, .. } => Some((target.as_str(), -1)),
        _ => None,
    }
}

impl<'a> Overlay<'a> {
    pub(crate) fn new(inner: &'a mut dyn TableAccess) -> Self {
        Overlay {
            inner,
            pending: Vec::new(),
            next_id: PENDING,
            by_id: HashMap::new(),
            touching: HashMap::new(),
            exists: HashMap::new(),
            deleted: HashSet::new(),
            ref_delta: HashMap::new(),
            views: HashMap::new(),
            read: Read::default(),
        }
    }

    fn count_jump(&mut self, table: &str, c: &Change, sign: i64) {
        if let Some((target, d)) = jump_delta(c) {
            *self.ref_delta.entry(key(table, target)).or_default() += d * sign;
        }
    }

    /// Adds an operation's changes, folding changes to rules added earlier in the
    /// transaction into those additions.
    pub(crate) fn push(&mut self, origin: usize, changes: &[Change]) {
        for c in changes {
            let (table, chain) = table_chain(c);
            let k = key(table, chain);
            match &c.edit {
                Edit::Delete {
                    at: RuleRef::Id { id, .. },
                    ..
                } if *id >= PENDING => {
                    if let Some(i) = self.by_id.remove(id) {
                        self.pending[i].removed = true;
                        let added = self.pending[i].change.clone();
                        let (t, ch) = table_chain(&added);
                        let ak = key(t, ch);
                        self.count_jump(t, &added, -1);
                        if let Some(v) = self.views.get_mut(&ak) {
                            v.remove(*id);
                        }
                    }
                }
                Edit::Replace {
                    at: RuleRef::Id { id, .. },
                    rule,
                    ..
                } if *id >= PENDING => {
                    if let Some(&i) = self.by_id.get(id) {
                        let before = self.pending[i].change.clone();
                        let (t, ch) = table_chain(&before);
                        let ak = key(t, ch);
                        self.count_jump(t, &before, -1);
                        match &mut self.pending[i].change.edit {
                            Edit::Insert { rule: r, .. } | Edit::Append { rule: r, .. } => {
                                *r = rule.clone();
                            }
                            _ => {}
                        }
                        let after = self.pending[i].change.clone();
                        self.count_jump(t, &after, 1);
                        if let Some(v) = self.views.get_mut(&ak) {
                            v.replace(*id, rule);
                        }
                    }
                }
                _ => {
                    let id = added_rule(c).map(|_| {
                        self.next_id += 1;
                        self.next_id
                    });
                    let index = self.pending.len();
                    if let Some(id) = id {
                        self.by_id.insert(id, index);
                    }
                    match c.edit {
                        Edit::CreateChain(_) => {
                            self.exists.insert(k.clone(), true);
                        }
                        Edit::DeleteChain(_) => {
                            self.exists.insert(k.clone(), false);
                            self.deleted.insert(k.clone());
                        }
                        _ => {}
                    }
                    self.count_jump(table, c, 1);
                    if let Some(v) = self.views.get_mut(&k) {
                        v.apply(c, id);
                    }
                    self.touching.entry(k).or_default().push(index);
                    self.pending.push(Pending {
                        change: c.clone(),
                        origin,
                        id,
                        removed: false,
                    });
                }
            }
        }
    }

    /// The transaction's changes, and for each the operation it comes from.
    pub(crate) fn into_changes(self) -> (Vec<Change>, Vec<usize>) {
        self.pending
            .into_iter()
            .filter(|p| !p.removed)
            .map(|p| (p.change, p.origin))
            .unzip()
    }

    /// The pending changes of a chain, in order.
    fn touching<'s>(&'s self, table: &str, chain: &str) -> impl Iterator<Item = &'s Pending> {
        self.touching
            .get(&key(table, chain))
            .into_iter()
            .flatten()
            .map(|&i| &self.pending[i])
            .filter(|p| !p.removed)
    }

    /// Jumps to `target` that the pending changes add (+) or delete (-).
    fn reference_delta(&self, table: &str, target: &str) -> i64 {
        self.ref_delta
            .get(&key(table, target))
            .copied()
            .unwrap_or(0)
    }

    /// The chain's rules after the pending changes, from what the kernel holds.
    /// (For one rule or a table's scan; a chain read whole has its [`ChainView`].)
    fn apply_rules(&self, table: &str, chain: &str, mut rules: Vec<RuleEntry>) -> Vec<RuleEntry> {
        for p in self.touching(table, chain) {
            match &p.change.edit {
                Edit::Flush(_) | Edit::DeleteChain(_) => rules.clear(),
                Edit::Insert { rule, .. } => rules.insert(
                    0,
                    RuleEntry {
                        id: p.id.unwrap_or_default(),
                        rule: rule.clone(),
                    },
                ),
                Edit::Append { rule, .. } => rules.push(RuleEntry {
                    id: p.id.unwrap_or_default(),
                    rule: rule.clone(),
                }),
                Edit::Replace {
                    at: RuleRef::Id { id, .. },
                    rule,
                    ..
                } => {
                    if let Some(r) = rules.iter_mut().find(|r| r.id == *id) {
                        r.rule = rule.clone();
                    }
                }
                Edit::Delete {
                    at: RuleRef::Id { id, .. },
                    ..
                }
                | Edit::DeleteGuessedJump { id, .. } => rules.retain(|r| r.id != *id),
                // A chain created; nothing else is planned (`Change::plannable`).
                _ => {}
            }
        }
        rules
    }

    /// Whether the kernel's copy of the chain still matters (it was not deleted and made
    /// again by this transaction).
    fn kernel_copy_counts(&self, table: &str, chain: &str) -> bool {
        !self.deleted.contains(&key(table, chain))
    }

    /// Reads from the kernel what this plan has not read yet: the chains, and the rules of
    /// `rules_of` (with its chain again: the backend counts its references only then).
    fn read(&mut self, table: &str, chains: &[&str], rules_of: Option<&str>) -> Result<()> {
        let need_rules = rules_of.filter(|c| !self.read.rules.contains_key(&key(table, c)));
        let mut ask: Vec<&str> = chains
            .iter()
            .copied()
            .filter(|c| !self.read.chains.contains_key(&key(table, c)))
            .collect();
        if let Some(c) = need_rules
            && !ask.contains(&c)
        {
            ask.push(c);
        }
        if ask.is_empty() {
            return Ok(());
        }
        let got = self.inner.lookup(table, &ask, need_rules)?;
        for (name, info) in ask.iter().zip(got.chains) {
            self.read.chains.insert(key(table, name), info);
        }
        if let Some(c) = need_rules {
            self.read.rules.insert(key(table, c), got.rules);
        }
        Ok(())
    }

    /// The chain's view (its rules after the pending changes), made from the kernel's copy
    /// the first time; [`Self::read`] has read its rules.
    fn view(&mut self, table: &str, chain: &str) -> &ChainView {
        let k = key(table, chain);
        if !self.views.contains_key(&k) {
            let base = if self.kernel_copy_counts(table, chain) {
                self.read.rules.get(&k).cloned().unwrap_or_default()
            } else {
                Vec::new()
            };
            let mut v = ChainView::new(base);
            for p in self.touching(table, chain) {
                v.apply(&p.change, p.id);
            }
            self.views.insert(k.clone(), v);
        }
        &self.views[&k]
    }

    /// The chains as the pending changes leave them (after [`Self::read`]).
    fn chain_infos(&self, table: &str, chains: &[&str]) -> Vec<Option<ChainInfo>> {
        chains
            .iter()
            .map(|name| {
                let found = self.read.chains.get(&key(table, name)).cloned().flatten();
                let exists = self
                    .exists
                    .get(&key(table, name))
                    .copied()
                    .unwrap_or(found.is_some());
                if !exists {
                    return None;
                }
                let kernel = found.filter(|_| self.kernel_copy_counts(table, name));
                let delta = self.reference_delta(table, name);
                let references = match &kernel {
                    Some(k) => k.references,
                    None => Some(0),
                }
                .map(|r| (i64::from(r) + delta).max(0) as u32);
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
                        .filter(|_| delta == 0),
                })
            })
            .collect()
    }
}

impl TableAccess for Overlay<'_> {
    fn family(&self) -> Family {
        self.inner.family()
    }

    fn lookup(&mut self, table: &str, chains: &[&str], rules_of: Option<&str>) -> Result<Lookup> {
        self.read(table, chains, rules_of)?;
        let rules = match rules_of {
            Some(c) => self.view(table, c).to_vec(),
            None => Vec::new(),
        };
        Ok(Lookup {
            chains: self.chain_infos(table, chains),
            rules,
        })
    }

    fn find_rule(
        &mut self,
        table: &str,
        chain: &str,
        rule: &IptRule,
    ) -> Result<(Option<ChainInfo>, Option<RuleEntry>)> {
        self.read(table, &[chain], Some(chain))?;
        let found = self.view(table, chain).find(rule).cloned();
        let info = self.chain_infos(table, &[chain]).pop().flatten();
        Ok((info, found))
    }

    fn rule(&mut self, table: &str, chain: &str, id: u64) -> Result<Option<RuleEntry>> {
        let k = key(table, chain);
        if self.read.rules.contains_key(&k) {
            return Ok(self.view(table, chain).get(id).cloned());
        }
        let kernel = match self.inner.rule(table, chain, id)? {
            Some(r) if self.kernel_copy_counts(table, chain) => vec![r],
            _ => Vec::new(),
        };
        let pending_id = self.by_id.contains_key(&id);
        if kernel.is_empty() && !pending_id {
            return Ok(None);
        }
        // Pending changes to it (or its pending addition) decide what it is now.
        let base = if pending_id { Vec::new() } else { kernel };
        Ok(self
            .apply_rules(table, chain, base)
            .into_iter()
            .find(|r| r.id == id))
    }

    fn chains(&mut self, table: &str) -> Result<Vec<ChainInfo>> {
        if !self.read.tables.contains_key(table) {
            let chains = self.inner.chains(table)?;
            self.read.tables.insert(table.to_string(), chains);
        }
        let mut by_name: BTreeMap<String, ChainInfo> = self.read.tables[table]
            .iter()
            .map(|c| (c.name.clone(), c.clone()))
            .collect();
        for p in self
            .pending
            .iter()
            .filter(|p| !p.removed && table_chain(&p.change).0 == table)
        {
            match &p.change.edit {
                Edit::CreateChain(chain) => {
                    by_name.entry(chain.clone()).or_insert_with(|| ChainInfo {
                        name: chain.clone(),
                        base: tables::builtin(table, chain).is_some(),
                        references: None,
                        jump_hint: None,
                    });
                }
                Edit::DeleteChain(chain) => {
                    by_name.remove(chain);
                }
                _ => {}
            }
        }
        Ok(by_name.into_values().collect())
    }

    fn all_rules(&mut self, table: &str) -> Result<Vec<(String, RuleEntry)>> {
        if !self.read.all_rules.contains_key(table) {
            let all = self.inner.all_rules(table)?;
            self.read.all_rules.insert(table.to_string(), all);
        }
        let mut by_chain: BTreeMap<String, Vec<RuleEntry>> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        for (c, r) in &self.read.all_rules[table] {
            if !by_chain.contains_key(c) {
                order.push(c.clone());
            }
            by_chain.entry(c.clone()).or_default().push(r.clone());
        }
        for p in self.pending.iter().filter(|p| !p.removed) {
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
