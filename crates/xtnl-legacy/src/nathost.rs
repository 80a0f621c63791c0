//! The NAT-host operations (the library's `xtnl::nathost`) on x_tables: [`Legacy`] implements
//! [`RulesetBackend`]. A plan reads whole tables (x_tables has no smaller read), its changes
//! are applied in memory, and each table it changed is replaced once, under the xtables
//! lock. x_tables has no transaction across tables: a plan that changes `nat` and `filter`
//! makes two replaces. When a replace is refused because a writer that bypassed the lock
//! changed the table (EAGAIN), the plan runs again on fresh reads; the operations are
//! idempotent, so what an earlier replace of the same attempt committed is simply found done.

use std::collections::BTreeMap;

use super::Legacy;
use super::convert;
use super::kernel::{MAX_ATTEMPTS, XtError};
use super::table::{Carry, Chain, Table};
use crate::error::{Error, OpFailure, Result};
use crate::ipt::tables;
use crate::model::Family;
use crate::seam::{
    Applied, ChainInfo, Change, Edit, Lookup, RuleEntry, RuleRef, RulesetBackend, TableAccess,
};

/// Tables read for one run of a plan, each once.
struct View<'l> {
    legacy: &'l Legacy,
    tables: BTreeMap<String, Option<Table>>,
}

fn id_of(r: &super::table::Rule) -> Option<u64> {
    match r.carry {
        Carry::From(i) => Some(i as u64),
        Carry::Zero | Carry::Start(_) => None,
    }
}

impl View<'_> {
    /// The table as read (`None` when the kernel has no such table).
    fn table(&mut self, name: &str) -> Result<Option<&mut Table>> {
        if !self.tables.contains_key(name) {
            let t = match self.legacy.read(name) {
                Ok(t) => Some(t),
                Err(Error::NoSuchTable(_)) => None,
                Err(e) => return Err(e),
            };
            self.tables.insert(name.to_string(), t);
        }
        Ok(self.tables.get_mut(name).and_then(Option::as_mut))
    }

    fn entries(t: &Table, chain: &Chain) -> Vec<RuleEntry> {
        chain
            .rules
            .iter()
            .filter_map(|r| {
                Some(RuleEntry {
                    id: id_of(r)?,
                    rule: convert::to_ipt(t.family, r),
                })
            })
            .collect()
    }
}

fn info(t: &Table, c: &Chain) -> ChainInfo {
    ChainInfo {
        references: Some(t.references(&c.name)),
        ..info_without_references(c)
    }
}

fn info_without_references(c: &Chain) -> ChainInfo {
    ChainInfo {
        name: c.name.clone(),
        base: c.is_builtin(),
        references: None,
        // References are counted exactly; no guessing needed.
        jump_hint: None,
    }
}

impl TableAccess for View<'_> {
    fn family(&self) -> Family {
        self.legacy.family()
    }

    fn lookup(&mut self, table: &str, chains: &[&str], rules_of: Option<&str>) -> Result<Lookup> {
        let Some(t) = self.table(table)? else {
            return Ok(Lookup {
                chains: chains.iter().map(|_| None).collect(),
                rules: Vec::new(),
            });
        };
        let t = &*t;
        Ok(Lookup {
            chains: chains
                .iter()
                .map(|n| t.chain(n).map(|c| info(t, c)))
                .collect(),
            rules: rules_of
                .and_then(|n| t.chain(n))
                .map(|c| Self::entries(t, c))
                .unwrap_or_default(),
        })
    }

    fn rule(&mut self, table: &str, chain: &str, id: u64) -> Result<Option<RuleEntry>> {
        let Some(t) = self.table(table)? else {
            return Ok(None);
        };
        let t = &*t;
        Ok(t.chain(chain)
            .and_then(|c| Self::entries(t, c).into_iter().find(|e| e.id == id)))
    }

    fn chains(&mut self, table: &str) -> Result<Vec<ChainInfo>> {
        Ok(match self.table(table)? {
            Some(t) => {
                let refs = t.reference_counts();
                t.chains
                    .iter()
                    .map(|c| ChainInfo {
                        references: Some(refs.get(c.name.as_str()).copied().unwrap_or(0)),
                        ..info_without_references(c)
                    })
                    .collect()
            }
            None => Vec::new(),
        })
    }

    fn all_rules(&mut self, table: &str) -> Result<Vec<(String, RuleEntry)>> {
        let Some(t) = self.table(table)? else {
            return Ok(Vec::new());
        };
        let t = &*t;
        Ok(t.chains
            .iter()
            .flat_map(|c| Self::entries(t, c).into_iter().map(|e| (c.name.clone(), e)))
            .collect())
    }

    fn exhaustive(&self) -> bool {
        // Every read is of a whole table: references are always known.
        true
    }
}

