//! The nf_tables side of the seam: a [`Planner`]'s view of a table as an
//! [`IptTable`]. Reads are lazy (a chain is looked up, its rules read, only when a command
//! needs them); edits by rule number become operations on rule handles, placed relative to
//! the rules of the kernel or to rules this plan adds.

use super::{ChainState, Planner, Slot};
use crate::error::{Error, Result};
use crate::ipt::IptRule;
use crate::ipt::compat;
use crate::model::{ChainPolicy, Counters, Family};
use crate::nft::{ChainSpec, EncodedRule, Op, Reader, RulePosition};

use crate::seam::{Edit, Flavour, IptTable, RuleRef, chain_rules};

/// What a pending slot keeps of the rule it adds: nothing when the rule can be read back
/// from its encoding ([`Planner::slot_rule`]), as a rule of the kernel is; a restore of
/// 80,000 rules kept a copy of each (some 40 MB) that only a later `-D`, `-C` or `-I N`
/// of the same transaction reads. A rule with anonymous sets keeps its copy.
fn kept(rule: &IptRule, encoded: &EncodedRule) -> Option<Box<IptRule>> {
    (!encoded.sets.is_empty()).then(|| Box::new(rule.clone()))
}

/// A plan and the reader it plans from.
pub(super) struct NftTable<'a, 'r, 's> {
    pub(super) p: &'a mut Planner,
    pub(super) r: &'r mut Reader<'s>,
}

fn unsupported(what: &str) -> Error {
    Error::InvalidInput(format!(
        "{what} earlier in the same transaction is not supported"
    ))
}

