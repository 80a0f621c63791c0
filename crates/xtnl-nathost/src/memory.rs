//! A whole ruleset in memory behind the NAT-host seam ([`RulesetBackend`] and
//! [`TableAccess`]): the test kit for the NAT-host planners. Chains hold rules in iptables
//! terms, each with an id that stays while it lives (as an nf_tables handle does). A commit
//! applies every change or none, refusing as the kernels do: a chain that exists already,
//! a missing chain or rule, a chain deleted while still jumped to.

use std::collections::BTreeMap;

use crate::error::{Error, OpFailure, Result};
use crate::ipt::IptRule;
use crate::ipt::tables;
use crate::model::Family;
use crate::nathost::{Applied, ChainInfo, Change, Lookup, RuleEntry, RulesetBackend, TableAccess};
use crate::seam::{Edit, RuleRef};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Chain {
    base: bool,
    rules: Vec<(u64, IptRule)>,
}

type Tables = BTreeMap<String, BTreeMap<String, Chain>>;

/// A family's ruleset in memory.
#[derive(Debug, Clone)]
pub struct MemoryRuleset {
    family: Family,
    tables: Tables,
    next_id: u64,
    /// How many commits changed something.
    pub commits: usize,
    /// What its commits are held to (nothing, unless [`MemoryRuleset::enforcing`]).
    enforcement: crate::seam::Enforcement,
}

fn refused(errno: i32, op: String) -> Error {
    Error::from_op_failure(OpFailure {
        index: 0,
        op,
        errno,
        ext_ack: None,
    })
}

fn missing(table: &str, chain: &str) -> Error {
    refused(libc::ENOENT, format!("chain {chain} in table {table}"))
}

fn chain_mut<'t>(tables: &'t mut Tables, table: &str, chain: &str) -> Result<&'t mut Chain> {
    tables
        .get_mut(table)
        .and_then(|t| t.get_mut(chain))
        .ok_or_else(|| missing(table, chain))
}

fn references(tables: &Tables, table: &str, chain: &str) -> u32 {
    tables
        .get(table)
        .map(|t| {
            t.values()
                .flat_map(|c| &c.rules)
                .filter(|(_, r)| r.jump_target() == Some(chain))
                .count() as u32
        })
        .unwrap_or(0)
}

impl MemoryRuleset {
    /// An empty ruleset (no tables: they and iptables' built-in chains are created by the
    /// first change that needs them, as iptables-nft does).
    pub fn new(family: Family) -> MemoryRuleset {
        MemoryRuleset {
            family,
            tables: Tables::new(),
            next_id: 1,
            commits: 0,
            enforcement: crate::seam::Enforcement::none(),
        }
    }

    /// Checks every commit against `e`'s policy and records it with `e`'s auditor, judged
    /// as both kernel backends judge theirs ([`crate::seam::judge::of_changes`]), so that
    /// what a policy allows of the NAT-host operations is tested without root.
    pub fn enforcing(mut self, e: crate::seam::Enforcement) -> MemoryRuleset {
        self.enforcement = e;
        self
    }

    /// The chains of a table, in name order.
    pub fn chain_names(&self, table: &str) -> Vec<String> {
        self.tables
            .get(table)
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The rules of a chain (none when it does not exist).
    pub fn rules(&self, table: &str, chain: &str) -> Vec<IptRule> {
        self.tables
            .get(table)
            .and_then(|t| t.get(chain))
            .map(|c| c.rules.iter().map(|(_, r)| r.clone()).collect())
            .unwrap_or_default()
    }

    /// Applies one change to `tables`; returns the id of a rule it added.
    fn apply(&mut self, tables: &mut Tables, change: &Change) -> Result<Option<u64>> {
        let table = &change.table;
        match &change.edit {
            Edit::CreateChain(chain) => {
                let t = tables.entry(table.clone()).or_default();
                if t.contains_key(chain) {
                    return Err(refused(libc::EEXIST, format!("create chain {chain}")));
                }
                let base = tables::builtin(table, chain).is_some();
                t.insert(
                    chain.clone(),
                    Chain {
                        base,
                        rules: Vec::new(),
                    },
                );
            }
            Edit::Flush(chain) => chain_mut(tables, table, chain)?.rules.clear(),
            Edit::DeleteChain(chain) => {
                chain_mut(tables, table, chain)?.rules.clear();
                if references(tables, table, chain) > 0 {
                    return Err(refused(libc::EBUSY, format!("delete chain {chain}")));
                }
                if let Some(t) = tables.get_mut(table) {
                    t.remove(chain);
                }
            }
            Edit::Insert {
                chain,
                index: 1,
                rule,
            }
            | Edit::Append { chain, rule } => {
                if let Some(target) = rule.jump_target()
                    && tables.get(table).is_none_or(|t| !t.contains_key(target))
                {
                    return Err(missing(table, target));
                }
                let id = self.next_id;
                self.next_id += 1;
                let c = chain_mut(tables, table, chain)?;
                if matches!(change.edit, Edit::Insert { .. }) {
                    c.rules.insert(0, (id, rule.clone()));
                } else {
                    c.rules.push((id, rule.clone()));
                }
                return Ok(Some(id));
            }
            Edit::Replace {
                chain,
                at: RuleRef::Id { id, .. },
                rule,
            } => {
                let c = chain_mut(tables, table, chain)?;
                let slot = c
                    .rules
                    .iter_mut()
                    .find(|(i, _)| i == id)
                    .ok_or_else(|| refused(libc::ENOENT, format!("rule {id} of {chain}")))?;
                slot.1 = rule.clone();
            }
            Edit::Delete {
                chain,
                at: RuleRef::Id { id, .. },
            } => {
                let c = chain_mut(tables, table, chain)?;
                let before = c.rules.len();
                c.rules.retain(|(i, _)| i != id);
                if c.rules.len() == before {
                    return Err(refused(libc::ENOENT, format!("rule {id} of {chain}")));
                }
            }
            Edit::DeleteGuessedJump { chain, id, target } => {
                let c = chain_mut(tables, table, chain)?;
                let at = c
                    .rules
                    .iter()
                    .position(|(i, r)| i == id && r.jump_target() == Some(target.as_str()))
                    .ok_or_else(|| refused(libc::ENOENT, format!("rule {id} of {chain}")))?;
                c.rules.remove(at);
            }
            _ => return Err(change.unplannable()),
        }
        Ok(None)
    }
}

struct View<'r> {
    r: &'r MemoryRuleset,
}

