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
use super::exec::LegacyTable;
use super::kernel::{MAX_ATTEMPTS, XtError};
use super::table::{Carry, Chain, Table};
use crate::error::{Error, OpFailure, Result};
use crate::ipt::tables;
use crate::model::Family;
use crate::seam::{
    Applied, ChainInfo, Change, Edit, IptTable, Lookup, RuleEntry, RuleRef, RulesetBackend,
    TableAccess,
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
///
/// One path for the edit itself: a NAT-host change is checked here as nf_tables' kernel
/// would check the same operation (a missing chain ENOENT, an existing one EEXIST, a chain
/// still jumped to EBUSY, a rule id not found ENOENT, a guessed jump that is not the jump
/// EBUSY; refusals the plan retries on or reports as the other backend does), its rule id
/// resolved to the rule's number in the table as it stands, and then applied by the
/// interpreter's own [`IptTable::apply`] ([`LegacyTable`], the one place an x_tables table is
/// edited). What stays here is what the interpreter does not do: it addresses rules by
/// number and checks its commands in iptables' words before they reach `apply`, while a
/// NAT-host plan addresses rules by stable id ([`RuleRef::Id`]) and must meet the kernel's
/// refusals (docs/architecture.md, "NAT-host changes on x_tables").
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
    // The rule `id` of `chain`: its number, or ENOENT.
    let number = |t: &Table, chain: &str, id: u64, is_it: &dyn Fn(&super::table::Rule) -> bool| {
        let c = t.chain(chain).ok_or_else(|| missing(chain))?;
        c.rules
            .iter()
            .position(|x| id_of(x) == Some(id) && is_it(x))
            .map(|i| RuleRef::Number(i + 1))
            .ok_or_else(|| refusal(libc::ENOENT, format!("rule {id} in chain {chain}")))
    };
    let (edit, encoded) = match &change.edit {
        Edit::CreateChain(chain) => {
            if tables::builtin(&table, chain).is_some() {
                // Built-in chains always exist in x_tables.
                return match t.chain(chain) {
                    Some(_) => Ok(()),
                    None => Err(missing(chain)),
                };
            }
            if t.chain(chain).is_some() {
                return Err(refusal(libc::EEXIST, format!("create chain {chain}")));
            }
            (change.edit.clone(), None)
        }
        Edit::Flush(chain) => {
            t.chain(chain).ok_or_else(|| missing(chain))?;
            (change.edit.clone(), None)
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
            (change.edit.clone(), None)
        }
        Edit::Insert {
            chain,
            index: 1,
            rule,
        }
        | Edit::Append { chain, rule } => {
            let r = rule_for(t, rule)?;
            t.chain(chain).ok_or_else(|| missing(chain))?;
            (change.edit.clone(), Some(r))
        }
        Edit::Replace {
            chain,
            at: RuleRef::Id { id, .. },
            rule,
        } => {
            let r = rule_for(t, rule)?;
            let at = number(t, chain, *id, &|_| true)?;
            let edit = Edit::Replace {
                chain: chain.clone(),
                at,
                rule: rule.clone(),
            };
            (edit, Some(r))
        }
        Edit::DeleteGuessedJump { chain, id, target } => {
            let is_jump = |x: &super::table::Rule| matches!(&x.verdict, super::table::Verdict::Jump(j) | super::table::Verdict::Goto(j) if j == target);
            t.chain(chain).ok_or_else(|| missing(chain))?;
            let at = number(t, chain, *id, &is_jump).map_err(|e| match e {
                Error::NotFound(_) => refusal(
                    libc::EBUSY,
                    format!("rule {id} in chain {chain} is not the jump to {target}"),
                ),
                e => e,
            })?;
            let edit = Edit::Delete {
                chain: chain.clone(),
                at,
            };
            (edit, None)
        }
        Edit::Delete {
            chain,
            at: RuleRef::Id { id, .. },
        } => {
            let at = number(t, chain, *id, &|_| true)?;
            let edit = Edit::Delete {
                chain: chain.clone(),
                at,
            };
            (edit, None)
        }
        _ => return Err(change.unplannable()),
    };
    // The view leaves the table in libiptc's chain order when it is dropped.
    IptTable::apply(&mut LegacyTable::new(t, false), &edit, encoded)
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

/// [`apply`] on the table captured from the kernel in `legacy/tests.rs` (filter: INPUT
/// jumps and goes to the user chain `web`), without root: the kernel's refusals a NAT-host
/// change meets on x_tables, and what the changes do through [`IptTable::apply`].
#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipt::{IptRule, IptTarget};

    fn change(edit: Edit) -> Change {
        Change::new("filter", edit)
    }

    fn ids(t: &Table, chain: &str) -> Vec<Option<u64>> {
        t.chain(chain)
            .map(|c| c.rules.iter().map(id_of).collect())
            .unwrap_or_default()
    }

    fn by_id(id: u64) -> RuleRef {
        RuleRef::Id {
            id,
            rule: Box::default(),
        }
    }

    fn jump(to: &str) -> IptRule {
        IptRule {
            target: Some(IptTarget::Jump(to.into())),
            ..IptRule::default()
        }
    }

    fn errno(r: Result<()>) -> i32 {
        match r {
            Err(
                Error::NotFound(f) | Error::AlreadyExists(f) | Error::InUse(f) | Error::Rejected(f),
            ) => f.errno,
            other => panic!("expected a kernel refusal, got {other:?}"),
        }
    }

    #[test]
    fn refusals_are_the_kernel_s_and_change_nothing() {
        let mut t = super::super::tests::table();
        let before = t.clone();
        let input = ids(&t, "INPUT");
        assert_eq!(input.len(), 2);
        let first = input[0].expect("a rule read from the kernel has an id");
        for (edit, want) in [
            (Edit::CreateChain("web".into()), libc::EEXIST),
            (Edit::DeleteChain("web".into()), libc::EBUSY),
            (Edit::DeleteChain("INPUT".into()), libc::EINVAL),
            (Edit::Flush("nope".into()), libc::ENOENT),
            (
                Edit::Append {
                    chain: "web".into(),
                    rule: jump("OUTPUT"),
                },
                libc::ENOENT,
            ),
            (
                Edit::Delete {
                    chain: "INPUT".into(),
                    at: by_id(9999),
                },
                libc::ENOENT,
            ),
            (
                Edit::DeleteGuessedJump {
                    chain: "INPUT".into(),
                    id: first,
                    target: "other".into(),
                },
                libc::EBUSY,
            ),
            (
                Edit::DeleteGuessedJump {
                    chain: "nope".into(),
                    id: first,
                    target: "web".into(),
                },
                libc::ENOENT,
            ),
        ] {
            assert_eq!(
                errno(apply(&mut t, &change(edit.clone()))),
                want,
                "{edit:?}"
            );
            assert_eq!(t, before, "{edit:?} changed the table");
        }
        // A built-in chain is there already: nothing to do.
        apply(&mut t, &change(Edit::CreateChain("INPUT".into()))).expect("built-in");
        assert_eq!(t, before);
    }

    #[test]
    fn changes_by_id_edit_the_table_as_the_interpreter_does() {
        let mut t = super::super::tests::table();
        let input = ids(&t, "INPUT");
        let web = ids(&t, "web");
        let apply_ok = |t: &mut Table, edit: Edit| {
            apply(t, &change(edit.clone())).unwrap_or_else(|e| panic!("{edit:?}: {e}"));
        };
        // Created in libiptc's sorted place among the user chains.
        apply_ok(&mut t, Edit::CreateChain("a-new".into()));
        let names: Vec<&str> = t.chains.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["INPUT", "FORWARD", "OUTPUT", "a-new", "web"]);
        apply_ok(
            &mut t,
            Edit::Insert {
                chain: "a-new".into(),
                index: 1,
                rule: jump("web"),
            },
        );
        // The guessed jump is the jump: deleted, the other rule keeps its id.
        apply_ok(
            &mut t,
            Edit::DeleteGuessedJump {
                chain: "INPUT".into(),
                id: input[0].expect("id"),
                target: "web".into(),
            },
        );
        assert_eq!(ids(&t, "INPUT"), [input[1]]);
        // Replaced by id: the second rule of `web`, whatever its number.
        apply_ok(
            &mut t,
            Edit::Replace {
                chain: "web".into(),
                at: by_id(web[1].expect("id")),
                rule: jump("a-new"),
            },
        );
        let w = t.chain("web").expect("web");
        assert_eq!(w.rules.len(), 2);
        assert!(
            matches!(&w.rules[1].verdict, super::super::table::Verdict::Jump(j) if j == "a-new")
        );
        assert_eq!(id_of(&w.rules[0]), web[0]);
        apply_ok(
            &mut t,
            Edit::Delete {
                chain: "INPUT".into(),
                at: by_id(input[1].expect("id")),
            },
        );
        apply_ok(&mut t, Edit::Flush("web".into()));
        assert!(t.chain("web").expect("web").rules.is_empty());
        apply_ok(&mut t, Edit::Flush("a-new".into()));
        apply_ok(&mut t, Edit::DeleteChain("web".into()));
        assert!(t.chain("web").is_none());
    }
}