fn refusal(errno: i32, op: String) -> Error {
    Error::from_op_failure(OpFailure {
        index: 0,
        op,
        errno,
        ext_ack: None,
    })
}

/// Applies one change to a table in memory, with the refusals the kernel would make.
fn apply(t: &mut Table, change: &Change) -> Result<()> {
    let table = t.name.clone();
    let missing = |chain: &str| refusal(libc::ENOENT, format!("chain {chain} in table {table}"));
    let rule_for = |t: &Table, rule: &crate::ipt::IptRule| -> Result<super::table::Rule> {
        if let Some(j) = rule.jump_target()
            && t.chain(j).is_none_or(Chain::is_builtin)
        {
            return Err(refusal(libc::ENOENT, format!("jump to chain {j}")));
        }
        convert::to_rule(t.family, &t.name, rule)
    };
    match &change.edit {
        Edit::CreateChain(chain) => {
            if tables::builtin(&table, chain).is_some() {
                // Built-in chains always exist in x_tables.
                if t.chain(chain).is_none() {
                    return Err(missing(chain));
                }
            } else if t.chain(chain).is_some() {
                return Err(refusal(libc::EEXIST, format!("create chain {chain}")));
            } else {
                t.insert_user_chain(Chain::user(chain));
            }
        }
        Edit::Flush(chain) => {
            t.chain_mut(chain)
                .ok_or_else(|| missing(chain))?
                .rules
                .clear();
        }
        Edit::DeleteChain(chain) => {
            let c = t.chain(chain).ok_or_else(|| missing(chain))?;
            if c.is_builtin() {
                return Err(refusal(
                    libc::EINVAL,
                    format!("delete built-in chain {chain}"),
                ));
            }
            if t.references(chain) > 0 {
                return Err(refusal(libc::EBUSY, format!("delete chain {chain}")));
            }
            t.chains.retain(|c| c.name != *chain);
        }
        Edit::Insert {
            chain,
            index: 1,
            rule,
        }
        | Edit::Append { chain, rule } => {
            let r = rule_for(t, rule)?;
            let c = t.chain_mut(chain).ok_or_else(|| missing(chain))?;
            if matches!(change.edit, Edit::Insert { .. }) {
                c.rules.insert(0, r);
            } else {
                c.rules.push(r);
            }
        }
        Edit::Replace {
            chain,
            at: RuleRef::Id { id, .. },
            rule,
        } => {
            let r = rule_for(t, rule)?;
            let c = t.chain_mut(chain).ok_or_else(|| missing(chain))?;
            let slot = c
                .rules
                .iter_mut()
                .find(|x| id_of(x) == Some(*id))
                .ok_or_else(|| refusal(libc::ENOENT, format!("rule {id} in chain {chain}")))?;
            *slot = r;
        }
        Edit::DeleteGuessedJump { chain, id, target } => {
            let c = t.chain_mut(chain).ok_or_else(|| missing(chain))?;
            let i = c
                .rules
                .iter()
                .position(|x| {
                    id_of(x) == Some(*id)
                        && matches!(&x.verdict, super::table::Verdict::Jump(j) | super::table::Verdict::Goto(j) if j == target)
                })
                .ok_or_else(|| refusal(libc::EBUSY, format!("rule {id} in chain {chain} is not the jump to {target}")))?;
            c.rules.remove(i);
        }
        Edit::Delete {
            chain,
            at: RuleRef::Id { id, .. },
        } => {
            let c = t.chain_mut(chain).ok_or_else(|| missing(chain))?;
            let i = c
                .rules
                .iter()
                .position(|x| id_of(x) == Some(*id))
                .ok_or_else(|| refusal(libc::ENOENT, format!("rule {id} in chain {chain}")))?;
            c.rules.remove(i);
        }
        _ => return Err(change.unplannable()),
    }
    Ok(())
}

