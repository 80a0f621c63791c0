//! The x_tables side of the seam: a [`Table`] read whole, as an [`IptTable`]. Edits change
//! it in memory, as libiptc does; any number of them become one `IPT_SO_SET_REPLACE`
//! ([`super::Legacy::transact`]). The commands themselves are interpreted once, by
//! [`crate::seam::interpret`].

use super::convert;
use super::table::{Carry, Chain, Fnv, HOOK_NAMES, Table, Verdict};
use crate::error::{Error, Result};
use crate::ipt::IptRule;
use crate::ipt::listing::ChainListing;
use crate::ipt::messages::{self, Msg};
use crate::model::ChainPolicy;
use crate::model::Counters;
use crate::model::Family;
use crate::seam::{Edit, Flavour, IptTable, RuleRef, chain_rules};
use std::collections::HashMap;

fn not_found(chain: &str, t: &Table) -> Error {
    messages::not_found(t.family, format!("chain {chain} in table {}", t.name))
}

fn failure(errno: i32, op: String) -> crate::OpFailure {
    messages::failure(errno, op)
}

/// A table being changed by iptables commands, with what `-v` prints.
pub struct LegacyTable<'t> {
    /// The table as read, changed by every edit.
    pub table: &'t mut Table,
    /// What `-v` prints of the edits.
    pub verbose_lines: Vec<String>,
    /// Whether `-v` was given.
    pub verbose: bool,
    /// Whether anything changed (a `-C`, or a failed check, changes nothing).
    pub changed: bool,
    /// Under a policy or an auditor: what the edits touch ([`crate::seam::judge`]).
    pub judge: Option<crate::seam::Judge>,
    /// Chain name -> position in `table.chains`, built on first use and kept while the
    /// edits go through this view (a restore of N chains looks a chain up for every line:
    /// a scan of the list each time made it quadratic).
    index: Option<HashMap<String, usize, Fnv>>,
    /// Where the user chains created through this view begin: appended at the end and put
    /// in libiptc's sorted place at once when something needs the order ([`Self::settle`]),
    /// not one insertion (a shift of every later chain) per `-N`.
    unsorted_from: Option<usize>,
}

fn policy_verdict(p: ChainPolicy) -> i32 {
    match p {
        ChainPolicy::Accept => super::blob::verdict::ACCEPT,
        ChainPolicy::Drop => super::blob::verdict::DROP,
    }
}

impl<'t> LegacyTable<'t> {
    /// A view of `table` for the interpreter.
    pub fn new(table: &'t mut Table, verbose: bool) -> Self {
        LegacyTable {
            table,
            verbose_lines: Vec::new(),
            verbose,
            changed: false,
            judge: None,
            index: None,
            unsorted_from: None,
        }
    }