impl IptTable for NftTable<'_, '_, '_> {
    type Encoded = EncodedRule;

    fn flavour(&self) -> Flavour {
        Flavour::Nft
    }

    fn family(&self) -> Family {
        self.p.table.family
    }

    fn label(&self) -> String {
        self.p.table.to_string()
    }

    fn verbose(&self) -> bool {
        self.p.verbose
    }

    fn say(&mut self, line: String) {
        self.p.verbose_lines.push(line);
    }

    fn exists(&mut self, chain: &str) -> Result<bool> {
        self.p.lookup(self.r, chain)
    }

    fn builtin(&self, chain: &str) -> bool {
        self.p.builtin(chain).is_some()
    }

    fn is_base(&mut self, chain: &str) -> Result<bool> {
        Ok(self.p.chains.get(chain).is_some_and(|c| c.base.is_some()))
    }

    fn counted(&mut self, chain: &str) -> Result<bool> {
        Ok(self.p.chains.get(chain).is_some_and(|c| c.in_kernel))
    }

    fn rule_count(&mut self, chain: &str) -> Result<usize> {
        Ok(self.p.rules(self.r, chain)?.len())
    }

    fn rule_at(&mut self, chain: &str, index: usize) -> Result<Option<IptRule>> {
        self.p.rules(self.r, chain)?;
        let p = &*self.p;
        Ok(index
            .checked_sub(1)
            .and_then(|i| p.loaded(chain).get(i))
            .map(|s| Planner::slot_rule(&p.ops, &p.table, s).into_owned()))
    }

    fn find(&mut self, chain: &str, rule: &IptRule) -> Result<Option<usize>> {
        let native = !self.p.iptables_table;
        self.p.rules(self.r, chain)?;
        let p = &*self.p;
        Ok(Planner::find(p.loaded(chain), &p.ops, &p.table, rule, native).map(|i| i + 1))
    }

    fn references(&mut self, chain: &str) -> Result<i64> {
        self.p.account_unread_flushes(self.r)?;
        self.p.rules(self.r, chain)?;
        // The kernel's use count is the chain's rules plus the jumps to it; adjust for what
        // this plan changed.
        let delta = self.p.ref_delta.get(chain).copied().unwrap_or(0);
        Ok(match self.p.chains.get(chain) {
            Some(c) if c.in_kernel => i64::from(c.use_count) - c.kernel_rules as i64 + delta,
            _ => delta,
        })
    }

    fn jumped_to(&mut self, chain: &str) -> Result<bool> {
        self.p.referenced_from_outside(self.r, chain, &[])
    }

    fn chain_order(&mut self) -> Result<Vec<String>> {
        self.p.listing_order(self.r)
    }

    fn user_chains(&mut self) -> Result<Vec<String>> {
        let order = self.p.listing_order(self.r)?;
        Ok(order
            .into_iter()
            .filter(|n| self.p.chains.get(n).is_some_and(|c| c.base.is_none()))
            .collect())
    }

    fn policy(&mut self, chain: &str) -> Result<Option<ChainPolicy>> {
        Ok(self
            .p
            .chains
            .get(chain)
            .filter(|c| c.in_kernel)
            .and_then(|c| c.base)
            .map(|b| b.policy))
    }

    fn forget_builtins(&mut self) {
        self.p.builtins_forgotten = true;
    }

    fn encode(&mut self, rule: &IptRule) -> Result<EncodedRule> {
        compat::encode(&self.p.table, rule)
    }

    fn apply(&mut self, edit: &Edit, encoded: Option<EncodedRule>) -> Result<()> {
        let missing = || Error::InvalidInput("a rule to add without its encoding".into());
        let p = &mut *self.p;
        let r = &mut *self.r;
        match edit {
            Edit::Append { chain, rule } => {
                let encoded = encoded.ok_or_else(missing)?;
                p.note_jump(rule, 1);
                p.materialize(chain);
                let op = Some(p.ops.len());
                if let Some(c) = p.chains.get_mut(chain) {
                    let slot = Slot::Pending {
                        rule: kept(rule, &encoded),
                        op,
                    };
                    match c.rules.as_mut() {
                        Some(rules) => rules.push(slot),
                        None => c.early.push((false, slot)),
                    }
                }
                p.ops.push(Op::AddEncodedRule {
                    chain: p.chain_ref(chain),
                    rule: encoded,
                    position: RulePosition::Append,
                });
            }
            Edit::Insert { chain, index, rule } => {
                let encoded = encoded.ok_or_else(missing)?;
                p.note_jump(rule, 1);
                p.materialize(chain);
                let position = if *index == 1 {
                    let op = Some(p.ops.len());
                    if let Some(c) = p.chains.get_mut(chain) {
                        let slot = Slot::Pending {
                            rule: kept(rule, &encoded),
                            op,
                        };
                        match c.rules.as_mut() {
                            Some(rules) => rules.insert(0, slot),
                            None => c.early.push((true, slot)),
                        }
                    }
                    RulePosition::Head
                } else {
                    let slots = p.rules(r, chain)?;
                    chain_rules::check_insert(slots.len(), chain, *index)?;
                    let position = match slots.get(index - 1) {
                        Some(Slot::Kernel { handle, .. }) => RulePosition::Before(*handle),
                        Some(Slot::Pending { op: Some(j), .. }) => {
                            // Before a rule this plan adds: next to its operation, with its
                            // position (see `insert_before_pending`).
                            let j = *j;
                            return p.insert_before_pending(r, chain, *index, j, rule, encoded);
                        }
                        Some(Slot::Pending { op: None, .. }) => {
                            return Err(Error::InvalidInput(format!(
                                "inserting at {index} before a rule replaced earlier in the same transaction is not supported"
                            )));
                        }
                        // Rule len + 1 (`check_insert`).
                        None => RulePosition::Append,
                    };
                    let op = Some(p.ops.len());
                    let slots = p.rules(r, chain)?;
                    slots.insert(
                        index - 1,
                        Slot::Pending {
                            rule: kept(rule, &encoded),
                            op,
                        },
                    );
                    position
                };
                p.ops.push(Op::AddEncodedRule {
                    chain: p.chain_ref(chain),
                    rule: encoded,
                    position,
                });
            }
            Edit::Delete {
                chain,
                at: RuleRef::Number(index),
            } => {
                let slots = p.rules(r, chain)?;
                match chain_rules::delete_at(slots, chain, *index)? {
                    Slot::Kernel { handle, rule } => {
                        p.note_jump(&rule, -1);
                        p.ops.push(Op::DeleteRule {
                            chain: p.chain_ref(chain),
                            handle,
                        });
                    }
                    // A rule this plan adds: drop its operation instead.
                    slot @ Slot::Pending { op: Some(j), .. } => {
                        let rule = Planner::slot_rule(&p.ops, &p.table, &slot).into_owned();
                        p.note_jump(&rule, -1);
                        p.drop_pending_op(j);
                    }
                    Slot::Pending { op: None, .. } => {
                        return Err(unsupported("deleting a rule replaced"));
                    }
                }
            }
            Edit::Replace {
                chain,
                at: RuleRef::Number(index),
                rule,
            } => {
                let encoded = encoded.ok_or_else(missing)?;
                let next_op = p.ops.len();
                let slots = p.rules(r, chain)?;
                let slot = chain_rules::rule_at_mut(slots, chain, *index)?;
                let Slot::Kernel { handle, rule: old } = slot.clone() else {
                    return Err(unsupported("changing a rule added"));
                };
                *slot = Slot::Pending {
                    rule: kept(rule, &encoded),
                    op: Some(next_op),
                };
                p.note_jump(&old, -1);
                p.note_jump(rule, 1);
                p.ops.push(Op::ReplaceEncodedRule {
                    chain: p.chain_ref(chain),
                    handle,
                    rule: encoded,
                });
            }
            Edit::CreateChain(chain) => {
                p.ensure_table();
                p.ops.push(Op::CreateChain {
                    table: p.table.clone(),
                    chain: ChainSpec::regular(chain),
                });
                p.absent.remove(chain);
                p.chains.insert(chain.clone(), ChainState::created());
            }
            Edit::DeleteChain(chain) => {
                p.ops.push(Op::DeleteChain(p.chain_ref(chain)));
                p.chains.remove(chain);
                // A deleted built-in chain is virtual again: the next write creates it.
                match p.builtin(chain) {
                    Some(b) => {
                        p.created_builtins.remove(b.name);
                        p.chains
                            .insert(chain.clone(), ChainState::virtual_builtin(&b));
                    }
                    None => {
                        p.absent.insert(chain.clone());
                    }
                }
            }
            Edit::Flush(chain) => p.flush(chain),
            Edit::FlushAll => {
                // Every chain into the view first: one read later (a `-X` or `-Z` of the
                // same restore block) must not see the flushed rules again.
                p.load_all(r)?;
                if p.table_exists {
                    p.ops.push(Op::FlushTable(p.table.clone()));
                }
                for c in p.chains.values_mut() {
                    c.rules = Some(Vec::new());
                    c.early.clear();
                }
            }
            Edit::Zero(chain) if p.zero_in_plan => p.zero_planned(r, chain.as_deref())?,
            Edit::Zero(chain) => {
                if p.table_exists {
                    p.zero = Some(chain.clone());
                }
            }
            Edit::Policy { chain, policy } => {
                p.lookup(r, chain)?;
                // iptables-nft's `-P` sends the policy with counters of zero: the policy
                // counters start again.
                if let Some(b) = p.builtin(chain) {
                    p.set_policy(b, *policy, Some(Counters::default()));
                }
            }
            Edit::Rename { from, to } => {
                let Some(state) = p.chains.remove(from) else {
                    return Err(Error::InvalidInput(format!("no chain {from}")));
                };
                let Some(handle) = state.handle else {
                    return Err(Error::InvalidInput(
                        "renaming a chain created in the same transaction is not supported".into(),
                    ));
                };
                p.ops.push(Op::RenameChain {
                    chain: p.chain_ref(from),
                    handle,
                    new_name: to.clone(),
                });
                p.absent.remove(to);
                p.absent.insert(from.clone());
                p.chains.insert(to.clone(), state);
            }
            Edit::Reset => {
                if p.drop_on_reset && p.drop_table() {
                    return Ok(());
                }
                p.load_all(r)?;
                if p.table_exists {
                    p.ops.push(Op::FlushTable(p.table.clone()));
                }
                for c in p.chains.values_mut() {
                    c.rules = Some(Vec::new());
                    c.early.clear();
                }
                // iptables-nft-restore deletes the table: its built-ins come back with policy
                // ACCEPT and no counts.
                for b in crate::ipt::tables::builtins(&p.table.name).unwrap_or(&[]) {
                    let Some(c) = p.chains.get(b.name).filter(|c| c.in_kernel) else {
                        continue;
                    };
                    let counted = c.counters.filter(|n| *n != Counters::default());
                    if counted.is_some() || c.base.is_some_and(|x| x.policy != ChainPolicy::Accept)
                    {
                        p.set_policy(
                            *b,
                            ChainPolicy::Accept,
                            counted.map(|_| Counters::default()),
                        );
                    }
                }
            }
            Edit::DeclareBuiltin {
                chain,
                policy,
                counters,
            } => {
                p.lookup(r, chain)?;
                // `:BUILTIN -` under --noflush keeps the policy the chain has (iptables-nft's
                // nft-only/0008-basechain-policy); after a flush it is ACCEPT again. Either
                // way iptables-nft-restore sends the chain's counters, `[p:b]` under `-c`
                // and zero without: the policy counters start again.
                if let Some(b) = p.builtin(chain) {
                    let kept = p.chains.get(chain).and_then(|c| c.base).map(|x| x.policy);
                    let policy = match policy {
                        Some(x) => *x,
                        None if p.keep_builtin_policy => kept.unwrap_or(ChainPolicy::Accept),
                        None => ChainPolicy::Accept,
                    };
                    p.set_policy(b, policy, Some(counters.unwrap_or_default()));
                }
            }
            Edit::FinishReset { declared } => p.finish_reset(declared),
            Edit::Delete { .. } | Edit::Replace { .. } | Edit::DeleteGuessedJump { .. } => {
                return Err(edit.not_by_number());
            }
        }
        Ok(())
    }
}