impl RulesetBackend for Legacy {
    fn transact<T>(
        &mut self,
        family: Family,
        mut plan: impl FnMut(&mut dyn TableAccess) -> Result<(Vec<Change>, T)>,
    ) -> Result<Applied<T>> {
        if family != self.family() {
            return Err(Error::InvalidInput(format!(
                "this x_tables handle is for {}, not {family}",
                self.family()
            )));
        }
        let _guard = self.lock.acquire()?;
        'attempt: for attempt in 1..=MAX_ATTEMPTS {
            let mut view = View {
                legacy: self,
                tables: BTreeMap::new(),
            };
            let (changes, value) = plan(&mut view)?;
            crate::seam::ruleset::plannable(&changes)?;
            // What the changes touch, judged on the tables this attempt read (under the
            // lock: only a writer bypassing it can change them before the replace, which
            // then fails and the plan, and this, run again), before they are applied.
            let judged = if self.enforcement.is_active() {
                let tables = &view.tables;
                let family = self.family();
                crate::seam::judge::of_changes(family, &changes, |table, chain, id| {
                    let t = tables.get(table)?.as_ref()?;
                    let r = t
                        .chain(chain)?
                        .rules
                        .iter()
                        .find(|r| id_of(r) == Some(id))?;
                    Some(convert::to_ipt(family, r))
                })?
            } else {
                Vec::new()
            };
            // The policy before any refusal of the changes themselves, as on nf_tables
            // (where the kernel refuses them only after the check).
            if !changes.is_empty() {
                let mut first = judged.clone();
                self.enforcement.check(&mut first)?;
            }
            // The tables changed, in the order the plan first changes them.
            let mut order: Vec<String> = Vec::new();
            for (i, c) in changes.iter().enumerate() {
                let name = c.table.clone();
                let t = view
                    .table(&name)?
                    .ok_or_else(|| Error::NoSuchTable(name.clone()))?;
                apply(t, c).map_err(|e| match e {
                    Error::NotFound(mut f)
                    | Error::AlreadyExists(mut f)
                    | Error::InUse(mut f)
                    | Error::Rejected(mut f) => {
                        f.index = i;
                        Error::from_op_failure(f)
                    }
                    e => e,
                })?;
                if !order.contains(&name) {
                    order.push(name);
                }
            }
            if changes.is_empty() {
                return Ok(Applied {
                    value,
                    changes,
                    attempts: attempt,
                    rule_handles: Vec::new(),
                });
            }
            let tables = &view.tables;
            let sock = &self.sock;
            let replaced = super::enforce(&self.enforcement, judged, || {
                for name in &order {
                    let Some(Some(t)) = tables.get(name) else {
                        continue;
                    };
                    sock.replace(t)?;
                }
                Ok(())
            })?;
            match replaced {
                Ok(()) => {}
                Err(XtError::Changed) => continue 'attempt,
                Err(XtError::Other(e)) => return Err(e),
            }
            return Ok(Applied {
                value,
                changes,
                attempts: attempt,
                rule_handles: Vec::new(),
            });
        }
        Err(Error::GenerationConflict {
            attempts: MAX_ATTEMPTS,
        })
    }
}