    /// The position of chain `name` in the table, through the index.
    fn position(&mut self, name: &str) -> Option<usize> {
        let chains = &self.table.chains;
        self.index
            .get_or_insert_with(|| {
                chains
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (c.name.clone(), i))
                    .collect()
            })
            .get(name)
            .copied()
    }

    /// Puts the chains created through this view where libiptc's one-by-one insertion puts
    /// them ([`Table::insert_user_chain`]): when the other user chains are sorted (as libiptc
    /// and xtnl write them), that is one sort of the user chains; otherwise one insertion
    /// each, as before. Positions change, so the index goes.
    fn settle(&mut self) {
        let Some(from) = self.unsorted_from.take() else {
            return;
        };
        self.index = None;
        let chains = &mut self.table.chains;
        let from = from.min(chains.len());
        let builtins = chains.iter().take_while(|c| c.is_builtin()).count();
        let sorted = chains[..from]
            .windows(2)
            .all(|w| w[0].is_builtin() || w[0].name.as_bytes() < w[1].name.as_bytes());
        if sorted && builtins <= from {
            // Names are unique, so the sorted order is the one the insertions give.
            chains[builtins..].sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        } else {
            let created = chains.split_off(from);
            for c in created {
                self.table.insert_user_chain(c);
            }
        }
    }

    /// The view, judging its edits when `judge` (see [`crate::seam::judge`]).
    pub fn judging(mut self, judge: bool) -> Self {
        self.judge = judge.then(|| crate::seam::Judge::new(self.table.family, &self.table.name));
        self
    }

    /// The view, judging its edits as `e` needs them: not at all when nothing is enforced,
    /// texts only for an auditor alone ([`crate::seam::Judge::texts_only`]).
    pub fn judging_for(mut self, e: &crate::seam::Enforcement) -> Self {
        self.judge = e.is_active().then(|| {
            let j = crate::seam::Judge::new(self.table.family, &self.table.name);
            if e.policy.is_some() {
                j
            } else {
                j.texts_only()
            }
        });
        self
    }

    /// What the edits touched (empty when not judging).
    pub fn judged(&mut self) -> Vec<crate::seam::Judged> {
        self.judge
            .as_mut()
            .map(|j| std::mem::take(&mut j.judged))
            .unwrap_or_default()
    }

    fn chain_mut(&mut self, name: &str) -> Result<&mut Chain> {
        match self.position(name) {
            Some(i) => Ok(&mut self.table.chains[i]),
            None => Err(not_found(name, self.table)),
        }
    }

    fn chain(&mut self, name: &str) -> Result<&Chain> {
        match self.position(name) {
            Some(i) => Ok(&self.table.chains[i]),
            None => Err(not_found(name, self.table)),
        }
    }

    /// [`check_chain_name`], a hook's name refused in the family's words.
    fn check_name(&self, name: &str) -> Result<()> {
        check_chain_name(name).map_err(|e| match e.kind() {
            crate::ErrorKind::AlreadyExists => messages::exists(
                self.table.family,
                Msg::ChainExists,
                format!("create chain {name}"),
            ),
            _ => e,
        })
    }

    fn set_policy(&mut self, chain: &str, policy: ChainPolicy) -> Result<()> {
        let c = self.chain_mut(chain)?;
        c.policy = policy_verdict(policy);
        // libiptc sets a policy without counters, so they start again from zero.
        c.policy_carry = Carry::Zero;
        c.policy_counters = Counters::default();
        Ok(())
    }
}