/// Operations placed relative to the operations of rules this plan adds.
impl Planner {
    /// `-I CHAIN N` where rule N was added by this plan (operation `j`): the new rule's
    /// operation goes next to that one with the same position, so that it lands just before
    /// it: before operation `j` for an append or an insert before a handle (both then land at
    /// the same place, the new one first), after it for an insert at the head or after a
    /// handle (the later one lands in front).
    fn insert_before_pending(
        &mut self,
        r: &mut Reader<'_>,
        chain: &str,
        index: usize,
        j: usize,
        rule: &IptRule,
        encoded: EncodedRule,
    ) -> Result<()> {
        let keep = kept(rule, &encoded);
        let (position, k) = match self.ops.get(j) {
            Some(Op::AddEncodedRule { position, .. }) => {
                let k = match position {
                    RulePosition::Append | RulePosition::Before(_) => j,
                    RulePosition::Head | RulePosition::After(_) => j + 1,
                };
                (*position, k)
            }
            // A replaced rule: before the replacement runs, in front of the rule it replaces
            // (the replacement then takes that rule's place, after the new one).
            Some(Op::ReplaceEncodedRule { handle, .. }) => (RulePosition::Before(*handle), j),
            _ => {
                return Err(Error::InvalidInput(format!(
                    "inserting at {index} before a rule added earlier in the same transaction is not supported"
                )));
            }
        };
        // The new rule goes before operation j in the batch; a chain it jumps to that this
        // plan creates after that point (firewalld's `-N X` then `-I FORWARD 5 -j X` in one
        // restore block) must exist first. When every operation of this chain from j on is
        // an append, the new rule is appended after the chain is made and those appends
        // follow it (the chains keep the order in which iptables-nft makes them, which `nft
        // list ruleset` shows); otherwise the chain is made earlier.
        let mut k = k;
        let target = rule.jump_target();
        if let Some(target) = target
            && matches!(position, RulePosition::Append)
            && self.ops[k..]
                .iter()
                .any(|op| self.creates_chain(op, target))
        {
            let this = self.chain_ref(chain);
            let appends: Vec<usize> = (k..self.ops.len())
                .filter(|&i| {
                    matches!(&self.ops[i], Op::AddEncodedRule { chain: c, position: RulePosition::Append, .. } if *c == this)
                })
                .collect();
            let others = self.ops[k..]
                .iter()
                .enumerate()
                .any(|(i, op)| !appends.contains(&(i + k)) && self.touches_chain(op, &this));
            if !others {
                let len = self.ops.len();
                // the new order: the other operations, the new rule, the appends
                let order: Vec<usize> = (0..len)
                    .filter(|i| !appends.contains(i))
                    .chain(std::iter::once(len))
                    .chain(appends.iter().copied())
                    .collect();
                let mut new_index = vec![0; len + 1];
                for (n, &o) in order.iter().enumerate() {
                    new_index[o] = n;
                }
                let mut old: Vec<Option<Op>> = std::mem::take(&mut self.ops)
                    .into_iter()
                    .map(Some)
                    .collect();
                old.push(Some(Op::AddEncodedRule {
                    chain: this,
                    rule: encoded,
                    position,
                }));
                self.ops = order.iter().filter_map(|&o| old[o].take()).collect();
                self.renumber(|o| new_index[o]);
                let at = new_index[len];
                let slots = self.rules(r, chain)?;
                slots.insert(
                    index - 1,
                    Slot::Pending {
                        rule: keep.clone(),
                        op: Some(at),
                    },
                );
                return Ok(());
            }
        }
        if let Some(target) = target
            && let Some(m) = self.ops[k..]
                .iter()
                .position(|op| self.creates_chain(op, target))
                .map(|i| i + k)
            && !self.ops[k..m].iter().any(|op| self.names_chain(op, target))
        {
            let create = self.ops.remove(m);
            self.ops.insert(k, create);
            self.renumber(|o| {
                if o == m {
                    k
                } else if o >= k && o < m {
                    o + 1
                } else {
                    o
                }
            });
            k += 1;
        }
        self.ops.insert(
            k,
            Op::AddEncodedRule {
                chain: self.chain_ref(chain),
                rule: encoded,
                position,
            },
        );
        self.renumber(|o| if o >= k { o + 1 } else { o });
        let slots = self.rules(r, chain)?;
        slots.insert(
            index - 1,
            Slot::Pending {
                rule: keep,
                op: Some(k),
            },
        );
        Ok(())
    }