impl View<'_> {
    fn info(&self, table: &str, name: &str, c: &Chain) -> ChainInfo {
        ChainInfo {
            name: name.to_string(),
            base: c.base,
            references: Some(references(&self.r.tables, table, name)),
            jump_hint: None,
        }
    }

    fn entries(c: &Chain) -> Vec<RuleEntry> {
        c.rules
            .iter()
            .map(|(id, rule)| RuleEntry {
                id: *id,
                rule: rule.clone(),
            })
            .collect()
    }
}

impl TableAccess for View<'_> {
    fn family(&self) -> Family {
        self.r.family
    }

    fn lookup(&mut self, table: &str, chains: &[&str], rules_of: Option<&str>) -> Result<Lookup> {
        let t = self.r.tables.get(table);
        let found = chains
            .iter()
            .map(|n| t.and_then(|t| t.get(*n)).map(|c| self.info(table, n, c)))
            .collect();
        let rules = rules_of
            .and_then(|n| t.and_then(|t| t.get(n)))
            .map(Self::entries)
            .unwrap_or_default();
        Ok(Lookup {
            chains: found,
            rules,
        })
    }

    fn rule(&mut self, table: &str, chain: &str, id: u64) -> Result<Option<RuleEntry>> {
        Ok(self
            .r
            .tables
            .get(table)
            .and_then(|t| t.get(chain))
            .and_then(|c| c.rules.iter().find(|(i, _)| *i == id))
            .map(|(id, rule)| RuleEntry {
                id: *id,
                rule: rule.clone(),
            }))
    }

    fn chains(&mut self, table: &str) -> Result<Vec<ChainInfo>> {
        Ok(self
            .r
            .tables
            .get(table)
            .map(|t| t.iter().map(|(n, c)| self.info(table, n, c)).collect())
            .unwrap_or_default())
    }

    fn all_rules(&mut self, table: &str) -> Result<Vec<(String, RuleEntry)>> {
        Ok(self
            .r
            .tables
            .get(table)
            .map(|t| {
                t.iter()
                    .flat_map(|(n, c)| Self::entries(c).into_iter().map(|e| (n.clone(), e)))
                    .collect()
            })
            .unwrap_or_default())
    }

    fn exhaustive(&self) -> bool {
        true
    }
}

impl RulesetBackend for MemoryRuleset {
    fn transact<T>(
        &mut self,
        family: Family,
        mut plan: impl FnMut(&mut dyn TableAccess) -> Result<(Vec<Change>, T)>,
    ) -> Result<Applied<T>> {
        if family != self.family {
            return Err(Error::InvalidInput(format!(
                "a {family:?} plan on a {:?} ruleset",
                self.family
            )));
        }
        let (changes, value) = plan(&mut View { r: self })?;
        crate::seam::ruleset::plannable(&changes)?;
        // Judged on the tables the plan read, before anything is applied; recorded around
        // the commit, as nf_tables records a batch the kernel may still refuse.
        let e = self.enforcement.clone();
        let mut judged = Vec::new();
        if e.is_active() && !changes.is_empty() {
            let tables = &self.tables;
            judged = crate::seam::judge::of_changes(family, &changes, |table, chain, id| {
                let rules = &tables.get(table)?.get(chain)?.rules;
                rules.iter().find(|(i, _)| *i == id).map(|(_, r)| r.clone())
            })?;
            e.check(&mut judged)?;
            e.record(&judged, crate::nft::AuditOutcome::Attempt);
        }
        let mut tables = self.tables.clone();
        let mut rule_handles = Vec::new();
        for (i, c) in changes.iter().enumerate() {
            let added = self.apply(&mut tables, c).map_err(|e| match e {
                Error::NotFound(mut f)
                | Error::AlreadyExists(mut f)
                | Error::InUse(mut f)
                | Error::Rejected(mut f) => {
                    f.index = i;
                    Error::from_op_failure(f)
                }
                e => e,
            });
            let added = match added {
                Ok(a) => a,
                Err(err) => {
                    if !judged.is_empty() {
                        e.record(&judged, crate::nft::AuditOutcome::Failed(&err));
                    }
                    return Err(err);
                }
            };
            if let Some(id) = added {
                rule_handles.push((i, id));
            }
        }
        if !judged.is_empty() {
            e.record(&judged, crate::nft::AuditOutcome::Committed);
        }
        if !changes.is_empty() {
            self.tables = tables;
            self.commits += 1;
        }
        Ok(Applied {
            value,
            changes,
            attempts: 1,
            rule_handles,
        })
    }
}