impl IptTable for LegacyTable<'_> {
    type Encoded = super::table::Rule;

    fn flavour(&self) -> Flavour {
        Flavour::Legacy
    }

    fn family(&self) -> Family {
        self.table.family
    }

    fn label(&self) -> String {
        self.table.name.clone()
    }

    fn verbose(&self) -> bool {
        self.verbose
    }

    fn say(&mut self, line: String) {
        self.verbose_lines.push(line);
    }

    fn exists(&mut self, chain: &str) -> Result<bool> {
        Ok(self.position(chain).is_some())
    }

    fn builtin(&self, chain: &str) -> bool {
        // The built-in chains come first (a user chain cannot take a hook's name).
        self.table
            .chains
            .iter()
            .take_while(|c| c.is_builtin())
            .any(|c| c.name == chain)
    }

    fn is_base(&mut self, chain: &str) -> Result<bool> {
        Ok(self.builtin(chain))
    }

    fn counted(&mut self, chain: &str) -> Result<bool> {
        Ok(self.position(chain).is_some())
    }

    fn rule_count(&mut self, chain: &str) -> Result<usize> {
        Ok(self.chain(chain)?.rules.len())
    }

    fn rule_at(&mut self, chain: &str, index: usize) -> Result<Option<IptRule>> {
        let family = self.table.family;
        let Ok(c) = self.chain(chain) else {
            return Ok(None);
        };
        Ok(index
            .checked_sub(1)
            .and_then(|i| c.rules.get(i))
            .map(|r| convert::to_ipt(family, r)))
    }

    fn find(&mut self, chain: &str, rule: &IptRule) -> Result<Option<usize>> {
        let want = rule.without_counters();
        let family = self.table.family;
        Ok(self
            .chain(chain)?
            .rules
            .iter()
            .position(|r| {
                let have = convert::to_ipt(family, r);
                have.is_expressible() && have.without_counters() == want
            })
            .map(|i| i + 1))
    }

    fn references(&mut self, chain: &str) -> Result<i64> {
        Ok(i64::from(self.table.references(chain)))
    }

    fn jumped_to(&mut self, chain: &str) -> Result<bool> {
        Ok(self.table.references(chain) > 0)
    }

    fn chain_order(&mut self) -> Result<Vec<String>> {
        self.settle();
        Ok(self.table.chains.iter().map(|c| c.name.clone()).collect())
    }

    fn user_chains(&mut self) -> Result<Vec<String>> {
        self.settle();
        Ok(self
            .table
            .chains
            .iter()
            .filter(|c| !c.is_builtin())
            .map(|c| c.name.clone())
            .collect())
    }

    fn take_judge(&mut self) -> Option<crate::seam::Judge> {
        self.judge.take()
    }

    fn put_judge(&mut self, judge: crate::seam::Judge) {
        self.judge = Some(judge);
    }

    fn encode(&mut self, rule: &IptRule) -> Result<super::table::Rule> {
        convert::to_rule(self.table.family, &self.table.name, rule)
    }

    fn apply(&mut self, edit: &Edit, encoded: Option<super::table::Rule>) -> Result<()> {
        let missing = || Error::InvalidInput("a rule to add without its encoding".into());
        match edit {
            Edit::Append { chain, .. } => {
                let r = encoded.ok_or_else(missing)?;
                // Grows small chains 1, 2, 4 rules (kube-proxy's 2-rule chains).
                chain_rules::append(&mut self.chain_mut(chain)?.rules, r);
            }
            Edit::Insert { chain, index, .. } => {
                let r = encoded.ok_or_else(missing)?;
                chain_rules::insert_at(&mut self.chain_mut(chain)?.rules, chain, *index, r)?;
            }
            Edit::Replace {
                chain,
                at: RuleRef::Number(index),
                ..
            } => {
                let r = encoded.ok_or_else(missing)?;
                chain_rules::replace_at(&mut self.chain_mut(chain)?.rules, chain, *index, r)?;
            }
            Edit::Delete {
                chain,
                at: RuleRef::Number(index),
            } => {
                chain_rules::delete_at(&mut self.chain_mut(chain)?.rules, chain, *index)?;
            }
            Edit::CreateChain(chain) => {
                self.check_name(chain)?;
                let at = self.table.chains.len();
                self.table.chains.push(Chain::user(chain));
                self.unsorted_from.get_or_insert(at);
                if let Some(index) = &mut self.index {
                    index.insert(chain.clone(), at);
                }
            }
            Edit::DeleteChain(chain) => {
                self.settle();
                self.index = None;
                self.table.chains.retain(|c| c.name != *chain);
            }
            Edit::Flush(chain) => self.chain_mut(chain)?.rules.clear(),
            Edit::FlushAll => {
                for c in &mut self.table.chains {
                    c.rules.clear();
                }
            }
            Edit::Zero(chain) => {
                for c in &mut self.table.chains {
                    if chain.as_ref().is_none_or(|n| *n == c.name) {
                        zero(c);
                    }
                }
            }
            Edit::Policy { chain, policy } => self.set_policy(chain, *policy)?,
            Edit::Rename { from, to } => {
                self.check_name(to)?;
                self.settle();
                self.index = None;
                let Some(i) = self.table.chains.iter().position(|c| c.name == *from) else {
                    return Err(not_found(from, self.table));
                };
                let mut c = self.table.chains.remove(i);
                c.name = to.clone();
                // libiptc re-inserts a renamed chain in sorted position.
                self.table.insert_user_chain(c);
                for r in self
                    .table
                    .chains
                    .iter_mut()
                    .flat_map(|c| c.rules.iter_mut())
                {
                    if let Verdict::Jump(t) | Verdict::Goto(t) = &mut r.verdict
                        && t == from
                    {
                        *t = to.clone();
                    }
                }
            }
            // iptables-legacy-restore without --noflush: every chain flushed and every user
            // chain deleted first; policies stay unless declared, and every policy's
            // counters start again from zero (or from the file's `[p:b]` under -c).
            Edit::Reset => {
                self.settle();
                self.index = None;
                for c in &mut self.table.chains {
                    c.rules.clear();
                    c.policy_carry = Carry::Zero;
                    c.policy_counters = Counters::default();
                }
                self.table.chains.retain(Chain::is_builtin);
            }
            // `:BUILTIN -` leaves the policy as it is, with or without --noflush (as
            // iptables-legacy-restore; libiptc's flush does not touch policies).
            Edit::DeclareBuiltin { policy: None, .. } => return Ok(()),
            Edit::DeclareBuiltin {
                chain,
                policy: Some(policy),
                counters,
            } => {
                self.set_policy(chain, *policy)?;
                if let Some(c) = counters {
                    let chain = self.chain_mut(chain)?;
                    chain.policy_counters = *c;
                    chain.policy_carry = Carry::Start(*c);
                }
            }
            // The user chains went with the reset.
            Edit::FinishReset { .. } => return Ok(()),
            Edit::Delete { .. } | Edit::Replace { .. } | Edit::DeleteGuessedJump { .. } => {
                return Err(edit.not_by_number());
            }
        }
        self.changed = true;
        Ok(())
    }
}