    /// Applies `f` to every operation index the plan keeps (created built-ins, pending rules).
    fn renumber(&mut self, f: impl Fn(usize) -> usize) {
        for v in self.created_builtins.values_mut() {
            *v = f(*v);
        }
        for c in self.chains.values_mut() {
            let early = c.early.iter_mut().map(|(_, s)| s);
            for s in c.rules.iter_mut().flatten().chain(early) {
                if let Slot::Pending { op: Some(o), .. } = s {
                    *o = f(*o);
                }
            }
        }
    }

    /// Whether `op` creates the chain `name` of this plan's table.
    fn creates_chain(&self, op: &Op, name: &str) -> bool {
        matches!(op, Op::CreateChain { table, chain } | Op::EnsureChain { table, chain }
            if *table == self.table && chain.name == name)
    }

    /// Whether `op` changes the chain `c` or its rules (or the whole table).
    fn touches_chain(&self, op: &Op, c: &crate::nft::ChainRef) -> bool {
        match op {
            Op::AddEncodedRule { chain, .. }
            | Op::ReplaceEncodedRule { chain, .. }
            | Op::DeleteRule { chain, .. }
            | Op::FlushChain(chain)
            | Op::DeleteChain(chain)
            | Op::RenameChain { chain, .. } => chain == c,
            Op::FlushTable(t) | Op::DeleteTable(t) => *t == c.table,
            Op::EnsureChain { table, chain } | Op::CreateChain { table, chain } => {
                *table == c.table && chain.name == c.name
            }
            _ => true,
        }
    }