impl Drop for LegacyTable<'_> {
    /// The table leaves this view in libiptc's order.
    fn drop(&mut self) {
        self.settle();
    }
}

/// `-Z CHAIN N`: zeroes rule N's counters, as libiptc's `iptc_zero_counter` (past the last
/// rule: "Index of counter too big.", status 1).
pub(crate) fn zero_rule(t: &mut Table, chain: &str, n: usize) -> Result<()> {
    let table = t.name.clone();
    let family = t.family;
    let c = t
        .chains
        .iter_mut()
        .find(|c| c.name == chain)
        .ok_or_else(|| messages::not_found(t.family, format!("chain {chain} in table {table}")))?;
    let r = n
        .checked_sub(1)
        .and_then(|i| c.rules.get_mut(i))
        .ok_or_else(|| {
            messages::refused(
                family,
                Msg::CounterTooBig,
                format!("zero rule {n} of chain {chain}"),
            )
        })?;
    r.carry = Carry::Zero;
    r.counters = Counters::default();
    Ok(())
}

/// `-Z` of a chain as libiptc's `iptc_zero_entries`: what came from the kernel starts again
/// from zero; counters a restore file set earlier in the same block (`-c`, `[p:b]`) stay.
fn zero(c: &mut Chain) {
    if matches!(c.policy_carry, Carry::From(_)) {
        c.policy_carry = Carry::Zero;
        c.policy_counters = Counters::default();
    }
    for r in c
        .rules
        .iter_mut()
        .filter(|r| matches!(r.carry, Carry::From(_)))
    {
        r.carry = Carry::Zero;
        r.counters = Counters::default();
    }
}

/// A user chain's name must fit `xt_error_target.errorname` and must not be a hook name.
fn check_chain_name(name: &str) -> Result<()> {
    crate::limits::check_iptables_chain_name(crate::limits::NameDialect::Iptables, name)?;
    if HOOK_NAMES.contains(&name) {
        return Err(
            Error::AlreadyExists(failure(libc::EEXIST, format!("create chain {name}")))
                .context("iptables: Chain already exists."),
        );
    }
    Ok(())
}

/// The table's chains as iptables-legacy lists them: in the table's order (built-ins in
/// hook order, then user chains as libiptc keeps them, sorted), each rule with its position.
pub fn chain_listings(t: &Table) -> Vec<ChainListing> {
    let refs = t.reference_counts();
    t.chains
        .iter()
        .map(|c| ChainListing {
            name: c.name.clone(),
            policy: c.hook.map(|_| {
                if c.policy == super::blob::verdict::DROP {
                    ChainPolicy::Drop
                } else {
                    ChainPolicy::Accept
                }
            }),
            policy_counters: c.hook.map(|_| c.policy_counters),
            references: refs.get(c.name.as_str()).copied().unwrap_or(0),
            rules: c
                .rules
                .iter()
                .enumerate()
                .map(|(i, r)| (i as u64 + 1, convert::to_ipt(t.family, r)))
                .collect(),
        })
        .collect()
}

/// The table's body as iptables-legacy-save prints it, straight from the table: each rule
/// is decoded, printed and dropped in turn, so that the listings of every rule are never
/// held at once (at 400,000 rules they were some 100 MB beside the table and the text) and
/// no reference counts are made (a save prints none).
pub fn save_body(t: &Table, counters: bool) -> String {
    let rules: usize = t.chains.iter().map(|c| c.rules.len()).sum();
    let mut out = String::with_capacity(64 * (t.chains.len() + 1) + 160 * rules);
    for c in &t.chains {
        let policy = c.hook.map(|_| {
            let p = if c.policy == super::blob::verdict::DROP {
                ChainPolicy::Drop
            } else {
                ChainPolicy::Accept
            };
            (p, Some(c.policy_counters))
        });
        crate::ipt::listing::write_save_chain(&mut out, &c.name, policy);
    }
    for c in &t.chains {
        for (i, r) in c.rules.iter().enumerate() {
            let rule = convert::to_ipt(t.family, r);
            crate::ipt::listing::write_save_rule(&mut out, &c.name, i as u64 + 1, &rule, counters);
        }
    }
    out
}

/// What an x_tables replace changes, for [`super::Legacy::transact`], whose plan is any
/// closure over the table: there only the table as read and the table about to be committed
/// say what changed. The difference is written as the interpreter's edits (chains deleted,
/// chains created with their rules appended, policies set, chains emptied, and the rules
/// removed and added, a multiset difference by what each rule does, so that a reorder or a
/// zeroing is no change) and judged by the one judgement of edits ([`crate::seam::Judge`])
/// against the table as read: a rule removed is judged by its real target.
pub(crate) fn judged_difference(before: &Table, after: &Table) -> Result<Vec<crate::seam::Judged>> {
    let fam = after.family;
    let ipt = |r: &super::rule::Rule| convert::to_ipt(fam, r);
    let old: HashMap<&str, &Chain> = before.chains.iter().map(|c| (c.name.as_str(), c)).collect();
    let new: HashMap<&str, &Chain> = after.chains.iter().map(|c| (c.name.as_str(), c)).collect();
    let mut edits = Vec::new();
    for c in &before.chains {
        if !new.contains_key(c.name.as_str()) {
            edits.push(Edit::DeleteChain(c.name.clone()));
        }
    }
    for c in &after.chains {
        let Some(o) = old.get(c.name.as_str()) else {
            edits.push(Edit::CreateChain(c.name.clone()));
            for r in &c.rules {
                edits.push(Edit::Append {
                    chain: c.name.clone(),
                    rule: ipt(r),
                });
            }
            continue;
        };
        if c.is_builtin() && c.policy != o.policy {
            let policy = if c.policy == super::blob::verdict::DROP {
                ChainPolicy::Drop
            } else {
                ChainPolicy::Accept
            };
            edits.push(Edit::Policy {
                chain: c.name.clone(),
                policy,
            });
        }
        if c.rules.is_empty() && !o.rules.is_empty() {
            edits.push(Edit::Flush(c.name.clone()));
            continue;
        }
        let mut kept: HashMap<Vec<u8>, usize> = HashMap::new();
        for r in &o.rules {
            *kept.entry(r.key()).or_default() += 1;
        }
        let mut added = Vec::new();
        for r in &c.rules {
            match kept.get_mut(&r.key()) {
                Some(n) if *n > 0 => *n -= 1,
                _ => added.push(r),
            }
        }
        for (i, r) in o.rules.iter().enumerate() {
            if let Some(n) = kept.get_mut(&r.key())
                && *n > 0
            {
                *n -= 1;
                // By its number in the table as read, which the judge reads it from.
                edits.push(Edit::Delete {
                    chain: c.name.clone(),
                    at: RuleRef::Number(i + 1),
                });
            }
        }
        for r in added {
            edits.push(Edit::Append {
                chain: c.name.clone(),
                rule: ipt(r),
            });
        }
    }
    // The edits are judged, not applied: every one is read against the table as read.
    let mut read = before.clone();
    let mut view = LegacyTable::new(&mut read, false);
    let mut judge = crate::seam::Judge::new(fam, &after.name);
    for e in &edits {
        judge.note(&mut view, e)?;
    }
    Ok(judge.judged)
}