    /// Whether `op` deletes, renames or creates the chain `name` of this plan's table.
    fn names_chain(&self, op: &Op, name: &str) -> bool {
        match op {
            Op::DeleteChain(c) | Op::RenameChain { chain: c, .. } => {
                c.table == self.table && c.name == name
            }
            Op::DeleteTable(t) => *t == self.table,
            _ => self.creates_chain(op, name),
        }
    }

    /// Removes operation `j` (the addition of a rule this plan no longer adds) and renumbers
    /// what refers to later operations.
    fn drop_pending_op(&mut self, j: usize) {
        // A replaced rule: the rule it replaced goes too.
        if let Some(Op::ReplaceEncodedRule { chain, handle, .. }) = self.ops.get(j) {
            self.ops[j] = Op::DeleteRule {
                chain: chain.clone(),
                handle: *handle,
            };
            return;
        }
        self.ops.remove(j);
        for v in self.created_builtins.values_mut() {
            if *v > j {
                *v -= 1;
            }
        }
        for c in self.chains.values_mut() {
            let early = c.early.iter_mut().map(|(_, s)| s);
            for s in c.rules.iter_mut().flatten().chain(early) {
                if let Slot::Pending { op: Some(o), .. } = s
                    && *o > j
                {
                    *o -= 1;
                }
            }
        }
    }
}
